/*
 * The calls the test servers hand to worker threads (rpctest-server -T,
 * nfstest-server -T): a queue, taken in order, and the threads taking
 * from it.
 */
#ifndef RPCTEST_JOBQ_H
#define RPCTEST_JOBQ_H

#include <pthread.h>
#include <rpc/rpc.h>

/* Embedded first in each job. */
struct jobq_item {
	struct jobq_item *next;
};

struct jobq {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct jobq_item *head, **tail;
};

#define JOBQ_INIT(q) \
	{ PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, &(q).head }

void jobq_push(struct jobq *q, struct jobq_item *it);
/* The oldest job; waits for one. */
struct jobq_item *jobq_pop(struct jobq *q);
/* Start n detached threads running fn; 0, or -1 said as prog's. */
int jobq_threads(int n, void *(*fn)(void *), const char *prog);

/*
 * A transport with a reply still to come from a worker is not destroyed
 * under it.  svc_run destroys a connection as soon as it finds it dead (a
 * TCP client that closed, an RDMA connection that went): the transport's
 * xp_destroy is wrapped and waits there, in svc_run's thread, until the
 * workers gave their replies (each bounded by the procedure and a send to
 * a dead peer), then destroys.  jobq_hold, in the dispatch, before the
 * job is queued: 0, or -1 (no memory: answer at once); jobq_release, by
 * the worker once it is done with the transport.
 */
int jobq_hold(SVCXPRT *xprt);
void jobq_release(SVCXPRT *xprt);

#endif
