/*
 * Destroy and call hooks on libtirpc's transports (see hooks.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

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
	struct shim_stats_conn *stats;
};

static struct clnt_hook *
clnt_hook_of(CLIENT *cl)
{
	return (struct clnt_hook *)(void *)cl->cl_ops;
}

static enum clnt_stat
clnt_hook_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp,
	       xdrproc_t xresults, void *resultsp, struct timeval timeout)
{
	struct clnt_hook *h = clnt_hook_of(cl);
	enum clnt_stat st;

	st = h->orig->cl_call(cl, proc, xargs, argsp, xresults, resultsp,
			      timeout);
	SHIM_STATS_ADD(h->stats, calls, 1);
	if (st == RPC_TIMEDOUT)
		SHIM_STATS_ADD(h->stats, timeouts, 1);
	else if (st != RPC_SUCCESS)
		SHIM_STATS_ADD(h->stats, errors, 1);
	return st;
}

static void
clnt_hook_destroy(CLIENT *cl)
{
	struct clnt_hook *h = clnt_hook_of(cl);

	cl->cl_ops = (struct clnt_ops *)h->orig;
	shim_stats_close(h->stats);
	free(h);
	cl->cl_ops->cl_destroy(cl);
}

int
clnt_hook_stats(CLIENT *cl, struct shim_stats_conn *s)
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
	cl->cl_ops = &h->ops;
	return 0;
}
