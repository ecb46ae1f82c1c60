/*
 * rdma-peer: the command line.  See usage() for what it takes, and
 * tests/README.md.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer.h"
#include "rpctest.h"

static void usage(void) __attribute__((noreturn));

static void
usage(void)
{
	fprintf(stderr,
		"usage: %s call  -a ADDR -p PORT [options] CASE...\n"
		"       %s serve -a ADDR -p PORT [options] silent|reject|accept|rkey-after-reply|\n"
		"                                          drop-first|late-first|inv-first|\n"
		"                                          late-many\n"
		"       %s abuse -a ADDR -p PORT [options] flood|no-repost|vanish-read\n"
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
		"  --linger MS           call: stay connected MS after the last case,\n"
		"                        whatever comes then unread (default 0)\n"
		"  --late-ok             call: an answer to an earlier case that comes\n"
		"                        while a later one waits (printed as stray) does\n"
		"                        not fail it\n"
		"  --connections N       serve: end after N connections closed (accept,\n"
		"                        rkey-after-reply) or N requests rejected (default 1);\n"
		"                        abuse: connections doing it at once\n"
		"  --rd-atom N|I:R       call: the connect's initiator_depth (RDMA Reads\n"
		"                        we may issue) and responder_resources (Reads we\n"
		"                        answer): N for both, or I and R (the Linux\n"
		"                        client connects with 0:N); default: what the\n"
		"                        device allows, at most 8\n"
		"  --keep-chunks         call: leave the memory of each call's chunks\n"
		"                        registered after its answer (a careless client)\n"
		"  --old-kernel          serve: play Linux svcrdma before 5.11: ERR_CHUNK for\n"
		"                        Reply or Read segments over 1069056 octets, Write\n"
		"                        segments over 1060864, more than two Write chunks\n"
		"                        or Read segments at different positions, checked\n"
		"                        before the call runs; rnr_retry 0\n"
		"  --seg-max N[K]        serve --old-kernel: the largest segment of any\n"
		"                        chunk instead\n"
		"  --rpcrdma 1|2         call: the RPC-over-RDMA version of the valid calls\n"
		"                        (null, echo, sink, source, noprog; default 1)\n"
		"  --drop-v2             serve: answer no RPC-over-RDMA Version Two message\n"
		"                        (by default: ERR_VERS 1..1, as any Version One\n"
		"                        server)\n"
		"  --held N              serve late-many: the run's first N calls (default 4,\n"
		"                        at most 32) are answered late, each by its Reply\n"
		"                        chunk, once the next call on its connection came\n"
		"  -r, --ready FILE      serve: write \"ready PORT\" to FILE once listening\n"
		"  -v, --verbose         print every RDMA-CM event\n",
		progname, progname, progname, RPCTEST_PROG, RPCTEST_VERS, DEFAULT_TIMEOUT_S,
		DEFAULT_ANSWER_MS, DEFAULT_QUIET_MS);
	fputs("call cases, run in order on one connection; CASE[=EXPECT] overrides the\n"
		"expected answer (success, vers, badheader, none, prog-unavail,\n"
		"invalid-option, garbage-args, any):\n"
		"  null echo:N sink:N source:N noprog badvers[:V] msgp done badproc[:N]\n"
		"  badchunk[:disc|trunc|count] xidmismatch short rdmaerror bigread[:N]\n"
		"  badpos (a Read chunk past the end of the payload)\n"
		"  nfs4read:N (an NFSv4.1 READ COMPOUND of N octets: --prog 100003 --vers 4)\n"
		"  Version Two: opt[:TYPE] optcall optreply v2back v2mismatch v2trunc:N\n"
		"  null, echo, sink, source, noprog and nfs4read take chunks: +read (the call in a\n"
		"  position-zero Read chunk), +reply (a Reply chunk), +write (a Write\n"
		"  chunk for the result of echo and source), e.g. echo:8000+read+reply\n"
		"exit status: 0 as expected, 1 not as expected, 2 setup failed, 64 usage\n",
		stderr);
	exit(EX_USAGE);
}

void
usage_error(const char *what, const char *arg)
{
	warnmsg("%s: %s", what, arg);
	usage();
}

unsigned long
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
bool
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

void
parse_options(struct opts *o, int argc, char **argv)
{
	enum {
		OPT_PDATA = 256, OPT_PROG, OPT_VERS, OPT_CREDITS, OPT_TIMEOUT,
		OPT_ANSWER, OPT_QUIET, OPT_LINGER, OPT_LATE_OK, OPT_CONNS, OPT_KEEP, OPT_RDATOM,
		OPT_OLD, OPT_SEGMAX, OPT_HELD, OPT_DROPV2, OPT_RPCRDMA,
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
		{ "linger", required_argument, NULL, OPT_LINGER },
		{ "late-ok", no_argument, NULL, OPT_LATE_OK },
		{ "connections", required_argument, NULL, OPT_CONNS },
		{ "keep-chunks", no_argument, NULL, OPT_KEEP },
		{ "rd-atom", required_argument, NULL, OPT_RDATOM },
		{ "old-kernel", no_argument, NULL, OPT_OLD },
		{ "seg-max", required_argument, NULL, OPT_SEGMAX },
		{ "held", required_argument, NULL, OPT_HELD },
		{ "drop-v2", no_argument, NULL, OPT_DROPV2 },
		{ "rpcrdma", required_argument, NULL, OPT_RPCRDMA },
		{ NULL, 0, NULL, 0 },
	};
	bool credits_set = false;
	uint32_t seg_max = 0;
	int opt;

	memset(o, 0, sizeof(*o));
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "call") == 0)
		o->serve = false;
	else if (strcmp(argv[1], "serve") == 0)
		o->serve = true;
	else if (strcmp(argv[1], "abuse") == 0)
		o->abuse = true;
	else if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		usage();
	else
		usage_error("the first argument must be call, serve or abuse", argv[1]);

	o->pdata = PD_SIZES;
	o->pd.send_size = 4096;
	o->pd.recv_size = 4096;
	o->prog = RPCTEST_PROG;
	o->vers = RPCTEST_VERS;
	o->rpcrdma_vers = 1;
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
		case OPT_LINGER:
			o->linger_ms = (unsigned int)parse_number(optarg, 60000);
			break;
		case OPT_LATE_OK:
			o->late_ok = true;
			break;
		case OPT_KEEP:
			o->keep_chunks = true;
			break;
		case OPT_RDATOM:
			parse_rd_atom(o, optarg);
			break;
		case OPT_OLD:
			o->old_kernel = true;
			break;
		case OPT_DROPV2:
			o->drop_v2 = true;
			break;
		case OPT_RPCRDMA:
			o->rpcrdma_vers = (uint32_t)parse_number(optarg, 2);
			if (o->rpcrdma_vers < 1)
				usage_error("--rpcrdma is 1 or 2", optarg);
			break;
		case OPT_SEGMAX: {
			char *end;

			if (!parse_bytes(optarg, &end, &seg_max) || *end || !seg_max)
				usage_error("bad --seg-max", optarg);
			break;
		}
		case OPT_HELD:
			o->held = (unsigned int)parse_number(optarg, 32);
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
	if (!o->held)
		o->held = 4;
	if (!credits_set)
		o->credits = o->serve ? 32 : 8;
	/* (RPCSVC_MAXPAGES + 2) and RPCSVC_MAXPAGES pages of 4 KiB. */
	o->special_seg_max = seg_max ? seg_max : (259u + 2) * 4096;
	o->write_seg_max = seg_max ? seg_max : 259u * 4096;
	if (seg_max && !o->old_kernel)
		usage_error("--seg-max goes with", "--old-kernel");
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
	if (o->abuse && o->ncases != 1)
		usage_error("abuse takes one mode", o->cases[1]);
	if (o->ncases > PEER_MAX_CASES)
		usage_error("too many cases", o->cases[PEER_MAX_CASES]);
}
