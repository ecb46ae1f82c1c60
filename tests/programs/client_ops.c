/*
 * rpctest-client's operations: each makes one call through the rpcgen
 * stub, verifies the reply to the byte and prints its line.  An RPC error
 * exits 1 (unless -k), a reply that does not match exits 2.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "client.h"
#include "pattern.h"
#include "rpctest.h"

const struct op_desc op_desc[OP_COUNT] = {
	[OP_NULL]   = { "null",   false, 0 },
	[OP_ECHO]   = { "echo",   true,  2 },	/* size out, size back */
	[OP_SINK]   = { "sink",   true,  1 },
	[OP_SOURCE] = { "source", true,  1 },
	[OP_MIXED]  = { "mixed",  true,  3 },	/* string and opaque out, string back */
	[OP_WHOAMI] = { "whoami", false, 0 },
	[OP_DIGEST] = { "digest", true,  1 },
};

unsigned long total_calls;
unsigned long failed_calls;
bool keep_going;

/* --- reporting ----------------------------------------------------------- */

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

/* size octets of the pattern of seed, as an opaque argument. */
static rpctest_data
pattern_data(size_t size, uint64_t seed)
{
	rpctest_data d = {
		.rpctest_data_len = (u_int)size,
		.rpctest_data_val = xmalloc(size),
	};

	pattern_fill(d.rpctest_data_val, size, seed);
	return d;
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

	arg = pattern_data(size, seed);

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

/* SINK and DIGEST: the server's checksum of the bytes it received. */
static double
do_sink(CLIENT *clnt, enum op op, size_t size, uint64_t seed)
{
	rpctest_data arg = pattern_data(size, seed);
	rpctest_sink_res *sres = NULL;
	u_quad_t *dres = NULL;
	uint64_t length, sum;
	double t0, t;

	t0 = call_begin();
	if (op == OP_SINK)
		sres = rpctest_sink_1(arg, clnt);
	else
		dres = rpctest_digest_1(arg, clnt);	/* one unsigned hyper */
	t = call_end(t0);
	if (!sres && !dres) {
		rpc_failed(clnt, op, size);
		free(arg.rpctest_data_val);
		return CALL_FAILED;
	}

	length = sres ? sres->length : size;
	sum = sres ? sres->checksum : *dres;
	if (length != size)
		mismatch(op, size, length < size ? length : size,
			 "server received a different length");
	if (sum != checksum(arg.rpctest_data_val, size))
		mismatch(op, size, OFFSET_UNKNOWN, "checksum of the bytes the server received differs");

	if (sres)
		clnt_freeres(clnt, (xdrproc_t)xdr_rpctest_sink_res, (caddr_t)sres);
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

/*
 * An address of the CLIENT's descriptor in universal form: its own
 * (getsockname), as the server should see it, or the server's
 * (getpeername), as the program gave it.
 */
static char *
fd_uaddr(CLIENT *clnt, bool peer)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct netbuf nb;
	struct netconfig *nconf;
	char *uaddr = NULL;
	int fd;

	if (!clnt_control(clnt, CLGET_FD, (char *)&fd))
		return NULL;
	if ((peer ? getpeername(fd, (struct sockaddr *)&ss, &len) :
		    getsockname(fd, (struct sockaddr *)&ss, &len)) < 0)
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
	char *local, *server;
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

	local = fd_uaddr(clnt, false);
	server = fd_uaddr(clnt, true);
	if (!o->quiet) {
		printf("whoami caller=%s local=%s server=%s netid=%s xp_fd=%s",
		       res->caller, local ? local : "?", server ? server : "?",
		       res->netid[0] ? res->netid : "-", res->xp_fd);
		if (res->flavor == AUTH_SYS)
			printf(" cred=AUTH_SYS uid=%u gid=%u machine=%s\n",
			       res->uid, res->gid, res->machine);
		else if (res->flavor == AUTH_NONE)
			printf(" cred=AUTH_NONE\n");
		else
			printf(" cred=%d\n", res->flavor);
	}
	free(local);
	free(server);
	clnt_freeres(clnt, (xdrproc_t)xdr_rpctest_whoami_res, (caddr_t)res);
	return t;
}

/* One call of o->ops[oi] (at o->sizes[si]): counted, timed, reported. */
void
run_op(CLIENT *clnt, const struct options *o, unsigned int oi, unsigned int si,
       unsigned long iter)
{
	enum op op = o->ops[oi];
	size_t size = op_desc[op].sized ? o->sizes[si] : 0;
	uint64_t seed = call_seed(iter, op, size);
	double t = 0;

	if (o->pause_ms && total_calls) {
		struct timespec ts = {
			.tv_sec = o->pause_ms / 1000,
			.tv_nsec = (long)(o->pause_ms % 1000) * 1000000,
		};

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
	switch (op) {
	case OP_NULL:
		t = do_null(clnt, size, seed);
		break;
	case OP_ECHO:
		t = do_echo(clnt, size, seed);
		break;
	case OP_SINK:
	case OP_DIGEST:
		t = do_sink(clnt, op, size, seed);
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
	stats_add(oi, si, t, (unsigned long long)op_desc[op].payload * size);
	if (op != OP_WHOAMI)
		report_ok(o, op, size);
}
