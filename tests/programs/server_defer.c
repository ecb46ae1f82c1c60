/*
 * rpctest-server -T N: each call's arguments are decoded in the dispatch
 * and handed to one of N worker threads, which runs the procedure and
 * sends the reply after the dispatch returned and svc_run went on: the
 * pattern of servers answering from a thread pool, which libtirpc's TCP
 * transport allows (svc_sendreply answers the transport's last call).
 * Replies of several connections then go out from several threads while
 * svc_run takes calls.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "jobq.h"
#include "rpctest.h"
#include "server.h"

union defer_args {
	rpctest_data data;
	rpctest_source_args sargs;
};

struct deferred {
	struct jobq_item item;		/* first */
	struct svc_req rq;
	SVCXPRT *xprt;
	rpcproc_t proc;
	xdrproc_t xargs, xres;
	union defer_args args;
};

static struct jobq q = JOBQ_INIT(q);
/* The procedures keep their results in static storage: one at a time. */
static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;

/* xdrproc_t is variadic: cast through a plain function pointer type. */
#define XDRPROC(f) ((xdrproc_t)(void (*)(void))(f))

/* How long a worker lets svc_run go on before it answers. */
static struct timespec defer_delay;
/* A procedure whose calls are never answered, -1: none. */
static int defer_drop = -1;

/* Run the procedure and answer, from the worker. */
static void
defer_answer(struct deferred *d)
{
	void *res = NULL;

	pthread_mutex_lock(&proc_lock);
	switch (d->proc) {
	case RPCTEST_NULL:
		res = rpctest_null_1_svc(&d->rq);
		break;
	case RPCTEST_ECHO:
		res = rpctest_echo_1_svc(d->args.data, &d->rq);
		break;
	case RPCTEST_SINK:
		res = rpctest_sink_1_svc(d->args.data, &d->rq);
		break;
	case RPCTEST_SOURCE:
		res = rpctest_source_1_svc(d->args.sargs, &d->rq);
		break;
	}
	if (res && !svc_sendreply(d->xprt, d->xres, res))
		fprintf(stderr, "%s: worker: svc_sendreply for procedure %u failed\n",
			progname, (unsigned int)d->proc);
	pthread_mutex_unlock(&proc_lock);
	/* The arguments are ours now: freed without the transport. */
	xdr_free(d->xargs, (char *)&d->args);
}

static void *
defer_worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct deferred *d = (struct deferred *)jobq_pop(&q);

		/* By now the dispatch returned and svc_run asked xp_stat. */
		nanosleep(&defer_delay, NULL);
		defer_answer(d);
		jobq_release(d->xprt);
		free(d);
	}
	return NULL;
}

/*
 * The arguments are decoded here, in the dispatch: libtirpc's TCP
 * transport skips the rest of the record once the dispatch returns, so
 * only the reply may come later.  Other procedures are answered at once.
 */
void
defer_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	struct deferred *d;

	/* As a batched call: run (here, nothing to run), never answered. */
	if (defer_drop >= 0 && rq->rq_proc == (rpcproc_t)defer_drop)
		return;
	switch (rq->rq_proc) {
	case RPCTEST_NULL:
	case RPCTEST_ECHO:
	case RPCTEST_SINK:
	case RPCTEST_SOURCE:
		break;
	default:
		dispatch(rq, xprt);
		return;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		svcerr_systemerr(xprt);
		return;
	}
	d->rq = *rq;
	/* svc_run's, gone once the dispatch returns (the procedures need none). */
	d->rq.rq_clntcred = NULL;
	d->xprt = xprt;
	d->proc = rq->rq_proc;
	d->xargs = XDRPROC(xdr_void);
	d->xres = XDRPROC(xdr_void);
	if (d->proc == RPCTEST_ECHO || d->proc == RPCTEST_SINK)
		d->xargs = XDRPROC(xdr_rpctest_data);
	else if (d->proc == RPCTEST_SOURCE)
		d->xargs = XDRPROC(xdr_rpctest_source_args);
	if (d->proc == RPCTEST_ECHO || d->proc == RPCTEST_SOURCE)
		d->xres = XDRPROC(xdr_rpctest_data);
	else if (d->proc == RPCTEST_SINK)
		d->xres = XDRPROC(xdr_rpctest_sink_res);
	if (!svc_getargs(xprt, d->xargs, (char *)&d->args)) {
		svcerr_decode(xprt);
		free(d);
		return;
	}
	if (jobq_hold(xprt) < 0) {
		xdr_free(d->xargs, (char *)&d->args);
		free(d);
		svcerr_systemerr(xprt);
		return;
	}
	jobq_push(&q, &d->item);
}

int
defer_start(int n, unsigned int delay_ms, int drop_proc)
{
	defer_drop = drop_proc;
	defer_delay.tv_sec = delay_ms / 1000;
	defer_delay.tv_nsec = (long)(delay_ms % 1000) * 1000000;
	return jobq_threads(n, defer_worker, progname);
}
