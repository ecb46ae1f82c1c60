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
 *
 * The parts of the program are listed in peer.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "peer.h"

const char *progname = "rdma-peer";
bool verbose;
volatile sig_atomic_t stop_signal;
int64_t run_deadline;

/* ------------------------------------------------------------------ */
/* Output and time                                                     */
/* ------------------------------------------------------------------ */

/* One line of the machine-readable output. */
void
out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void
warnmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void
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

int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* now + ms, but never past the end of the whole run. */
int64_t
bound(int64_t ms)
{
	int64_t d = now_ms() + ms;

	return d < run_deadline ? d : run_deadline;
}

int
left_ms(int64_t deadline)
{
	int64_t l = deadline - now_ms();

	if (l < 0)
		return 0;
	return l > INT32_MAX ? INT32_MAX : (int)l;
}

/* A short pause between polls of a completion queue. */
void
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

int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* "ADDR port P" of a socket address, for the output. */
void
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
/* main                                                                */
/* ------------------------------------------------------------------ */

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

	if (o.abuse)
		return run_abuse(&o);
	return o.serve ? run_serve(&o) : run_call(&o);
}
