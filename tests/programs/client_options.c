/*
 * rpctest-client's command line: the options, their defaults and checks,
 * and the usage text (exit status 64).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"

static void
usage(void)
{
	fprintf(stderr,
		"usage: %s [-h HOST] [-m create|tp|tli|tcp] [-p PORT] [-n tcp|tcp6]\n"
		"          [-A none|sys] [-t SECONDS] [-o OPS] [-s SIZES] [-c COUNT]\n"
		"          [-R CYCLES] [-N HANDLES] [-P PROG] [-b [-u] [-l]] [-q] [-k] [-H]\n"
		"          [-F N] [-T N] [-w MS]\n"
		"  -h HOST   server name or address (default localhost)\n"
		"  -m MODE   create: clnt_create, tp: clnt_tp_create (both via rpcbind),\n"
		"            tli: clnt_tli_create, tcp: clnttcp_create (both need -p)\n"
		"  -p PORT   server port for tli and tcp\n"
		"  -n NETID  tcp (default) or tcp6; -m tcp is IPv4 only\n"
		"  -A CRED   none (default) or sys (authunix_create_default)\n"
		"  -t SECS   call timeout (default 25)\n"
		"  -o OPS    comma list of null,echo,sink,source,mixed,whoami,digest\n"
		"            (default null,echo,sink,source,mixed)\n"
		"  -s SIZES  comma list of byte counts with optional K or M suffix and\n"
		"            an optional +N, e.g. 0,1,4K,1M+3 (default 0,1,100,1000,4K,64K,1M,1M+3)\n"
		"  -c COUNT  run the whole set COUNT times (default 1)\n"
		"  -R N      create and destroy the client handle N times, running the\n"
		"            set (COUNT times) with each; with -b, also print descriptors\n"
		"            and resident size after the first and the last (default 1)\n"
		"  -N N      make N client handles and hold them all at once, running\n"
		"            the set on each in turn; prints 'made N handles, D descriptors\n"
		"            open' unless -q (default 1)\n"
		"  -P PROG   program number (default 0x%x)\n"
		"  -b        print timing per op and size: calls, seconds, calls/s,\n"
		"            MB/s (10^6 payload bytes per second, both directions), mean latency;\n"
		"            create S: seconds from making the first handle to its first reply;\n"
		"            with -R: cycles=N fds_before= fds_after= rss_kb_before= rss_kb_after=\n"
		"  -u        with -b, also measure the CPU time (user and system, of this\n"
		"            process) spent inside the calls: a cpu_us column, mean per call\n"
		"  -l        with -b, also the median and 99th percentile of the\n"
		"            latency: p50_us and p99_us columns\n"
		"  -q        quiet: no per-call lines and no final line\n"
		"  -k        keep going after an RPC error, with the next call on the\n"
		"            same client; the exit status is 1 at the end\n"
		"  -H        after the last call print 'holding after N calls' and keep\n"
		"            the client until SIGTERM or SIGINT, then end as usual\n"
		"  -F N      before the first set: fork N times while a thread calls on\n"
		"            the client; each child checks that the inherited client fails\n"
		"            and that a client of its own verifies the set (RDMA only)\n"
		"  -T N      N threads share the client, each running the set COUNT\n"
		"            times at once (null and echo only; each echo checked\n"
		"            against the pattern of its own thread); with -b the table\n"
		"            counts all threads over the run's wall time\n"
		"  -w MS     wait MS milliseconds before each call but the first, as a\n"
		"            program that calls now and then (not with -T)\n"
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

void
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
	o->handles = 1;
	parse_ops(o, "null,echo,sink,source,mixed");
	parse_sizes(o, "0,1,100,1000,4K,64K,1M,1M+3");

	while ((opt = getopt(argc, argv, "h:m:p:n:A:t:o:s:c:R:N:P:bulqkHF:T:w:")) != -1) {
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
		case 'N':
			o->handles = parse_number(optarg, 1, 1000000);
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
		case 'l':
			measure_latency = true;
			break;
		case 'T':
			o->threads = (unsigned int)parse_number(optarg, 1, 256);
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
		case 'F':
			o->forks = (unsigned int)parse_number(optarg, 1, 100);
			break;
		case 'w':
			o->pause_ms = (unsigned int)parse_number(optarg, 0, 3600000);
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
	if (o->pause_ms && o->threads > 1)
		usage_error("-w pauses one thread's calls; not with", "-T");
}
