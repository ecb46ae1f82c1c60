/*
 * -F N: fork() N times while a second thread keeps calling on the same
 * CLIENT (SOURCE of 64 KiB: every call goes through the transport's
 * locks, its log and its memory).  In each child, a call on the CLIENT it
 * inherited must fail at once with an RPC error (the connection is the
 * parent's), and a CLIENT of its own must then run the whole set, every
 * byte verified: the child takes every lock the transport has, so a lock
 * left held by the parent's other thread would block it.  The parent
 * waits for each child (bounded) and then goes on with its own calls.
 * Each fork is taken while a third thread is stopped inside libtirpc's
 * AUTH_NONE marshal, which holds libtirpc's one lock for it (the worst
 * moment for a program that also has libtirpc CLIENTs of its own): the
 * child's CLIENT must not need that lock.
 * Over RDMA only: over TCP the child's call would go out on the parent's
 * socket.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "authnone_park.h"
#include "client.h"

#define CHILD_WAIT_S 120

struct caller {
	CLIENT *clnt;
	atomic_bool stop;
	unsigned long calls;
	bool failed;
};

static void *
keep_calling(void *arg)
{
	struct caller *c = arg;
	rpctest_source_args a = { .length = 65536, .seed = 7 };

	while (!atomic_load(&c->stop)) {
		rpctest_data *res = rpctest_source_1(a, c->clnt);

		if (!res) {
			c->failed = true;
			break;
		}
		clnt_freeres(c->clnt, (xdrproc_t)xdr_rpctest_data, (caddr_t)res);
		c->calls++;
	}
	return NULL;
}

/* No arguments, no result: an xdrproc_t without a cast. */
static bool_t
xdr_nothing(XDR *xdrs, ...)
{
	(void)xdrs;
	return TRUE;
}

/* In the child: returns its exit status. */
static int
child(CLIENT *inherited, const struct options *o)
{
	struct timeval tv = { .tv_sec = 5 };
	enum clnt_stat st;
	CLIENT *own;

	st = clnt_call(inherited, NULLPROC, xdr_nothing, NULL, xdr_nothing, NULL, tv);
	if (st == RPC_SUCCESS) {
		printf("fork child %d: a call on the inherited CLIENT succeeded\n",
		       (int)getpid());
		return EX_MISMATCH;
	}
	printf("fork child %d: %s\n", (int)getpid(),
	       clnt_sperror(inherited, "the inherited CLIENT"));
	clnt_destroy(inherited);

	own = make_client(o);
	run_set(own, o, 0);
	auth_destroy(own->cl_auth);
	clnt_destroy(own);
	printf("fork child %d: its own CLIENT: %lu calls, %lu failed\n",
	       (int)getpid(), total_calls, failed_calls);
	return failed_calls ? EX_RPC : 0;
}

/* Wait for pid, at most CHILD_WAIT_S seconds; its exit status, or -1. */
static int
reap(pid_t pid)
{
	const struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	int ws, i;

	for (i = 0; i < CHILD_WAIT_S * 100; i++) {
		pid_t r = waitpid(pid, &ws, WNOHANG);

		if (r == pid)
			return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		if (r < 0 && errno != EINTR)
			return -1;
		nanosleep(&tick, NULL);
	}
	printf("fork child %d is stuck after %d s: killed\n", (int)pid, CHILD_WAIT_S);
	kill(pid, SIGKILL);
	waitpid(pid, &ws, 0);
	return -1;
}

int
fork_test(CLIENT *clnt, const struct options *o)
{
	const struct timespec gap = { .tv_nsec = 30 * 1000 * 1000 };
	struct caller c = { .clnt = clnt };
	unsigned int i, bad = 0;
	pthread_t t;

	if (pthread_create(&t, NULL, keep_calling, &c) != 0) {
		fprintf(stderr, "%s: cannot start the calling thread\n", progname);
		return EX_RPC;
	}
	for (i = 0; i < o->forks; i++) {
		pid_t pid;
		int st;

		nanosleep(&gap, NULL);
		fflush(stdout);
		if (authnone_park_begin()) {
			fprintf(stderr, "%s: cannot stop a thread in libtirpc's AUTH_NONE marshal\n",
				progname);
			bad++;
			break;
		}
		pid = fork();
		if (pid != 0)
			authnone_park_end();
		if (pid < 0) {
			fprintf(stderr, "%s: fork: %s\n", progname, strerror(errno));
			bad++;
			break;
		}
		if (pid == 0) {
			st = child(clnt, o);
			fflush(stdout);
			_exit(st);
		}
		st = reap(pid);
		if (st != 0) {
			printf("fork child %d: exit status %d\n", (int)pid, st);
			bad++;
		}
	}
	atomic_store(&c.stop, true);
	pthread_join(t, NULL);
	if (c.failed) {
		printf("%s\n", clnt_sperror(clnt, "the parent's calling thread"));
		bad++;
	}
	printf("fork: %u children, %u failed; the parent's thread made %lu calls meanwhile\n",
	       o->forks, bad, c.calls);
	return bad ? EX_RPC : 0;
}
