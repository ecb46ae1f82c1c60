/*
 * librpctest_dropprivs.so: a test fixture, not part of the shim.
 *
 * Preloaded into a server, it changes the whole process to user and group
 * nobody (65534) when SIGUSR2 arrives: a daemon dropping its privileges
 * after it created its transports and took connections.  A thread of its
 * own waits for the signal (blocked before main, so every thread the
 * program starts inherits the block), then says so on stderr.
 */
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NOBODY 65534

static sigset_t drop_set;

static void *
drop_waiter(void *arg)
{
	int sig;

	(void)arg;
	if (sigwait(&drop_set, &sig) != 0)
		return NULL;
	/* glibc changes every thread of the process (POSIX semantics). */
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		fprintf(stderr, "rpctest-dropprivs: cannot change credentials: %s\n",
			strerror(errno));
	else
		fprintf(stderr, "rpctest-dropprivs: now uid %u gid %u\n",
			(unsigned int)getuid(), (unsigned int)getgid());
	return NULL;
}

__attribute__((constructor)) static void
drop_init(void)
{
	pthread_t t;
	int ret;

	sigemptyset(&drop_set);
	sigaddset(&drop_set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &drop_set, NULL);
	ret = pthread_create(&t, NULL, drop_waiter, NULL);
	if (ret)
		fprintf(stderr, "rpctest-dropprivs: no thread: %s\n", strerror(ret));
	else
		pthread_detach(t);
}
