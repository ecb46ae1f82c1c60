/*
 * rpctest-server -T N: each call is handed to one of N worker threads,
 * which decodes its arguments and sends its reply after the dispatch
 * returned and svc_run went on: the pattern of servers answering from a
 * thread pool, which libtirpc's TCP transport allows (svc_getargs and
 * svc_sendreply on a transport work until its next call is read).
 * Replies of several connections then go out from several threads while
 * svc_run takes calls.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server.h"

struct deferred {
	struct svc_req rq;
	SVCXPRT *xprt;
	struct deferred *next;
};

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cond = PTHREAD_COND_INITIALIZER;
static struct deferred *q_head;
static struct deferred **q_tail = &q_head;

/* How long a worker lets svc_run go on before it answers. */
#define DEFER_DELAY_NS (5 * 1000 * 1000)

static struct deferred *
q_pop(void)
{
	struct deferred *d;

	pthread_mutex_lock(&q_lock);
	while (!q_head)
		pthread_cond_wait(&q_cond, &q_lock);
	d = q_head;
	q_head = d->next;
	if (!q_head)
		q_tail = &q_head;
	pthread_mutex_unlock(&q_lock);
	return d;
}

static void *
defer_worker(void *arg)
{
	const struct timespec delay = { .tv_nsec = DEFER_DELAY_NS };

	(void)arg;
	for (;;) {
		struct deferred *d = q_pop();

		/* By now the dispatch returned and svc_run asked xp_stat. */
		nanosleep(&delay, NULL);
		dispatch(&d->rq, d->xprt);
		free(d);
	}
	return NULL;
}

void
defer_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct deferred *d = malloc(sizeof(*d));

	if (!d) {
		svcerr_systemerr(xprt);
		return;
	}
	/*
	 * The request is copied: its credentials point into svc_run's
	 * stack, so -T goes without -u (the procedures used here read none).
	 */
	d->rq = *rq;
	d->xprt = xprt;
	d->next = NULL;
	pthread_mutex_lock(&q_lock);
	*q_tail = d;
	q_tail = &d->next;
	pthread_cond_signal(&q_cond);
	pthread_mutex_unlock(&q_lock);
}

int
defer_start(int n)
{
	pthread_t t;
	int i, err;

	for (i = 0; i < n; i++) {
		err = pthread_create(&t, NULL, defer_worker, NULL);
		if (err) {
			fprintf(stderr, "%s: pthread_create: %s\n", progname,
				strerror(err));
			return -1;
		}
		pthread_detach(t);
	}
	return 0;
}
