/*
 * RPC-over-RDMA Version One client (RFC 8166) behind libtirpc's CLIENT:
 * the clnt_ops, as libtirpc's clnt_vc.c has them (call, control, destroy,
 * create).  The call's parts live in clnt_rdma_conn.c (the connection
 * under it), clnt_rdma_mw.c (slots, exposure), clnt_rdma_marshal.c
 * (messages) and clnt_rdma_cq.c (completions, waits); clnt_rdma_int.h
 * joins them.
 *
 * Callers on several threads share a CLIENT: their calls are in flight
 * together, up to the credits the server grants (RFC 8166 s4.3), each
 * reply handed to its caller by XID; ct_lock is held except while they
 * wait (clnt_rdma_wait.c) and while one of them connects again
 * (clnt_rdma_conn.c).  What a program sees is clnt_vc's: the XID
 * sequence, clnt_control, per-call timeouts, an error per call
 * (clnt_geterr on the calling thread), clnt_destroy waiting for callers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "auth_none.h"
#include "budget.h"
#include "clnt_rdma.h"
#include "clnt_rdma_int.h"
#include "common/log.h"
#include "sockfd.h"

static struct clnt_ops *clnt_rdma_ops(void);

/*
 * The outcome of the last call of this thread, for clnt_geterr: other
 * threads' calls on the same CLIENT end meanwhile.
 */
static __thread struct {
	uint64_t id;		/* the CLIENT's ct_id */
	struct rpc_err err;
} last_call;
static uint64_t ct_ids;

static struct ct_rdma *
ct_of(CLIENT *cl)
{
	return (struct ct_rdma *)cl->cl_private;
}

/*
 * A CLIENT made by the parent, used in a fork() child.  Read without
 * ct_lock (a parent's thread may have held it at the fork): from the
 * generation its connections belong to, not from ct_ep, which another
 * thread may be renewing.
 */
static bool
ct_forked(const struct ct_rdma *ct)
{
	return ct->ct_has_gen && ep_gen_forked(ct->ct_gen);
}

static int64_t
tv_ms(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000 + tv->tv_usec / 1000;
}

/* libtirpc's own test: a tv_usec of exactly one million passes. */
static bool
time_not_ok(const struct timeval *t)
{
	return t->tv_sec < 0 || t->tv_usec < 0 || t->tv_usec > 1000000;
}

/*
 * A wait that did not end as hoped: the connection failed, or the
 * deadline passed (the status and errno clnt_vc gives for each).
 */
static enum clnt_stat
ct_wait_failed(struct ct_rdma *ct)
{
	int dead = ep_dead(ct->ct_ep);

	return ct_fail(ct, dead ? RPC_CANTRECV : RPC_TIMEDOUT, dead);
}

/* Registered octets one call needs: Reply chunk, call, Write chunk. */
static uint64_t
ct_call_need(const struct ct_rdma *ct)
{
	uint64_t n = rdma_pool_class(ct->ct_max_reply) + RDMA_POOL_MIN;

	if (ct->ct_write_chunk)
		n += rdma_pool_class(ct->ct_write_chunk);
	return n;
}

/* Say why memory for what was refused: the budget, or the kernel. */
static void
ct_log_memory(const char *what, uint64_t need)
{
	char needs[64] = "";

	if (need)
		snprintf(needs, sizeof(needs), " (%llu KiB)",
			 (unsigned long long)(need >> 10));
	shim_log(SHIM_LOG_WARN,
		 "client: no registered memory for %s%s: %llu of %llu KiB of max_pinned in use, %llu KiB idle in the pool; raise max_pinned (and ulimit -l) or lower max_reply",
		 what, needs, (unsigned long long)(budget_used() >> 10),
		 (unsigned long long)(budget_total() >> 10),
		 (unsigned long long)(rdma_pool_idle_bytes() >> 10));
}

/* The call is sent: wait for its reply and fence its memory. */
static enum clnt_stat
ct_await_reply(struct ct_rdma *ct, unsigned int s, uint32_t xid,
	       int64_t deadline)
{
	struct ct_slot *slot = &ct->ct_slots[s];
	enum clnt_stat st;

	(void)xid;
	if (ct_wait_reply(ct, s, deadline)) {
		st = ct_wait_failed(ct);
		if (!slot->unsent)
			ct_v2_unanswered(ct, slot);
		if (st == RPC_TIMEDOUT) {
			ct_orphan(ct, s);
		} else {
			/*
			 * The connection is lost: its queue pair goes to the
			 * error state now, if it has not, and its windows with
			 * it, before the slot's memory goes back to the pool.
			 */
			ep_disconnect(ct->ct_ep);
			ct_call_abandoned(ct, s);
			ct_slot_recv_put(ct, slot);
			slot->state = SLOT_FREE;
		}
		return st;
	}
	ct_reply_arrived(ct, s, slot->rep.hdr.credits);
	/* s5.4.1: nothing of this call stays reachable once it returns. */
	if (!ct_fence_now(ct, s)) {
		(void)ep_post_recv(ct->ct_ep, slot->rep.ridx);
		ct_slot_recv_put(ct, slot);
		ct_slot_unclaim(ct, s);
		return ct_fail(ct, RPC_CANTRECV, EIO);
	}
	return RPC_SUCCESS;
}

/*
 * The call encoded into its slot, as *xid (a new one from the sequence
 * when *xid is 0), with the buffers its chunks need.  When the pool
 * cannot give them while calls of other threads hold theirs, this one
 * gives its own back and waits for one of those to return.  Returns 0,
 * -EMSGSIZE, -EINVAL, -ETIMEDOUT, or -ENOMEM with *what saying what was
 * refused.
 */
static int
ct_prepare(CLIENT *cl, struct ct_rdma *ct, unsigned int s, rpcproc_t proc,
	   xdrproc_t xdr_args, void *args_ptr, uint32_t *xid, size_t *len,
	   int64_t deadline, const char **what)
{
	struct ct_slot *slot = &ct->ct_slots[s];
	int ret;

	for (;;) {
		/*
		 * The call first, then the chunks for the reply: a call that
		 * grows holds two buffers for a moment, better not on top of
		 * those.
		 */
		*what = "a call's arguments";
		ret = ct_slot_callbuf(ct, slot);
		if (!ret) {
			uint32_t word = ct->ct_u.ct_mcalli;

			/*
			 * Same XID sequence as clnt_vc: decrement the stored
			 * word, which the encoded header starts with.  A call
			 * made again keeps its XID, whatever other threads
			 * have made the word since: it is put back for the
			 * encoding only (under ct_lock, before any
			 * credential signs the header).
			 */
			if (!*xid)
				*xid = ntohl(word = --ct->ct_u.ct_mcalli);
			ct->ct_u.ct_mcalli = htonl(*xid);
			ret = ct_encode_call(cl, ct, slot, proc, xdr_args,
					     args_ptr, len);
			ct->ct_u.ct_mcalli = word;
		}
		if (!ret) {
			*what = "a call's Reply chunk";
			ret = ct_slot_buffers(ct, slot);
		}
		if (ret != -ENOMEM || !ct_others_under_way(ct, s))
			return ret;
		ct_slot_bufs_put(ct, slot);
		if (ct_wait_returned(ct, s, deadline))
			return -ETIMEDOUT;
	}
}

/*
 * One attempt at the call.  *refresh is set when the credentials were
 * refreshed and the call should be made again; *same_xid, when not 0,
 * is the XID it goes with (its version was refused, clnt_rdma_v2.c).
 */
static enum clnt_stat
ct_call_once(CLIENT *cl, struct ct_rdma *ct, rpcproc_t proc,
	     xdrproc_t xdr_args, void *args_ptr, xdrproc_t xdr_results,
	     void *results_ptr, struct timeval timeout, int *refreshes,
	     bool *refresh, uint32_t *same_xid)
{
	const char *why_lost = NULL, *what;
	bool renewed = false;
	struct ct_slot *slot;
	enum clnt_stat st;
	int64_t deadline;
	uint32_t x_id = *same_xid;
	size_t len = 0;
	struct ep *ep;
	int s, ret;

	*refresh = false;
	*same_xid = 0;
	memset(&ct->ct_error, 0, sizeof(ct->ct_error));
	deadline = ep_deadline_ms(tv_ms(&ct->ct_wait));
again:
	s = ct_ready(ct, deadline, &renewed, why_lost);
	if (s < 0)
		return ct_fail(ct, s == -ETIMEDOUT ? RPC_TIMEDOUT : RPC_CANTSEND,
			       -s);
	ep = ct->ct_ep;
	slot = &ct->ct_slots[s];
	/*
	 * s4.3.3, s4.3.1: never more calls in flight than granted.  This
	 * call holds its credit from now; every way out gives it back.
	 */
	if (ct_wait_credit(ct, deadline)) {
		ct_slot_unclaim(ct, (unsigned int)s);
		if (ep_dead(ep) && !renewed)
			goto again;
		return ct_wait_failed(ct);
	}
	ct->ct_outstanding++;
	/*
	 * As clnt_vc: a call with a zero timeout (batched, or "message
	 * passing") is never waited for, so it offers no chunk a reply could
	 * be written into (RFC 8166 s5.3.3 asks for one only where a reply
	 * is expected); a reply that comes anyway is dropped by XID.
	 */
	slot->wait_reply = timeout.tv_sec != 0 || timeout.tv_usec != 0;
	slot->results_len = ct_results_len(xdr_results);

	ret = ct_prepare(cl, ct, (unsigned int)s, proc, xdr_args, args_ptr,
			 &x_id, &len, deadline, &what);
	/* Timed-out calls' memory is what a new connection gives back. */
	if (ret == -ENOMEM && !renewed && ct_any_orphan(ct) &&
	    ct_busy_slots(ct) == 1) {
		ct_call_abandoned(ct, (unsigned int)s);
		ct_slot_unclaim(ct, (unsigned int)s);
		why_lost = "timed-out calls hold the memory a call needs";
		ep_set_dead(ep, ENOMEM);
		goto again;
	}
	if (ret == -ENOMEM) {
		ct_log_memory(what, strcmp(what, "a call's Reply chunk") ? 0 :
				    ct_call_need(ct));
		st = ct_fail(ct, RPC_CANTSEND, ENOMEM);
	} else if (ret == -ETIMEDOUT) {
		st = ct_fail(ct, ep_dead(ep) ? RPC_CANTSEND : RPC_TIMEDOUT,
			     ep_dead(ep));
	} else if (ret) {
		st = ct_fail(ct, RPC_CANTENCODEARGS,
			     ret == -EMSGSIZE ? EMSGSIZE : 0);
	}
	if (ret)
		goto out_unclaim;
	while ((ret = ct_send_call(ct, (unsigned int)s, x_id, len,
				   deadline)) == -ENOBUFS) {
		if (ct_wait_returned(ct, (unsigned int)s, deadline)) {
			ret = ep_dead(ep) ? -ep_dead(ep) : -ETIMEDOUT;
			break;
		}
	}
	if (ret == -ENOMEM)
		ct_log_memory("a call's receive and header", 0);
	if (ret) {
		/*
		 * Nothing reached the server: nothing stays exposed.  A
		 * connection found lost at the Send takes its windows with it,
		 * and the call goes on a new one.
		 */
		if (!ep_dead(ep)) {
			ct_fence_now(ct, (unsigned int)s);
		} else {
			ep_disconnect(ep);
			if (!renewed) {
				ct_call_abandoned(ct, (unsigned int)s);
				ct_slot_unclaim(ct, (unsigned int)s);
				goto again;
			}
		}
		st = ct_fail(ct, ret == -ETIMEDOUT ? RPC_TIMEDOUT : RPC_CANTSEND,
			     -ret);
		goto out_unclaim;
	}

	/*
	 * As clnt_vc: a batched call (no results, zero timeout) succeeds
	 * without waiting; any call with a zero timeout is "message passing"
	 * and times out at once.  Their replies, if any, come as late ones.
	 */
	if (!slot->wait_reply) {
		ct_orphan(ct, (unsigned int)s);
		/* Replies that came anyway give their receives back now. */
		(void)ct_reap(ct);
		return ct_fail(ct, xdr_results == NULL ? RPC_SUCCESS : RPC_TIMEDOUT,
			       0);
	}

	st = ct_await_reply(ct, (unsigned int)s, x_id, deadline);
	if (st != RPC_SUCCESS) {
		/*
		 * A bind ahead of its Send failed: the connection is lost
		 * and the call never left (ct_bind_failed).  It goes on a new
		 * connection, as one found lost at the Send, with its XID.
		 */
		if (slot->unsent && !renewed) {
			why_lost = "a call's memory window could not be bound";
			memset(&ct->ct_error, 0, sizeof(ct->ct_error));
			goto again;
		}
		return st;
	}
	slot->resend = false;
	st = ct_reply_result(cl, ct, slot, x_id, xdr_results, results_ptr,
			     refreshes, refresh);
	if (*refresh && slot->resend)
		*same_xid = x_id;
	ret = ep_post_recv(ep, slot->rep.ridx);
	ct_slot_recv_put(ct, slot);
	ct_slot_unclaim(ct, (unsigned int)s);
	if (ret) {
		*refresh = false;
		return ct_fail(ct, RPC_CANTRECV, ep_dead(ep));
	}
	return st;

out_unclaim:
	ct_call_abandoned(ct, (unsigned int)s);
	ct_slot_unclaim(ct, (unsigned int)s);
	return st;
}

/*
 * fork(): in a child, a CLIENT made by the parent is the parent's
 * connection.  Its calls fail at once, without its lock (a thread of the
 * parent may have held it at the fork) and without touching the
 * endpoint: the child makes a CLIENT of its own.
 */
static enum clnt_stat
ct_parents_call(struct ct_rdma *ct)
{
	shim_log(SHIM_LOG_WARN,
		 "client: a CLIENT made before fork() cannot be used in the child: make a new one");
	last_call.id = ct->ct_id;
	memset(&last_call.err, 0, sizeof(last_call.err));
	last_call.err.re_status = RPC_CANTSEND;
	last_call.err.re_errno = ENOTCONN;
	return RPC_CANTSEND;
}

static enum clnt_stat
clnt_rdma_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xdr_args, void *args_ptr,
	       xdrproc_t xdr_results, void *results_ptr, struct timeval timeout)
{
	struct ct_rdma *ct = ct_of(cl);
	int refreshes = 2;
	uint32_t same_xid = 0;
	enum clnt_stat st;
	bool refresh;

	if (ct_forked(ct))
		return ct_parents_call(ct);
	CP_MARK(CP_CALL);
	pthread_mutex_lock(&ct->ct_lock);
	ct->ct_callers++;
	if (!ct->ct_waitset && !time_not_ok(&timeout))
		ct->ct_wait = timeout;
	do {
		st = ct_call_once(cl, ct, proc, xdr_args, args_ptr, xdr_results,
				  results_ptr, timeout, &refreshes, &refresh,
				  &same_xid);
	} while (refresh);
	ct_slots_idle(ct);

	SHIM_STATS_ADD(ct->ct_stats, calls, 1);
	if (st == RPC_TIMEDOUT)
		SHIM_STATS_ADD(ct->ct_stats, timeouts, 1);
	else if (st != RPC_SUCCESS)
		SHIM_STATS_ADD(ct->ct_stats, errors, 1);
	last_call.id = ct->ct_id;
	last_call.err = ct->ct_error;
	ct->ct_returned++;
	if (--ct->ct_callers == 0)
		pthread_cond_broadcast(&ct->ct_idle);
	/* Its credit, slot and memory may be what others wait for. */
	ct_wake_waiters(ct);
	pthread_mutex_unlock(&ct->ct_lock);
	CP_MARK(CP_RETURN);
	return st;
}

/* This thread's last call on cl, else the CLIENT's last (as clnt_vc). */
static void
clnt_rdma_geterr(CLIENT *cl, struct rpc_err *errp)
{
	struct ct_rdma *ct = ct_of(cl);

	if (last_call.id == ct->ct_id)
		*errp = last_call.err;
	else
		*errp = ct->ct_error;
}

static bool_t
clnt_rdma_freeres(CLIENT *cl, xdrproc_t xdr_res, void *res_ptr)
{
	xdr_free(xdr_res, res_ptr);
	return TRUE;
}

static void
clnt_rdma_abort(CLIENT *cl)
{
}

static void
put_u32(char *where, const void *info)
{
	uint32_t v = htonl(*(const uint32_t *)info);

	memcpy(where, &v, sizeof(v));
}

static void
get_u32(void *info, const char *where)
{
	uint32_t v;

	memcpy(&v, where, sizeof(v));
	*(uint32_t *)info = ntohl(v);
}

/* The requests, and their answers, of libtirpc's clnt_vc_control(). */
static bool_t
clnt_rdma_control(CLIENT *cl, u_int request, void *info)
{
	struct ct_rdma *ct = ct_of(cl);
	/* A parent's CLIENT (after fork) answers from memory, unlocked. */
	bool locked = !ct_forked(ct);
	bool_t ret = TRUE;

	if (locked)
		pthread_mutex_lock(&ct->ct_lock);
	switch (request) {
	case CLSET_FD_CLOSE:
		ct->ct_closeit = true;
		goto out;
	case CLSET_FD_NCLOSE:
		ct->ct_closeit = false;
		goto out;
	default:
		break;
	}
	if (info == NULL) {
		ret = FALSE;
		goto out;
	}
	switch (request) {
	case CLSET_TIMEOUT:
		if (time_not_ok(info)) {
			ret = FALSE;
			break;
		}
		ct->ct_wait = *(struct timeval *)info;
		ct->ct_waitset = true;
		break;
	case CLGET_TIMEOUT:
		*(struct timeval *)info = ct->ct_wait;
		break;
	case CLGET_SERVER_ADDR:
		memcpy(info, ct->ct_addr.buf, ct->ct_addr.len);
		break;
	case CLGET_FD:
		*(int *)info = ct->ct_fd;
		break;
	case CLGET_SVC_ADDR:
		/* The caller must not free it. */
		*(struct netbuf *)info = ct->ct_addr;
		break;
	case CLSET_SVC_ADDR:
		ret = FALSE;
		break;
	case CLGET_XID:
		/* The XID of the previous call. */
		get_u32(info, ct->ct_u.ct_mcallc);
		break;
	case CLSET_XID:
		/* The XID of the next call: the call decrements it once. */
		{
			uint32_t next = *(uint32_t *)info + 1;

			put_u32(ct->ct_u.ct_mcallc, &next);
		}
		break;
	case CLGET_VERS:
		get_u32(info, ct->ct_u.ct_mcallc + 4 * BYTES_PER_XDR_UNIT);
		break;
	case CLSET_VERS:
		put_u32(ct->ct_u.ct_mcallc + 4 * BYTES_PER_XDR_UNIT, info);
		break;
	case CLGET_PROG:
		get_u32(info, ct->ct_u.ct_mcallc + 3 * BYTES_PER_XDR_UNIT);
		break;
	case CLSET_PROG:
		put_u32(ct->ct_u.ct_mcallc + 3 * BYTES_PER_XDR_UNIT, info);
		break;
	default:
		ret = FALSE;
		break;
	}
out:
	if (locked)
		pthread_mutex_unlock(&ct->ct_lock);
	return ret;
}

static void
ct_free(struct ct_rdma *ct)
{
	if (ct_forked(ct)) {
		/* The parent's: its windows, buffers and lock stay untouched. */
		ep_abandon(ct->ct_ep);
		free(ct->ct_addr.buf);
		free(ct);
		return;
	}
	shim_stats_close(ct->ct_stats);
	if (ct->ct_ep) {
		ep_disconnect(ct->ct_ep);
		ct_slots_release(ct);
		ep_destroy(ct->ct_ep);
	}
	free(ct->ct_addr.buf);
	pthread_cond_destroy(&ct->ct_idle);
	pthread_mutex_destroy(&ct->ct_lock);
	free(ct);
}

static void
clnt_rdma_destroy(CLIENT *cl)
{
	struct ct_rdma *ct = ct_of(cl);

	/*
	 * As clnt_vc_destroy: calls in progress on other threads end
	 * first.  Nothing may take the lock after this (libtirpc's contract).
	 * A parent's CLIENT in a fork() child is not waited for: the lock
	 * may be held by a thread that exists only in the parent.
	 */
	if (!ct_forked(ct)) {
		pthread_mutex_lock(&ct->ct_lock);
		while (ct->ct_callers)
			pthread_cond_wait(&ct->ct_idle, &ct->ct_lock);
		pthread_mutex_unlock(&ct->ct_lock);
	}
	if (ct->ct_stand_in)
		sockfd_del(ct->ct_fd);
	if (ct->ct_closeit && ct->ct_fd != -1)
		close(ct->ct_fd);
	ct_free(ct);
	/* clnt_tli_create() filled these in; clnt_vc_destroy frees them too. */
	if (cl->cl_netid && cl->cl_netid[0])
		free(cl->cl_netid);
	if (cl->cl_tp && cl->cl_tp[0])
		free(cl->cl_tp);
	free(cl);
}

static struct clnt_ops *
clnt_rdma_ops(void)
{
	static struct clnt_ops ops = {
		.cl_call = clnt_rdma_call,
		.cl_abort = clnt_rdma_abort,
		.cl_geterr = clnt_rdma_geterr,
		.cl_freeres = clnt_rdma_freeres,
		.cl_destroy = clnt_rdma_destroy,
		.cl_control = clnt_rdma_control,
	};

	return &ops;
}

static void
clnt_rdma_publish(CLIENT *cl, rpcprog_t prog, rpcvers_t vers)
{
	struct ct_rdma *ct = ct_of(cl);
	struct ep *ep = ct->ct_ep;
	struct shim_stats_conn *s;

	s = shim_stats_open(SHIM_STATS_CLIENT, SHIM_STATS_RDMA,
			    ep_peer_addr(ep), ep_local_addr(ep));
	if (!s)
		return;
	s->prog = (uint32_t)prog;
	s->vers = (uint32_t)vers;
	s->inline_send = ep_send_max(ep);
	s->inline_recv = ep_recv_max(ep);
	s->credits = ct->ct_granted;
	s->rinv = ep_rinv(ep);
	s->peer_pdata = ep_peer_pdata(ep);
	/* 0 until the first call in Version Two is answered. */
	s->rpcrdma_vers = ct_v2_offered(ct) == RPCRDMA1_VERSION ?
			  RPCRDMA1_VERSION : 0;
	ct->ct_stats = s;
	shim_stats_publish(s);
}

bool
clnt_is_rdma(const CLIENT *cl)
{
	return cl && cl->cl_ops == clnt_rdma_ops();
}

static void
clnt_rdma_info(CLIENT *cl, struct clnt_rdma_info *info)
{
	struct ct_rdma *ct = ct_of(cl);

	pthread_mutex_lock(&ct->ct_lock);
	info->send_max = ep_send_max(ct->ct_ep);
	info->recv_max = ep_recv_max(ct->ct_ep);
	info->credits = ct->ct_granted;
	info->rinv = ep_rinv(ct->ct_ep);
	info->peer_pdata = ep_peer_pdata(ct->ct_ep);
	info->rpcrdma_vers = ct_v2_offered(ct);
	pthread_mutex_unlock(&ct->ct_lock);
}

/* The same XID seed as libtirpc's clnt_vc_create(). */
static uint32_t
initial_xid(void)
{
	struct timeval now;

	gettimeofday(&now, NULL);
	return (uint32_t)getpid() ^ (uint32_t)now.tv_sec ^ (uint32_t)now.tv_usec;
}

/* A bound local port of the socket libtirpc gave us, to keep (ep_connect). */
static const struct sockaddr *
bound_source(int fd, const struct sockaddr *dst, struct sockaddr_storage *local)
{
	socklen_t llen = sizeof(*local);

	if (getsockname(fd, (struct sockaddr *)local, &llen) == 0 &&
	    local->ss_family == dst->sa_family &&
	    ((local->ss_family == AF_INET &&
	      ((struct sockaddr_in *)local)->sin_port) ||
	     (local->ss_family == AF_INET6 &&
	      ((struct sockaddr_in6 *)local)->sin6_port)))
		return (struct sockaddr *)local;
	return NULL;
}

/*
 * Programs read their connection's addresses from the CLIENT's descriptor
 * (CLGET_FD, then getsockname or getpeername), as over TCP.  The socket
 * libtirpc handed over was never connected: it now answers as the TCP
 * socket of this connection would, bound to the RDMA connection's local
 * address and connected to the server's address as the program gave it
 * (sockfd.h); a new connection's address replaces it (ct_renew).  A
 * socket already connected, as the background upgrade's, answers for
 * itself.
 */
static void
ct_stand_in(struct ct_rdma *ct)
{
	struct sockaddr_storage peer;
	socklen_t len = sizeof(peer);

	if (getpeername(ct->ct_fd, (struct sockaddr *)&peer, &len) == 0 ||
	    errno != ENOTCONN)
		return;
	ct->ct_stand_in = !sockfd_add(ct->ct_fd, ep_local_addr(ct->ct_ep),
				      (const struct sockaddr *)ct->ct_addr.buf);
}

/* Serialize the constant part of the call header once. */
static int
ct_call_header(struct ct_rdma *ct, rpcprog_t prog, rpcvers_t vers)
{
	struct rpc_msg call_msg;
	XDR xdrs;

	memset(&call_msg, 0, sizeof(call_msg));
	call_msg.rm_xid = initial_xid();
	call_msg.rm_direction = CALL;
	call_msg.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	call_msg.rm_call.cb_prog = (uint32_t)prog;
	call_msg.rm_call.cb_vers = (uint32_t)vers;
	xdrmem_create(&xdrs, ct->ct_u.ct_mcallc, MCALL_MSG_SIZE, XDR_ENCODE);
	if (!xdr_callhdr(&xdrs, &call_msg))
		return -EINVAL;
	ct->ct_mpos = XDR_GETPOS(&xdrs);
	XDR_DESTROY(&xdrs);
	return 0;
}

CLIENT *
clnt_rdma_create(int fd, const struct netbuf *raddr, const struct sockaddr *dst,
		 rpcprog_t prog, rpcvers_t vers, u_int sendsz, u_int recvsz,
		 const struct clnt_rdma_params *p, struct clnt_rdma_info *info,
		 enum rdma_fail *why, int *err)
{
	struct ep_attr attr = {
		.inline_send = p->inline_send,
		.inline_recv = p->inline_recv,
		.nrecv = p->credits,
		.nsend = CT_NSEND,
		.send_buf_size = CT_SEND_BUF,
		/* Per call: two binds and a Send, then two invalidations. */
		.max_send_wr = CT_NSEND + 8 * CT_SLOTS_MAX,
		.remote_inv = p->remote_inv,
	};
	struct ct_rdma *ct;
	CLIENT *cl;
	int ret;

	cl = calloc(1, sizeof(*cl));
	ct = calloc(1, sizeof(*ct));
	if (!cl || !ct)
		goto out_nomem;
	pthread_mutex_init(&ct->ct_lock, NULL);
	pthread_cond_init(&ct->ct_idle, NULL);
	ct->ct_id = __atomic_add_fetch(&ct_ids, 1, __ATOMIC_RELAXED);
	ct->ct_poll_us = p->poll_us;
	ct->ct_nslots = CT_SLOTS;
	ct->ct_fd = fd;
	ct->ct_addr.buf = malloc(raddr->len);
	if (!ct->ct_addr.buf)
		goto out_nomem;
	memcpy(ct->ct_addr.buf, raddr->buf, raddr->len);
	ct->ct_addr.len = ct->ct_addr.maxlen = raddr->len;

	/*
	 * The Reply chunk covers the largest reply accepted: max_reply, or
	 * the recvsz the program asked for when that is larger.
	 */
	ct->ct_max_reply_cfg = recvsz > p->max_reply ? recvsz : p->max_reply;
	ct->ct_max_reply = ct->ct_max_reply_cfg + EP_MSG_HDR_SLACK;
	ct->ct_write_chunk = p->write_chunk > UINT32_MAX ? UINT32_MAX :
			     p->write_chunk;
	if (ct->ct_max_reply > UINT32_MAX)
		ct->ct_max_reply = UINT32_MAX;

	/*
	 * Before connecting: the memory of one call (and of a block of
	 * shared receives and send buffers) must fit what the budget can
	 * give.  Nothing is registered until the first call.
	 */
	budget_setup(p->max_pinned);
	if (rdma_mem_available() < ct_call_need(ct) + CT_SHARED_NEED) {
		ct_log_memory("the calls of a new client",
			      ct_call_need(ct) + CT_SHARED_NEED);
		*why = RDMA_FAIL_MEMLOCK;
		*err = ENOMEM;
		goto out_free;
	}

	if (bound_source(fd, dst, &ct->ct_src))
		ct->ct_has_src = true;
	memcpy(&ct->ct_dst, dst, dst->sa_family == AF_INET6 ?
	       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in));
	ct->ct_attr = attr;
	ct->ct_connect_ms = p->connect_timeout_ms;
	ret = ep_connect(dst, ct->ct_has_src ? (struct sockaddr *)&ct->ct_src :
			 NULL, p->connect_timeout_ms, &attr, &ct->ct_ep, why);
	if (ret) {
		*err = -ret;
		if (*why == RDMA_FAIL_MEMLOCK)
			ct_log_memory("its receives", 0);
		goto out_free;
	}
	ct->ct_gen = ep_gen(ct->ct_ep);
	ct->ct_has_gen = true;

	/* One window per chunk and slot, where the device has them. */
	if (ep_dev(ct->ct_ep)->mw_type2 && ct_windows_alloc(ct)) {
		/*
		 * Without windows for every slot, per-call registrations
		 * serve, but those keys must never be invalidated remotely
		 * (rxe breaks the connection): only go on if we did not
		 * advertise R.
		 */
		if (ep_rinv_offered(ct->ct_ep))
			goto out_nomem;
		shim_log(SHIM_LOG_DEBUG,
			 "client: no memory windows, registering per call");
	}
	ct->ct_granted = 1;	/* s4.3.3: one credit until a reply says more */
	ct->ct_credits_req = p->credits;
	ct_v2_setup(ct, p->rpcrdma_want);
	if (ct_call_header(ct, prog, vers)) {
		*why = RDMA_FAIL_ERROR;
		*err = EINVAL;
		goto out_free;
	}

	cl->cl_ops = clnt_rdma_ops();
	cl->cl_private = ct;
	cl->cl_auth = rpcrdma_authnone();
	cl->cl_netid = NULL;
	cl->cl_tp = NULL;
	(void)sendsz;
	ct_stand_in(ct);
	clnt_rdma_publish(cl, prog, vers);
	clnt_rdma_info(cl, info);
	return cl;

out_nomem:
	*why = RDMA_FAIL_ERROR;
	*err = ENOMEM;
out_free:
	if (ct)
		ct_free(ct);
	free(cl);
	return NULL;
}
