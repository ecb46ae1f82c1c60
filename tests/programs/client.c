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
 * nothing accumulates.  -N N makes N handles and holds them all at once,
 * running the set on each in turn (with -H they stay until the signal).  -b -u also reports the CPU time this process spent
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
 * -F N forks N times with the CLIENT in use (client_fork.c).
 *
 * This file makes the handle and runs the cycles; client.h lists the
 * other parts.
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "client.h"
#include "rpctest.h"

const char *progname = "rpctest-client";

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

CLIENT *
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

/* --- main ------------------------------------------------------------------- */

/* The signals that end -H; blocked from the start, taken by sigwait(). */
static void
hold_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
}

/* -H: every call is done; keep the clients until one of those signals. */
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

/* Every op at every size, once. */
void
run_set(CLIENT *clnt, const struct options *o, unsigned long iter)
{
	for (unsigned int oi = 0; oi < o->nops; oi++) {
		unsigned int n = op_desc[o->ops[oi]].sized ? o->nsizes : 1;

		for (unsigned int si = 0; si < n; si++)
			run_op(clnt, o, oi, si, iter);
	}
}

/* A client handle with the timeout and credentials asked for. */
static CLIENT *
setup_client(const struct options *o)
{
	CLIENT *clnt;
	struct timeval tv;

	bench_mark_create();
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
	return clnt;
}

/*
 * One cycle: o->handles client handles made and held at once, the set run
 * o->count times on each in turn, then all destroyed.
 */
static void
run_cycle(const struct options *o, unsigned long cycle)
{
	CLIENT **clnt = calloc(o->handles, sizeof(*clnt));
	unsigned long h;

	if (!clnt) {
		fprintf(stderr, "%s: out of memory\n", progname);
		exit(EX_RPC);
	}
	for (h = 0; h < o->handles; h++)
		clnt[h] = setup_client(o);
	if (o->handles > 1 && !o->quiet)
		printf("made %lu handles, %ld descriptors open\n", o->handles,
		       count_fds());

	if (o->forks && cycle == 0) {
		int st = fork_test(clnt[0], o);

		if (st)
			exit(st);
	}
	if (o->threads) {
		int st = run_threads(clnt[0], o);

		if (st)
			exit(st);
	} else {
		for (unsigned long i = 0; i < o->count; i++)
			for (h = 0; h < o->handles; h++)
				run_set(clnt[h], o, cycle * o->count + i);
	}

	if (o->hold && cycle + 1 == o->cycles)
		hold_client();
	for (h = 0; h < o->handles; h++) {
		auth_destroy(clnt[h]->cl_auth);
		clnt_destroy(clnt[h]);
	}
	free(clnt);
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
