/*
 * rpcrdma-stat: show the transports of the processes running under the
 * shim, from the statistics files they publish (common/stats_file.h).
 *
 * Each file is copied once and shown from the copy; counters may move on
 * while it is printed.  Files of processes that are gone are skipped, and
 * removed when they belong to the caller.  This file is the command line;
 * stat.h lists the other parts.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <config.h>
#include "stat.h"

#define EX_USAGE 2

const char *progname = "rpcrdma-stat";

static void
usage(FILE *out, int status)
{
	fprintf(out,
		"usage: %s [-s] [-j] [-p PID]...\n"
		"Show the RPC transports of processes running under rpcrdma-shim.\n"
		"\n"
		"  -p, --pid PID   only this process (repeatable)\n"
		"  -s, --summary   one line per process: mode, configuration,\n"
		"                  transports over RDMA, registered memory in use and\n"
		"                  its budget, and fallbacks to TCP by reason\n"
		"  -j, --json      everything as one JSON document\n"
		"  -h, --help      show this help and exit\n"
		"  -V, --version   show the version and exit\n"
		"\n"
		"Without root, only the caller's own processes are shown.\n",
		progname);
	exit(status);
}


static void
add_pid(struct options *o, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > INT_MAX) {
		msg("-p %s: not a process id", arg);
		usage(stderr, EX_USAGE);
	}
	o->pids = xrealloc(o->pids, o->npids + 1, sizeof(*o->pids));
	o->pids[o->npids] = (pid_t)v;
	o->npids++;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "summary", no_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { 0 };
	struct procs ps = { 0 };
	int opt, status = 0;

	while ((opt = getopt_long(argc, argv, "p:sjhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			add_pid(&o, optarg);
			break;
		case 's':
			o.summary = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'V':
			printf("%s (%s) %s\n", progname, PACKAGE_NAME,
			       PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr, EX_USAGE);
		}
	}
	if (optind < argc) {
		msg("unexpected argument: %s", argv[optind]);
		usage(stderr, EX_USAGE);
	}

	if (read_all(&o, &ps) < 0)
		status = 1;
	for (size_t i = 0; i < o.npids; i++) {
		bool shown = false;

		for (size_t k = 0; k < ps.n; k++)
			shown |= ps.v[k]->f.pid == o.pids[i];
		if (shown)
			continue;
		msg("process %d: no statistics (not under the shim, no "
		    "transport yet, or another user's)", (int)o.pids[i]);
		status = 1;
	}
	if (o.json)
		print_json(&ps);
	else if (o.summary)
		print_summary(&ps);
	else
		print_transports(&ps);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		msg("write error: %s", strerror(errno));
		status = 1;
	}
	for (size_t i = 0; i < ps.n; i++)
		free(ps.v[i]);
	free(ps.v);
	free(o.pids);
	return status;
}
