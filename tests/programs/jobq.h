/*
 * The calls the test servers hand to worker threads (rpctest-server -T,
 * nfstest-server -T): a queue, taken in order, and the threads taking
 * from it.
 */
#ifndef RPCTEST_JOBQ_H
#define RPCTEST_JOBQ_H

#include <pthread.h>

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

#endif
