/*
 * The upgrading CLIENT (clnt_upgrade.h): libtirpc's TCP CLIENT until an
 * RDMA CLIENT, connected in a thread of its own, takes over.
 *
 * What a program can see stays libtirpc's clnt_vc: the descriptor is the
 * TCP CLIENT's (CLGET_FD, CLSET_FD_CLOSE/NCLOSE act on it; the RDMA CLIENT
 * has a duplicate it closes itself); the XID sequence goes on across the
 * switch (the RDMA CLIENT's next XID is the one after the TCP CLIENT's
 * last, past those its calls still under way may yet take); a timeout,
 * program or version set before the switch is set on the RDMA CLIENT
 * too; cl_auth is the program's, lent to whichever CLIENT
 * carries a call; cl_netid and cl_tp, filled in by clnt_tli_create(), are
 * freed here as clnt_vc_destroy() frees them.
 *
 * Lifetime: the CLIENT and a running attempt each hold a reference.  A
 * CLIENT destroyed while its attempt runs leaves it to finish on its own
 * (a connect is bounded by connect_timeout): the attempt then destroys
 * the RDMA CLIENT it made, so that no connection stays half-open on the
 * server, and drops the last reference.  Nothing waits for the thread:
 * a process that exits takes it along, and the kernel closes what it had.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth_none.h"
#include "clnt_upgrade.h"
#include "common/forkgen.h"

/*
 * XIDs one call of clnt_vc may take: each of its two refreshes of the
 * credentials sends the call again with a new one.
 */
#define UP_XIDS_PER_CALL 3

enum up_state {
	UP_TCP,		/* no attempt yet */
	UP_CONNECTING,	/* the attempt's thread runs */
	UP_RDMA,	/* the RDMA CLIENT is up */
	UP_FAILED,	/* TCP for good */
};

struct up {
	pthread_mutex_t lock;
	pthread_cond_t settled;		/* the attempt ended */
	CLIENT *tcp;
	CLIENT *rdma;			/* once UP_RDMA */
	enum up_state state;
	bool switched;			/* rdma took the XID sequence over */
	bool destroyed;			/* the CLIENT is gone, the attempt not */
	unsigned int refs;
	unsigned int calls;
	unsigned int tcp_calls;		/* on the TCP CLIENT now */
	unsigned int after;
	unsigned int gen;		/* fork_gen() of the process that made it */
	bool timeout_set;
	struct timeval timeout;
	CLIENT *last;			/* carried the last call */
	const struct clnt_upgrade_ops *ops;
	void *arg;
};

static const struct clnt_ops *up_ops(void);

static struct up *
up_of(CLIENT *cl)
{
	return cl->cl_private;
}

/* Drop one reference; the last frees. */
static void
up_put(struct up *u)
{
	bool last;

	pthread_mutex_lock(&u->lock);
	last = --u->refs == 0;
	pthread_mutex_unlock(&u->lock);
	if (!last)
		return;
	if (u->ops->release)
		u->ops->release(u->arg);
	pthread_cond_destroy(&u->settled);
	pthread_mutex_destroy(&u->lock);
	free(u);
}

/* ------------------------------------------------------------------ */
/* The attempt                                                         */
/* ------------------------------------------------------------------ */

struct attempt {
	struct up *u;
	int fd;
};

static void *
attempt_run(void *p)
{
	struct attempt *a = p;
	struct up *u = a->u;
	CLIENT *rdma;

	rdma = u->ops->connect(u->arg, a->fd);
	if (!rdma)
		close(a->fd);
	free(a);

	pthread_mutex_lock(&u->lock);
	if (u->destroyed) {
		pthread_mutex_unlock(&u->lock);
		/* Nobody will call it: disconnect now, not at exit. */
		if (rdma)
			clnt_destroy(rdma);
	} else {
		u->rdma = rdma;
		u->state = rdma ? UP_RDMA : UP_FAILED;
		pthread_cond_broadcast(&u->settled);
		pthread_mutex_unlock(&u->lock);
	}
	up_put(u);
	return NULL;
}

/*
 * Start the attempt: a duplicate of the TCP descriptor, and a detached
 * thread with every signal blocked (the program's handlers run in its own
 * threads).  Caller holds u->lock.
 */
static void
attempt_start_locked(struct up *u)
{
	struct attempt *a = malloc(sizeof(*a));
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int fd = -1, ret;

	if (!a || !clnt_control(u->tcp, CLGET_FD, (char *)&fd) ||
	    (a->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		free(a);
		u->state = UP_FAILED;
		return;
	}
	a->u = u;
	u->refs++;
	u->state = UP_CONNECTING;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &attr, attempt_run, a);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		close(a->fd);
		free(a);
		u->refs--;
		u->state = UP_FAILED;
	}
}

/*
 * Hand the RDMA CLIENT what was set on the TCP one: the XID sequence, the
 * program and version, a timeout set with clnt_control().  Caller holds
 * u->lock; no call is on rdma yet.  Calls of other threads may still be on
 * the TCP CLIENT, some without their XIDs yet: the RDMA CLIENT's start past
 * what they can take, so that no XID goes out on both connections.
 */
static void
switch_locked(struct up *u)
{
	uint32_t xid, val;

	if (clnt_control(u->tcp, CLGET_XID, (char *)&xid)) {
		/* clnt_vc counts XIDs down: the next is one below the last. */
		xid -= 1 + UP_XIDS_PER_CALL * u->tcp_calls;
		(void)clnt_control(u->rdma, CLSET_XID, (char *)&xid);
	}
	if (clnt_control(u->tcp, CLGET_PROG, (char *)&val))
		(void)clnt_control(u->rdma, CLSET_PROG, (char *)&val);
	if (clnt_control(u->tcp, CLGET_VERS, (char *)&val))
		(void)clnt_control(u->rdma, CLSET_VERS, (char *)&val);
	if (u->timeout_set)
		(void)clnt_control(u->rdma, CLSET_TIMEOUT, (char *)&u->timeout);
	u->switched = true;
}

/* The CLIENT for a new call; starts the attempt when it is time. */
static CLIENT *
up_pick(struct up *u)
{
	CLIENT *inner;

	/*
	 * A child after fork(): a thread of the parent may have held the
	 * lock.  What the parent had is read as it was (an RDMA CLIENT of
	 * the parent fails its calls in the child, as documented).
	 */
	if (u->gen != fork_gen())
		return __atomic_load_n(&u->state, __ATOMIC_ACQUIRE) == UP_RDMA &&
		       u->switched ? u->rdma : u->tcp;

	pthread_mutex_lock(&u->lock);
	if (u->calls < UINT_MAX)
		u->calls++;
	if (u->state == UP_TCP && u->calls > u->after) {
		if (u->ops->skip && u->ops->skip(u->arg))
			u->state = UP_FAILED;
		else
			attempt_start_locked(u);
	}
	if (u->state == UP_RDMA && !u->switched)
		switch_locked(u);
	inner = u->state == UP_RDMA ? u->rdma : u->tcp;
	if (inner == u->tcp)
		u->tcp_calls++;
	pthread_mutex_unlock(&u->lock);
	return inner;
}

/* A call picked for the TCP CLIENT returned (up_pick counted it). */
static void
up_tcp_done(struct up *u)
{
	if (u->gen != fork_gen())
		return;
	pthread_mutex_lock(&u->lock);
	u->tcp_calls--;
	pthread_mutex_unlock(&u->lock);
}

/* The CLIENT that carries controls and answers for the current one. */
static CLIENT *
up_current(struct up *u)
{
	CLIENT *inner;

	if (u->gen != fork_gen())
		return u->switched ? u->rdma : u->tcp;
	pthread_mutex_lock(&u->lock);
	inner = u->switched ? u->rdma : u->tcp;
	pthread_mutex_unlock(&u->lock);
	return inner;
}

/* ------------------------------------------------------------------ */
/* clnt_ops                                                            */
/* ------------------------------------------------------------------ */

static enum clnt_stat
up_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp,
	xdrproc_t xres, void *resp, struct timeval timeout)
{
	struct up *u = up_of(cl);
	CLIENT *inner = up_pick(u);
	enum clnt_stat st;

	inner->cl_auth = cl->cl_auth;
	__atomic_store_n(&u->last, inner, __ATOMIC_RELEASE);
	st = CLNT_CALL(inner, proc, xargs, argsp, xres, resp, timeout);
	if (inner == u->tcp)
		up_tcp_done(u);
	return st;
}

static CLIENT *
up_last(struct up *u)
{
	CLIENT *last = __atomic_load_n(&u->last, __ATOMIC_ACQUIRE);

	return last ? last : u->tcp;
}

static void
up_geterr(CLIENT *cl, struct rpc_err *err)
{
	CLNT_GETERR(up_last(up_of(cl)), err);
}

static bool_t
up_freeres(CLIENT *cl, xdrproc_t xres, void *resp)
{
	return CLNT_FREERES(up_last(up_of(cl)), xres, resp);
}

static void
up_abort(CLIENT *cl)
{
}

static bool_t
up_control(CLIENT *cl, u_int request, void *info)
{
	struct up *u = up_of(cl);
	bool_t ret;

	switch (request) {
	case CLSET_FD_CLOSE:
	case CLSET_FD_NCLOSE:
	case CLGET_FD:
	case CLGET_SERVER_ADDR:
	case CLGET_SVC_ADDR:
		/* The descriptor and the address are the TCP CLIENT's. */
		return clnt_control(u->tcp, request, info);
	case CLSET_TIMEOUT:
		ret = clnt_control(up_current(u), request, info);
		if (ret && u->gen == fork_gen()) {
			pthread_mutex_lock(&u->lock);
			u->timeout = *(struct timeval *)info;
			u->timeout_set = true;
			pthread_mutex_unlock(&u->lock);
		}
		return ret;
	default:
		return clnt_control(up_current(u), request, info);
	}
}

static void
up_destroy(CLIENT *cl)
{
	struct up *u = up_of(cl);
	CLIENT *rdma = NULL;
	bool forked = u->gen != fork_gen();

	if (!forked) {
		pthread_mutex_lock(&u->lock);
		if (u->state == UP_CONNECTING)
			u->destroyed = true;	/* the attempt destroys its own */
		else
			rdma = u->rdma;
		pthread_mutex_unlock(&u->lock);
	} else if (u->state == UP_RDMA) {
		rdma = u->rdma;
	}
	if (rdma) {
		rdma->cl_auth = NULL;
		clnt_destroy(rdma);
	}
	clnt_destroy(u->tcp);
	/* As clnt_vc_destroy(): what clnt_tli_create() put there. */
	if (cl->cl_netid && cl->cl_netid[0])
		free(cl->cl_netid);
	if (cl->cl_tp && cl->cl_tp[0])
		free(cl->cl_tp);
	free(cl);
	if (!forked)
		up_put(u);
}

static const struct clnt_ops *
up_ops(void)
{
	static const struct clnt_ops ops = {
		.cl_call = up_call,
		.cl_abort = up_abort,
		.cl_geterr = up_geterr,
		.cl_freeres = up_freeres,
		.cl_destroy = up_destroy,
		.cl_control = up_control,
	};

	return &ops;
}

/* ------------------------------------------------------------------ */
/* Create                                                              */
/* ------------------------------------------------------------------ */

CLIENT *
clnt_upgrade_create(CLIENT *tcp, unsigned int after_calls,
		    const struct clnt_upgrade_ops *ops, void *arg)
{
	CLIENT *cl = calloc(1, sizeof(*cl));
	struct up *u = calloc(1, sizeof(*u));

	if (!cl || !u) {
		free(cl);
		free(u);
		return NULL;
	}
	pthread_mutex_init(&u->lock, NULL);
	pthread_cond_init(&u->settled, NULL);
	u->tcp = tcp;
	u->state = UP_TCP;
	u->refs = 1;
	u->after = after_calls;
	u->gen = fork_gen();
	u->ops = ops;
	u->arg = arg;

	cl->cl_ops = (struct clnt_ops *)up_ops();
	cl->cl_private = u;
	/* Not libtirpc's AUTH_NONE, which clnt_vc gave tcp (auth_none.h). */
	cl->cl_auth = rpcrdma_authnone();
	cl->cl_netid = NULL;
	cl->cl_tp = NULL;
	if (!after_calls) {
		pthread_mutex_lock(&u->lock);
		attempt_start_locked(u);
		pthread_mutex_unlock(&u->lock);
	}
	return cl;
}

bool
clnt_is_upgrade(const CLIENT *cl)
{
	return cl && cl->cl_ops == up_ops();
}

CLIENT *
clnt_upgrade_rdma(CLIENT *cl)
{
	struct up *u = up_of(cl);
	CLIENT *rdma;

	pthread_mutex_lock(&u->lock);
	rdma = u->state == UP_RDMA ? u->rdma : NULL;
	pthread_mutex_unlock(&u->lock);
	return rdma;
}

bool
clnt_upgrade_settled(CLIENT *cl, int ms)
{
	struct up *u = up_of(cl);
	struct timespec until;
	bool done;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&u->lock);
	while (u->state == UP_CONNECTING &&
	       pthread_cond_timedwait(&u->settled, &u->lock, &until) == 0)
		;
	done = u->state != UP_CONNECTING;
	pthread_mutex_unlock(&u->lock);
	return done;
}
