/*
 * librpctest_sigtick.so: a test fixture, not part of the shim.
 *
 * Preloaded into a program, it gives the program an interval timer, as
 * daemons have for their housekeeping: SIGALRM every RPCTEST_SIGTICK_US
 * microseconds from before main until exit, caught by a handler that only
 * counts, installed without SA_RESTART.  Whatever the process is blocked
 * in when a tick comes (poll(), a read, a wait of the shim's) returns
 * EINTR, or is restarted by the kernel where that is its rule.  At exit
 * the count goes to stderr, so that a test can tell the ticks came:
 *
 *   rpctest-sigtick: 1234 signals
 *
 * Without RPCTEST_SIGTICK_US (or with a value that is not a number from
 * 100 to 1000000) it says so and does nothing.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static unsigned long ticks;
static int armed;

static void
tick(int sig)
{
	(void)sig;
	__atomic_add_fetch(&ticks, 1, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void
sigtick_init(void)
{
	const char *s = getenv("RPCTEST_SIGTICK_US");
	struct sigaction sa;
	struct itimerval it;
	unsigned long us;
	char *end;

	us = s ? strtoul(s, &end, 10) : 0;
	if (!s || end == s || *end || us < 100 || us > 1000000) {
		fprintf(stderr, "rpctest-sigtick: RPCTEST_SIGTICK_US must be 100 to 1000000, not %s\n",
			s ? s : "unset");
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tick;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;	/* no SA_RESTART: interrupted calls fail with EINTR */
	if (sigaction(SIGALRM, &sa, NULL) != 0) {
		perror("rpctest-sigtick: sigaction");
		return;
	}
	it.it_interval.tv_sec = (time_t)(us / 1000000);
	it.it_interval.tv_usec = (suseconds_t)(us % 1000000);
	it.it_value = it.it_interval;
	if (setitimer(ITIMER_REAL, &it, NULL) != 0) {
		perror("rpctest-sigtick: setitimer");
		return;
	}
	armed = 1;
}

__attribute__((destructor)) static void
sigtick_fini(void)
{
	struct itimerval off;

	if (!armed)
		return;
	memset(&off, 0, sizeof(off));
	(void)setitimer(ITIMER_REAL, &off, NULL);
	fprintf(stderr, "rpctest-sigtick: %lu signals\n",
		__atomic_load_n(&ticks, __ATOMIC_RELAXED));
}
