/*
 * rdma-peer: a raw RPC-over-RDMA Version One peer (RFC 8166, with the
 * RFC 8797 CM private data) for the test suite.  It speaks the protocol
 * directly on librdmacm and libibverbs, with the project's header and
 * private data codecs, so that a test can send what no well-behaved
 * implementation sends and see exactly what comes back.
 *
 *   rdma-peer call  -a ADDR -p PORT [options] CASE...
 *   rdma-peer serve -a ADDR -p PORT [options] CASE
 *
 * "call" connects to a server (the shim's, under rpctest-server) and runs
 * each CASE on that one connection; "serve" listens for a client (the
 * shim's, under rpctest-client) and plays one role.  Everything it
 * observes is printed on stdout as one "key=value ..." line per event, for
 * the BATS suites to assert on.  Every wait is bounded by --timeout.
 *
 * Exit status: 0 the scenario went as expected from this side, 1 it did
 * not (a "why=" on the summary line says what), 2 the connection or the
 * listener could not be set up, 64 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rpc/rpc.h>

#include "pattern.h"
#include "pvtdata.h"
#include "rpcrdma_xdr.h"
#include "rpctest.h"

#define EX_OK 0
#define EX_FAIL 1
#define EX_SETUP 2
#define EX_USAGE 64

/* Receives kept posted per connection. */
#define PEER_NRECV 32
/*
 * Receive buffers are at least this big whatever is advertised, so that a
 * message above the advertised size arrives and is reported as a
 * violation instead of breaking the connection.
 */
#define PEER_RECV_BUF_MIN 65536u
/* Room for any inline message this peer builds. */
#define PEER_SEND_BUF (RPCRDMA1_INLINE_MAX + 4096u)
/* Largest chunk data, rebuilt call or reply handled. */
#define PEER_REGION (4u << 20)
#define PEER_MAX_CONNS 16
#define PEER_MAX_HELD 64
#define PEER_MAX_CASES 128
/* RDMA Reads in flight, each way. */
#define PEER_RD_ATOM 8
/* A program number nobody registers (noprog). */
#define PEER_NOPROG 0x3ffffffeu
/* Octets of the late RDMA Write and Read (rkey-after-reply). */
#define PEER_LATE_LEN 8u

#define DEFAULT_TIMEOUT_S 20
#define DEFAULT_ANSWER_MS 5000
#define DEFAULT_QUIET_MS 1000

/* xdrproc_t is variadic: cast through a plain function pointer type. */
#define XDRPROC(f) ((xdrproc_t)(void (*)(void))(f))

enum wr_kind { WR_RECV = 1, WR_SEND, WR_READ, WR_WRITE };
#define WRID(kind, idx) (((uint64_t)(kind) << 32) | (uint32_t)(idx))
#define WRID_KIND(id) ((enum wr_kind)((id) >> 32))
#define WRID_IDX(id) ((uint32_t)(id))

static const char *progname = "rdma-peer";
static bool verbose;
static volatile sig_atomic_t stop_signal;
static int64_t run_deadline;

/* ------------------------------------------------------------------ */
/* Output and time                                                     */
/* ------------------------------------------------------------------ */

static void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* One line of the machine-readable output. */
static void
out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void
warnx(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A line assembled piece by piece, printed once. */
struct line {
	char buf[2048];
	size_t len;
};

static void line_add(struct line *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
line_add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n;
	if (l->len >= sizeof(l->buf))
		l->len = sizeof(l->buf) - 1;
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* now + ms, but never past the end of the whole run. */
static int64_t
bound(int64_t ms)
{
	int64_t d = now_ms() + ms;

	return d < run_deadline ? d : run_deadline;
}

static int
left_ms(int64_t deadline)
{
	int64_t l = deadline - now_ms();

	if (l < 0)
		return 0;
	return l > INT32_MAX ? INT32_MAX : (int)l;
}

/* A short pause between polls of a completion queue. */
static void
nap(void)
{
	const struct timespec ts = { .tv_nsec = 200 * 1000 };

	nanosleep(&ts, NULL);
}

static void
on_signal(int sig)
{
	stop_signal = sig;
}

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static uint8_t *
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* "ADDR port P" of a socket address, for the output. */
static void
sa_format(const struct sockaddr *sa, char *buf, size_t len, unsigned int *port)
{
	const void *a;

	if (sa->sa_family == AF_INET6) {
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		*port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	} else {
		a = &((const struct sockaddr_in *)sa)->sin_addr;
		*port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
	}
	if (!inet_ntop(sa->sa_family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

/* ------------------------------------------------------------------ */
/* Options                                                             */
/* ------------------------------------------------------------------ */

enum pdata_kind {
	PD_SIZES,	/* RFC 8797 message with --pdata SEND:RECV[:R] */
	PD_NONE,	/* no private data at all */
	PD_GARBAGE,	/* 16 octets without the format identifier */
	PD_BADVERSION,	/* the format identifier with version 2 */
};

enum serve_case { SV_SILENT, SV_REJECT, SV_ACCEPT, SV_RKEY };

static const char *const serve_case_names[] = {
	[SV_SILENT] = "silent",
	[SV_REJECT] = "reject",
	[SV_ACCEPT] = "accept",
	[SV_RKEY] = "rkey-after-reply",
};

struct opts {
	bool serve;
	const char *addr;
	unsigned int port;
	bool have_port;
	enum pdata_kind pdata;
	struct rpcrdma_cm_pdata pd;
	uint32_t prog;
	uint32_t vers;
	unsigned int credits;
	unsigned int timeout_s;
	unsigned int answer_ms;
	unsigned int quiet_ms;
	unsigned int connections;
	bool keep_chunks;
	int rd_init;			/* call: -1, or the connect's initiator_depth */
	int rd_resp;			/* call: -1, or its responder_resources */
	const char *ready;
	char **cases;
	int ncases;
};

static void
usage(void)
{
	fprintf(stderr,
		"usage: %s call  -a ADDR -p PORT [options] CASE...\n"
		"       %s serve -a ADDR -p PORT [options] silent|reject|accept|rkey-after-reply\n"
		"options:\n"
		"  -a, --addr ADDR       numeric IPv4 or IPv6 address (call: the server's,\n"
		"                        serve: the one to listen on)\n"
		"  -p, --port PORT       RDMA-CM port (serve: 0 picks one, see --ready)\n"
		"  --pdata WHAT          private data sent in the connect or accept:\n"
		"                        SEND:RECV[:R] (sizes in bytes, K suffix allowed;\n"
		"                        R sets the remote invalidation flag; default\n"
		"                        4096:4096), none, garbage, badversion\n"
		"  --prog N --vers V     program and version called and served\n"
		"                        (default the rpctest program, 0x%x version %u)\n"
		"  --credits N           call: credits asked for (default 8);\n"
		"                        serve: credits granted, 0 allowed (default 32)\n"
		"  --timeout S           bound on the whole run (default %d)\n"
		"  --answer-wait MS      call: wait for an answer (default %d)\n"
		"  --quiet-wait MS       call: wait for an answer that must not come\n"
		"                        (default %d)\n"
		"  --connections N       serve: end after N connections closed (accept,\n"
		"                        rkey-after-reply) or N requests rejected (default 1)\n"
		"  --rd-atom N|I:R       call: the connect's initiator_depth (RDMA Reads\n"
		"                        we may issue) and responder_resources (Reads we\n"
		"                        answer): N for both, or I and R (the Linux\n"
		"                        client connects with 0:N); default: what the\n"
		"                        device allows, at most 8\n"
		"  --keep-chunks         call: leave the memory of each call's chunks\n"
		"                        registered after its answer (a careless client)\n"
		"  -r, --ready FILE      serve: write \"ready PORT\" to FILE once listening\n"
		"  -v, --verbose         print every RDMA-CM event\n"
		"call cases, run in order on one connection; CASE[=EXPECT] overrides the\n"
		"expected answer (success, vers, badheader, none, prog-unavail, any):\n"
		"  null echo:N sink:N source:N noprog badvers msgp done badproc[:N]\n"
		"  badchunk[:disc|trunc|count] xidmismatch short rdmaerror\n"
		"  null, echo, sink, source and noprog take chunks: +read (the call in a\n"
		"  position-zero Read chunk), +reply (a Reply chunk), +write (a Write\n"
		"  chunk for the result of echo and source), e.g. echo:8000+read+reply\n"
		"exit status: 0 as expected, 1 not as expected, 2 setup failed, 64 usage\n",
		progname, progname, RPCTEST_PROG, RPCTEST_VERS, DEFAULT_TIMEOUT_S,
		DEFAULT_ANSWER_MS, DEFAULT_QUIET_MS);
	exit(EX_USAGE);
}

static void
usage_error(const char *what, const char *arg)
{
	warnx("%s: %s", what, arg);
	usage();
}

static unsigned long
parse_number(const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		usage_error("bad number", s);
	return v;
}

/* NUMBER[K]: bytes; *end set past it. */
static bool
parse_bytes(const char *s, char **end, uint32_t *out_bytes)
{
	unsigned long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, end, 10);
	if (errno)
		return false;
	if (**end == 'K' || **end == 'k') {
		v *= 1024;
		(*end)++;
	}
	if (v > UINT32_MAX)
		return false;
	*out_bytes = (uint32_t)v;
	return true;
}

/* --rd-atom N (both) or I:R (initiator_depth:responder_resources). */
static void
parse_rd_atom(struct opts *o, const char *s)
{
	const char *colon = strchr(s, ':');
	char first[16];

	if (!colon) {
		o->rd_init = o->rd_resp = (int)parse_number(s, 255);
		return;
	}
	if ((size_t)(colon - s) >= sizeof(first))
		usage_error("--rd-atom", s);
	memcpy(first, s, (size_t)(colon - s));
	first[colon - s] = '\0';
	o->rd_init = (int)parse_number(first, 255);
	o->rd_resp = (int)parse_number(colon + 1, 255);
}

static void
parse_pdata(struct opts *o, const char *s)
{
	char *end;

	if (strcmp(s, "none") == 0) {
		o->pdata = PD_NONE;
		return;
	}
	if (strcmp(s, "garbage") == 0) {
		o->pdata = PD_GARBAGE;
		return;
	}
	if (strcmp(s, "badversion") == 0) {
		o->pdata = PD_BADVERSION;
		return;
	}
	o->pdata = PD_SIZES;
	memset(&o->pd, 0, sizeof(o->pd));
	if (!parse_bytes(s, &end, &o->pd.send_size) || *end != ':' ||
	    !parse_bytes(end + 1, &end, &o->pd.recv_size))
		usage_error("--pdata wants none, garbage, badversion or SEND:RECV[:R]", s);
	if (*end == ':' && (end[1] == 'R' || end[1] == 'r') && !end[2])
		o->pd.remote_inv = true;
	else if (*end)
		usage_error("--pdata wants none, garbage, badversion or SEND:RECV[:R]", s);
	if (o->pd.send_size < RPCRDMA1_INLINE_MIN || o->pd.send_size > RPCRDMA1_INLINE_MAX ||
	    o->pd.recv_size < RPCRDMA1_INLINE_MIN || o->pd.recv_size > RPCRDMA1_INLINE_MAX)
		usage_error("--pdata sizes must be 1K..256K", s);
}

static void
parse_options(struct opts *o, int argc, char **argv)
{
	enum {
		OPT_PDATA = 256, OPT_PROG, OPT_VERS, OPT_CREDITS, OPT_TIMEOUT,
		OPT_ANSWER, OPT_QUIET, OPT_CONNS, OPT_KEEP, OPT_RDATOM,
	};
	static const struct option longopts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "ready", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "pdata", required_argument, NULL, OPT_PDATA },
		{ "prog", required_argument, NULL, OPT_PROG },
		{ "vers", required_argument, NULL, OPT_VERS },
		{ "credits", required_argument, NULL, OPT_CREDITS },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "answer-wait", required_argument, NULL, OPT_ANSWER },
		{ "quiet-wait", required_argument, NULL, OPT_QUIET },
		{ "connections", required_argument, NULL, OPT_CONNS },
		{ "keep-chunks", no_argument, NULL, OPT_KEEP },
		{ "rd-atom", required_argument, NULL, OPT_RDATOM },
		{ NULL, 0, NULL, 0 },
	};
	bool credits_set = false;
	int opt;

	memset(o, 0, sizeof(*o));
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "call") == 0)
		o->serve = false;
	else if (strcmp(argv[1], "serve") == 0)
		o->serve = true;
	else if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		usage();
	else
		usage_error("the first argument must be call or serve", argv[1]);

	o->pdata = PD_SIZES;
	o->pd.send_size = 4096;
	o->pd.recv_size = 4096;
	o->prog = RPCTEST_PROG;
	o->vers = RPCTEST_VERS;
	o->timeout_s = DEFAULT_TIMEOUT_S;
	o->answer_ms = DEFAULT_ANSWER_MS;
	o->quiet_ms = DEFAULT_QUIET_MS;
	o->connections = 1;
	o->rd_init = o->rd_resp = -1;

	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "a:p:r:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			o->port = (unsigned int)parse_number(optarg, 65535);
			o->have_port = true;
			break;
		case 'r':
			o->ready = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case OPT_PDATA:
			parse_pdata(o, optarg);
			break;
		case OPT_PROG:
			o->prog = (uint32_t)parse_number(optarg, UINT32_MAX);
			break;
		case OPT_VERS:
			o->vers = (uint32_t)parse_number(optarg, UINT32_MAX);
			break;
		case OPT_CREDITS:
			o->credits = (unsigned int)parse_number(optarg, 65535);
			credits_set = true;
			break;
		case OPT_TIMEOUT:
			o->timeout_s = (unsigned int)parse_number(optarg, 86400);
			if (!o->timeout_s)
				usage_error("bad --timeout", optarg);
			break;
		case OPT_ANSWER:
			o->answer_ms = (unsigned int)parse_number(optarg, 3600000);
			break;
		case OPT_QUIET:
			o->quiet_ms = (unsigned int)parse_number(optarg, 3600000);
			break;
		case OPT_KEEP:
			o->keep_chunks = true;
			break;
		case OPT_RDATOM:
			parse_rd_atom(o, optarg);
			break;
		case OPT_CONNS:
			o->connections = (unsigned int)parse_number(optarg, 100000);
			if (!o->connections)
				usage_error("bad --connections", optarg);
			break;
		default:
			usage();
		}
	}
	if (!credits_set)
		o->credits = o->serve ? 32 : 8;
	if (!o->addr)
		usage_error("missing", "-a ADDR");
	if (!o->have_port)
		usage_error("missing", "-p PORT");
	if (!o->serve && !o->port)
		usage_error("call needs a port", "0");
	o->cases = argv + optind;
	o->ncases = argc - optind;
	if (o->ncases < 1)
		usage_error("missing", "CASE");
	if (o->serve && o->ncases != 1)
		usage_error("serve takes one case", o->cases[1]);
	if (o->ncases > PEER_MAX_CASES)
		usage_error("too many cases", o->cases[PEER_MAX_CASES]);
}

/* What this end advertises, or the Version One defaults (RFC 8797 s5.1). */
static void
own_sizes(const struct opts *o, uint32_t *send, uint32_t *recv)
{
	if (o->pdata == PD_SIZES) {
		*send = rpcrdma_cmp_size_decode(rpcrdma_cmp_size_encode(o->pd.send_size));
		*recv = rpcrdma_cmp_size_decode(rpcrdma_cmp_size_encode(o->pd.recv_size));
	} else {
		*send = RPCRDMA1_INLINE_MIN;
		*recv = RPCRDMA1_INLINE_MIN;
	}
}

static const char *
pdata_name(const struct opts *o, char *buf, size_t len)
{
	switch (o->pdata) {
	case PD_NONE:
		return "none";
	case PD_GARBAGE:
		return "garbage";
	case PD_BADVERSION:
		return "badversion";
	case PD_SIZES:
		break;
	}
	snprintf(buf, len, "%u:%u%s", o->pd.send_size, o->pd.recv_size,
		 o->pd.remote_inv ? ":R" : "");
	return buf;
}

/* The private data to send; returns its length (0: none). */
static uint8_t
build_pdata(const struct opts *o, uint8_t buf[16])
{
	struct rpcrdma_cm_pdata pd = { .send_size = 8192, .recv_size = 8192 };
	unsigned int i;

	switch (o->pdata) {
	case PD_NONE:
		return 0;
	case PD_GARBAGE:
		/* No 0xf6 octet anywhere, so no format identifier either. */
		for (i = 0; i < 16; i++)
			buf[i] = (uint8_t)(0x11 * (i + 1)) & 0x7f;
		return 16;
	case PD_BADVERSION:
		rpcrdma_cmp_encode(buf, &pd);
		buf[4] = 2;
		return RPCRDMA1_CMP_LEN;
	case PD_SIZES:
		break;
	}
	rpcrdma_cmp_encode(buf, &o->pd);
	return RPCRDMA1_CMP_LEN;
}

/*
 * Report the private data received from the other end ("server" or
 * "client") and what it means: the RFC 8797 message at any offset
 * (s5.2), else the Version One defaults.  RoCE and InfiniBand pad the
 * private data with zeros, so its length says little.
 */
static bool
report_pdata(const char *who, const void *data, uint8_t len,
	     struct rpcrdma_cm_pdata *pd)
{
	const uint8_t *p = data;
	size_t off;
	bool valid = rpcrdma_cmp_decode(data, len, pd);

	for (off = 0; p && off + RPCRDMA1_CMP_LEN <= len; off++) {
		if (get32(p + off) != RPCRDMA1_CMP_FORMAT_ID)
			continue;
		if (valid && p[off + 4] != RPCRDMA1_CMP_VERSION)
			continue;
		if (valid) {
			out("%s_pdata=present format=0x%08x version=%u send=%u recv=%u rinv=%d offset=%zu len=%u",
			    who, RPCRDMA1_CMP_FORMAT_ID, p[off + 4], pd->send_size,
			    pd->recv_size, pd->remote_inv, off, len);
			return true;
		}
		out("%s_pdata=unknown-version format=0x%08x version=%u send=%u recv=%u rinv=0 offset=%zu len=%u",
		    who, RPCRDMA1_CMP_FORMAT_ID, p[off + 4], pd->send_size,
		    pd->recv_size, off, len);
		return false;
	}
	out("%s_pdata=absent send=%u recv=%u rinv=0 len=%u", who, pd->send_size,
	    pd->recv_size, len);
	return false;
}

static bool
make_sockaddr(const char *addr, unsigned int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints, *ai;
	char ps[8];
	int err;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%u", port);
	err = getaddrinfo(addr, ps, &hints, &ai);
	if (err) {
		warnx("%s: %s", addr, gai_strerror(err));
		return false;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return true;
}

/* ------------------------------------------------------------------ */
/* One connection: queue pair, completion queue, registered buffers     */
/* ------------------------------------------------------------------ */

/* rkey-after-reply: the chunks of the previous call on a connection. */
struct late {
	bool pending;
	uint32_t xid;
	bool have_write;
	const char *write_target;	/* "reply" or "write" chunk */
	struct rpcrdma_segment wseg;
	bool have_read;
	struct rpcrdma_segment rseg;
};

struct pconn {
	struct rdma_cm_id *id;
	struct rdma_event_channel *ech;	/* call role only */
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	uint8_t *recv_mem;
	struct ibv_mr *recv_mr;
	uint32_t recv_size;		/* octets per receive buffer */
	uint8_t *send_mem;
	struct ibv_mr *send_mr;
	/* [0, REGION): RDMA Read targets; [REGION, 2 REGION): the reply. */
	uint8_t *data_mem;
	struct ibv_mr *data_mr;
	uint8_t *call_mem;		/* a call rebuilt from chunks */

	/* Receives completed while waiting for something else. */
	uint32_t pend_idx[PEER_NRECV];
	uint32_t pend_len[PEER_NRECV];
	unsigned int pend_head, pend_count;

	uint32_t own_send, own_recv;	/* as advertised (or the defaults) */
	struct rpcrdma_cm_pdata peer_pd;	/* the other end's, or defaults */
	bool peer_pd_valid;
	uint8_t initiator_depth, responder_resources;

	bool dead;			/* the queue pair failed or was flushed */
	bool disconnecting;		/* rdma_disconnect() called */
	bool established;
	bool closed;
	unsigned int number;		/* serve: 1, 2, ... in accept order */
	unsigned int calls;
	struct late late;
	struct rpcrdma_hdr hdr;		/* scratch: a decoded header */
	struct rpcrdma_hdr rhdr;	/* scratch: a header to encode */
};

static void
conn_free(struct pconn *c)
{
	struct ibv_cq *cq;
	void *ctx;

	if (!c)
		return;
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->cq) {
		while (c->cch && ibv_get_cq_event(c->cch, &cq, &ctx) == 0)
			ibv_ack_cq_events(cq, 1);
		ibv_destroy_cq(c->cq);
	}
	if (c->cch)
		ibv_destroy_comp_channel(c->cch);
	if (c->recv_mr)
		ibv_dereg_mr(c->recv_mr);
	if (c->send_mr)
		ibv_dereg_mr(c->send_mr);
	if (c->data_mr)
		ibv_dereg_mr(c->data_mr);
	free(c->recv_mem);
	free(c->send_mem);
	free(c->data_mem);
	free(c->call_mem);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ech)
		rdma_destroy_event_channel(c->ech);
	free(c);
}

static int
reg_buf(struct pconn *c, uint8_t **mem, struct ibv_mr **mr, size_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len))
		return -ENOMEM;
	memset(p, 0, len);
	*mem = p;
	*mr = ibv_reg_mr(c->pd, p, len, IBV_ACCESS_LOCAL_WRITE);
	return *mr ? 0 : (errno ? -errno : -ENOMEM);
}

static int
post_recv(struct pconn *c, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->recv_mem + (size_t)idx * c->recv_size),
		.length = c->recv_size,
		.lkey = c->recv_mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = WRID(WR_RECV, idx),
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	if (ibv_post_recv(c->qp, &wr, &bad)) {
		c->dead = true;
		return -1;
	}
	return 0;
}

/* Protection domain, completion queue, queue pair and buffers on c->id. */
static int
conn_setup(struct pconn *c)
{
	struct ibv_qp_init_attr qa;
	struct ibv_device_attr da;
	uint32_t i;
	int ret;

	c->recv_size = c->own_recv > PEER_RECV_BUF_MIN ? c->own_recv : PEER_RECV_BUF_MIN;
	c->pd = ibv_alloc_pd(c->id->verbs);
	if (!c->pd)
		return -ENOMEM;
	c->cch = ibv_create_comp_channel(c->id->verbs);
	if (!c->cch)
		return -ENOMEM;
	ret = set_nonblock(c->cch->fd);
	if (ret)
		return ret;
	c->cq = ibv_create_cq(c->id->verbs, 2 * PEER_NRECV + 32, c, c->cch, 0);
	if (!c->cq)
		return -ENOMEM;
	if (ibv_req_notify_cq(c->cq, 0))
		return -EIO;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 1;
	qa.cap.max_send_wr = 32;
	qa.cap.max_recv_wr = PEER_NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return errno ? -errno : -ENOMEM;
	c->qp = c->id->qp;

	ret = reg_buf(c, &c->recv_mem, &c->recv_mr, (size_t)PEER_NRECV * c->recv_size);
	if (!ret)
		ret = reg_buf(c, &c->send_mem, &c->send_mr, PEER_SEND_BUF);
	if (!ret)
		ret = reg_buf(c, &c->data_mem, &c->data_mr, 2 * (size_t)PEER_REGION);
	if (ret)
		return ret;
	c->call_mem = malloc(PEER_REGION);
	if (!c->call_mem)
		return -ENOMEM;
	for (i = 0; i < PEER_NRECV; i++)
		if (post_recv(c, i))
			return -EIO;

	if (ibv_query_device(c->id->verbs, &da) == 0) {
		c->initiator_depth = (uint8_t)(da.max_qp_init_rd_atom < PEER_RD_ATOM ?
					       da.max_qp_init_rd_atom : PEER_RD_ATOM);
		c->responder_resources = (uint8_t)(da.max_qp_rd_atom < PEER_RD_ATOM ?
						   da.max_qp_rd_atom : PEER_RD_ATOM);
	} else {
		c->initiator_depth = 1;
		c->responder_resources = 1;
	}
	return 0;
}

/* Send len octets of send_mem. */
static int
post_send(struct pconn *c, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->send_mem,
		.length = len,
		.lkey = c->send_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WRID(WR_SEND, 0),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	return ibv_post_send(c->qp, &wr, &bad) ? -1 : 0;
}

/* An RDMA Read or Write between local (inside data_mem) and a segment. */
static int
post_rdma(struct pconn *c, enum wr_kind kind, uint8_t *local, uint32_t len,
	  uint32_t rkey, uint64_t raddr)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)local,
		.length = len,
		.lkey = c->data_mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = WRID(kind, 0),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = kind == WR_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.rkey = rkey;
	wr.wr.rdma.remote_addr = raddr;
	return ibv_post_send(c->qp, &wr, &bad) ? -1 : 0;
}

static void
pend_push(struct pconn *c, uint32_t idx, uint32_t len)
{
	unsigned int tail = (c->pend_head + c->pend_count) % PEER_NRECV;

	c->pend_idx[tail] = idx;
	c->pend_len[tail] = len;
	c->pend_count++;
}

static bool
pend_pop(struct pconn *c, uint32_t *idx, uint32_t *len)
{
	if (!c->pend_count)
		return false;
	*idx = c->pend_idx[c->pend_head];
	*len = c->pend_len[c->pend_head];
	c->pend_head = (c->pend_head + 1) % PEER_NRECV;
	c->pend_count--;
	return true;
}

/*
 * Account for one completion: receives are queued, failures mark the
 * connection dead.  True when it is the completion of wrid.
 */
static bool
take_wc(struct pconn *c, const struct ibv_wc *wc, uint64_t wrid)
{
	if (WRID_KIND(wc->wr_id) == WR_RECV) {
		if (wc->status == IBV_WC_SUCCESS) {
			pend_push(c, WRID_IDX(wc->wr_id), wc->byte_len);
		} else {
			if (!c->dead && wc->status != IBV_WC_WR_FLUSH_ERR)
				out("recv_error status=\"%s\"", ibv_wc_status_str(wc->status));
			c->dead = true;
		}
		return false;
	}
	if (wrid && wc->wr_id == wrid)
		return true;
	if (wc->status != IBV_WC_SUCCESS)
		c->dead = true;
	return false;
}

/*
 * Poll until the completion of wrid; receives met on the way are queued.
 * Returns its status, or -1 when the deadline passed or a signal came.
 */
static int
wait_wr(struct pconn *c, uint64_t wrid, int64_t deadline)
{
	struct ibv_wc wc;
	int n;

	for (;;) {
		n = ibv_poll_cq(c->cq, 1, &wc);
		if (n < 0) {
			c->dead = true;
			return -1;
		}
		if (n == 1) {
			if (take_wc(c, &wc, wrid))
				return (int)wc.status;
			continue;
		}
		if (stop_signal || now_ms() >= deadline)
			return -1;
		nap();
	}
}

static const char *
wc_status_name(int st)
{
	return st < 0 ? "timeout" : ibv_wc_status_str((enum ibv_wc_status)st);
}

/* Post a Send of len octets and wait for its completion. */
static int
send_sync(struct pconn *c, uint32_t len, int64_t deadline)
{
	int st;

	if (post_send(c, len)) {
		c->dead = true;
		return -1;
	}
	st = wait_wr(c, WRID(WR_SEND, 0), deadline);
	if (st != IBV_WC_SUCCESS)
		c->dead = true;
	return st;
}

static int
rdma_sync(struct pconn *c, enum wr_kind kind, uint8_t *local, uint32_t len,
	  uint32_t rkey, uint64_t raddr, int64_t deadline)
{
	int st;

	if (post_rdma(c, kind, local, len, rkey, raddr)) {
		c->dead = true;
		return -1;
	}
	st = wait_wr(c, WRID(kind, 0), deadline);
	if (st != IBV_WC_SUCCESS)
		c->dead = true;
	return st;
}

/* ------------------------------------------------------------------ */
/* RDMA-CM                                                             */
/* ------------------------------------------------------------------ */

static void
print_event(const struct rdma_cm_event *ev)
{
	if (verbose)
		out("cm_event=%s status=%d", rdma_event_str(ev->event), ev->status);
}

/* Next event on ch before the deadline: 0, or -ETIMEDOUT, -EINTR, -errno. */
static int
wait_cm_event(struct rdma_event_channel *ch, int64_t deadline,
	      struct rdma_cm_event **ev)
{
	for (;;) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

		if (rdma_get_cm_event(ch, ev) == 0) {
			print_event(*ev);
			return 0;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (stop_signal)
			return -EINTR;
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, left_ms(deadline)) < 0 && errno != EINTR)
			return -errno;
	}
}

/* ------------------------------------------------------------------ */
/* RPC messages                                                        */
/* ------------------------------------------------------------------ */

/* An RPC call with AUTH_NONE; returns its octets, or 0 when it does not fit. */
static size_t
encode_call(uint8_t *p, size_t room, uint32_t xid, uint32_t prog,
	    uint32_t vers, uint32_t proc, xdrproc_t xargs, void *args)
{
	struct rpc_msg m;
	size_t n = 0;
	XDR x;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = prog;
	m.rm_call.cb_vers = vers;
	m.rm_call.cb_proc = proc;
	m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, (char *)p, (u_int)room, XDR_ENCODE);
	if (xdr_callmsg(&x, &m) && (*xargs)(&x, args))
		n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

static const char *
accept_stat_name(enum accept_stat st)
{
	switch (st) {
	case SUCCESS:
		return "SUCCESS";
	case PROG_UNAVAIL:
		return "PROG_UNAVAIL";
	case PROG_MISMATCH:
		return "PROG_MISMATCH";
	case PROC_UNAVAIL:
		return "PROC_UNAVAIL";
	case GARBAGE_ARGS:
		return "GARBAGE_ARGS";
	case SYSTEM_ERR:
		return "SYSTEM_ERR";
	}
	return "unknown";
}

/* ------------------------------------------------------------------ */
/* Call role                                                           */
/* ------------------------------------------------------------------ */

enum expect {
	EXP_SUCCESS,		/* RDMA_MSG, RPC accepted SUCCESS, data verified */
	EXP_VERS,		/* RDMA_ERROR ERR_VERS 1..1, version echoed */
	EXP_BADHEADER,		/* RDMA_ERROR BADHEADER, version echoed */
	EXP_NONE,		/* no answer at all */
	EXP_PROG_UNAVAIL,	/* RDMA_MSG, RPC PROG_UNAVAIL */
	EXP_ANY,		/* whatever comes, only reported */
	EXP_COUNT
};

static const char *const expect_names[EXP_COUNT] = {
	[EXP_SUCCESS] = "success",
	[EXP_VERS] = "vers",
	[EXP_BADHEADER] = "badheader",
	[EXP_NONE] = "none",
	[EXP_PROG_UNAVAIL] = "prog-unavail",
	[EXP_ANY] = "any",
};

enum case_kind {
	C_NULL, C_ECHO, C_SINK, C_SOURCE, C_NOPROG, C_BADVERS, C_MSGP, C_DONE,
	C_BADPROC, C_BADCHUNK, C_XIDMISMATCH, C_SHORT, C_RDMAERROR, C_COUNT
};

enum case_arg { ARG_NONE, ARG_SIZE, ARG_OPT_NUMBER, ARG_OPT_WORD };

static const struct case_desc {
	const char *name;
	enum expect expect;
	enum case_arg arg;
	bool chunks;		/* a valid call that may offer chunks */
} case_descs[C_COUNT] = {
	[C_NULL] = { "null", EXP_SUCCESS, ARG_NONE, true },
	[C_ECHO] = { "echo", EXP_SUCCESS, ARG_SIZE, true },
	[C_SINK] = { "sink", EXP_SUCCESS, ARG_SIZE, true },
	[C_SOURCE] = { "source", EXP_SUCCESS, ARG_SIZE, true },
	[C_NOPROG] = { "noprog", EXP_PROG_UNAVAIL, ARG_NONE, true },
	[C_BADVERS] = { "badvers", EXP_VERS, ARG_NONE, false },
	[C_MSGP] = { "msgp", EXP_BADHEADER, ARG_NONE, false },
	[C_DONE] = { "done", EXP_BADHEADER, ARG_NONE, false },
	[C_BADPROC] = { "badproc", EXP_BADHEADER, ARG_OPT_NUMBER, false },
	[C_BADCHUNK] = { "badchunk", EXP_BADHEADER, ARG_OPT_WORD, false },
	[C_XIDMISMATCH] = { "xidmismatch", EXP_BADHEADER, ARG_NONE, false },
	[C_SHORT] = { "short", EXP_NONE, ARG_NONE, false },
	[C_RDMAERROR] = { "rdmaerror", EXP_NONE, ARG_NONE, false },
};

/* badchunk variants. */
enum badchunk { BC_DISC, BC_TRUNC, BC_COUNT };
static const char *const badchunk_names[] = { "disc", "trunc", "count" };

struct pcase {
	const char *text;
	enum case_kind kind;
	enum expect expect;
	uint32_t num;		/* size, or the procedure of badproc */
	enum badchunk variant;
	bool c_read;		/* the call goes in a position-zero Read chunk */
	bool c_write;		/* a Write chunk for the result */
	bool c_reply;		/* a Reply chunk */
};

/* NAME[:ARG][+CHUNK...][=EXPECT] */
static void
parse_case(const char *text, struct pcase *pc)
{
	char buf[128], *ex, *flags, *arg;
	int k;

	memset(pc, 0, sizeof(*pc));
	pc->text = text;
	if (strlen(text) >= sizeof(buf))
		usage_error("unknown case", text);
	strcpy(buf, text);
	ex = strchr(buf, '=');
	if (ex)
		*ex++ = '\0';
	flags = strchr(buf, '+');
	if (flags)
		*flags++ = '\0';
	arg = strchr(buf, ':');
	if (arg) {
		*arg++ = '\0';
		if (!*arg)
			usage_error("bad case argument", text);
	}

	for (k = 0; k < C_COUNT; k++)
		if (strcmp(buf, case_descs[k].name) == 0)
			break;
	if (k == C_COUNT)
		usage_error("unknown case", text);
	pc->kind = (enum case_kind)k;
	pc->expect = case_descs[k].expect;

	switch (case_descs[k].arg) {
	case ARG_NONE:
		if (arg)
			usage_error("this case takes no argument", text);
		break;
	case ARG_SIZE: {
		char *end;

		if (!arg || !parse_bytes(arg, &end, &pc->num) || *end ||
		    pc->num > PEER_REGION / 2)
			usage_error("this case needs a size (at most 2M)", text);
		break;
	}
	case ARG_OPT_NUMBER:
		pc->num = arg ? (uint32_t)parse_number(arg, UINT32_MAX) : 7;
		break;
	case ARG_OPT_WORD:
		pc->variant = BC_DISC;
		if (arg) {
			unsigned int v;

			for (v = 0; v < 3; v++)
				if (strcmp(arg, badchunk_names[v]) == 0)
					break;
			if (v == 3)
				usage_error("badchunk takes disc, trunc or count", text);
			pc->variant = (enum badchunk)v;
		}
		break;
	}

	while (flags) {
		char *next = strchr(flags, '+');

		if (next)
			*next++ = '\0';
		if (strcmp(flags, "read") == 0)
			pc->c_read = true;
		else if (strcmp(flags, "write") == 0)
			pc->c_write = true;
		else if (strcmp(flags, "reply") == 0)
			pc->c_reply = true;
		else
			usage_error("chunks are +read, +write and +reply", text);
		flags = next;
	}
	if ((pc->c_read || pc->c_write || pc->c_reply) && !case_descs[k].chunks)
		usage_error("chunks go with null, echo, sink, source and noprog", text);
	if (pc->c_write && pc->kind != C_ECHO && pc->kind != C_SOURCE)
		usage_error("a Write chunk goes with echo and source", text);

	if (ex) {
		for (k = 0; k < EXP_COUNT; k++)
			if (strcmp(ex, expect_names[k]) == 0)
				break;
		if (k == EXP_COUNT)
			usage_error("unknown expectation", text);
		pc->expect = (enum expect)k;
	}
}

/* What came back for one case. */
struct answer {
	bool got;
	uint32_t len;
	uint32_t xid, vers, credits, proc;
	bool hdr_ok;			/* RDMA_MSG header well formed */
	bool has_err;
	uint32_t err;
	bool has_range;
	uint32_t low, high;
	const char *rpc;		/* RPC outcome, NULL when none */
	bool rpc_xid_ok;
	const char *data;		/* result check, NULL when none */
	bool over_inline;		/* longer than this end may receive */
	unsigned int strays;		/* messages for other XIDs */
	uint64_t reply_used;		/* octets the server put in the Reply chunk */
	uint64_t write_used;		/* octets it put in the Write chunk */
};

/*
 * Memory a call offers in chunks, registered for that call alone: the
 * registration ends when the call has its answer (unless --keep-chunks),
 * so the server's access must end too.
 */
struct chunk_mem {
	uint8_t *mem;
	struct ibv_mr *mr;
	uint8_t *read_area, *write_area, *reply_area;
	uint32_t read_len, write_len, reply_len;
};

/* --keep-chunks: registrations left alone until the connection ends. */
static struct chunk_mem kept_chunks[PEER_MAX_CASES];
static unsigned int nkept_chunks;

static int
chunk_alloc(struct pconn *c, struct chunk_mem *cm, uint32_t read_len,
	    uint32_t write_len, uint32_t reply_len)
{
	size_t r = (read_len + 63u) & ~(size_t)63, w = (write_len + 63u) & ~(size_t)63;
	size_t len = r + w + reply_len + 64;
	void *p;

	if (posix_memalign(&p, 4096, len))
		return -ENOMEM;
	memset(p, 0, len);
	cm->mem = p;
	cm->mr = ibv_reg_mr(c->pd, p, len, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!cm->mr) {
		free(p);
		cm->mem = NULL;
		return -ENOMEM;
	}
	cm->read_area = cm->mem;
	cm->read_len = read_len;
	cm->write_area = cm->mem + r;
	cm->write_len = write_len;
	cm->reply_area = cm->mem + r + w;
	cm->reply_len = reply_len;
	return 0;
}

static void
chunk_release(struct chunk_mem *cm, bool keep)
{
	if (!cm->mr)
		return;
	if (keep && nkept_chunks < PEER_MAX_CASES) {
		kept_chunks[nkept_chunks++] = *cm;
	} else {
		ibv_dereg_mr(cm->mr);
		free(cm->mem);
	}
	memset(cm, 0, sizeof(*cm));
}

static void
chunk_release_kept(void)
{
	while (nkept_chunks) {
		struct chunk_mem *cm = &kept_chunks[--nkept_chunks];

		ibv_dereg_mr(cm->mr);
		free(cm->mem);
	}
}

/* A segment describing len octets at p of a chunk registration. */
static struct rpcrdma_segment
chunk_segment(const struct chunk_mem *cm, const uint8_t *p, uint32_t len)
{
	struct rpcrdma_segment seg = {
		.handle = cm->mr->rkey,
		.length = len,
		.offset = (uintptr_t)p,
	};

	return seg;
}

/* Arguments and results of one call, kept for verification. */
struct call_io {
	rpctest_data data;
	rpctest_source_args sargs;
	rpctest_data res_data;
	rpctest_sink_res res_sink;
	xdrproc_t xargs;
	void *args;
	xdrproc_t xres;
	void *res;
	struct chunk_mem cm;
};

/* Decode an RDMA_MSG reply's RPC part and check the results. */
static void
decode_rpc_reply(const uint8_t *payload, size_t plen, uint32_t xid,
		 const struct pcase *pc, struct call_io *io, struct answer *a)
{
	struct rpc_msg rm;
	XDR x;

	memset(&rm, 0, sizeof(rm));
	rm.acpted_rply.ar_verf = _null_auth;
	rm.acpted_rply.ar_results.where = io->res;
	rm.acpted_rply.ar_results.proc = io->xres;
	xdrmem_create(&x, (char *)payload, (u_int)plen, XDR_DECODE);
	if (!xdr_replymsg(&x, &rm)) {
		a->rpc = "undecodable";
		xdr_destroy(&x);
		return;
	}
	xdr_destroy(&x);
	a->rpc_xid_ok = rm.rm_xid == xid;
	if (rm.rm_reply.rp_stat != MSG_ACCEPTED) {
		a->rpc = "DENIED";
		return;
	}
	a->rpc = accept_stat_name(rm.acpted_rply.ar_stat);
	if (rm.acpted_rply.ar_stat != SUCCESS)
		return;

	switch (pc->kind) {
	case C_ECHO:
		a->data = io->res_data.rpctest_data_len == pc->num &&
			  (!pc->num || memcmp(io->res_data.rpctest_data_val,
					      io->data.rpctest_data_val, pc->num) == 0) ?
			  "ok" : "mismatch";
		break;
	case C_SINK:
		a->data = io->res_sink.length == pc->num &&
			  io->res_sink.checksum == checksum(io->data.rpctest_data_val, pc->num) ?
			  "ok" : "mismatch";
		break;
	case C_SOURCE:
		a->data = io->res_data.rpctest_data_len == pc->num &&
			  pattern_check(io->res_data.rpctest_data_val, pc->num,
					io->sargs.seed) == pc->num ?
			  "ok" : "mismatch";
		break;
	default:
		break;
	}
}

/*
 * The reply's Payload stream: inline (RDMA_MSG) or in the Reply chunk
 * (RDMA_NOMSG), with the data the server wrote to the Write chunk put
 * back after it (the opaque result is the last item, its length word
 * stayed in the stream, s4.4.6), then decoded.
 */
static void
decode_chunked_reply(struct pconn *c, const uint8_t *buf, uint32_t len,
		     uint32_t hxid, const struct pcase *pc, struct call_io *io,
		     struct answer *a)
{
	const struct rpcrdma_hdr *h = &c->hdr;
	const uint8_t *payload = buf + h->hdrlen;
	uint64_t plen = len - h->hdrlen;
	unsigned int i;
	uint8_t *whole;

	if (h->proc == RDMA_NOMSG) {
		if (!io->cm.reply_len || !h->has_reply) {
			a->rpc = "nomsg_without_reply_chunk";
			return;
		}
		for (plen = 0, i = 0; i < h->nreply; i++)
			plen += h->reply[i].length;
		if (plen > io->cm.reply_len) {
			a->rpc = "reply_chunk_overrun";
			return;
		}
		payload = io->cm.reply_area;
		a->reply_used = plen;
	}
	if (io->cm.write_len && h->nwrites) {
		for (i = 0; i < h->writes[0].nsegs; i++)
			a->write_used += h->wsegs[h->writes[0].first + i].length;
		if (a->write_used > io->cm.write_len) {
			a->rpc = "write_chunk_overrun";
			return;
		}
	}
	if (!a->write_used) {
		decode_rpc_reply(payload, plen, hxid, pc, io, a);
		return;
	}
	whole = calloc(1, plen + a->write_used + 4);
	if (!whole) {
		a->rpc = "no_memory";
		return;
	}
	memcpy(whole, payload, plen);
	memcpy(whole + plen, io->cm.write_area, a->write_used);
	decode_rpc_reply(whole, plen + rpcrdma_xdr_roundup((uint32_t)a->write_used),
			 hxid, pc, io, a);
	free(whole);
}

/* Take apart an answer to hxid (received in buf) into a. */
static void
parse_answer(struct pconn *c, const uint8_t *buf, uint32_t len, uint32_t hxid,
	     const struct pcase *pc, struct call_io *io, struct answer *a)
{
	a->got = true;
	a->len = len;
	a->over_inline = len > c->own_recv;
	if (len < RPCRDMA1_PREFIX_LEN) {
		a->proc = UINT32_MAX;
		return;
	}
	a->xid = get32(buf);
	a->vers = get32(buf + 4);
	a->credits = get32(buf + 8);
	a->proc = get32(buf + 12);
	if (a->proc == RDMA_ERROR) {
		/* By hand: the codec takes no header of another version. */
		if (len >= RPCRDMA1_PREFIX_LEN + 4) {
			a->has_err = true;
			a->err = get32(buf + 16);
		}
		if (a->has_err && a->err == RDMA_ERR_VERS &&
		    len >= RPCRDMA1_PREFIX_LEN + 12) {
			a->has_range = true;
			a->low = get32(buf + 20);
			a->high = get32(buf + 24);
		}
		return;
	}
	if (rpcrdma_hdr_decode(buf, len, &c->hdr) != 0)
		return;
	a->hdr_ok = true;
	if (a->proc == RDMA_MSG || a->proc == RDMA_NOMSG)
		decode_chunked_reply(c, buf, len, hxid, pc, io, a);
}

/* Whether the answer is the one expected; *why says what differs. */
static bool
answer_expected(const struct answer *a, enum expect e, uint32_t sent_vers,
		const char **why)
{
	*why = NULL;
	if (a->over_inline) {
		*why = "answer_exceeds_inline";
		return false;
	}
	if (a->strays && e != EXP_ANY) {
		*why = "stray_message";
		return false;
	}
	switch (e) {
	case EXP_ANY:
		return true;
	case EXP_NONE:
		if (a->got)
			*why = "unexpected_answer";
		return !a->got;
	default:
		break;
	}
	if (!a->got) {
		*why = "no_answer";
		return false;
	}
	switch (e) {
	case EXP_SUCCESS:
	case EXP_PROG_UNAVAIL:
		if ((a->proc != RDMA_MSG && a->proc != RDMA_NOMSG) || !a->hdr_ok)
			*why = "not_rdma_msg";
		else if (!a->credits)
			*why = "zero_credits";
		else if (!a->rpc || !a->rpc_xid_ok)
			*why = "bad_rpc_reply";
		else if (strcmp(a->rpc, e == EXP_SUCCESS ? "SUCCESS" : "PROG_UNAVAIL"))
			*why = "rpc_status";
		else if (a->data && strcmp(a->data, "ok"))
			*why = "data_mismatch";
		break;
	case EXP_VERS:
		if (a->proc != RDMA_ERROR || !a->has_err || a->err != RDMA_ERR_VERS)
			*why = "not_err_vers";
		else if (!a->has_range || a->low != 1 || a->high != 1)
			*why = "bad_version_range";
		else if (a->vers != sent_vers)
			*why = "version_not_echoed";
		break;
	case EXP_BADHEADER:
		if (a->proc != RDMA_ERROR || !a->has_err || a->err != RDMA_ERR_BADHEADER)
			*why = "not_badheader";
		else if (a->vers != sent_vers)
			*why = "version_not_echoed";
		break;
	default:
		break;
	}
	return *why == NULL;
}

static void
client_cm_events(struct pconn *c)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(c->ech, &ev) == 0) {
		print_event(ev);
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			if (!c->closed)
				out("disconnected by=server event=%s",
				    rdma_event_str(ev->event));
			c->closed = true;
			c->dead = true;
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

/*
 * The next received message before the deadline: 1 (in *idx, *len), 0 when
 * none came, -1 when the connection is gone or a signal came.
 */
static int
wait_recv(struct pconn *c, int64_t deadline, uint32_t *idx, uint32_t *len)
{
	struct ibv_wc wc;
	int n;

	for (;;) {
		if (pend_pop(c, idx, len))
			return 1;
		if (c->dead)
			return -1;
		n = ibv_poll_cq(c->cq, 1, &wc);
		if (n < 0) {
			c->dead = true;
			return -1;
		}
		if (n == 1) {
			(void)take_wc(c, &wc, 0);
			continue;
		}
		client_cm_events(c);
		if (stop_signal)
			return -1;
		if (now_ms() >= deadline)
			return 0;
		nap();
	}
}

/*
 * A valid call offering chunks (RFC 8166 s4.4): the whole call in a
 * position-zero Read chunk with RDMA_NOMSG (a Long Call, s4.5.3), a Write
 * chunk of the size of the result, a Reply chunk with room for the whole
 * reply.  Returns the length of the message in send_mem, 0 on error.
 */
static size_t
build_chunked_call(struct pconn *c, const struct opts *o, const struct pcase *pc,
		   uint32_t xid, uint32_t prog, uint32_t rpc_proc,
		   struct call_io *io)
{
	struct rpcrdma_hdr *h = &c->rhdr;
	size_t clen;
	ssize_t hl;

	clen = encode_call(c->call_mem, PEER_REGION, xid, prog, o->vers, rpc_proc,
			   io->xargs, io->args);
	if (!clen)
		return 0;
	if (chunk_alloc(c, &io->cm, pc->c_read ? (uint32_t)clen : 0,
			pc->c_write ? pc->num : 0, pc->c_reply ? pc->num + 1024 : 0))
		return 0;

	h->xid = xid;
	h->vers = RPCRDMA1_VERSION;
	h->credits = o->credits;
	h->proc = pc->c_read ? RDMA_NOMSG : RDMA_MSG;
	h->nreads = 0;
	h->nwrites = 0;
	h->nwsegs = 0;
	h->has_reply = false;
	h->nreply = 0;
	if (pc->c_read) {
		memcpy(io->cm.read_area, c->call_mem, clen);
		h->nreads = 1;
		h->reads[0].position = 0;
		h->reads[0].target = chunk_segment(&io->cm, io->cm.read_area,
						   (uint32_t)clen);
	}
	if (pc->c_write) {
		h->nwrites = 1;
		h->writes[0].first = 0;
		h->writes[0].nsegs = 1;
		h->nwsegs = 1;
		h->wsegs[0] = chunk_segment(&io->cm, io->cm.write_area, io->cm.write_len);
	}
	if (pc->c_reply) {
		h->has_reply = true;
		h->nreply = 1;
		h->reply[0] = chunk_segment(&io->cm, io->cm.reply_area, io->cm.reply_len);
	}
	hl = rpcrdma_hdr_encode(c->send_mem, PEER_SEND_BUF, h);
	if (hl <= 0)
		return 0;
	if (pc->c_read)
		return (size_t)hl;
	if ((size_t)hl + clen > PEER_SEND_BUF)
		return 0;
	memcpy(c->send_mem + hl, c->call_mem, clen);
	return (size_t)hl + clen;
}

/* Build the message of a case in send_mem; returns its length, 0 on error. */
static size_t
build_case(struct pconn *c, const struct opts *o, const struct pcase *pc,
	   uint32_t xid, struct call_io *io, uint32_t *sent_vers)
{
	uint8_t *p = c->send_mem, *end = c->send_mem + PEER_SEND_BUF, *q;
	uint32_t vers = RPCRDMA1_VERSION, proc = RDMA_MSG, rpc_xid = xid;
	uint32_t prog = o->prog, rpc_proc = RPCTEST_NULL;
	struct rpcrdma_segment seg = { .handle = 0x1234, .length = 64, .offset = 0x1000 };
	size_t n;

	io->xargs = XDRPROC(xdr_void);
	io->args = NULL;
	io->xres = XDRPROC(xdr_void);
	io->res = NULL;

	switch (pc->kind) {
	case C_SHORT:
		/* RFC 8166 s5.5: shorter than the fixed fields, no XID known. */
		q = put32(put32(p, xid), RPCRDMA1_VERSION);
		*sent_vers = RPCRDMA1_VERSION;
		return (size_t)(q - p);
	case C_DONE:
		/* RFC 5666's RDMA_DONE: the fixed fields only. */
		q = rpcrdma_encode_prefix(p, end, xid, RPCRDMA1_VERSION, o->credits,
					  RDMA_DONE);
		*sent_vers = RPCRDMA1_VERSION;
		return q ? (size_t)(q - p) : 0;
	case C_RDMAERROR: {
		ssize_t r = rpcrdma_encode_error(p, PEER_SEND_BUF, xid,
						 RPCRDMA1_VERSION, o->credits,
						 RDMA_ERR_BADHEADER);

		*sent_vers = RPCRDMA1_VERSION;
		return r > 0 ? (size_t)r : 0;
	}
	case C_BADVERS:
		vers = 2;
		break;
	case C_MSGP:
		proc = RDMA_MSGP;
		break;
	case C_BADPROC:
		proc = pc->num;
		break;
	case C_XIDMISMATCH:
		rpc_xid = xid ^ 0x5a5a5a5au;
		break;
	case C_NOPROG:
		prog = PEER_NOPROG;
		break;
	case C_ECHO:
	case C_SINK:
		io->data.rpctest_data_len = pc->num;
		io->data.rpctest_data_val = malloc(pc->num ? pc->num : 1);
		if (!io->data.rpctest_data_val)
			return 0;
		pattern_fill(io->data.rpctest_data_val, pc->num, xid);
		io->xargs = XDRPROC(xdr_rpctest_data);
		io->args = &io->data;
		rpc_proc = pc->kind == C_ECHO ? RPCTEST_ECHO : RPCTEST_SINK;
		if (pc->kind == C_ECHO) {
			io->xres = XDRPROC(xdr_rpctest_data);
			io->res = &io->res_data;
		} else {
			io->xres = XDRPROC(xdr_rpctest_sink_res);
			io->res = &io->res_sink;
		}
		break;
	case C_SOURCE:
		io->sargs.length = pc->num;
		io->sargs.seed = ((uint64_t)xid << 32) | pc->num;
		io->xargs = XDRPROC(xdr_rpctest_source_args);
		io->args = &io->sargs;
		io->xres = XDRPROC(xdr_rpctest_data);
		io->res = &io->res_data;
		rpc_proc = RPCTEST_SOURCE;
		break;
	default:
		break;
	}
	*sent_vers = vers;

	if (pc->c_read || pc->c_write || pc->c_reply)
		return build_chunked_call(c, o, pc, xid, prog, rpc_proc, io);

	q = rpcrdma_encode_prefix(p, end, xid, vers, o->credits, proc);
	if (!q)
		return 0;
	if (pc->kind == C_BADCHUNK) {
		switch (pc->variant) {
		case BC_DISC:
			/* A Read list discriminator that is no XDR bool. */
			q = put32(put32(put32(q, 2), 0), 0);
			break;
		case BC_TRUNC:
			/* One read segment, cut after 8 of its 20 octets. */
			q = put32(put32(put32(q, 1), 0), seg.handle);
			return (size_t)(q - p);
		case BC_COUNT:
			/* A Write chunk claiming 0xffffffff segments. */
			q = put32(put32(put32(q, 0), 1), 0xffffffffu);
			q = rpcrdma_encode_segment(q, end, &seg);
			if (!q)
				return 0;
			q = put32(put32(q, 0), 0);
			break;
		}
	} else {
		q = rpcrdma_encode_read_list(q, end, NULL, 0);
		q = rpcrdma_encode_write_list(q, end, NULL, 0, NULL);
		q = rpcrdma_encode_reply_chunk(q, end, false, NULL, 0);
		if (!q)
			return 0;
		if (pc->kind == C_MSGP)
			q = put32(put32(q, 0), 0);	/* RFC 5666: align, thresh */
	}
	n = encode_call(q, (size_t)(end - q), rpc_xid, prog, o->vers, rpc_proc,
			io->xargs, io->args);
	if (!n)
		return 0;
	return (size_t)(q - p) + n;
}

static void
free_io(struct call_io *io, bool keep_chunks)
{
	chunk_release(&io->cm, keep_chunks);
	free(io->data.rpctest_data_val);
	xdr_free(XDRPROC(xdr_rpctest_data), (char *)&io->res_data);
}

/* Run one case; prints its line and returns whether it went as expected. */
static bool
run_case(struct pconn *c, const struct opts *o, const struct pcase *pc,
	 uint32_t xid)
{
	struct call_io io;
	struct answer a;
	struct line l;
	uint32_t sent_vers = RPCRDMA1_VERSION, idx, len;
	int64_t started, deadline;
	const char *why;
	bool ok;
	size_t n;
	int st, r;

	memset(&io, 0, sizeof(io));
	memset(&a, 0, sizeof(a));
	memset(&l, 0, sizeof(l));
	line_add(&l, "case=%s expect=%s xid=0x%08x", pc->text,
		 expect_names[pc->expect], xid);

	n = build_case(c, o, pc, xid, &io, &sent_vers);
	if (!n) {
		out("%s result=failed why=cannot_build", l.buf);
		free_io(&io, o->keep_chunks);
		return false;
	}
	line_add(&l, " sent=%zu", n);
	if (n > min_u32(c->own_send, c->peer_pd.recv_size))
		line_add(&l, " sent_over_inline=%u", min_u32(c->own_send, c->peer_pd.recv_size));

	started = now_ms();
	st = send_sync(c, (uint32_t)n, bound(o->answer_ms));
	if (st != IBV_WC_SUCCESS) {
		out("%s answer=send_failed status=\"%s\" result=failed why=send_failed",
		    l.buf, wc_status_name(st));
		free_io(&io, o->keep_chunks);
		return false;
	}

	deadline = bound(pc->expect == EXP_NONE ? o->quiet_ms : o->answer_ms);
	for (;;) {
		r = wait_recv(c, deadline, &idx, &len);
		if (r <= 0)
			break;
		{
			const uint8_t *buf = c->recv_mem + (size_t)idx * c->recv_size;

			if (len >= 4 && get32(buf) != xid) {
				out("stray xid=0x%08x len=%u during=%s", get32(buf), len,
				    pc->text);
				a.strays++;
				if (post_recv(c, idx))
					break;
				continue;
			}
			parse_answer(c, buf, len, xid, pc, &io, &a);
		}
		(void)post_recv(c, idx);
		break;
	}

	if (!a.got) {
		if (c->dead)
			line_add(&l, " answer=disconnected");
		else
			line_add(&l, " answer=none waited_ms=%lld",
				 (long long)(now_ms() - started));
	} else if (a.proc == UINT32_MAX) {
		line_add(&l, " answer=runt len=%u", a.len);
	} else {
		line_add(&l, " answer=%s len=%u xid=ok vers=%u credits=%u",
			 rpcrdma_proc_name(a.proc), a.len, a.vers, a.credits);
		if (a.has_err)
			line_add(&l, " err=%s", a.err == RDMA_ERR_VERS ? "ERR_VERS" :
				 a.err == RDMA_ERR_BADHEADER ? "BADHEADER" : "unknown");
		if (a.has_range)
			line_add(&l, " low=%u high=%u", a.low, a.high);
		if (a.proc == RDMA_MSG && !a.hdr_ok)
			line_add(&l, " header=malformed");
		if (a.rpc)
			line_add(&l, " rpc=%s%s", a.rpc, a.rpc_xid_ok ? "" : " rpc_xid=mismatch");
		if (a.data)
			line_add(&l, " data=%s", a.data);
		if (pc->c_reply)
			line_add(&l, " reply_chunk_used=%" PRIu64, a.reply_used);
		if (pc->c_write)
			line_add(&l, " write_chunk_used=%" PRIu64, a.write_used);
		if (a.over_inline)
			line_add(&l, " violation=answer_exceeds_inline limit=%u", c->own_recv);
	}
	ok = answer_expected(&a, pc->expect, sent_vers, &why);
	if (c->dead && pc->expect != EXP_ANY && ok && !a.got) {
		ok = false;
		why = "disconnected";
	}
	if (ok)
		out("%s result=ok", l.buf);
	else
		out("%s result=failed why=%s", l.buf, why ? why : "disconnected");
	free_io(&io, o->keep_chunks);
	return ok;
}

static struct pconn *
client_connect(const struct opts *o)
{
	struct sockaddr_storage ss;
	struct rdma_conn_param param;
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type want;
	uint8_t pdata[16];
	char pname[32];
	struct pconn *c;
	int ret, step;

	if (!make_sockaddr(o->addr, o->port, &ss))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	own_sizes(o, &c->own_send, &c->own_recv);
	rpcrdma_cmp_decode(NULL, 0, &c->peer_pd);

	c->ech = rdma_create_event_channel();
	if (!c->ech) {
		out("connect=failed step=event_channel error=\"%s\"", strerror(errno));
		goto fail;
	}
	if (set_nonblock(c->ech->fd) ||
	    rdma_create_id(c->ech, &c->id, c, RDMA_PS_TCP)) {
		c->id = NULL;
		out("connect=failed step=create_id error=\"%s\"", strerror(errno));
		goto fail;
	}
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&ss,
			      left_ms(bound(o->answer_ms)) + 1)) {
		out("connect=failed step=resolve_addr error=\"%s\"", strerror(errno));
		goto fail;
	}

	for (step = 0; step < 3; step++) {
		want = step == 0 ? RDMA_CM_EVENT_ADDR_RESOLVED :
		       step == 1 ? RDMA_CM_EVENT_ROUTE_RESOLVED :
				   RDMA_CM_EVENT_ESTABLISHED;
		ret = wait_cm_event(c->ech, run_deadline, &ev);
		if (ret) {
			out("connect=failed waiting_for=%s error=\"%s\"",
			    rdma_event_str(want), strerror(-ret));
			goto fail;
		}
		if (ev->event != want) {
			out("connect=%s event=%s status=%d",
			    ev->event == RDMA_CM_EVENT_REJECTED ? "rejected" : "failed",
			    rdma_event_str(ev->event), ev->status);
			rdma_ack_cm_event(ev);
			goto fail;
		}
		if (want == RDMA_CM_EVENT_ESTABLISHED) {
			c->peer_pd_valid = report_pdata("server",
							ev->param.conn.private_data,
							ev->param.conn.private_data_len,
							&c->peer_pd);
			/*
			 * What the accept granted, against what we offered.
			 * The event gives the accept's values from our side:
			 * its initiator_depth is the Reads we may issue (the
			 * server's responder resources), and the other way.
			 */
			out("server_accept server_initiator_depth=%u server_responder_resources=%u offered_initiator_depth=%u offered_responder_resources=%u",
			    ev->param.conn.responder_resources,
			    ev->param.conn.initiator_depth, c->initiator_depth,
			    c->responder_resources);
		}
		rdma_ack_cm_event(ev);

		if (step == 0) {
			if (rdma_resolve_route(c->id, left_ms(bound(o->answer_ms)) + 1)) {
				out("connect=failed step=resolve_route error=\"%s\"",
				    strerror(errno));
				goto fail;
			}
		} else if (step == 1) {
			ret = conn_setup(c);
			if (ret) {
				out("connect=failed step=setup error=\"%s\"", strerror(-ret));
				goto fail;
			}
			memset(&param, 0, sizeof(param));
			param.private_data_len = build_pdata(o, pdata);
			param.private_data = param.private_data_len ? pdata : NULL;
			if (o->rd_init >= 0) {
				c->initiator_depth = (uint8_t)o->rd_init;
				c->responder_resources = (uint8_t)o->rd_resp;
			}
			param.responder_resources = c->responder_resources;
			param.initiator_depth = c->initiator_depth;
			param.retry_count = 6;
			param.rnr_retry_count = 6;
			if (rdma_connect(c->id, &param)) {
				out("connect=failed step=connect error=\"%s\"", strerror(errno));
				goto fail;
			}
		}
	}
	c->established = true;
	{
		char a[INET6_ADDRSTRLEN];
		unsigned int port;

		sa_format((struct sockaddr *)&ss, a, sizeof(a), &port);
		out("connected addr=%s port=%u pdata=%s send_max=%u recv_max=%u",
		    a, port, pdata_name(o, pname, sizeof(pname)),
		    min_u32(c->own_send, c->peer_pd.recv_size),
		    min_u32(c->peer_pd.send_size, c->own_recv));
	}
	return c;

fail:
	conn_free(c);
	return NULL;
}

static int
run_call(const struct opts *o)
{
	struct pcase cases[PEER_MAX_CASES];
	unsigned int nok = 0, nfail = 0, notrun = 0;
	struct pconn *c;
	uint32_t xid;
	int i;

	for (i = 0; i < o->ncases; i++)
		parse_case(o->cases[i], &cases[i]);

	c = client_connect(o);
	if (!c) {
		out("summary cases=%d ok=0 failed=0 not_run=%d result=failed why=no_connection",
		    o->ncases, o->ncases);
		return EX_SETUP;
	}
	xid = (uint32_t)getpid() ^ (uint32_t)time(NULL) ^ 0x10000000u;
	for (i = 0; i < o->ncases; i++) {
		if (c->dead || stop_signal) {
			out("case=%s result=not_run", cases[i].text);
			notrun++;
			continue;
		}
		if (run_case(c, o, &cases[i], xid++))
			nok++;
		else
			nfail++;
	}

	if (!c->dead) {
		struct rdma_cm_event *ev;
		int64_t deadline = bound(2000);

		rdma_disconnect(c->id);
		while (wait_cm_event(c->ech, deadline, &ev) == 0) {
			bool done = ev->event == RDMA_CM_EVENT_DISCONNECTED;

			rdma_ack_cm_event(ev);
			if (done)
				break;
		}
	}
	chunk_release_kept();
	conn_free(c);
	out("summary cases=%d ok=%u failed=%u not_run=%u result=%s%s",
	    o->ncases, nok, nfail, notrun, nfail || notrun ? "failed" : "ok",
	    nfail || notrun ? " why=case_failed" : "");
	return nfail || notrun ? EX_FAIL : EX_OK;
}

/* ------------------------------------------------------------------ */
/* Serve role                                                          */
/* ------------------------------------------------------------------ */

struct server {
	const struct opts *o;
	enum serve_case sc;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *lid;
	struct pconn *conns[PEER_MAX_CONNS];
	struct rdma_cm_id *held[PEER_MAX_HELD];
	unsigned int nheld;
	unsigned int requests, rejected, accepted, closed;
	unsigned int calls, violations, protocol_errors;
	unsigned int late_tested, late_exposed;
	unsigned int chunks_offered;
};

static void
conn_kill(struct pconn *c)
{
	c->dead = true;
	if (!c->disconnecting && c->id) {
		c->disconnecting = true;
		rdma_disconnect(c->id);
	}
}

/* RDMA_ERROR for a call we cannot serve (s5.5). */
static void
send_error(struct pconn *c, const struct opts *o, uint32_t xid, uint32_t vers,
	   uint32_t err)
{
	ssize_t n = rpcrdma_encode_error(c->send_mem, PEER_SEND_BUF, xid, vers,
					 o->credits, err);

	if (n > 0)
		(void)send_sync(c, (uint32_t)n, bound(DEFAULT_ANSWER_MS));
	out("reply conn=%u xid=0x%08x proc=RDMA_ERROR err=%s", c->number, xid,
	    err == RDMA_ERR_VERS ? "ERR_VERS" : "BADHEADER");
}

/*
 * rkey-after-reply: the previous call has completed on the client (its
 * next call is here), so the memory it offered must be gone.  Touch it.
 */
static void
late_access(struct server *s, struct pconn *c)
{
	struct late *lt = &c->late;
	uint8_t *buf = c->data_mem;
	uint32_t n;
	int st;

	/*
	 * A failed RDMA operation breaks the queue pair, so one access per
	 * call is all there is: the Read chunk when there was one (a Long
	 * Call), else the Reply or Write chunk.
	 */
	lt->pending = false;
	if (lt->have_read) {
		n = min_u32(PEER_LATE_LEN, lt->rseg.length);
		st = rdma_sync(c, WR_READ, buf, n, lt->rseg.handle, lt->rseg.offset,
			       bound(DEFAULT_ANSWER_MS));
		s->late_tested++;
		if (st == IBV_WC_SUCCESS)
			s->late_exposed++;
		out("late_read=%s status=\"%s\" conn=%u of_xid=0x%08x handle=0x%08x offset=0x%" PRIx64 " len=%u",
		    st == IBV_WC_SUCCESS ? "ok" : "failed", wc_status_name(st),
		    c->number, lt->xid, lt->rseg.handle, lt->rseg.offset, n);
		if (st != IBV_WC_SUCCESS) {
			if (lt->have_write)
				out("late_write=untested reason=qp_error conn=%u of_xid=0x%08x",
				    c->number, lt->xid);
			conn_kill(c);
			return;
		}
	}
	if (lt->have_write) {
		n = min_u32(PEER_LATE_LEN, lt->wseg.length);
		memset(buf, 0xee, n);
		st = rdma_sync(c, WR_WRITE, buf, n, lt->wseg.handle, lt->wseg.offset,
			       bound(DEFAULT_ANSWER_MS));
		s->late_tested++;
		if (st == IBV_WC_SUCCESS)
			s->late_exposed++;
		out("late_write=%s status=\"%s\" conn=%u of_xid=0x%08x target=%s handle=0x%08x offset=0x%" PRIx64 " len=%u",
		    st == IBV_WC_SUCCESS ? "ok" : "failed", wc_status_name(st),
		    c->number, lt->xid, lt->write_target, lt->wseg.handle,
		    lt->wseg.offset, n);
		if (st != IBV_WC_SUCCESS)
			conn_kill(c);
	}
}

/* Pull every Read chunk into the read region; returns false on failure. */
static bool
pull_chunks(struct pconn *c, const struct rpcrdma_hdr *h, uint64_t total)
{
	uint64_t off = 0;
	unsigned int i;
	int st;

	if (total > PEER_REGION)
		return false;
	for (i = 0; i < h->nreads; i++) {
		const struct rpcrdma_segment *seg = &h->reads[i].target;

		if (!seg->length)
			continue;
		st = rdma_sync(c, WR_READ, c->data_mem + off, seg->length,
			       seg->handle, seg->offset, bound(DEFAULT_ANSWER_MS));
		if (st != IBV_WC_SUCCESS) {
			out("rdma_read=failed status=\"%s\" conn=%u xid=0x%08x handle=0x%08x len=%u",
			    wc_status_name(st), c->number, h->xid, seg->handle,
			    seg->length);
			return false;
		}
		off += seg->length;
	}
	return true;
}

/*
 * The whole RPC call of a received message, in c->call_mem: inline, or
 * rebuilt from Read chunks (s4.4.5, a Long Call in a position-zero chunk,
 * s4.5.3).  Returns its length, or -1 (the reason printed).
 */
static ssize_t
gather_call(struct pconn *c, const uint8_t *payload, size_t plen)
{
	struct rpcrdma_read_chunk chunks[RPCRDMA1_MAX_READ_SEGS];
	const struct rpcrdma_hdr *h = &c->hdr;
	uint64_t total = 0;
	ssize_t n;
	int nch, i;

	if (!h->nreads) {
		if (h->proc != RDMA_MSG) {
			out("call_error=no_call_body conn=%u xid=0x%08x", c->number, h->xid);
			return -1;
		}
		if (plen > PEER_REGION)
			return -1;
		memcpy(c->call_mem, payload, plen);
		return (ssize_t)plen;
	}
	nch = rpcrdma_read_chunks(h, chunks, RPCRDMA1_MAX_READ_SEGS);
	if (nch <= 0) {
		out("call_error=bad_read_list conn=%u xid=0x%08x", c->number, h->xid);
		return -1;
	}
	for (i = 0; i < nch; i++)
		total += chunks[i].length;
	if (!pull_chunks(c, h, total))
		return -1;
	if (h->proc == RDMA_NOMSG) {
		if (chunks[0].position != 0) {
			out("call_error=nomsg_without_position_zero conn=%u xid=0x%08x",
			    c->number, h->xid);
			return -1;
		}
		n = rpcrdma_read_rebuild(c->call_mem, PEER_REGION, c->data_mem,
					 chunks[0].length, chunks + 1,
					 (unsigned int)nch - 1,
					 c->data_mem + chunks[0].length);
	} else {
		n = rpcrdma_read_rebuild(c->call_mem, PEER_REGION, payload, plen,
					 chunks, (unsigned int)nch, c->data_mem);
	}
	if (n < 0)
		out("call_error=rebuild error=\"%s\" conn=%u xid=0x%08x",
		    strerror((int)-n), c->number, h->xid);
	return n;
}

/* Octets the XDR length word of an opaque result stands for. */
static bool_t
xdr_opaque_len_only(XDR *x, void *p)
{
	rpctest_data *d = p;

	return xdr_u_int(x, &d->rpctest_data_len);
}

/* Send len octets of payload (in the reply region) as directed by the call. */
static void
send_reply(struct server *s, struct pconn *c, const uint8_t *payload,
	   size_t plen, const char *rpc, const char *note)
{
	const struct rpcrdma_hdr *h = &c->hdr;
	struct rpcrdma_hdr *rh = &c->rhdr;
	uint32_t limit = min_u32(c->own_send, c->peer_pd.recv_size);
	ssize_t hlen;
	unsigned int i;
	int st;

	rh->xid = h->xid;
	rh->vers = RPCRDMA1_VERSION;
	rh->credits = s->o->credits;
	rh->proc = RDMA_MSG;
	rh->nreads = 0;
	rh->has_reply = false;
	rh->nreply = 0;
	/* rh->writes/wsegs were filled by the caller (used or zeroed). */

	hlen = rpcrdma_hdr_encode(c->send_mem, PEER_SEND_BUF, rh);
	if (hlen > 0 && (size_t)hlen + plen <= limit) {
		memcpy(c->send_mem + hlen, payload, plen);
		st = send_sync(c, (uint32_t)((size_t)hlen + plen), bound(DEFAULT_ANSWER_MS));
		out("reply conn=%u xid=0x%08x proc=RDMA_MSG len=%zu rpc=%s%s%s%s",
		    c->number, h->xid, (size_t)hlen + plen, rpc, note ? " " : "",
		    note ? note : "", st == IBV_WC_SUCCESS ? "" : " send=failed");
		return;
	}

	if (h->has_reply) {
		uint64_t room = 0, off = 0;

		for (i = 0; i < h->nreply; i++)
			room += h->reply[i].length;
		if (room >= plen) {
			/* s4.5.2, s5.3.3: a Long Reply through the Reply chunk. */
			rh->proc = RDMA_NOMSG;
			rh->has_reply = true;
			rh->nreply = h->nreply;
			for (i = 0; i < h->nreply; i++) {
				uint32_t n = (uint32_t)(plen - off < h->reply[i].length ?
							plen - off : h->reply[i].length);

				rh->reply[i] = h->reply[i];
				rh->reply[i].length = n;
				if (!n)
					continue;
				st = rdma_sync(c, WR_WRITE, (uint8_t *)payload + off, n,
					       h->reply[i].handle, h->reply[i].offset,
					       bound(DEFAULT_ANSWER_MS));
				if (st != IBV_WC_SUCCESS) {
					out("reply conn=%u xid=0x%08x rdma_write=failed status=\"%s\"",
					    c->number, h->xid, wc_status_name(st));
					return;
				}
				off += n;
			}
			hlen = rpcrdma_hdr_encode(c->send_mem, PEER_SEND_BUF, rh);
			if (hlen > 0 && (size_t)hlen <= limit) {
				st = send_sync(c, (uint32_t)hlen, bound(DEFAULT_ANSWER_MS));
				out("reply conn=%u xid=0x%08x proc=RDMA_NOMSG len=%zd reply_chunk_used=%zu rpc=%s%s%s%s",
				    c->number, h->xid, hlen, plen, rpc, note ? " " : "",
				    note ? note : "", st == IBV_WC_SUCCESS ? "" : " send=failed");
				return;
			}
		}
	}
	out("reply_error=too_large conn=%u xid=0x%08x len=%zu limit=%u reply_chunk=%s",
	    c->number, h->xid, plen, limit, h->has_reply ? "too_small" : "none");
	send_error(c, s->o, h->xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
}

/*
 * Place an opaque result in the call's first Write chunk (s4.4.6): the
 * bytes go by RDMA Write, no padding; the length word stays inline.
 * Returns true when the chunk took it.
 */
static bool
use_write_chunk(struct pconn *c, const rpctest_data *d)
{
	const struct rpcrdma_hdr *h = &c->hdr;
	struct rpcrdma_hdr *rh = &c->rhdr;
	const struct rpcrdma_write_chunk *wc = &h->writes[0];
	uint64_t room = 0, off = 0;
	unsigned int i;
	int st;

	for (i = 0; i < wc->nsegs; i++)
		room += h->wsegs[wc->first + i].length;
	if (!d->rpctest_data_len || room < d->rpctest_data_len ||
	    d->rpctest_data_len > PEER_REGION)
		return false;
	memcpy(c->data_mem, d->rpctest_data_val, d->rpctest_data_len);
	for (i = 0; i < wc->nsegs; i++) {
		const struct rpcrdma_segment *seg = &h->wsegs[wc->first + i];
		uint32_t n = (uint32_t)(d->rpctest_data_len - off < seg->length ?
					d->rpctest_data_len - off : seg->length);

		rh->wsegs[wc->first + i].length = n;
		if (!n)
			continue;
		st = rdma_sync(c, WR_WRITE, c->data_mem + off, n, seg->handle,
			       seg->offset, bound(DEFAULT_ANSWER_MS));
		if (st != IBV_WC_SUCCESS) {
			out("write_chunk=failed status=\"%s\" conn=%u xid=0x%08x",
			    wc_status_name(st), c->number, h->xid);
			return false;
		}
		off += n;
	}
	return true;
}

/* Decode the RPC call in call_mem, run it, reply. */
static void
dispatch(struct server *s, struct pconn *c, size_t clen)
{
	const struct opts *o = s->o;
	char credbuf[MAX_AUTH_BYTES], verfbuf[MAX_AUTH_BYTES];
	rpctest_data arg_data, res_data;
	rpctest_source_args sargs;
	rpctest_sink_res sink;
	struct rpc_msg cm, rm;
	xdrproc_t xres = XDRPROC(xdr_void);
	void *res = NULL;
	const char *note = NULL;
	char notebuf[64];
	bool data_result = false;
	size_t rlen;
	unsigned int i;
	XDR x, y;

	memset(&cm, 0, sizeof(cm));
	memset(&rm, 0, sizeof(rm));
	memset(&arg_data, 0, sizeof(arg_data));
	memset(&res_data, 0, sizeof(res_data));
	memset(&sargs, 0, sizeof(sargs));
	memset(&sink, 0, sizeof(sink));
	cm.rm_call.cb_cred.oa_base = credbuf;
	cm.rm_call.cb_verf.oa_base = verfbuf;

	xdrmem_create(&x, (char *)c->call_mem, (u_int)clen, XDR_DECODE);
	if (!xdr_callmsg(&x, &cm) || cm.rm_direction != CALL ||
	    cm.rm_xid != c->hdr.xid) {
		/* s5.5.2: the RPC XID must match the transport header's. */
		out("call_error=%s conn=%u xid=0x%08x", cm.rm_xid != c->hdr.xid ?
		    "xid_mismatch" : "undecodable_rpc", c->number, c->hdr.xid);
		s->protocol_errors++;
		xdr_destroy(&x);
		send_error(c, o, c->hdr.xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
		return;
	}

	rm.rm_xid = cm.rm_xid;
	rm.rm_direction = REPLY;
	rm.rm_reply.rp_stat = MSG_ACCEPTED;
	rm.acpted_rply.ar_verf = _null_auth;
	rm.acpted_rply.ar_stat = SUCCESS;
	if (cm.rm_call.cb_rpcvers != RPC_MSG_VERSION) {
		rm.rm_reply.rp_stat = MSG_DENIED;
		rm.rjcted_rply.rj_stat = RPC_MISMATCH;
		rm.rjcted_rply.rj_vers.low = RPC_MSG_VERSION;
		rm.rjcted_rply.rj_vers.high = RPC_MSG_VERSION;
	} else if (cm.rm_call.cb_prog != o->prog) {
		rm.acpted_rply.ar_stat = PROG_UNAVAIL;
	} else if (cm.rm_call.cb_vers != o->vers) {
		rm.acpted_rply.ar_stat = PROG_MISMATCH;
		rm.acpted_rply.ar_vers.low = o->vers;
		rm.acpted_rply.ar_vers.high = o->vers;
	} else {
		switch (cm.rm_call.cb_proc) {
		case RPCTEST_NULL:
			break;
		case RPCTEST_ECHO:
			if (!xdr_rpctest_data(&x, &arg_data)) {
				rm.acpted_rply.ar_stat = GARBAGE_ARGS;
				break;
			}
			res_data = arg_data;
			xres = XDRPROC(xdr_rpctest_data);
			res = &res_data;
			data_result = true;
			break;
		case RPCTEST_SINK:
			if (!xdr_rpctest_data(&x, &arg_data)) {
				rm.acpted_rply.ar_stat = GARBAGE_ARGS;
				break;
			}
			sink.length = arg_data.rpctest_data_len;
			sink.checksum = checksum(arg_data.rpctest_data_val,
						 arg_data.rpctest_data_len);
			xres = XDRPROC(xdr_rpctest_sink_res);
			res = &sink;
			break;
		case RPCTEST_SOURCE:
			if (!xdr_rpctest_source_args(&x, &sargs)) {
				rm.acpted_rply.ar_stat = GARBAGE_ARGS;
				break;
			}
			if (sargs.length > PEER_REGION / 2) {
				rm.acpted_rply.ar_stat = SYSTEM_ERR;
				break;
			}
			res_data.rpctest_data_len = (u_int)sargs.length;
			res_data.rpctest_data_val = malloc(sargs.length ? sargs.length : 1);
			if (!res_data.rpctest_data_val) {
				rm.acpted_rply.ar_stat = SYSTEM_ERR;
				break;
			}
			pattern_fill(res_data.rpctest_data_val, sargs.length, sargs.seed);
			xres = XDRPROC(xdr_rpctest_data);
			res = &res_data;
			data_result = true;
			break;
		default:
			rm.acpted_rply.ar_stat = PROC_UNAVAIL;
			break;
		}
	}
	xdr_destroy(&x);

	/* The reply header echoes the Write list, unused chunks zeroed. */
	c->rhdr.nwrites = c->hdr.nwrites;
	c->rhdr.nwsegs = c->hdr.nwsegs;
	memcpy(c->rhdr.writes, c->hdr.writes, sizeof(c->hdr.writes[0]) * c->hdr.nwrites);
	for (i = 0; i < c->hdr.nwsegs; i++) {
		c->rhdr.wsegs[i] = c->hdr.wsegs[i];
		c->rhdr.wsegs[i].length = 0;
	}
	if (data_result && rm.acpted_rply.ar_stat == SUCCESS && c->hdr.nwrites &&
	    use_write_chunk(c, &res_data)) {
		xres = XDRPROC(xdr_opaque_len_only);
		snprintf(notebuf, sizeof(notebuf), "write_chunk_used=%u",
			 res_data.rpctest_data_len);
		note = notebuf;
	}
	if (rm.rm_reply.rp_stat == MSG_ACCEPTED && rm.acpted_rply.ar_stat == SUCCESS) {
		rm.acpted_rply.ar_results.proc = xres;
		rm.acpted_rply.ar_results.where = res;
	}

	xdrmem_create(&y, (char *)c->data_mem + PEER_REGION, PEER_REGION, XDR_ENCODE);
	if (!xdr_replymsg(&y, &rm)) {
		out("reply_error=cannot_encode conn=%u xid=0x%08x", c->number, c->hdr.xid);
		xdr_destroy(&y);
		send_error(c, o, c->hdr.xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
	} else {
		rlen = xdr_getpos(&y);
		xdr_destroy(&y);
		send_reply(s, c, c->data_mem + PEER_REGION, rlen,
			   rm.rm_reply.rp_stat == MSG_ACCEPTED ?
			   accept_stat_name(rm.acpted_rply.ar_stat) : "DENIED", note);
	}

	if (cm.rm_call.cb_proc == RPCTEST_SOURCE)
		free(res_data.rpctest_data_val);
	xdr_free(XDRPROC(xdr_rpctest_data), (char *)&arg_data);
}

/* Serve one received message on c. */
static void
serve_message(struct server *s, struct pconn *c, uint32_t idx, uint32_t len)
{
	const uint8_t *buf = c->recv_mem + (size_t)idx * c->recv_size;
	struct rpcrdma_hdr *h = &c->hdr;
	char rc[32] = "none";
	uint64_t rlen = 0;
	ssize_t clen;
	unsigned int i;
	int ret;

	ret = rpcrdma_hdr_decode(buf, len, h);
	if (ret == -EMSGSIZE) {
		out("call conn=%u malformed=runt len=%u", c->number, len);
		s->protocol_errors++;
		goto repost;
	}
	if (h->has_reply) {
		for (i = 0; i < h->nreply; i++)
			rlen += h->reply[i].length;
		snprintf(rc, sizeof(rc), "%u:%" PRIu64, h->nreply, rlen);
	}
	c->calls++;
	s->calls++;
	out("call conn=%u xid=0x%08x proc=%s vers=%u credits=%u reads=%u writes=%u reply_chunk=%s len=%u",
	    c->number, h->xid, rpcrdma_proc_name(h->proc), h->vers, h->credits,
	    ret ? 0 : h->nreads, ret ? 0 : h->nwrites, ret ? "?" : rc, len);
	if (len > c->own_recv) {
		out("violation=call_exceeds_inline conn=%u xid=0x%08x len=%u limit=%u",
		    c->number, h->xid, len, c->own_recv);
		s->violations++;
	}
	if (ret) {
		out("call_error=%s conn=%u xid=0x%08x", ret == -EPROTONOSUPPORT ?
		    "version" : "malformed", c->number, h->xid);
		s->protocol_errors++;
		if (h->proc != RDMA_ERROR)
			send_error(c, s->o, h->xid, h->vers, ret == -EPROTONOSUPPORT ?
				   RDMA_ERR_VERS : RDMA_ERR_BADHEADER);
		goto repost;
	}
	if (h->proc == RDMA_ERROR) {
		out("call_error=client_sent_rdma_error conn=%u xid=0x%08x", c->number,
		    h->xid);
		s->protocol_errors++;
		goto repost;
	}

	if (s->sc == SV_RKEY && c->late.pending) {
		late_access(s, c);
		if (c->dead) {
			out("call_not_served conn=%u xid=0x%08x reason=qp_error",
			    c->number, h->xid);
			return;
		}
	}

	clen = gather_call(c, buf + h->hdrlen, len - h->hdrlen);
	if (clen < 0) {
		s->protocol_errors++;
		if (!c->dead)
			send_error(c, s->o, h->xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
		goto repost;
	}
	/* The call is copied out: the receive can go back now. */
	(void)post_recv(c, idx);

	if (h->nreads || h->has_reply || h->nwrites) {
		s->chunks_offered++;
		if (s->sc == SV_RKEY) {
			struct late *lt = &c->late;

			memset(lt, 0, sizeof(*lt));
			lt->xid = h->xid;
			if (h->has_reply && h->nreply && h->reply[0].length) {
				lt->have_write = true;
				lt->write_target = "reply";
				lt->wseg = h->reply[0];
			} else if (h->nwsegs && h->wsegs[0].length) {
				lt->have_write = true;
				lt->write_target = "write";
				lt->wseg = h->wsegs[0];
			}
			if (h->nreads && h->reads[0].target.length) {
				lt->have_read = true;
				lt->rseg = h->reads[0].target;
			}
			lt->pending = lt->have_write || lt->have_read;
		}
	}
	dispatch(s, c, (size_t)clen);
	return;

repost:
	(void)post_recv(c, idx);
}

/* Take every completion of c, then serve what was received. */
static void
conn_service(struct server *s, struct pconn *c)
{
	struct ibv_wc wc[16];
	struct ibv_cq *cq;
	void *ctx;
	uint32_t idx, len;
	unsigned int granted = s->o->credits ? s->o->credits : 1;
	int n, k;

	if (c->closed)
		return;
	while (ibv_get_cq_event(c->cch, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(c->cq, 0))
		c->dead = true;
	do {
		n = ibv_poll_cq(c->cq, 16, wc);
		for (k = 0; k < n; k++)
			(void)take_wc(c, &wc[k], 0);
	} while (n > 0);
	if (n < 0)
		c->dead = true;

	/* s4.3.1: never more calls outstanding than credits granted. */
	if (c->pend_count > granted) {
		out("violation=credits_exceeded conn=%u outstanding=%u granted=%u",
		    c->number, c->pend_count, granted);
		s->violations++;
	}
	while (!c->dead && pend_pop(c, &idx, &len))
		serve_message(s, c, idx, len);
	if (c->dead)
		conn_kill(c);
}

static struct pconn *
conn_of_id(struct server *s, const struct rdma_cm_id *id)
{
	unsigned int i;

	for (i = 0; i < PEER_MAX_CONNS; i++)
		if (s->conns[i] && s->conns[i]->id == id)
			return s->conns[i];
	return NULL;
}

/* A connection request, answered according to the case; acks ev. */
static void
on_connect_request(struct server *s, struct rdma_cm_event *ev)
{
	const struct opts *o = s->o;
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_param param;
	char a[INET6_ADDRSTRLEN];
	uint8_t pdata[16];
	unsigned int port, i;
	struct pconn *c = NULL;
	int ret;

	s->requests++;
	sa_format(rdma_get_peer_addr(id), a, sizeof(a), &port);
	out("connect_request n=%u from=%s port=%u initiator_depth=%u responder_resources=%u",
	    s->requests, a, port, ev->param.conn.initiator_depth,
	    ev->param.conn.responder_resources);

	if (s->sc == SV_SILENT) {
		struct rpcrdma_cm_pdata pd;

		(void)report_pdata("client", ev->param.conn.private_data,
				   ev->param.conn.private_data_len, &pd);
		rdma_ack_cm_event(ev);
		if (s->nheld < PEER_MAX_HELD) {
			/* Neither accepted nor rejected: the id is kept as it is. */
			s->held[s->nheld++] = id;
			out("connect_request=ignored n=%u", s->requests);
		} else {
			rdma_reject(id, NULL, 0);
			rdma_destroy_id(id);
			out("connect_request=rejected n=%u reason=too_many_held", s->requests);
		}
		return;
	}
	if (s->sc == SV_REJECT) {
		struct rpcrdma_cm_pdata pd;

		(void)report_pdata("client", ev->param.conn.private_data,
				   ev->param.conn.private_data_len, &pd);
		ret = rdma_reject(id, NULL, 0);
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
		s->rejected++;
		out("connect_request=rejected n=%u%s", s->requests, ret ? " reject=failed" : "");
		return;
	}

	for (i = 0; i < PEER_MAX_CONNS; i++)
		if (!s->conns[i])
			break;
	if (i < PEER_MAX_CONNS)
		c = calloc(1, sizeof(*c));
	if (!c) {
		out("connect_request=rejected n=%u reason=too_many_connections", s->requests);
		goto out_reject;
	}
	c->id = id;
	id->context = c;
	c->number = s->requests;
	own_sizes(o, &c->own_send, &c->own_recv);
	c->peer_pd_valid = report_pdata("client", ev->param.conn.private_data,
					ev->param.conn.private_data_len, &c->peer_pd);
	ret = conn_setup(c);
	if (ret) {
		out("connect_request=rejected n=%u reason=setup error=\"%s\"", s->requests,
		    strerror(-ret));
		goto out_reject;
	}
	/* Reads we may issue are bounded by what the client can answer. */
	if (c->initiator_depth > ev->param.conn.responder_resources)
		c->initiator_depth = ev->param.conn.responder_resources;
	if (c->responder_resources > ev->param.conn.initiator_depth)
		c->responder_resources = ev->param.conn.initiator_depth;

	memset(&param, 0, sizeof(param));
	param.private_data_len = build_pdata(o, pdata);
	param.private_data = param.private_data_len ? pdata : NULL;
	param.initiator_depth = c->initiator_depth;
	param.responder_resources = c->responder_resources;
	param.retry_count = 6;
	param.rnr_retry_count = 6;
	if (rdma_accept(id, &param)) {
		out("connect_request=rejected n=%u reason=accept_failed error=\"%s\"",
		    s->requests, strerror(errno));
		goto out_reject;
	}
	rdma_ack_cm_event(ev);
	s->conns[i] = c;
	s->accepted++;
	{
		char pn[32];

		out("accepted conn=%u pdata=%s credits=%u send_max=%u recv_max=%u initiator_depth=%u responder_resources=%u",
		    c->number, pdata_name(o, pn, sizeof(pn)), o->credits,
		    min_u32(c->own_send, c->peer_pd.recv_size),
		    min_u32(c->peer_pd.send_size, c->own_recv), c->initiator_depth,
		    c->responder_resources);
	}
	return;

out_reject:
	rdma_reject(id, NULL, 0);
	rdma_ack_cm_event(ev);
	if (c) {
		c->id = NULL;
		if (c->qp) {
			rdma_destroy_qp(id);
			c->qp = NULL;
		}
		conn_free(c);
	}
	rdma_destroy_id(id);
}

static void
conn_closed(struct server *s, struct pconn *c, const char *event)
{
	unsigned int i;

	if (c->late.pending) {
		if (c->late.have_write)
			out("late_write=untested reason=no_later_call conn=%u of_xid=0x%08x",
			    c->number, c->late.xid);
		if (c->late.have_read)
			out("late_read=untested reason=no_later_call conn=%u of_xid=0x%08x",
			    c->number, c->late.xid);
	}
	out("disconnected conn=%u calls=%u event=%s", c->number, c->calls, event);
	c->closed = true;
	s->closed++;
	for (i = 0; i < PEER_MAX_CONNS; i++)
		if (s->conns[i] == c)
			s->conns[i] = NULL;
	conn_free(c);
}

static void
server_cm_events(struct server *s)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(s->ech, &ev) == 0) {
		enum rdma_cm_event_type type = ev->event;
		struct pconn *c;

		print_event(ev);
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			on_connect_request(s, ev);	/* acks ev */
			continue;
		}
		c = ev->id != s->lid ? conn_of_id(s, ev->id) : NULL;
		rdma_ack_cm_event(ev);
		if (!c)
			continue;
		switch (type) {
		case RDMA_CM_EVENT_ESTABLISHED:
			c->established = true;
			out("established conn=%u", c->number);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_REJECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			/* Serve what arrived before the end, then close. */
			conn_service(s, c);
			if (!c->disconnecting) {
				c->disconnecting = true;
				rdma_disconnect(c->id);
			}
			conn_closed(s, c, rdma_event_str(type));
			break;
		default:
			break;
		}
	}
}

static bool
server_done(const struct server *s)
{
	switch (s->sc) {
	case SV_SILENT:
		return false;
	case SV_REJECT:
		return s->rejected >= s->o->connections;
	case SV_ACCEPT:
	case SV_RKEY:
		break;
	}
	return s->closed >= s->o->connections;
}

static int
write_ready(const char *path, unsigned int port)
{
	size_t len = strlen(path) + sizeof(".tmp");
	char *tmp = malloc(len);
	FILE *f;
	bool ok;

	if (!tmp)
		return -1;
	snprintf(tmp, len, "%s.tmp", path);
	f = fopen(tmp, "w");
	ok = f && fprintf(f, "ready %u\n", port) > 0;
	ok = f && fclose(f) == 0 && ok;
	ok = ok && rename(tmp, path) == 0;
	if (!ok)
		warnx("cannot write %s: %s", path, strerror(errno));
	free(tmp);
	return ok ? 0 : -1;
}

static int
run_serve(const struct opts *o)
{
	struct server s;
	struct sockaddr_storage ss;
	struct pollfd pfd[1 + PEER_MAX_CONNS];
	bool timed_out = false, ok;
	const char *why = NULL;
	unsigned int i, port;
	char a[INET6_ADDRSTRLEN], pn[32];
	int k;

	memset(&s, 0, sizeof(s));
	s.o = o;
	for (k = 0; k <= SV_RKEY; k++)
		if (strcmp(o->cases[0], serve_case_names[k]) == 0)
			break;
	if (k > SV_RKEY)
		usage_error("unknown serve case", o->cases[0]);
	s.sc = (enum serve_case)k;

	if (!make_sockaddr(o->addr, o->port, &ss))
		return EX_SETUP;
	s.ech = rdma_create_event_channel();
	if (!s.ech || set_nonblock(s.ech->fd) ||
	    rdma_create_id(s.ech, &s.lid, NULL, RDMA_PS_TCP)) {
		out("listen=failed step=create_id error=\"%s\"", strerror(errno));
		if (s.ech)
			rdma_destroy_event_channel(s.ech);
		return EX_SETUP;
	}
	if (ss.ss_family == AF_INET6) {
		int one = 1;

		(void)rdma_set_option(s.lid, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
				      &one, sizeof(one));
	}
	if (rdma_bind_addr(s.lid, (struct sockaddr *)&ss) || rdma_listen(s.lid, 16)) {
		out("listen=failed step=bind error=\"%s\"", strerror(errno));
		rdma_destroy_id(s.lid);
		rdma_destroy_event_channel(s.ech);
		return EX_SETUP;
	}
	sa_format(rdma_get_local_addr(s.lid), a, sizeof(a), &port);
	port = ntohs(rdma_get_src_port(s.lid));
	out("listening addr=%s port=%u case=%s pdata=%s credits=%u device=%s", a, port,
	    serve_case_names[s.sc], pdata_name(o, pn, sizeof(pn)), o->credits,
	    s.lid->verbs ? ibv_get_device_name(s.lid->verbs->device) : "any");
	if (o->ready && write_ready(o->ready, port)) {
		rdma_destroy_id(s.lid);
		rdma_destroy_event_channel(s.ech);
		return EX_SETUP;
	}

	while (!stop_signal && !server_done(&s)) {
		unsigned int nfd = 0;
		int left = left_ms(run_deadline);

		if (!left) {
			timed_out = true;
			break;
		}
		pfd[nfd].fd = s.ech->fd;
		pfd[nfd++].events = POLLIN;
		for (i = 0; i < PEER_MAX_CONNS; i++) {
			if (!s.conns[i])
				continue;
			pfd[nfd].fd = s.conns[i]->cch->fd;
			pfd[nfd++].events = POLLIN;
		}
		(void)poll(pfd, nfd, left < 500 ? left : 500);
		server_cm_events(&s);
		for (i = 0; i < PEER_MAX_CONNS; i++)
			if (s.conns[i])
				conn_service(&s, s.conns[i]);
	}

	for (i = 0; i < PEER_MAX_CONNS; i++) {
		if (!s.conns[i])
			continue;
		if (!s.conns[i]->disconnecting)
			rdma_disconnect(s.conns[i]->id);
		conn_closed(&s, s.conns[i], "local_end");
		s.closed--;	/* not closed by the client */
	}
	for (i = 0; i < s.nheld; i++)
		rdma_destroy_id(s.held[i]);
	rdma_destroy_id(s.lid);
	rdma_destroy_event_channel(s.ech);

	switch (s.sc) {
	case SV_SILENT:
		if (!s.requests)
			why = "no_connect_request";
		break;
	case SV_REJECT:
		if (!s.rejected)
			why = "no_connect_request";
		else if (timed_out)
			why = "timeout";
		break;
	case SV_ACCEPT:
	case SV_RKEY:
		if (!s.accepted)
			why = "no_connection";
		else if (s.violations)
			why = "violation";
		else if (s.protocol_errors)
			why = "protocol_error";
		else if (s.late_exposed)
			why = "memory_still_exposed";
		else if (timed_out)
			why = "timeout";
		break;
	}
	if (s.sc == SV_RKEY && !s.late_tested)
		out("late_write=untested late_read=untested reason=%s",
		    s.chunks_offered ? "no_later_call" : "no_chunk_offered");
	ok = why == NULL;
	out("summary case=%s requests=%u accepted=%u rejected=%u closed=%u calls=%u violations=%u protocol_errors=%u chunks_offered=%u late_tested=%u late_exposed=%u%s result=%s%s%s",
	    serve_case_names[s.sc], s.requests, s.accepted, s.rejected, s.closed,
	    s.calls, s.violations, s.protocol_errors, s.chunks_offered,
	    s.late_tested, s.late_exposed, stop_signal ? " stopped_by=signal" : "",
	    ok ? "ok" : "failed", ok ? "" : " why=", ok ? "" : why);
	return ok ? EX_OK : EX_FAIL;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	struct opts o;

	parse_options(&o, argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	run_deadline = now_ms() + (int64_t)o.timeout_s * 1000;

	return o.serve ? run_serve(&o) : run_call(&o);
}
