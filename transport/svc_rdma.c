/*
 * RPC-over-RDMA Version One server (RFC 8166) behind libtirpc's SVCXPRT:
 * the connection transports and their lifetime.
 *
 * Two transport kinds, each with its own xp_ops:
 *   listener    xp_fd is the RDMA-CM event channel; xp_recv accepts
 *               connections and handles connection events, never a call
 *               (svc_rdma_listen.c).
 *   connection  xp_fd is the completion channel of one endpoint; xp_recv
 *               takes the next received call (svc_rdma_recvfrom.c),
 *               xp_reply sends its reply (svc_rdma_sendto.c).
 *
 * libtirpc's svc_run() thread takes calls; replies may come from other
 * threads, during the dispatch or after it (svc_rdma_int.h).  Each
 * connection's credits are reserved in the device's shared receive queue
 * when it is accepted (sc_grant says how many the budget affords), and a received call is copied out of its receive
 * buffer and the buffer posted again at once, so the credits granted are
 * always backed by posted receives (RFC 8166 s4.3.1).  A connection that
 * fails is flushed: its completion channel wakes, xp_stat says
 * XPRT_DIED, and libtirpc destroys it.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "budget.h"
#include "common/log.h"
#include "common/sockaddr.h"
#include "sockfd.h"
#include "svc_rdma_int.h"

/* Server connections of the process (for the credits of new ones). */
static unsigned int sc_live;

/* rpcbind's well-known port (RFC 1833 s3). */
#define RPCBIND_PORT 111

/*
 * The netid programs see: "rdma" or "rdma6" (RFC 8166 s11), except on
 * rpcbind's port.  rpcbind looks a program up under the netid of the
 * transport the lookup came on, and programs register under "tcp": over
 * RDMA it would find none of them.
 */
static const char *
svc_rdma_netid(const struct sockaddr *local)
{
	bool v6 = local->sa_family == AF_INET6;

	if (sa_port(local) == RPCBIND_PORT)
		return v6 ? "tcp6" : "tcp";
	return v6 ? "rdma6" : "rdma";
}

bool
svc_rdma_set_addrs(SVCXPRT *xprt, const struct sockaddr *local,
		   const struct sockaddr *remote)
{
	size_t llen = sa_len(local);

	xprt->xp_ltaddr.buf = malloc(llen);
	if (!xprt->xp_ltaddr.buf)
		return false;
	memcpy(xprt->xp_ltaddr.buf, local, llen);
	xprt->xp_ltaddr.len = xprt->xp_ltaddr.maxlen = (u_int)llen;
	xprt->xp_port = sa_port(local);
	xprt->xp_netid = strdup(svc_rdma_netid(local));
	if (!xprt->xp_netid)
		return false;
	if (remote) {
		size_t rlen = sa_len(remote);

		/* svc_getrpccaller() and svc_getcaller() read these. */
		xprt->xp_rtaddr.buf = malloc(rlen);
		if (!xprt->xp_rtaddr.buf)
			return false;
		memcpy(xprt->xp_rtaddr.buf, remote, rlen);
		xprt->xp_rtaddr.len = xprt->xp_rtaddr.maxlen = (u_int)rlen;
		memcpy(&xprt->xp_raddr, remote, rlen);
		xprt->xp_addrlen = (int)rlen;
	}
	return true;
}

void
svc_rdma_free_addrs(SVCXPRT *xprt)
{
	free(xprt->xp_ltaddr.buf);
	free(xprt->xp_rtaddr.buf);
	free(xprt->xp_netid);
}

void
sc_fail(struct svc_rdma_conn *sc, int err, const char *why)
{
	shim_log(SHIM_LOG_WARN, "server: closing an RDMA connection: %s", why);
	ep_set_dead(sc->ep, err);
	ep_disconnect(sc->ep);
}

/*
 * A pool buffer of len octets for this connection.  When the budget has
 * no room, other connections' finished Sends may be what holds it (their
 * send buffers go back only when they are reaped, usually with their next
 * call): reap them and try once more.
 */
struct rdma_pbuf *
sc_pool_get(struct svc_rdma_conn *sc, size_t len)
{
	struct rdma_pbuf *pb = rdma_pool_get(ep_dev(sc->ep), len);

	if (pb || errno != ENOMEM)
		return pb;
	sc_collect(sc);
	sc_reap_others(sc);
	return rdma_pool_get(ep_dev(sc->ep), len);
}

/* Give a buffer RDMA may still target back only once nothing can. */
static void
sc_pool_done(struct svc_rdma_conn *sc, struct rdma_pbuf **pb)
{
	if (!*pb || ep_dead(sc->ep))
		return;
	rdma_pool_put(ep_dev(sc->ep), *pb);
	*pb = NULL;
}

void
sc_call_done(struct svc_rdma_conn *sc)
{
	sc->in_call = false;
	sc->hold_until = 0;
	sc->args_garbage = false;
	sc_pool_done(sc, &sc->call_pb);
	sc_pool_done(sc, &sc->bounce);
	free(sc->call_heap);
	sc->call_heap = NULL;
	sc->call_data = NULL;
	free(sc->reply_heap);
	sc->reply_heap = NULL;
	sc->reply_heap_cap = 0;
	free(sc->ddp_heap);
	sc->ddp_heap = NULL;
	/* A large rebuilt call's buffer does not stay with an idle connection. */
	if (sc->callbuf_cap > SC_CALLBUF_KEEP) {
		free(sc->callbuf);
		sc->callbuf = NULL;
		sc->callbuf_cap = 0;
	}
}

/* ------------------------------------------------------------------ */
/* xp_ops                                                              */
/* ------------------------------------------------------------------ */

/*
 * fork(): in a child, a connection of the parent is dead.  Nothing of it
 * may be touched here (its receives, its memory, its queue pair are the
 * parent's): calls and replies fail, xp_stat says XPRT_DIED and libtirpc
 * destroys it, which only lets go of it (sc_abandon).
 */
static bool
sc_parents(SVCXPRT *xprt)
{
	return ep_forked(sc_of(xprt)->ep);
}

static bool_t
sc_recv_live(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	bool_t ok;

	if (sc_parents(xprt))
		return FALSE;
	pthread_mutex_lock(&sc->lock);
	ok = sc_recv(xprt, msg);
	sc->dispatching = ok;
	pthread_mutex_unlock(&sc->lock);
	return ok;
}

static bool_t
sc_getargs_live(SVCXPRT *xprt, xdrproc_t xdr_args, void *args_ptr)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	bool_t ok;

	if (sc_parents(xprt))
		return FALSE;
	pthread_mutex_lock(&sc->lock);
	ok = sc_getargs(xprt, xdr_args, args_ptr);
	pthread_mutex_unlock(&sc->lock);
	return ok;
}

/*
 * A reply from outside the dispatch (a worker thread, after svc_run went
 * on) to the connection's call: the call's buffers go now, and svc_run is
 * woken for work whose completions this thread may have taken from the
 * channel.
 */
static void
sc_late_reply_done(struct svc_rdma_conn *sc)
{
	sc_call_done(sc);
	if (sc->rq_count || sc->pull.active || sc->stalled)
		(void)ep_kick(sc->ep);
}

static bool_t
sc_reply_live(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	bool late;
	bool_t ok;

	if (sc_parents(xprt)) {
		shim_log(SHIM_LOG_WARN,
			 "server: no reply on an RDMA connection accepted before fork(): it is the parent's");
		return FALSE;
	}
	pthread_mutex_lock(&sc->lock);
	late = !sc->dispatching;
	if (late && !sc->in_call) {
		/*
		 * The call this reply was meant for is over: the next one was
		 * taken, and may still be pulling its Read chunks into the
		 * connection's buffers.  Nothing of it is touched.
		 */
		shim_log(sc->late_said ? SHIM_LOG_DEBUG : SHIM_LOG_WARN,
			 "server: a reply made after the dispatch came once the connection had taken its client's next call: not sent (the client had several calls in flight)");
		sc->late_said = true;
		pthread_mutex_unlock(&sc->lock);
		return FALSE;
	}
	ok = sc_reply(xprt, msg);
	if (late)
		sc_late_reply_done(sc);
	pthread_mutex_unlock(&sc->lock);
	return ok;
}

/*
 * Whether svc_run's turn on this connection goes on.  SC_ROUND_MS always
 * ends it, so that the program's own loop runs; every SC_ROUND_CALLS calls
 * the others are looked at, and one of the program's RPC descriptors
 * readable ends it: a connection nobody waits behind is served on,
 * without a trip through the loop (and ep_kick) every few calls, and one
 * that others wait behind yields as before.  *alone says that the others
 * were looked at and none was ready.
 */
static bool
sc_turn_left(struct svc_rdma_conn *sc, bool *alone)
{
	if (ep_now_ms() - sc->round_start >= SC_ROUND_MS)
		return false;
	if (sc->round_calls < SC_ROUND_CALLS ||
	    sc->round_calls % SC_ROUND_CALLS)
		return true;
	*alone = !sc_others_ready(sc);
	return *alone;
}

/*
 * After a dispatch: whether svc_run goes on with this connection, within
 * its turn (sc_turn_left).  At the turn's end the others get theirs, and
 * the descriptor is made readable again (ep_kick) so that the next poll
 * comes back for the calls still in the ring, as a TCP socket with data
 * left stays readable.  A connection waiting for completions (its Sends,
 * its Read chunks) is idle until they wake it.  One whose call was just
 * answered polls for its client's next call within its turn
 * (svc_rdma_poll.c).
 */
static enum xprt_stat
sc_turn(struct svc_rdma_conn *sc, bool served)
{
	bool alone = false;

	if (ep_dead(sc->ep))
		return XPRT_DIED;
	if (sc_holding(sc)) {
		/*
		 * Calls wait behind one a worker thread answers: the reply
		 * or the alarm brings svc_run back (svc_rdma_hold.c); what
		 * completes meanwhile is taken when its completion wakes it.
		 */
		sc_drain(sc);
		if (ep_dead(sc->ep))
			return XPRT_DIED;
		sc->round_calls = 0;
		sc_hold_wake_at(sc);
		return XPRT_IDLE;
	}
	if (served && !sc->stalled && !sc->pull.active && !sc->rq_count &&
	    !sc->in_call && sc_turn_left(sc, &alone) &&
	    sc_poll_next(sc, alone))
		return XPRT_MOREREQS;
	if (ep_dead(sc->ep))
		return XPRT_DIED;
	/*
	 * Before the program's loop sleeps on the descriptor, the queues are
	 * armed: sc_drain first reads the events that fired (after which
	 * ep_arm_send knows whether the send CQ is still armed); a call that
	 * came before the arming is in the ring now.
	 */
	if (sc->stalled || sc->pull.active || !sc->rq_count) {
		unsigned int taken = sc_drain(sc);

		if ((sc->stalled || sc->pull.active) && ep_arm_send(sc->ep))
			taken += sc_drain(sc);
		/* What the connection waited for may be among them. */
		if (taken && (sc->stalled || sc->pull.active) && !ep_dead(sc->ep))
			return XPRT_MOREREQS;
	}
	if (sc->stalled || sc->pull.active || !sc->rq_count) {
		sc->round_calls = 0;
		/* An idle connection holds no send buffer. */
		if (!sc->rq_count && !sc->pull.active && !sc->in_call &&
		    sc->reply_idx >= 0) {
			ep_put_send(sc->ep, (uint32_t)sc->reply_idx);
			sc->reply_idx = -1;
		}
		return XPRT_IDLE;
	}
	if (sc_turn_left(sc, &alone))
		return XPRT_MOREREQS;
	sc->round_calls = 0;
	return ep_kick(sc->ep) ? XPRT_IDLE : XPRT_MOREREQS;
}

static enum xprt_stat
sc_stat(SVCXPRT *xprt)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	enum xprt_stat st;
	bool served;

	if (sc_parents(xprt))
		return XPRT_DIED;
	pthread_mutex_lock(&sc->lock);
	sc->dispatching = false;
	served = sc->took_call;
	sc->took_call = false;
	/*
	 * A call not replied to yet stays: a worker thread may answer it
	 * after the dispatch (until the next call is taken).
	 */
	if (!sc->in_call && !sc->pull.active)
		sc_call_done(sc);
	else if (served)
		sc_hold_begin(sc);
	st = sc_turn(sc, served);
	pthread_mutex_unlock(&sc->lock);
	return st;
}

static void
sc_free(struct svc_rdma_conn *sc)
{
	pthread_mutex_destroy(&sc->lock);
	svc_rdma_free_addrs(&sc->xprt);
	free(sc->rq_idx);
	free(sc->rq_len);
	free(sc->callbuf);
	free(sc->call_heap);
	free(sc->reply_heap);
	free(sc->ddp_heap);
	free(sc);
}

/* Receives taken but not served go back to the shared queue. */
static void
sc_ring_release(struct svc_rdma_conn *sc)
{
	for (; sc->rq_count; sc->rq_count--) {
		(void)ep_post_recv(sc->ep, sc->rq_idx[sc->rq_head]);
		sc->rq_head = (sc->rq_head + 1) % sc->credits;
	}
}

/* True when sc was the last connection of a closing listener. */
static bool
sc_unlink(struct svc_rdma_conn *sc)
{
	struct svc_rdma_listener *lst = sc->lst;
	struct svc_rdma_conn **pp;
	bool last;

	xprt_unregister(&sc->xprt);
	pthread_mutex_lock(&lst->lock);
	for (pp = &lst->conns; *pp; pp = &(*pp)->next) {
		if (*pp == sc) {
			*pp = sc->next;
			break;
		}
	}
	last = lst->closing && !lst->conns;
	pthread_mutex_unlock(&lst->lock);
	return last;
}

/*
 * Called while the listener lets go of the parent's connections
 * (lst_drop_conns): never the one that frees it.
 */
void
sc_abandon(struct svc_rdma_conn *sc)
{
	(void)sc_unlink(sc);
	shim_log(SHIM_LOG_DEBUG,
		 "server: an RDMA connection accepted before fork() is left to the parent");
	/* Its statistics slot is in the parent's file. */
	sockfd_del(sc->xprt.xp_fd);
	ep_abandon(sc->ep);
	__atomic_fetch_sub(&sc_live, 1, __ATOMIC_RELAXED);
	sc_free(sc);
}

void
sc_destroy(SVCXPRT *xprt)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	struct svc_rdma_listener *lst = sc->lst;
	bool last;

	if (sc_parents(xprt)) {
		sc_abandon(sc);
		return;
	}
	/* A reply on another thread ends first. */
	pthread_mutex_lock(&sc->lock);
	last = sc_unlink(sc);
	shim_log(SHIM_LOG_DEBUG, "server: connection closed");
	shim_stats_close(sc->stats);
	sockfd_del(xprt->xp_fd);
	ep_disconnect(sc->ep);
	sc_ring_release(sc);
	if (sc->pull.active)
		(void)ep_post_recv(sc->ep, sc->pull.ridx);
	if (sc->reply_idx >= 0)
		ep_put_send(sc->ep, (uint32_t)sc->reply_idx);
	/* Read targets are released once the queue pair is gone. */
	ep_hold(sc->ep, sc->call_pb);
	ep_hold(sc->ep, sc->bounce);
	ep_destroy(sc->ep);
	__atomic_fetch_sub(&sc_live, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&sc->lock);
	sc_free(sc);
	/* Its id was on the listener's channel: gone now. */
	if (last)
		lst_last_conn_gone(lst);
}

static bool_t
sc_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	switch (rq) {
	case SVCGET_VERSQUIET:
		*(int *)in = svc_flags(xprt) & SVC_VERSQUIET;
		return TRUE;
	case SVCSET_VERSQUIET:
		if (*(int *)in)
			svc_flags(xprt) |= SVC_VERSQUIET;
		else
			svc_flags(xprt) &= ~SVC_VERSQUIET;
		return TRUE;
	default:
		return FALSE;
	}
}

static const struct xp_ops conn_ops = {
	.xp_recv = sc_recv_live,
	.xp_stat = sc_stat,
	.xp_getargs = sc_getargs_live,
	.xp_reply = sc_reply_live,
	.xp_freeargs = sc_freeargs,
	.xp_destroy = sc_destroy,
};

static const struct xp_ops2 conn_ops2 = {
	.xp_control = sc_control,
};

/* ------------------------------------------------------------------ */
/* Creation                                                            */
/* ------------------------------------------------------------------ */

/* The connection in the statistics, with what it negotiated. */
static void
sc_publish(struct svc_rdma_conn *sc)
{
	struct ep *ep = sc->ep;

	sc->stats = shim_stats_open(SHIM_STATS_SERVER, SHIM_STATS_RDMA,
				    (struct sockaddr *)&sc->raddr,
				    (struct sockaddr *)&sc->laddr);
	if (!sc->stats)
		return;
	sc->stats->inline_send = ep_send_max(ep);
	sc->stats->inline_recv = ep_recv_max(ep);
	sc->stats->credits = sc->credits;
	sc->stats->rinv = ep_rinv(ep);
	sc->stats->peer_pdata = ep_peer_pdata(ep);
	shim_stats_publish(sc->stats);
}

/* Connections this process may still accept: one descriptor each. */
static unsigned int
sc_future(void)
{
	unsigned int plan = SC_PLAN_MAX, live;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < plan)
		plan = (unsigned int)rl.rlim_cur;
	live = __atomic_load_n(&sc_live, __ATOMIC_RELAXED) + 1;
	return plan > live ? plan - live : 0;
}

unsigned int
sc_room(void)
{
	unsigned int cap = SC_PLAN_MAX;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur < (rlim_t)cap + SC_FD_RESERVE)
		cap = rl.rlim_cur > SC_FD_RESERVE ?
		      (unsigned int)(rl.rlim_cur - SC_FD_RESERVE) : 0;
	return __atomic_load_n(&sc_live, __ATOMIC_RELAXED) < cap ? 0 : cap;
}

unsigned int
sc_grant(const struct svc_rdma_listener *lst, struct rdma_cm_id *id)
{
	struct rdma_dev *dev = id->verbs ? rdma_dev_get(id->verbs) : NULL;
	uint64_t left;
	unsigned int c;

	if (!dev)
		return 0;
	/* Receives registered and not promised count as what is left. */
	left = rdma_mem_available() + rdma_srq_spare_bytes(dev, RDMA_SRQ_SERVER);
	c = budget_credits(left, SC_KEEP, lst->params.inline_recv,
			   lst->params.credits, sc_future());
	rdma_dev_put(dev);
	return c;
}

int
sc_create(struct svc_rdma_listener *lst, struct ep *ep, unsigned int credits,
	  struct svc_rdma_conn **out)
{
	const struct sockaddr *la = ep_local_addr(ep), *ra = ep_peer_addr(ep);
	struct svc_rdma_conn *sc;

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		goto out_destroy;
	pthread_mutex_init(&sc->lock, NULL);
	sc->ep = ep;
	sc->lst = lst;
	sc->credits = credits;
	sc->reply_idx = -1;
	sc->rq_idx = calloc(credits, sizeof(*sc->rq_idx));
	sc->rq_len = calloc(credits, sizeof(*sc->rq_len));
	if (!sc->rq_idx || !sc->rq_len)
		goto out_free;
	memcpy(&sc->laddr, la, sa_len(la));
	memcpy(&sc->raddr, ra, sa_len(ra));

	sc->xprt.xp_fd = ep_comp_fd(ep);
	sc->xprt.xp_ops = &conn_ops;
	sc->xprt.xp_ops2 = &conn_ops2;
	sc->xprt.xp_p1 = sc;
	sc->xprt.xp_p3 = sc->ext;
	sc->xprt.xp_verf = _null_auth;
	sc->xprt.xp_type = NC_TPI_COTS_ORD;
	if (!svc_rdma_set_addrs(&sc->xprt, (struct sockaddr *)&sc->laddr,
				(struct sockaddr *)&sc->raddr))
		goto out_free;
	/* Programs see xp_fd as the TCP socket of this peer would be. */
	if (sockfd_add(sc->xprt.xp_fd, (struct sockaddr *)&sc->laddr,
		       (struct sockaddr *)&sc->raddr))
		goto out_free;
	ep_set_owner(ep, sc);
	pthread_mutex_lock(&lst->lock);
	sc->next = lst->conns;
	lst->conns = sc;
	pthread_mutex_unlock(&lst->lock);
	__atomic_fetch_add(&sc_live, 1, __ATOMIC_RELAXED);
	xprt_register(&sc->xprt);
	sc_publish(sc);
	*out = sc;
	return 0;

out_free:
	sc_free(sc);
out_destroy:
	ep_disconnect(ep);
	ep_destroy(ep);
	return -ENOMEM;
}
