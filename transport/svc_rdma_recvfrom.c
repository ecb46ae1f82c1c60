/*
 * The server's receive side (svc_rdma_int.h): completions into a ring of
 * received buffers, each message's transport header checked, and the
 * call taken (xp_recv) and its arguments decoded (xp_getargs).
 *
 * xp_recv returns one call at a time; xp_stat says XPRT_MOREREQS while
 * the ring holds more, for a few calls (SC_ROUND_CALLS).  A received call
 * is copied out and its receive posted again at once; one with Read
 * chunks keeps its receive while they are pulled, which svc_run does not
 * wait for (sc_pull_step).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "svc_rdma_int.h"
#include "svc_rdma_v2.h"

/* Longest single sleep: the deadline is checked at least this often. */
#define SC_SLEEP_MAX_MS 60000
/* Completions taken per poll. */
#define SC_POLL_BATCH 16

/* ------------------------------------------------------------------ */
/* Completions and the receive ring                                    */
/* ------------------------------------------------------------------ */

/*
 * A received message waits for xp_recv.  A client never has more calls
 * unanswered than its credits (RFC 8166 s4.3.1), and a call is taken out
 * before its reply is sent, so the ring never holds more; while a call's
 * Read chunks are pulled, its receive is held too and the ring holds one
 * fewer.  One more is a client taking receives of the shared queue that
 * others were promised, and its connection is closed.
 */
static void
rq_push(struct svc_rdma_conn *sc, uint32_t idx, uint32_t len)
{
	unsigned int tail = (sc->rq_head + sc->rq_count) % sc->credits;

	if (sc->rq_count + (sc->pull.active ? 1u : 0u) >= sc->credits) {
		(void)ep_post_recv(sc->ep, idx);
		if (!ep_dead(sc->ep))
			sc_fail(sc, EPROTO, "the client sent more calls than its credits");
		return;
	}
	sc->rq_idx[tail] = idx;
	sc->rq_len[tail] = len;
	sc->rq_count++;
	CP_MARK(CP_SVC_CALL);
}

static void
rq_pop(struct svc_rdma_conn *sc, uint32_t *idx, uint32_t *len)
{
	*idx = sc->rq_idx[sc->rq_head];
	*len = sc->rq_len[sc->rq_head];
	sc->rq_head = (sc->rq_head + 1) % sc->credits;
	sc->rq_count--;
}

/* Put the message just taken back at the head of the ring. */
static void
rq_unpop(struct svc_rdma_conn *sc)
{
	sc->rq_head = (sc->rq_head + sc->credits - 1) % sc->credits;
	sc->rq_count++;
}

/* A send-side completion: its buffers back, RDMA Reads and Writes counted. */
static void
sc_send_done(struct svc_rdma_conn *sc, const struct ibv_wc *wc)
{
	enum ep_wr_kind kind = EP_WRID_KIND(wc->wr_id);

	if ((kind == EP_WR_READ || kind == EP_WR_WRITE_SIGNALED) &&
	    sc->rw_inflight)
		sc->rw_inflight--;
	(void)ep_reap_send(sc->ep, wc);
}

static unsigned int
take_completions(struct svc_rdma_conn *sc, bool arm)
{
	struct ep *ep = sc->ep;
	struct ibv_wc wc[SC_POLL_BATCH];
	unsigned int taken = 0;
	int n;

	do {
		n = arm ? ep_poll(ep, wc, SC_POLL_BATCH) :
			  ep_poll_busy(ep, wc, SC_POLL_BATCH);
		if (n < 0) {
			ep_set_dead(ep, EIO);
			break;
		}
		sc_completions(sc, wc, n);
		taken += (unsigned int)n;
	} while (n > 0);
	return taken;
}

unsigned int
sc_drain(struct svc_rdma_conn *sc)
{
	return take_completions(sc, true);
}

void
sc_collect(struct svc_rdma_conn *sc)
{
	take_completions(sc, false);
}

void
sc_completions(struct svc_rdma_conn *sc, const struct ibv_wc *wc, int n)
{
	struct ep *ep = sc->ep;
	int k;

	for (k = 0; k < n; k++) {
		if (EP_WRID_KIND(wc[k].wr_id) != EP_WR_RECV) {
			sc_send_done(sc, &wc[k]);
			continue;
		}
		if (wc[k].status != IBV_WC_SUCCESS) {
			if (wc[k].status != IBV_WC_WR_FLUSH_ERR)
				shim_log(SHIM_LOG_WARN,
					 "server: receive failed: %s",
					 ibv_wc_status_str(wc[k].status));
			ep_set_dead(ep, ECONNRESET);
			/* The buffer is the shared queue's again. */
			(void)ep_post_recv(ep, EP_WRID_IDX(wc[k].wr_id));
			continue;
		}
		rq_push(sc, EP_WRID_IDX(wc[k].wr_id), wc[k].byte_len);
	}
}

/*
 * Other connections are only tried (trylock): one busy on another thread
 * keeps its Sends until it reaps them itself.  Lock order: ours, then the
 * listener's.
 */
void
sc_reap_others(struct svc_rdma_conn *sc)
{
	struct ibv_wc wc[SC_POLL_BATCH];
	struct svc_rdma_conn *o;
	int n, k;

	pthread_mutex_lock(&sc->lst->lock);
	for (o = sc->lst->conns; o; o = o->next) {
		/* A parent's connection (after fork) is not ours to poll. */
		if (o == sc || ep_forked(o->ep) || pthread_mutex_trylock(&o->lock))
			continue;
		while ((n = ep_poll_send(o->ep, wc, SC_POLL_BATCH)) > 0)
			for (k = 0; k < n; k++)
				sc_send_done(o, &wc[k]);
		pthread_mutex_unlock(&o->lock);
	}
	pthread_mutex_unlock(&sc->lst->lock);
}

bool
sc_sleep(struct svc_rdma_conn *sc, int64_t deadline)
{
	int64_t cap = ep_now_ms() + SC_SLEEP_MAX_MS;

	if (deadline <= ep_now_ms())
		return false;
	(void)ep_wait(sc->ep, deadline < cap ? deadline : cap);
	sc_drain(sc);
	return true;
}

int
sc_rw_wait(struct svc_rdma_conn *sc, int64_t deadline)
{
	while (sc->rw_inflight && !ep_dead(sc->ep)) {
		sc_drain(sc);
		if (sc->rw_inflight && !sc_sleep(sc, deadline))
			return -ETIMEDOUT;
	}
	return ep_dead(sc->ep) ? -ep_dead(sc->ep) : 0;
}

bool
sc_callbuf_reserve(struct svc_rdma_conn *sc, size_t len)
{
	uint8_t *nb;

	if (len <= sc->callbuf_cap)
		return true;
	nb = realloc(sc->callbuf, len);
	if (!nb)
		return false;
	sc->callbuf = nb;
	sc->callbuf_cap = len;
	return true;
}

/* ------------------------------------------------------------------ */
/* Header checks                                                       */
/* ------------------------------------------------------------------ */

/*
 * The checks of RFC 8166 s5.5 on a received header (decode result ret):
 * false when the message was answered or dropped and is not a call.
 */
static bool
sc_header_ok(struct svc_rdma_conn *sc, int ret, uint32_t len)
{
	const struct rpcrdma_hdr *h = &sc->hdr;

	switch (ret) {
	case 0:
		break;
	case -EMSGSIZE:
		shim_log(SHIM_LOG_WARN, "server: dropped a %u-octet message", len);
		return false;
	case -EALREADY:
		return false;	/* answered or dropped by svc_rdma_v2.c */
	case -EPROTONOSUPPORT:
		if (h->proc == RDMA_ERROR)
			return false;	/* s5.5: never answer an RDMA_ERROR */
		/* s5.5.1 */
		shim_log(SHIM_LOG_WARN,
			 "server: RPC-over-RDMA version %u from client, answering ERR_VERS",
			 h->vers);
		sc_send_error(sc, h->xid, h->vers, RDMA_ERR_VERS);
		return false;
	default:
		/* s5.5.2; s5.6: RDMA_MSGP and RDMA_DONE land here too. */
		if (h->proc == RDMA_ERROR)
			return false;
		shim_log(SHIM_LOG_WARN,
			 "server: malformed header (%s) for xid 0x%08x, answering BADHEADER",
			 rpcrdma_proc_name(h->proc), h->xid);
		sc_send_error(sc, h->xid, h->vers, RDMA_ERR_BADHEADER);
		return false;
	}

	if (h->proc == RDMA_ERROR) {
		shim_log(SHIM_LOG_DEBUG, "server: client sent RDMA_ERROR for xid 0x%08x",
			 h->xid);
		return false;
	}
	if (h->proc == RDMA_NOMSG &&
	    (!h->nreads || h->reads[0].position != 0)) {
		/* s5.2.4: a call without a payload stream must carry it. */
		shim_log(SHIM_LOG_WARN,
			 "server: RDMA_NOMSG without a position-zero Read chunk for xid 0x%08x",
			 h->xid);
		sc_send_error(sc, h->xid, h->vers, RDMA_ERR_BADHEADER);
		return false;
	}
	return true;
}

/* Read chunks that cannot be pulled (ret): answered unless the link failed. */
static void
sc_chunks_failed(struct svc_rdma_conn *sc, int ret)
{
	if (ep_dead(sc->ep))
		return;
	if (ret == -EMSGSIZE)
		shim_log(SHIM_LOG_WARN,
			 "server: call for xid 0x%08x exceeds max_call (%llu octets)",
			 sc->hdr.xid, (unsigned long long)sc->lst->params.max_call);
	else if (ret == -ENOMEM)
		shim_log(SHIM_LOG_WARN,
			 "server: no registered memory to pull the Read chunks of xid 0x%08x (max_pinned)",
			 sc->hdr.xid);
	else
		shim_log(SHIM_LOG_WARN,
			 "server: Read chunks of xid 0x%08x do not fit the call",
			 sc->hdr.xid);
	sc_call_done(sc);
	sc_send_error(sc, sc->hdr.xid, sc->hdr.vers, RDMA_ERR_BADHEADER);
}

/* The message's receive goes back, then any RDMA_ERROR it earned. */
static int
sc_message_done(struct svc_rdma_conn *sc, uint32_t idx, bool call)
{
	(void)ep_post_recv(sc->ep, idx);
	sc->err_defer = false;
	if (sc->err_pending) {
		sc->err_pending = false;
		sc_send_error(sc, sc->err_xid, sc->err_vers, sc->err_code);
	}
	return call ? 1 : 0;
}

/*
 * RFC 8166 s5.5.2: Read chunks whose positions do not fit the Payload
 * stream, in a header that is otherwise right, leave arguments the
 * program cannot decode, and the responder SHOULD answer GARBAGE_ARGS.
 * So the call goes to its dispatch as it came (its RPC header decodes),
 * its svc_getargs fails, and the program answers as it does to arguments
 * it cannot decode (svcerr_decode).  Returns 0 with the call, or -ENOMEM.
 */
static int
sc_args_garbage(struct svc_rdma_conn *sc, const uint8_t *inl, size_t inl_len,
		uint8_t **call, size_t *clen)
{
	const struct sc_pull *p = &sc->pull;

	shim_log(SHIM_LOG_WARN,
		 "server: Read chunks of xid 0x%08x do not fit the call's payload: its arguments cannot be decoded (GARBAGE_ARGS, RFC 8166 s5.5.2)",
		 sc->hdr.xid);
	if (p->ch[0].position == 0) {
		/* A Long Call: the call is what the first chunk brought. */
		*call = sc->call_data;
		*clen = (size_t)p->ch[0].length;
	} else {
		/* The receive is posted again: the call is copied out first. */
		if (!sc_callbuf_reserve(sc, inl_len))
			return -ENOMEM;
		memcpy(sc->callbuf, inl, inl_len);
		*call = sc->callbuf;
		*clen = inl_len;
	}
	sc->args_garbage = true;
	return 0;
}

/* Go on pulling the Read chunks of the message taken before. */
static int
sc_take_pulled(struct svc_rdma_conn *sc, uint8_t **call, size_t *clen)
{
	struct sc_pull *p = &sc->pull;
	int ret = sc_pull_step(sc);

	if (ret == -EINPROGRESS)
		return ret;
	p->active = false;
	if (ret == 0) {
		const uint8_t *buf = ep_recv_buf(sc->ep, p->ridx);

		ret = sc_pull_call(sc, buf + sc->hdr.hdrlen,
				   p->rlen - sc->hdr.hdrlen, call, clen);
		if (ret == -EBADMSG)
			ret = sc_args_garbage(sc, buf + sc->hdr.hdrlen,
					      p->rlen - sc->hdr.hdrlen, call, clen);
		if (ret)
			sc_chunks_failed(sc, ret);
	}
	return sc_message_done(sc, p->ridx, ret == 0);
}

/*
 * Send queue entries the reply to the call in sc->hdr may take: its Send
 * and an RDMA Write per piece of each Write and Reply chunk segment
 * (sc_build_writes splits them at the device's largest message).
 */
static unsigned int
sc_reply_wrs(const struct svc_rdma_conn *sc)
{
	const struct rpcrdma_hdr *h = &sc->hdr;
	uint32_t max_msg = ep_max_msg(sc->ep);
	unsigned int n = 1, i;

	if (!max_msg)
		return SC_REPLY_WRS;
	for (i = 0; i < h->nwsegs && n < SC_REPLY_WRS; i++)
		n += h->wsegs[i].length / max_msg + 1;
	for (i = 0; h->has_reply && i < h->nreply && n < SC_REPLY_WRS; i++)
		n += h->reply[i].length / max_msg + 1;
	return n < SC_REPLY_WRS ? n : SC_REPLY_WRS;
}

/*
 * Room on the send queue for the reply to the call just decoded (and for
 * its Read chunks' Reads first); when there is none, the send CQ is armed
 * so that the completion making some wakes the connection.
 */
static bool
sc_reply_room(struct svc_rdma_conn *sc)
{
	unsigned int need;
	struct ibv_wc wc[SC_POLL_BATCH];
	int n, k;

	sc->reply_wrs = sc_reply_wrs(sc);
	need = sc->reply_wrs + (sc->hdr.nreads ? 1 : 0);
	if (ep_sq_room(sc->ep, need))
		return true;
	(void)ep_arm_send(sc->ep);
	/*
	 * Only the send side: receives now could not go into the ring,
	 * whose head is this message's place.
	 */
	while ((n = ep_poll_send(sc->ep, wc, SC_POLL_BATCH)) > 0)
		for (k = 0; k < n; k++)
			sc_send_done(sc, &wc[k]);
	return ep_sq_room(sc->ep, need);
}

/*
 * Take one received message.  Returns 1 with a call ready to decode at
 * *call (*clen octets), 0 when the message was consumed otherwise (an
 * error answered, a stray message dropped), -EINPROGRESS while its Read
 * chunks are still coming (its receive is held until then), -EAGAIN when
 * the send queue has no room for its reply yet (it stays in the ring,
 * the connection waits for a send completion).  Its receive
 * buffer is posted again once it is done with.
 */
static int
sc_take_message(struct svc_rdma_conn *sc, uint8_t **call, size_t *clen)
{
	uint32_t idx, len;
	const uint8_t *buf;
	bool ok;
	int ret;

	if (sc->pull.active)
		return sc_take_pulled(sc, call, clen);
	rq_pop(sc, &idx, &len);
	buf = ep_recv_buf(sc->ep, idx);
	sc->err_defer = true;
	ok = sc_header_ok(sc, sc_hdr_decode(sc, buf, len), len);
	if (ok && !sc_reply_room(sc)) {
		/* Not now: it stays first in the ring. */
		sc->err_defer = false;
		rq_unpop(sc);
		return -EAGAIN;
	}
	if (ok && sc->hdr.nreads) {
		ret = sc_pull_start(sc, idx, len);
		if (ret == 0)
			return sc_take_pulled(sc, call, clen);
		sc_chunks_failed(sc, ret);
		ok = false;
	} else if (ok) {
		*clen = len - sc->hdr.hdrlen;
		if (sc_callbuf_reserve(sc, *clen)) {
			memcpy(sc->callbuf, buf + sc->hdr.hdrlen, *clen);
			*call = sc->callbuf;
		} else {
			sc_send_error(sc, sc->hdr.xid, sc->hdr.vers,
				      RDMA_ERR_BADHEADER);
			ok = false;
		}
	}
	return sc_message_done(sc, idx, ok);
}

/*
 * A call is taken only when its reply can go out without waiting: a send
 * context set aside for it here, and room on the send queue for its
 * RDMA Writes and Send (sc_reply_room, once its header is read).  A
 * client keeping to its credits always leaves them (s4.3.1: it has no
 * more calls out than credits, and each reply's Send completes once
 * delivered); one whose Sends do not complete (it stopped posting
 * receives) is not served until they do, and meanwhile others are.  The
 * send CQ is armed so that the completion that frees room wakes it.  A
 * send buffer the budget cannot register yet is left to sc_reply.
 */
static bool
sc_can_take(struct svc_rdma_conn *sc)
{
	int k, idx = 0;

	for (k = 0; k < 2; k++) {
		if (sc->reply_idx < 0) {
			idx = ep_get_send(sc->ep);
			if (idx >= 0)
				sc->reply_idx = idx;
		}
		if (sc->reply_idx >= 0 || idx == -ENOMEM)
			return true;
		if (k == 0) {
			(void)ep_arm_send(sc->ep);
			sc_drain(sc);
		}
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* xp_recv, xp_getargs                                                 */
/* ------------------------------------------------------------------ */

bool_t
sc_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	uint8_t *call;
	size_t clen;
	int ret;

	sc->stalled = false;
	sc_collect(sc);
	if (!sc->round_calls)
		sc->round_start = ep_now_ms();
	/* A pull the connection's end cut short is ended (and said) first. */
	while (sc->pull.active || (sc->rq_count && !ep_dead(sc->ep))) {
		if (!sc->pull.active) {
			/* The last call is still with a worker thread. */
			if (sc_hold_next(sc))
				return FALSE;
			if (!sc_can_take(sc)) {
				sc->stalled = true;
				return FALSE;
			}
			/* The previous call, replied to or not, is over. */
			sc_call_done(sc);
		}
		ret = sc_take_message(sc, &call, &clen);
		if (ret == -EAGAIN) {
			sc->stalled = true;
			return FALSE;
		}
		if (ret == -EINPROGRESS) {
			/* Completions before the arming are polled once more. */
			if (ep_arm_send(sc->ep)) {
				sc_drain(sc);
				continue;
			}
			sc->stalled = true;
			return FALSE;
		}
		if (ret == 0)
			continue;
		xdrmem_create(&sc->xdrs, (char *)call, (u_int)clen, XDR_DECODE);
		if (!xdr_callmsg(&sc->xdrs, msg) || msg->rm_xid != sc->hdr.xid) {
			/* s5.5.2: the RPC XID must match the transport's. */
			shim_log(SHIM_LOG_WARN,
				 "server: undecodable call for xid 0x%08x, answering BADHEADER",
				 sc->hdr.xid);
			sc_call_done(sc);
			sc_send_error(sc, sc->hdr.xid, sc->hdr.vers,
				      RDMA_ERR_BADHEADER);
			continue;
		}
		sc->xid = msg->rm_xid;
		sc->prog = (uint32_t)msg->rm_call.cb_prog;
		sc->vers = (uint32_t)msg->rm_call.cb_vers;
		sc->proc = (uint32_t)msg->rm_call.cb_proc;
		sc->in_call = true;
		sc->took_call = true;
		sc->round_calls++;
		/* What the Upper Layer Binding says of it (xp_reply's placement). */
		(void)ulb_parse_call(call, clen, &sc->ulb);
		SHIM_STATS_ADD(sc->stats, calls, 1);
		SHIM_STATS_ADD(sc->stats, bytes_in, clen);
		if (sc->hdr.nreads)
			SHIM_STATS_ADD(sc->stats, long_in, 1);
		CP_MARK(CP_SVC_RECV);
		return TRUE;
	}
	return FALSE;
}

bool_t
sc_getargs(SVCXPRT *xprt, xdrproc_t xdr_args, void *args_ptr)
{
	struct svc_rdma_conn *sc = sc_of(xprt);

	/* s5.5.2: the program answers GARBAGE_ARGS (sc_args_garbage). */
	if (!sc->in_call || sc->args_garbage)
		return FALSE;
	return SVCAUTH_UNWRAP(&SVC_XP_AUTH(xprt), &sc->xdrs, xdr_args, args_ptr);
}

bool_t
sc_freeargs(SVCXPRT *xprt, xdrproc_t xdr_args, void *args_ptr)
{
	xdr_free(xdr_args, args_ptr);
	return TRUE;
}
