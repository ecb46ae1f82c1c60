/*
 * A queue of calls for worker threads (jobq.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jobq.h"

void
jobq_push(struct jobq *q, struct jobq_item *it)
{
	it->next = NULL;
	pthread_mutex_lock(&q->lock);
	*q->tail = it;
	q->tail = &it->next;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

struct jobq_item *
jobq_pop(struct jobq *q)
{
	struct jobq_item *it;

	pthread_mutex_lock(&q->lock);
	while (!q->head)
		pthread_cond_wait(&q->cond, &q->lock);
	it = q->head;
	q->head = it->next;
	if (!q->head)
		q->tail = &q->head;
	pthread_mutex_unlock(&q->lock);
	return it;
}

int
jobq_threads(int n, void *(*fn)(void *), const char *prog)
{
	pthread_t t;
	int i, err;

	for (i = 0; i < n; i++) {
		err = pthread_create(&t, NULL, fn, NULL);
		if (err) {
			fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(err));
			return -1;
		}
		pthread_detach(t);
	}
	return 0;
}

/* The wrapper of a held transport's xp_ops. */
struct jobq_conn {
	struct xp_ops ops;		/* first: xprt->xp_ops points here */
	const struct xp_ops *orig;
	unsigned int pending;		/* jobs not released, under conn_lock */
};

static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conn_done = PTHREAD_COND_INITIALIZER;

static void
conn_destroy(SVCXPRT *xprt)
{
	struct jobq_conn *c = (struct jobq_conn *)(void *)xprt->xp_ops;

	pthread_mutex_lock(&conn_lock);
	while (c->pending)
		pthread_cond_wait(&conn_done, &conn_lock);
	pthread_mutex_unlock(&conn_lock);
	xprt->xp_ops = c->orig;
	free(c);
	xprt->xp_ops->xp_destroy(xprt);
}

int
jobq_hold(SVCXPRT *xprt)
{
	struct jobq_conn *c;

	/*
	 * Only svc_run's thread changes xp_ops: here before the transport's
	 * first job is queued, and in conn_destroy after its last release.
	 */
	if (xprt->xp_ops->xp_destroy != conn_destroy) {
		c = calloc(1, sizeof(*c));
		if (!c)
			return -1;
		c->orig = xprt->xp_ops;
		c->ops = *c->orig;
		c->ops.xp_destroy = conn_destroy;
		xprt->xp_ops = &c->ops;
	}
	c = (struct jobq_conn *)(void *)xprt->xp_ops;
	pthread_mutex_lock(&conn_lock);
	c->pending++;
	pthread_mutex_unlock(&conn_lock);
	return 0;
}

void
jobq_release(SVCXPRT *xprt)
{
	struct jobq_conn *c = (struct jobq_conn *)(void *)xprt->xp_ops;

	pthread_mutex_lock(&conn_lock);
	if (!--c->pending)
		pthread_cond_broadcast(&conn_done);
	pthread_mutex_unlock(&conn_lock);
}
