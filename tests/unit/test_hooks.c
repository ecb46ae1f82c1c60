/*
 * Hooks on libtirpc's own transports (transport/hooks.c): destroy hooks
 * stacked on one SVCXPRT run from the last added to the first, each
 * already removed, and the transport's own destroy last with its own ops
 * back in place; a CLIENT's statistics hook counts its calls and goes
 * away the same way.  The transports here are fakes whose ops
 * record what reaches them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "check.h"
#include "hooks.h"

/* What ran, in order: hook ids, and 0 for the transport's own destroy. */
static int ran[16];
static unsigned int nran;
/* The ops each of them saw on the transport while it ran. */
static const void *ops_seen[16];

/* ---- SVCXPRT --------------------------------------------------------- */

static enum xprt_stat
fake_stat(SVCXPRT *xprt)
{
	return XPRT_IDLE;
}

static void
fake_xp_destroy(SVCXPRT *xprt)
{
	ops_seen[nran] = xprt->xp_ops;
	ran[nran++] = 0;
}

static const struct xp_ops fake_xp_ops = {
	.xp_stat = fake_stat,
	.xp_destroy = fake_xp_destroy,
};

static void
svc_hook_fn(SVCXPRT *xprt, void *arg)
{
	ops_seen[nran] = xprt->xp_ops;
	ran[nran++] = *(int *)arg;
}

static void
test_svc_stack(void)
{
	static int ids[] = { 1, 2, 3 };
	const struct xp_ops *after_first = NULL, *after_second = NULL;
	SVCXPRT xprt;
	unsigned int i;

	memset(&xprt, 0, sizeof(xprt));
	xprt.xp_ops = &fake_xp_ops;
	nran = 0;

	CHECK(svc_hook_destroy(&xprt, svc_hook_fn, &ids[0]) == 0, "first hook added");
	after_first = xprt.xp_ops;
	CHECK(svc_hook_destroy(&xprt, svc_hook_fn, &ids[1]) == 0, "second hook added");
	after_second = xprt.xp_ops;
	CHECK(svc_hook_destroy(&xprt, svc_hook_fn, &ids[2]) == 0, "third hook added");
	CHECK(xprt.xp_ops != &fake_xp_ops && xprt.xp_ops != after_first &&
	      xprt.xp_ops != after_second, "each hook puts its own ops in place");
	CHECK(xprt.xp_ops->xp_stat == fake_stat && SVC_STAT(&xprt) == XPRT_IDLE,
	      "the other operations still reach the transport's own");
	CHECK_EQ_U(nran, 0, "nothing runs before the destroy");

	SVC_DESTROY(&xprt);
	CHECK_EQ_U(nran, 4, "three hooks and the transport's destroy ran, once each");
	CHECK(ran[0] == 3 && ran[1] == 2 && ran[2] == 1 && ran[3] == 0,
	      "the last hook added runs first, the transport's destroy last (%d %d %d %d)",
	      ran[0], ran[1], ran[2], ran[3]);
	CHECK(ops_seen[0] == after_second && ops_seen[1] == after_first &&
	      ops_seen[2] == &fake_xp_ops,
	      "each hook runs already removed: the ops below it are in place");
	CHECK(ops_seen[3] == &fake_xp_ops && xprt.xp_ops == &fake_xp_ops,
	      "the transport's own destroy sees its own ops, and they stay");
	for (i = 0; i < nran; i++)
		ops_seen[i] = NULL;
}

/* ---- CLIENT ---------------------------------------------------------- */

static enum clnt_stat next_stat;
static unsigned int own_calls, own_controls;

static enum clnt_stat
fake_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp,
	  xdrproc_t xres, void *resp, struct timeval tv)
{
	own_calls++;
	return next_stat;
}

static bool_t
fake_control(CLIENT *cl, u_int req, void *info)
{
	own_controls++;
	return req == CLGET_FD;
}

static void
fake_cl_destroy(CLIENT *cl)
{
	ops_seen[nran] = cl->cl_ops;
	ran[nran++] = 0;
}

static struct clnt_ops fake_cl_ops = {
	.cl_call = fake_call,
	.cl_control = fake_control,
	.cl_destroy = fake_cl_destroy,
};

static enum clnt_stat
call(CLIENT *cl, enum clnt_stat st)
{
	struct timeval tv = { 1, 0 };

	next_stat = st;
	/* The fake transport encodes nothing: no XDR routines. */
	return CLNT_CALL(cl, 0, NULL, NULL, NULL, NULL, tv);
}

/*
 * One statistics hook per CLIENT, as route.c sets it on TCP clients: a
 * second one on the same CLIENT is not supported (each finds its state
 * through cl_ops, which names the outermost hook only).
 */
static void
test_clnt_hook(void)
{
	struct shim_stats_conn a;
	CLIENT cl;
	int fd;

	memset(&cl, 0, sizeof(cl));
	cl.cl_ops = &fake_cl_ops;
	memset(&a, 0, sizeof(a));
	a.state = SHIM_STATS_LIVE;
	nran = 0;
	own_calls = own_controls = 0;

	CHECK(clnt_hook_stats(&cl, &a) == 0, "statistics hook added");
	CHECK(cl.cl_ops != &fake_cl_ops, "the hook puts its own ops in place");
	{
		const struct clnt_ops *first = cl.cl_ops;

		CHECK(clnt_hook_stats(&cl, &a) == -EEXIST && cl.cl_ops == first,
		      "a second statistics hook is refused, the first stays");
	}
	CHECK(call(&cl, RPC_SUCCESS) == RPC_SUCCESS, "a call returns the transport's status");
	CHECK(call(&cl, RPC_TIMEDOUT) == RPC_TIMEDOUT, "a timeout is passed up");
	CHECK(call(&cl, RPC_CANTRECV) == RPC_CANTRECV, "an error is passed up");
	CHECK(call(&cl, RPC_SUCCESS) == RPC_SUCCESS, "another success");
	CHECK_EQ_U(own_calls, 4, "every call reached the transport once");
	CHECK(a.calls == 4 && a.timeouts == 1 && a.errors == 1,
	      "the hook counted 4 calls, 1 timeout, 1 error (%llu %llu %llu)",
	      (unsigned long long)a.calls, (unsigned long long)a.timeouts,
	      (unsigned long long)a.errors);
	CHECK(CLNT_CONTROL(&cl, CLGET_FD, &fd) && own_controls == 1,
	      "clnt_control reaches the transport's own");

	CLNT_DESTROY(&cl);
	CHECK_EQ_U(nran, 1, "the transport's destroy ran once");
	CHECK(ops_seen[0] == &fake_cl_ops && cl.cl_ops == &fake_cl_ops,
	      "the hook was removed before it ran");
	CHECK(a.state == SHIM_STATS_FREE, "the statistics slot was closed");
	CHECK_EQ_U(own_calls, 4, "the destroy made no call");
}

/* A CLIENT with no statistics slot (statistics off): counted nowhere. */
static void
test_clnt_no_stats(void)
{
	CLIENT cl;

	memset(&cl, 0, sizeof(cl));
	cl.cl_ops = &fake_cl_ops;
	own_calls = 0;
	nran = 0;
	CHECK(clnt_hook_stats(&cl, NULL) == 0, "a hook without a slot is added");
	CHECK(call(&cl, RPC_TIMEDOUT) == RPC_TIMEDOUT && own_calls == 1,
	      "calls go through");
	CLNT_DESTROY(&cl);
	CHECK(nran == 1 && cl.cl_ops == &fake_cl_ops, "and the destroy too");
}

/* The file's slot a lazy hook's record moves into (or none: NULL). */
static struct shim_stats_conn file_slot;
static bool file_made;
static unsigned int adopted;

static struct shim_stats_conn *
fake_adopt(const struct shim_stats_conn *rec)
{
	adopted++;
	if (!file_made)
		return NULL;
	file_slot = *rec;
	file_slot.state = SHIM_STATS_LIVE;
	return &file_slot;
}

/*
 * A lazy hook counts into its own record up to `after` calls; the call
 * past them moves the record, with every call counted, into the file,
 * where later calls are counted.
 */
static void
test_clnt_lazy(void)
{
	struct shim_stats_conn *rec = calloc(1, sizeof(*rec));
	CLIENT cl;

	memset(&cl, 0, sizeof(cl));
	cl.cl_ops = &fake_cl_ops;
	memset(&file_slot, 0, sizeof(file_slot));
	file_made = true;
	adopted = 0;
	nran = 0;
	rec->prog = 7;
	CHECK(clnt_hook_stats_lazy(&cl, rec, 1, fake_adopt) == 0, "lazy hook added");
	CHECK(clnt_hook_stats(&cl, NULL) == -EEXIST, "a second hook is refused");
	CHECK(call(&cl, RPC_TIMEDOUT) == RPC_TIMEDOUT, "first call");
	CHECK(adopted == 0 && rec->calls == 1 && rec->timeouts == 1,
	      "the first call is counted in the record, the file not asked for");
	CHECK(call(&cl, RPC_SUCCESS) == RPC_SUCCESS, "second call");
	CHECK(adopted == 1 && file_slot.calls == 2 && file_slot.timeouts == 1 &&
	      file_slot.prog == 7,
	      "the second call moved the record into the file with both calls (%llu)",
	      (unsigned long long)file_slot.calls);
	CHECK(call(&cl, RPC_CANTRECV) == RPC_CANTRECV && file_slot.calls == 3 &&
	      file_slot.errors == 1 && adopted == 1,
	      "later calls are counted in the file");
	CLNT_DESTROY(&cl);
	CHECK(nran == 1 && cl.cl_ops == &fake_cl_ops, "the destroy reached the transport");
	CHECK(file_slot.state == SHIM_STATS_FREE, "the file's slot was closed");

	/* No file to be had: the record keeps counting, freed with the hook. */
	rec = calloc(1, sizeof(*rec));
	memset(&cl, 0, sizeof(cl));
	cl.cl_ops = &fake_cl_ops;
	file_made = false;
	adopted = 0;
	nran = 0;
	CHECK(clnt_hook_stats_lazy(&cl, rec, 1, fake_adopt) == 0, "lazy hook added");
	call(&cl, RPC_SUCCESS);
	call(&cl, RPC_SUCCESS);
	call(&cl, RPC_SUCCESS);
	CHECK(adopted == 1 && rec->calls == 3,
	      "asked for the file once; without one, the record counts (%llu)",
	      (unsigned long long)rec->calls);
	CLNT_DESTROY(&cl);
	CHECK(nran == 1, "the destroy reached the transport");
}

int
main(void)
{
	test_svc_stack();
	test_clnt_hook();
	test_clnt_no_stats();
	test_clnt_lazy();
	return check_done();
}
