/*
 * Destroy and call hooks on libtirpc's transports (see hooks.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "common/forkgen.h"
#include "hooks.h"

struct svc_hook {
	struct xp_ops ops;		/* first: xprt->xp_ops points here */
	const struct xp_ops *orig;
	void (*fn)(SVCXPRT *xprt, void *arg);
	void *arg;
};

static void
svc_hook_run(SVCXPRT *xprt)
{
	struct svc_hook *h = (struct svc_hook *)(void *)xprt->xp_ops;

	xprt->xp_ops = h->orig;
	h->fn(xprt, h->arg);
	free(h);
	xprt->xp_ops->xp_destroy(xprt);
}

int
svc_hook_destroy(SVCXPRT *xprt, void (*fn)(SVCXPRT *xprt, void *arg), void *arg)
{
	struct svc_hook *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->orig = xprt->xp_ops;
	h->ops = *xprt->xp_ops;
	h->ops.xp_destroy = svc_hook_run;
	h->fn = fn;
	h->arg = arg;
	xprt->xp_ops = &h->ops;
	return 0;
}

struct clnt_hook {
	struct clnt_ops ops;		/* first: cl->cl_ops points here */
	const struct clnt_ops *orig;
	struct shim_stats_conn *stats;	/* where calls are counted */
	/*
	 * Lazy (clnt_hook_stats_lazy): stats is our own record, counted
	 * under lock, until it moves into the file; owned while it is ours.
	 */
	bool lazy;
	bool owned;
	unsigned int after;
	unsigned int gen;		/* fork_gen() of the process that made it */
	struct shim_stats_conn *(*adopt)(const struct shim_stats_conn *rec);
	pthread_mutex_t lock;
};

static struct clnt_hook *
clnt_hook_of(CLIENT *cl)
{
	return (struct clnt_hook *)(void *)cl->cl_ops;
}

static void
count(struct shim_stats_conn *s, enum clnt_stat st)
{
	SHIM_STATS_ADD(s, calls, 1);
	if (st == RPC_TIMEDOUT)
		SHIM_STATS_ADD(s, timeouts, 1);
	else if (st != RPC_SUCCESS)
		SHIM_STATS_ADD(s, errors, 1);
}

/*
 * Counted in our record; past `after` calls, it moves into the file.  A
 * child after fork() never takes the lock (another thread of the parent
 * may have held it): its copy of the record stays its own.
 */
static void
count_lazy(struct clnt_hook *h, enum clnt_stat st)
{
	struct shim_stats_conn *s;

	if (fork_gen() != h->gen) {
		count(h->stats, st);
		return;
	}
	pthread_mutex_lock(&h->lock);
	count(h->stats, st);
	if (h->lazy && h->stats->calls > h->after) {
		/* No file (statistics off): counted here from now on. */
		s = h->adopt(h->stats);
		if (s) {
			free(h->stats);
			h->stats = s;
			h->owned = false;
		}
		__atomic_store_n(&h->lazy, false, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&h->lock);
}

static enum clnt_stat
clnt_hook_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp,
	       xdrproc_t xresults, void *resultsp, struct timeval timeout)
{
	struct clnt_hook *h = clnt_hook_of(cl);
	enum clnt_stat st;

	st = h->orig->cl_call(cl, proc, xargs, argsp, xresults, resultsp,
			      timeout);
	if (__atomic_load_n(&h->lazy, __ATOMIC_ACQUIRE))
		count_lazy(h, st);
	else
		count(h->stats, st);
	return st;
}

static void
clnt_hook_destroy(CLIENT *cl)
{
	struct clnt_hook *h = clnt_hook_of(cl);

	cl->cl_ops = (struct clnt_ops *)h->orig;
	if (h->owned)
		free(h->stats);
	else
		shim_stats_close(h->stats);
	pthread_mutex_destroy(&h->lock);
	free(h);
	cl->cl_ops->cl_destroy(cl);
}

/* A hook for cl, counting into s, not yet installed (cl->cl_ops). */
static int
hook_new(CLIENT *cl, struct shim_stats_conn *s, struct clnt_hook **hp)
{
	struct clnt_hook *h;

	/* One slot per CLIENT: a second hook would find itself as orig. */
	if (cl->cl_ops->cl_call == clnt_hook_call)
		return -EEXIST;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->orig = cl->cl_ops;
	h->ops = *cl->cl_ops;
	h->ops.cl_call = clnt_hook_call;
	h->ops.cl_destroy = clnt_hook_destroy;
	h->stats = s;
	pthread_mutex_init(&h->lock, NULL);
	*hp = h;
	return 0;
}

int
clnt_hook_stats(CLIENT *cl, struct shim_stats_conn *s)
{
	struct clnt_hook *h;
	int ret = hook_new(cl, s, &h);

	if (ret)
		return ret;
	cl->cl_ops = &h->ops;
	return 0;
}

int
clnt_hook_stats_lazy(CLIENT *cl, struct shim_stats_conn *rec,
		     unsigned int after,
		     struct shim_stats_conn *(*adopt)(const struct shim_stats_conn *rec))
{
	struct clnt_hook *h;
	int ret = hook_new(cl, rec, &h);

	if (ret)
		return ret;
	h->lazy = true;
	h->owned = true;
	h->after = after;
	h->gen = fork_gen();
	h->adopt = adopt;
	cl->cl_ops = &h->ops;
	return 0;
}
