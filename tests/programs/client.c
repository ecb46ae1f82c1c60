/*
 * rpctest-client: calls the rpctest program (rpctest.x) through the
 * rpcgen client stubs over plain libtirpc, and verifies every byte.
 *
 * The client handle is made one of four ways (-m):
 *
 *   create  clnt_create(host, PROG, VERS, netid)          rpcbind lookup
 *   tp      clnt_tp_create(host, ..., getnetconfigent())  rpcbind lookup
 *   tli     clnt_tli_create(RPC_ANYFD, nconf, &addr, ...) address and -p port
 *   tcp     clnttcp_create(&sin, ...)                     IPv4 address and -p port
 *
 * -R N makes and destroys the handle N times, running the whole set on
 * each; with -b it also reports the open descriptors and the resident
 * size after the first and after the last handle, so a test can see that
 * nothing accumulates.  -b -u also reports the CPU time this process spent
 * inside the calls (user and system, CLOCK_PROCESS_CPUTIME_ID), so that a
 * benchmark can compare what a transport costs the caller, not only how
 * long it takes.
 *
 * Exit status: 0 all calls verified, 1 an RPC or setup error (the
 * clnt_sperror text is printed), 2 a reply that does not match, 64 usage.
 * With -k an RPC error ends only that call: the next one goes out on the
 * same CLIENT, and the exit status is 1 at the end.  With -H the last
 * CLIENT is kept after its calls until SIGTERM or SIGINT, so that what
 * its transport shows (rpcrdma-stat) can be read with every call done.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "pattern.h"
#include "rpctest.h"

#define EX_USAGE 64
#define EX_RPC 1
#define EX_MISMATCH 2

#define MAX_LIST 64

static const char *progname = "rpctest-client";

enum op {
	OP_NULL,
	OP_ECHO,
	OP_SINK,
	OP_SOURCE,
	OP_MIXED,
	OP_WHOAMI,
	OP_COUNT
};

static const struct op_desc {
	const char *name;
	bool sized;		/* runs once per size */
	unsigned int payload;	/* payload bytes per call, in units of size */
} op_desc[OP_COUNT] = {
	[OP_NULL]   = { "null",   false, 0 },
	[OP_ECHO]   = { "echo",   true,  2 },	/* size out, size back */
	[OP_SINK]   = { "sink",   true,  1 },
	[OP_SOURCE] = { "source", true,  1 },
	[OP_MIXED]  = { "mixed",  true,  3 },	/* string and opaque out, string back */
	[OP_WHOAMI] = { "whoami", false, 0 },
};

enum create_mode { CM_CREATE, CM_TP, CM_TLI, CM_TCP };

struct options {
	const char *host;
	const char *netid;
	enum create_mode mode;
	unsigned int port;
	bool have_port;
	bool auth_sys;
	unsigned int timeout;
	rpcprog_t prog;
	enum op ops[MAX_LIST];
	unsigned int nops;
	size_t sizes[MAX_LIST];
	unsigned int nsizes;
	unsigned long count;
	unsigned long cycles;
	bool cycles_set;
	bool bench;
	bool quiet;
	bool keep_going;
	bool hold;
};

/* Timing per (op, size), for -b. */
struct stat_cell {
	unsigned long calls;
	double seconds;
	double cpu_seconds;	/* -u: process CPU time inside the calls */
	unsigned long long bytes;
};

static struct stat_cell stats[MAX_LIST][MAX_LIST];
static unsigned long total_calls;
static unsigned long failed_calls;
static bool keep_going;

/* --- reporting ----------------------------------------------------------- */

static void
usage(void)
{
	fprintf(stderr,
		"usage: %s [-h HOST] [-m create|tp|tli|tcp] [-p PORT] [-n tcp|tcp6]\n"
		"          [-A none|sys] [-t SECONDS] [-o OPS] [-s SIZES] [-c COUNT]\n"
		"          [-R CYCLES] [-P PROG] [-b [-u]] [-q] [-k] [-H]\n"
		"  -h HOST   server name or address (default localhost)\n"
		"  -m MODE   create: clnt_create, tp: clnt_tp_create (both via rpcbind),\n"
		"            tli: clnt_tli_create, tcp: clnttcp_create (both need -p)\n"
		"  -p PORT   server port for tli and tcp\n"
		"  -n NETID  tcp (default) or tcp6; -m tcp is IPv4 only\n"
		"  -A CRED   none (default) or sys (authunix_create_default)\n"
		"  -t SECS   call timeout (default 25)\n"
		"  -o OPS    comma list of null,echo,sink,source,mixed,whoami\n"
		"            (default null,echo,sink,source,mixed)\n"
		"  -s SIZES  comma list of byte counts with optional K or M suffix and\n"
		"            an optional +N, e.g. 0,1,4K,1M+3 (default 0,1,100,1000,4K,64K,1M,1M+3)\n"
		"  -c COUNT  run the whole set COUNT times (default 1)\n"
		"  -R N      create and destroy the client handle N times, running the\n"
		"            set (COUNT times) with each; with -b, also print descriptors\n"
		"            and resident size after the first and the last (default 1)\n"
		"  -P PROG   program number (default 0x%x)\n"
		"  -b        print timing per op and size: calls, seconds, calls/s,\n"
		"            MB/s (10^6 payload bytes per second, both directions), mean latency;\n"
		"            with -R: cycles=N fds_before= fds_after= rss_kb_before= rss_kb_after=\n"
		"  -u        with -b, also measure the CPU time (user and system, of this\n"
		"            process) spent inside the calls: a cpu_us column, mean per call\n"
		"  -q        quiet: no per-call lines and no final line\n"
		"  -k        keep going after an RPC error, with the next call on the\n"
		"            same client; the exit status is 1 at the end\n"
		"  -H        after the last call print 'holding after N calls' and keep\n"
		"            the client until SIGTERM or SIGINT, then end as usual\n"
		"exit status: 0 verified, 1 RPC error, 2 reply mismatch, 64 usage\n",
		progname, RPCTEST_PROG);
	exit(EX_USAGE);
}

static void
usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "%s: %s: %s\n", progname, what, arg);
	usage();
}

/* Exits, unless -k: then the caller abandons the call. */
static void
rpc_failed(CLIENT *clnt, enum op op, size_t size)
{
	char what[64];

	if (op_desc[op].sized)
		snprintf(what, sizeof(what), "%s %zu", op_desc[op].name, size);
	else
		snprintf(what, sizeof(what), "%s", op_desc[op].name);
	fprintf(stderr, "%s\n", clnt_sperror(clnt, what));
	if (!keep_going)
		exit(EX_RPC);
	failed_calls++;
}

/* What an operation returns for a call that failed (-k). */
#define CALL_FAILED (-1.0)

#define OFFSET_UNKNOWN SIZE_MAX

/* A reply that does not match: op, size and the first differing offset. */
static void
mismatch(enum op op, size_t size, size_t offset, const char *detail)
{
	char what[64];

	if (op_desc[op].sized)
		snprintf(what, sizeof(what), "%s %zu", op_desc[op].name, size);
	else
		snprintf(what, sizeof(what), "%s", op_desc[op].name);
	if (offset == OFFSET_UNKNOWN)
		fprintf(stderr, "%s: mismatch: %s: %s (offset unknown)\n",
			progname, what, detail);
	else
		fprintf(stderr, "%s: mismatch: %s: first difference at offset %zu (%s)\n",
			progname, what, offset, detail);
	exit(EX_MISMATCH);
}

static void
report_ok(const struct options *o, enum op op, size_t size)
{
	if (o->quiet)
		return;
	if (op_desc[op].sized)
		printf("%s %zu ok\n", op_desc[op].name, size);
	else
		printf("%s ok\n", op_desc[op].name);
}

/* --- helpers -------------------------------------------------------------- */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Process CPU time (user and system, every thread), in seconds. */
static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The timing of one call: call_begin() just before it, call_end() just
 * after, which returns the seconds it took.  With -u the CPU time this
 * process spent meanwhile is kept in last_call_cpu.
 */
static bool measure_cpu;
static double call_cpu0, last_call_cpu;

static double
call_begin(void)
{
	if (measure_cpu)
		call_cpu0 = cpu_now();
	return now();
}

static double
call_end(double t0)
{
	double t = now() - t0;

	if (measure_cpu)
		last_call_cpu = cpu_now() - call_cpu0;
	return t;
}

static void *
xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p) {
		fprintf(stderr, "%s: cannot allocate %zu bytes\n", progname, len);
		exit(EX_RPC);
	}
	return p;
}

/* Offset of the first differing byte of a[0..alen) and b[0..blen). */
static size_t
first_difference(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;

	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return i;
	return n;
}

/* A seed distinct per repetition, op and size. */
static uint64_t
call_seed(unsigned long iter, enum op op, size_t size)
{
	return ((uint64_t)iter << 40) ^ ((uint64_t)op << 32) ^ (uint64_t)size;
}

/* --- operations ------------------------------------------------------------
 * Each returns the seconds spent in the call itself (verification excluded),
 * and exits on any error.
 */

static double
do_null(CLIENT *clnt, size_t size, uint64_t seed)
{
	double t0 = call_begin();
	void *res = rpctest_null_1(clnt);
	double t = call_end(t0);

	if (!res) {
		rpc_failed(clnt, OP_NULL, size);
		return CALL_FAILED;
	}
	return t;
}

static double
do_echo(CLIENT *clnt, size_t size, uint64_t seed)
{
	rpctest_data arg;
	rpctest_data *res;
	double t0, t;
	size_t off;

	arg.rpctest_data_len = (u_int)size;
	arg.rpctest_data_val = xmalloc(size);
	pattern_fill(arg.rpctest_data_val, size, seed);

	t0 = call_begin();
	res = rpctest_echo_1(arg, clnt);
	t = call_end(t0);
	if (!res) {
		rpc_failed(clnt, OP_ECHO, size);
		free(arg.rpctest_data_val);
		return CALL_FAILED;
	}

	off = first_difference(arg.rpctest_data_val, size,
			       res->rpctest_data_val, res->rpctest_data_len);
	if (res->rpctest_data_len != size)
		mismatch(OP_ECHO, size, off, "reply length differs");
	if (off != size)
		mismatch(OP_ECHO, size, off, "reply bytes differ");

	clnt_freeres(clnt, (xdrproc_t)xdr_rpctest_data, (caddr_t)res);
	free(arg.rpctest_data_val);
	return t;
}

static double
do_sink(CLIENT *clnt, size_t size, uint64_t seed)
{
	rpctest_data arg;
	rpctest_sink_res *res;
	double t0, t;

	arg.rpctest_data_len = (u_int)size;
	arg.rpctest_data_val = xmalloc(size);
	pattern_fill(arg.rpctest_data_val, size, seed);

	t0 = call_begin();
	res = rpctest_sink_1(arg, clnt);
	t = call_end(t0);
	if (!res) {
		rpc_failed(clnt, OP_SINK, size);
		free(arg.rpctest_data_val);
		return CALL_FAILED;
	}

	if (res->length != size)
		mismatch(OP_SINK, size, res->length < size ? res->length : size,
			 "server received a different length");
	if (res->checksum != checksum(arg.rpctest_data_val, size))
		mismatch(OP_SINK, size, OFFSET_UNKNOWN, "checksum of the bytes the server received differs");

	clnt_freeres(clnt, (xdrproc_t)xdr_rpctest_sink_res, (caddr_t)res);
	free(arg.rpctest_data_val);
	return t;
}

static double
do_source(CLIENT *clnt, size_t size, uint64_t seed)
{
	rpctest_source_args arg = { .length = size, .seed = seed };
	rpctest_data *res;
	double t0, t;
	size_t off;

	t0 = call_begin();
	res = rpctest_source_1(arg, clnt);
	t = call_end(t0);
	if (!res) {
		rpc_failed(clnt, OP_SOURCE, size);
		return CALL_FAILED;
	}

	off = pattern_check(res->rpctest_data_val, res->rpctest_data_len, seed);
	if (off < res->rpctest_data_len)
		mismatch(OP_SOURCE, size, off, "pattern differs");
	if (res->rpctest_data_len != size)
		mismatch(OP_SOURCE, size, off, "reply length differs");

	clnt_freeres(clnt, (xdrproc_t)xdr_rpctest_data, (caddr_t)res);
	return t;
}

static double
do_mixed(CLIENT *clnt, size_t size, uint64_t seed)
{
	/* Values that show sign, width and byte order errors. */
	int i = (int)(0x80000001u ^ (uint32_t)seed);
	quad_t h = -(quad_t)(UINT64_C(0x0123456789abcdef) ^ seed);
	rpctest_data d;
	rpctest_mixed_res *res;
	char *s;
	double t0, t;

	s = xmalloc(size + 1);
	pattern_fill_text(s, size, seed ^ 0x5555);
	s[size] = '\0';
	d.rpctest_data_len = (u_int)size;
	d.rpctest_data_val = xmalloc(size);
	pattern_fill(d.rpctest_data_val, size, seed);

	t0 = call_begin();
	res = rpctest_mixed_1(i, h, s, d, clnt);
	t = call_end(t0);
	if (!res) {
		rpc_failed(clnt, OP_MIXED, size);
		free(d.rpctest_data_val);
		free(s);
		return CALL_FAILED;
	}

	if (res->i != i)
		mismatch(OP_MIXED, size, OFFSET_UNKNOWN, "int argument differs");
	if (res->h != h)
		mismatch(OP_MIXED, size, OFFSET_UNKNOWN, "hyper argument differs");
	if (!res->s || strcmp(res->s, s) != 0) {
		const char *got = res->s ? res->s : "";

		mismatch(OP_MIXED, size, first_difference(s, size, got, strlen(got)),
			 "string argument differs");
	}
	if (res->d_length != size)
		mismatch(OP_MIXED, size, res->d_length < size ? res->d_length : size,
			 "opaque argument length differs");
	if (res->d_checksum != checksum(d.rpctest_data_val, size))
		mismatch(OP_MIXED, size, OFFSET_UNKNOWN, "checksum of the opaque argument differs");

	clnt_freeres(clnt, (xdrproc_t)xdr_rpctest_mixed_res, (caddr_t)res);
	free(d.rpctest_data_val);
	free(s);
	return t;
}

/* This end's address in universal form, as the server should see it. */
static char *
local_uaddr(CLIENT *clnt)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct netbuf nb;
	struct netconfig *nconf;
	char *uaddr = NULL;
	int fd;

	if (!clnt_control(clnt, CLGET_FD, (char *)&fd) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return NULL;
	nconf = getnetconfigent(ss.ss_family == AF_INET6 ? "tcp6" : "tcp");
	if (!nconf)
		return NULL;
	nb.buf = &ss;
	nb.len = nb.maxlen = len;
	uaddr = taddr2uaddr(nconf, &nb);
	freenetconfigent(nconf);
	return uaddr;
}

static double
do_whoami(CLIENT *clnt, size_t size, uint64_t seed, const struct options *o)
{
	rpctest_whoami_res *res;
	char *local;
	double t0, t;
	int want = o->auth_sys ? AUTH_SYS : AUTH_NONE;

	t0 = call_begin();
	res = rpctest_whoami_1(clnt);
	t = call_end(t0);
	if (!res) {
		rpc_failed(clnt, OP_WHOAMI, size);
		return CALL_FAILED;
	}

	if (res->flavor != want)
		mismatch(OP_WHOAMI, size, OFFSET_UNKNOWN, "credential flavor differs");
	if (o->auth_sys && (res->uid != geteuid() || res->gid != getegid()))
		mismatch(OP_WHOAMI, size, OFFSET_UNKNOWN, "AUTH_SYS uid or gid differs");

	local = local_uaddr(clnt);
	if (!o->quiet) {
		printf("whoami caller=%s local=%s netid=%s xp_fd=%s", res->caller,
		       local ? local : "?", res->netid[0] ? res->netid : "-",
		       res->xp_fd);
		if (res->flavor == AUTH_SYS)
			printf(" cred=AUTH_SYS uid=%u gid=%u machine=%s\n",
			       res->uid, res->gid, res->machine);
		else if (res->flavor == AUTH_NONE)
			printf(" cred=AUTH_NONE\n");
		else
			printf(" cred=%d\n", res->flavor);
	}
	free(local);
	clnt_freeres(clnt, (xdrproc_t)xdr_rpctest_whoami_res, (caddr_t)res);
	return t;
}

static void
run_op(CLIENT *clnt, const struct options *o, unsigned int oi, unsigned int si,
       unsigned long iter)
{
	enum op op = o->ops[oi];
	size_t size = op_desc[op].sized ? o->sizes[si] : 0;
	uint64_t seed = call_seed(iter, op, size);
	double t = 0;

	switch (op) {
	case OP_NULL:
		t = do_null(clnt, size, seed);
		break;
	case OP_ECHO:
		t = do_echo(clnt, size, seed);
		break;
	case OP_SINK:
		t = do_sink(clnt, size, seed);
		break;
	case OP_SOURCE:
		t = do_source(clnt, size, seed);
		break;
	case OP_MIXED:
		t = do_mixed(clnt, size, seed);
		break;
	case OP_WHOAMI:
		t = do_whoami(clnt, size, seed, o);
		break;
	case OP_COUNT:
		break;
	}
	total_calls++;
	if (t == CALL_FAILED)
		return;
	stats[oi][si].calls++;
	stats[oi][si].seconds += t;
	stats[oi][si].cpu_seconds += last_call_cpu;
	stats[oi][si].bytes += (unsigned long long)op_desc[op].payload * size;
	if (op != OP_WHOAMI)
		report_ok(o, op, size);
}

static void
print_bench(const struct options *o)
{
	printf("%-7s %10s %8s %10s %11s %10s %11s%s\n",
	       "op", "size", "calls", "seconds", "calls/s", "MB/s", "mean_us",
	       measure_cpu ? "      cpu_us" : "");
	for (unsigned int oi = 0; oi < o->nops; oi++) {
		enum op op = o->ops[oi];
		unsigned int n = op_desc[op].sized ? o->nsizes : 1;

		for (unsigned int si = 0; si < n; si++) {
			const struct stat_cell *c = &stats[oi][si];
			double secs = c->seconds > 0 ? c->seconds : 1e-9;

			printf("%-7s %10zu %8lu %10.4f %11.1f %10.2f %11.1f",
			       op_desc[op].name,
			       op_desc[op].sized ? o->sizes[si] : (size_t)0,
			       c->calls, c->seconds, (double)c->calls / secs,
			       (double)c->bytes / secs / 1e6,
			       c->calls ? c->seconds * 1e6 / (double)c->calls : 0.0);
			if (measure_cpu)
				printf(" %11.1f", c->calls ? c->cpu_seconds * 1e6 /
				       (double)c->calls : 0.0);
			printf("\n");
		}
	}
}

/* --- client handle --------------------------------------------------------- */

/* host:port as a socket address of the given family, or exit. */
static socklen_t
resolve(const char *host, int family, unsigned int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints, *ai;
	socklen_t len;
	int err;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = family;
	hints.ai_socktype = SOCK_STREAM;
	err = getaddrinfo(host, NULL, &hints, &ai);
	if (err) {
		fprintf(stderr, "%s: %s: %s\n", progname, host, gai_strerror(err));
		exit(EX_RPC);
	}
	len = ai->ai_addrlen;
	memcpy(ss, ai->ai_addr, len);
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
	return len;
}

static struct netconfig *
netconfig_or_exit(const char *netid)
{
	struct netconfig *nconf = getnetconfigent(netid);

	if (!nconf) {
		fprintf(stderr, "%s: netid %s: %s\n", progname, netid, nc_sperror());
		exit(EX_RPC);
	}
	return nconf;
}

static CLIENT *
make_client(const struct options *o)
{
	struct sockaddr_storage ss;
	struct netconfig *nconf;
	CLIENT *clnt = NULL;

	switch (o->mode) {
	case CM_CREATE:
		clnt = clnt_create(o->host, o->prog, RPCTEST_VERS, o->netid);
		break;
	case CM_TP:
		nconf = netconfig_or_exit(o->netid);
		clnt = clnt_tp_create(o->host, o->prog, RPCTEST_VERS, nconf);
		freenetconfigent(nconf);
		break;
	case CM_TLI: {
		struct netbuf nb;
		int family = strcmp(o->netid, "tcp6") == 0 ? AF_INET6 : AF_INET;

		nconf = netconfig_or_exit(o->netid);
		nb.len = nb.maxlen = resolve(o->host, family, o->port, &ss);
		nb.buf = &ss;
		clnt = clnt_tli_create(RPC_ANYFD, nconf, &nb, o->prog, RPCTEST_VERS, 0, 0);
		freenetconfigent(nconf);
		break;
	}
	case CM_TCP: {
		int sock = RPC_ANYSOCK;

		resolve(o->host, AF_INET, o->port, &ss);
		clnt = clnttcp_create((struct sockaddr_in *)&ss, o->prog, RPCTEST_VERS,
				      &sock, 0, 0);
		break;
	}
	}
	if (!clnt) {
		fprintf(stderr, "%s\n", clnt_spcreateerror(o->host));
		exit(EX_RPC);
	}
	return clnt;
}

/* --- options ---------------------------------------------------------------- */

static void
parse_ops(struct options *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;

	if (!copy)
		exit(EX_RPC);
	o->nops = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum op op;

		for (op = 0; op < OP_COUNT; op++)
			if (strcmp(tok, op_desc[op].name) == 0)
				break;
		if (op == OP_COUNT)
			usage_error("unknown operation", tok);
		if (o->nops == MAX_LIST)
			usage_error("too many operations", arg);
		o->ops[o->nops++] = op;
	}
	if (!o->nops)
		usage_error("no operations", arg);
	free(copy);
}

/* NUMBER[K|M][+NUMBER], decimal; XDR lengths are 32-bit. */
static bool
parse_size(const char *s, size_t *out)
{
	unsigned long long v, add = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (*end) {
	case 'K': case 'k':
		v <<= 10;
		end++;
		break;
	case 'M': case 'm':
		v <<= 20;
		end++;
		break;
	}
	if (*end == '+') {
		s = end + 1;
		if (*s < '0' || *s > '9')
			return false;
		add = strtoull(s, &end, 10);
		if (errno)
			return false;
	}
	if (*end || v > UINT_MAX || add > UINT_MAX - v)
		return false;
	*out = (size_t)(v + add);
	return true;
}

static void
parse_sizes(struct options *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL;

	if (!copy)
		exit(EX_RPC);
	o->nsizes = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsizes == MAX_LIST)
			usage_error("too many sizes", arg);
		if (!parse_size(tok, &o->sizes[o->nsizes++]))
			usage_error("bad size", tok);
	}
	if (!o->nsizes)
		usage_error("no sizes", arg);
	free(copy);
}

static unsigned long
parse_number(const char *s, unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		usage_error("bad number", s);
	return v;
}

static void
parse_options(struct options *o, int argc, char **argv)
{
	int opt;

	memset(o, 0, sizeof(*o));
	o->host = "localhost";
	o->netid = "tcp";
	o->mode = CM_CREATE;
	o->timeout = 25;
	o->prog = RPCTEST_PROG;
	o->count = 1;
	o->cycles = 1;
	parse_ops(o, "null,echo,sink,source,mixed");
	parse_sizes(o, "0,1,100,1000,4K,64K,1M,1M+3");

	while ((opt = getopt(argc, argv, "h:m:p:n:A:t:o:s:c:R:P:buqkH")) != -1) {
		switch (opt) {
		case 'h':
			o->host = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "create") == 0)
				o->mode = CM_CREATE;
			else if (strcmp(optarg, "tp") == 0)
				o->mode = CM_TP;
			else if (strcmp(optarg, "tli") == 0)
				o->mode = CM_TLI;
			else if (strcmp(optarg, "tcp") == 0)
				o->mode = CM_TCP;
			else
				usage_error("unknown mode", optarg);
			break;
		case 'p':
			o->port = (unsigned int)parse_number(optarg, 1, 65535);
			o->have_port = true;
			break;
		case 'n':
			if (strcmp(optarg, "tcp") != 0 && strcmp(optarg, "tcp6") != 0)
				usage_error("netid must be tcp or tcp6", optarg);
			o->netid = optarg;
			break;
		case 'A':
			if (strcmp(optarg, "sys") == 0)
				o->auth_sys = true;
			else if (strcmp(optarg, "none") == 0)
				o->auth_sys = false;
			else
				usage_error("credentials must be none or sys", optarg);
			break;
		case 't':
			o->timeout = (unsigned int)parse_number(optarg, 1, 86400);
			break;
		case 'o':
			parse_ops(o, optarg);
			break;
		case 's':
			parse_sizes(o, optarg);
			break;
		case 'c':
			o->count = parse_number(optarg, 1, ULONG_MAX);
			break;
		case 'R':
			o->cycles = parse_number(optarg, 1, ULONG_MAX);
			o->cycles_set = true;
			break;
		case 'P':
			o->prog = (rpcprog_t)parse_number(optarg, 1, 0xffffffffUL);
			break;
		case 'b':
			o->bench = true;
			break;
		case 'u':
			measure_cpu = true;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'k':
			o->keep_going = true;
			break;
		case 'H':
			o->hold = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage_error("unexpected argument", argv[optind]);
	if ((o->mode == CM_TLI || o->mode == CM_TCP) && !o->have_port)
		usage_error("-m tli and -m tcp need", "-p PORT");
	if ((o->mode == CM_CREATE || o->mode == CM_TP) && o->have_port)
		usage_error("-m create and -m tp ask rpcbind for the port; no", "-p");
	if (o->mode == CM_TCP && strcmp(o->netid, "tcp") != 0)
		usage_error("-m tcp (clnttcp_create) is IPv4 only; netid", o->netid);
}

/* --- resources ------------------------------------------------------------- */

/* Open descriptors of this process (the directory's own one included). */
static long
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Resident set size in KiB (VmRSS), or -1. */
static long
rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* --- main ------------------------------------------------------------------- */

/* The signals that end -H; blocked from the start, taken by sigwait(). */
static void
hold_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
}

/* -H: every call is done; keep the client until one of those signals. */
static void
hold_client(void)
{
	sigset_t set;
	int sig;

	hold_signals(&set);
	printf("holding after %lu calls\n", total_calls);
	fflush(stdout);
	(void)sigwait(&set, &sig);
}

/* One client handle: create it, run the set o->count times, destroy it. */
static void
run_cycle(const struct options *o, unsigned long cycle)
{
	struct timeval tv;
	CLIENT *clnt;

	clnt = make_client(o);
	tv.tv_sec = o->timeout;
	tv.tv_usec = 0;
	clnt_control(clnt, CLSET_TIMEOUT, (char *)&tv);
	if (o->auth_sys) {
		AUTH *auth = authunix_create_default();

		if (!auth) {
			fprintf(stderr, "%s: authunix_create_default failed\n", progname);
			exit(EX_RPC);
		}
		auth_destroy(clnt->cl_auth);
		clnt->cl_auth = auth;
	}

	for (unsigned long i = 0; i < o->count; i++) {
		unsigned long iter = cycle * o->count + i;

		for (unsigned int oi = 0; oi < o->nops; oi++) {
			unsigned int n = op_desc[o->ops[oi]].sized ? o->nsizes : 1;

			for (unsigned int si = 0; si < n; si++)
				run_op(clnt, o, oi, si, iter);
		}
	}

	if (o->hold && cycle + 1 == o->cycles)
		hold_client();
	auth_destroy(clnt->cl_auth);
	clnt_destroy(clnt);
}

int
main(int argc, char **argv)
{
	struct options o;
	long fds_before = 0, fds_after, rss_before = 0, rss_after;

	parse_options(&o, argc, argv);
	keep_going = o.keep_going;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A server that goes away is an RPC error, not a reason to die. */
	signal(SIGPIPE, SIG_IGN);
	if (o.hold) {
		sigset_t set;

		hold_signals(&set);
		sigprocmask(SIG_BLOCK, &set, NULL);
	}

	for (unsigned long cycle = 0; cycle < o.cycles; cycle++) {
		run_cycle(&o, cycle);
		/*
		 * "Before" is after the first handle: what libtirpc and the
		 * libraries below it set up once is not growth.
		 */
		if (cycle == 0) {
			fds_before = count_fds();
			rss_before = rss_kb();
		}
	}
	fds_after = count_fds();
	rss_after = rss_kb();

	if (o.bench) {
		print_bench(&o);
		if (o.cycles_set)
			printf("cycles=%lu fds_before=%ld fds_after=%ld rss_kb_before=%ld rss_kb_after=%ld\n",
			       o.cycles, fds_before, fds_after, rss_before, rss_after);
	}
	if (failed_calls) {
		printf("failed %lu of %lu calls\n", failed_calls, total_calls);
		return EX_RPC;
	}
	if (!o.quiet)
		printf("ok %lu calls\n", total_calls);
	return 0;
}
