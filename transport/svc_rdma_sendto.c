/*
 * The server's replies (svc_rdma_int.h): xp_reply and RDMA_ERROR.
 *
 * A reply is encoded once, after room for the largest transport header
 * its call allows, into the send buffer (moving to a pool buffer when it
 * outgrows it, or to ordinary memory beyond SC_DIRECT_MAX or what the
 * budget gives), its DDP-eligible result (ulb.h) diverted into the
 * call's Write chunk when one was offered.  Then the chunks are placed: RDMA Writes
 * for the Write chunk and, for a long reply, the Reply chunk (from
 * ordinary memory through the bounce buffer, completed before the Send).
 * Last the header is written just before the payload and one Send
 * (header and inline payload in one SGE when they are contiguous) goes
 * out behind the Writes, which it retires.
 */
#include <errno.h>
#include <string.h>

#include "common/log.h"
#include "svc_rdma_int.h"
#include "svc_rdma_v2.h"
#include "xdr_grow.h"

/* ------------------------------------------------------------------ */
/* Send buffers and the Send                                           */
/* ------------------------------------------------------------------ */

/*
 * The send context of a reply: the one xp_recv set aside, else (the
 * budget could not register a buffer then) one found within
 * SC_SEND_WAIT_MS, reaping other connections' finished Sends.  -errno
 * (the connection failed) if none.
 */
static int
sc_get_send(struct svc_rdma_conn *sc)
{
	struct ep *ep = sc->ep;
	int64_t deadline = 0;
	int idx = sc->reply_idx;

	sc->reply_idx = -1;
	for (; idx < 0;) {
		idx = ep_get_send(ep);
		if (idx >= 0 || ep_dead(ep))
			break;
		/* The clock is read only by a wait. */
		if (!deadline)
			deadline = ep_now_ms() + SC_SEND_WAIT_MS;
		sc_drain(sc);
		/*
		 * Send buffers are shared: finished Sends of other
		 * connections may hold them until their transports run.
		 */
		if (idx == -ENOMEM)
			sc_reap_others(sc);
		idx = ep_get_send(ep);
		if (idx >= 0 || ep_dead(ep))
			break;
		/* Others' Sends free memory without waking this channel. */
		if (!sc_sleep(sc, idx == -ENOMEM && deadline > ep_now_ms() + 1 ?
			      ep_now_ms() + 1 : deadline) &&
		    ep_now_ms() >= deadline) {
			sc_fail(sc, ETIMEDOUT, "no send buffer came free in time");
			return -ETIMEDOUT;
		}
	}
	return idx;
}

/*
 * Post a Send (with npre work requests before it), waiting at most
 * SC_SEND_WAIT_MS for send queue room (sc_reply_room made sure of it for
 * a call's reply).  On failure idx goes back and attach is released.
 */
static int
sc_post_send(struct svc_rdma_conn *sc, uint32_t idx, struct ibv_send_wr *pre,
	     unsigned int npre, struct ibv_sge *sge, int nsge,
	     uint32_t inv_rkey, struct rdma_pbuf *const *attach,
	     unsigned int nattach)
{
	struct ep *ep = sc->ep;
	int64_t deadline = 0;
	unsigned int i;
	int ret;

	for (;;) {
		CP_MARK(CP_SVC_POST);
		ret = ep_post_send(ep, idx, pre, npre, sge, nsge, inv_rkey,
				   attach, nattach);
		CP_MARK(CP_SVC_POSTED);
		if (ret != -EAGAIN)
			break;
		if (!deadline)
			deadline = ep_now_ms() + SC_SEND_WAIT_MS;
		sc_drain(sc);
		if (!sc_sleep(sc, deadline)) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	if (ret) {
		ep_put_send(ep, idx);
		for (i = 0; i < nattach; i++)
			rdma_pool_put(ep_dev(ep), attach[i]);
	}
	return ret;
}

void
sc_send_error(struct svc_rdma_conn *sc, uint32_t xid, uint32_t vers,
	      uint32_t err)
{
	struct ep *ep = sc->ep;
	struct ibv_sge sge;
	ssize_t len;
	int idx;

	/* While the failed message's receive is held: answer once it is back. */
	if (sc->err_defer) {
		sc->err_pending = true;
		sc->err_xid = xid;
		sc->err_vers = vers;
		sc->err_code = err;
		return;
	}
	/*
	 * Never waited for: a client whose Sends do not complete, or that
	 * floods bad messages, gets no RDMA_ERROR beyond what the spare
	 * send contexts (SC_NSEND_EXTRA) and the queue hold.
	 */
	idx = ep_get_send(ep);
	if (idx < 0 || !ep_sq_room(ep, 2)) {
		if (idx >= 0)
			ep_put_send(ep, (uint32_t)idx);
		shim_log(SHIM_LOG_DEBUG,
			 "server: no send context free: RDMA_ERROR for xid 0x%08x not sent",
			 xid);
		return;
	}
	SHIM_STATS_ADD(sc->stats, rdma_errors, 1);
	len = sc_error_encode(sc, ep_send_buf(ep, (uint32_t)idx),
			      ep_send_buf_size(ep), xid, vers, err);
	if (len < 0) {
		ep_put_send(ep, (uint32_t)idx);
		return;
	}
	sge = ep_hdr_sge(ep, (uint32_t)idx, (uint32_t)len);
	(void)sc_post_send(sc, (uint32_t)idx, NULL, 0, &sge, 1, 0, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* The reply                                                           */
/* ------------------------------------------------------------------ */

/* A reply on its way: what sc_reply's steps hand each other. */
struct sc_reply_state {
	uint32_t idx;		/* its header send buffer */
	uint8_t *sbuf;		/* that buffer */
	size_t room;		/* header room before the payload */
	size_t hlen_msg;	/* an RDMA_MSG header's octets */
	size_t hlen;		/* the header's octets, once chosen */
	uint64_t reply_cap;	/* the Reply chunk offered, octets */
	uint64_t inline_cap;	/* payload octets that fit inline */
	struct xdr_grow g;	/* the encoded reply */
	struct xdr_divert d;	/* its result for the Write chunk */
	int nwr;		/* RDMA Writes in sc->wrs */
};

/* Octets of a reply header echoing the call's Write list (s5.7 grammar). */
static size_t
sc_reply_hdr_len(const struct rpcrdma_hdr *rq, bool with_reply)
{
	size_t len = RPCRDMA1_PREFIX_LEN + 4 + 4 + 4 + sc_hdr_extra(rq);
	unsigned int k;

	for (k = 0; k < rq->nwrites; k++)
		len += 4 + 4 + RPCRDMA1_SEGMENT_LEN * rq->writes[k].nsegs;
	if (with_reply)
		len += 4 + RPCRDMA1_SEGMENT_LEN * rq->nreply;
	return len;
}

static uint64_t
segs_len(const struct rpcrdma_segment *segs, unsigned int n)
{
	uint64_t total = 0;

	while (n--)
		total += segs[n].length;
	return total;
}

/* RFC 8797 s4.1: one key of this call's chunks to invalidate with the Send. */
static uint32_t
sc_inv_rkey(const struct svc_rdma_conn *sc)
{
	const struct rpcrdma_hdr *rq = &sc->hdr;

	if (!ep_rinv(sc->ep))
		return 0;
	if (rq->has_reply && rq->nreply)
		return rq->reply[0].handle;
	if (rq->nwsegs)
		return rq->wsegs[0].handle;
	if (rq->nreads)
		return rq->reads[0].target.handle;
	return 0;
}

/* The reply outgrew the pool's share: on to ordinary memory. */
static bool
sc_replybuf_heap(struct svc_rdma_conn *sc, struct xdr_grow *g, size_t need)
{
	uint8_t *nb;

	if (g->buf == sc->reply_heap) {
		nb = realloc(sc->reply_heap, need);
		if (!nb)
			return false;
	} else {
		nb = malloc(need);
		if (!nb)
			return false;
		memcpy(nb, g->buf, g->len);
		rdma_pool_put(ep_dev(sc->ep), sc->reply_pb);
		sc->reply_pb = NULL;
	}
	sc->reply_heap = nb;
	sc->reply_heap_cap = need;
	g->buf = nb;
	g->cap = need;
	return true;
}

/*
 * The reply encode stream outgrew the send buffer: move to the pool, up
 * to SC_DIRECT_MAX while the budget gives it, to ordinary memory beyond.
 * The first time, straight to the size of the whole reply when it is
 * known (no Write chunk takes part of it): growing by halves would copy
 * it several times and could end well above its size.
 */
static bool
sc_replybuf_grow(struct xdr_grow *g, size_t need)
{
	struct svc_rdma_conn *sc = g->ctx;
	struct rdma_pbuf *nb = NULL;

	if (sc->reply_proc) {
		size_t whole = xdr_sizeof(sc->reply_proc, sc->reply_where) +
			       g->len + 1024;

		sc->reply_proc = NULL;
		if (whole > need)
			need = whole;
	}

	if (need <= SC_DIRECT_MAX && g->buf != sc->reply_heap)
		nb = sc_pool_get(sc, need);
	if (!nb)
		return sc_replybuf_heap(sc, g, need);
	memcpy(nb->buf.addr, g->buf, g->len);
	if (sc->reply_pb)
		rdma_pool_put(ep_dev(sc->ep), sc->reply_pb);
	sc->reply_pb = nb;
	g->buf = nb->buf.addr;
	g->cap = nb->buf.len;
	return true;
}

/* The first opaque result, for the call's first Write chunk. */
static bool
sc_divert_take(struct xdr_divert *d, const void *data, uint32_t len)
{
	struct svc_rdma_conn *sc = d->ctx;
	uint8_t *dst;

	if (len <= SC_DIRECT_MAX)
		sc->ddp_pb = sc_pool_get(sc, len);
	if (sc->ddp_pb) {
		dst = sc->ddp_pb->buf.addr;
	} else {
		dst = sc->ddp_heap = malloc(len);
		if (!dst)
			return false;
	}
	memcpy(dst, data, len);
	return true;
}

/*
 * RFC 8166 s5.3.2: only the result the Upper Layer Binding names goes in
 * the Write chunk (for NFS the data of READ, the path of READLINK: RFC
 * 8267), never merely the first opaque met.
 */
static bool
sc_divert_match(struct xdr_divert *d, const uint8_t *res, size_t len,
		uint32_t item_len)
{
	const struct svc_rdma_conn *sc = d->ctx;

	return ulb_is_item(&sc->ulb, res, len, item_len);
}

/*
 * Encode the RPC reply after room for the largest header.  Returns 0, or
 * -errno with *why to log (NULL when the failure was logged already).
 */
static int
sc_reply_encode(struct svc_rdma_conn *sc, SVCXPRT *xprt, struct rpc_msg *msg,
		struct sc_reply_state *r, const char **why)
{
	const struct rpcrdma_hdr *rq = &sc->hdr;
	uint32_t send_max = ep_send_max(sc->ep);
	uint32_t buf_size = ep_send_buf_size(sc->ep);
	bool_t ok;
	XDR xdrs;

	r->hlen_msg = sc_reply_hdr_len(rq, false);
	r->room = sc_reply_hdr_len(rq, rq->has_reply);
	r->reply_cap = rq->has_reply ? segs_len(rq->reply, rq->nreply) : 0;
	r->inline_cap = send_max > r->hlen_msg ? send_max - r->hlen_msg : 0;
	if (r->room >= buf_size) {
		*why = "the call's chunk lists leave no room for a reply";
		return -EMSGSIZE;
	}

	r->g.buf = r->sbuf + r->room;
	r->g.cap = buf_size - r->room;
	r->g.limit = r->inline_cap > r->reply_cap ? r->inline_cap : r->reply_cap;
	r->g.grow = sc_replybuf_grow;
	r->g.ctx = sc;
	if (rq->nwrites && rq->writes[0].nsegs && sc->ulb.placement) {
		/* s4.4.6: the eligible result goes in the first Write chunk. */
		r->d.min = 1;
		r->d.match = sc_divert_match;
		r->d.max = (uint32_t)segs_len(&rq->wsegs[rq->writes[0].first],
					      rq->writes[0].nsegs);
		r->d.take = sc_divert_take;
		r->d.ctx = sc;
		r->g.divert = &r->d;
	}
	xdr_grow_create(&xdrs, &r->g);
	msg->rm_xid = sc->xid;
	if (msg->rm_reply.rp_stat == MSG_ACCEPTED &&
	    msg->rm_reply.rp_acpt.ar_stat == SUCCESS) {
		xdrproc_t xdr_proc = msg->acpted_rply.ar_results.proc;
		void *xdr_where = msg->acpted_rply.ar_results.where;

		msg->acpted_rply.ar_results.proc = XDRPROC(xdr_void);
		msg->acpted_rply.ar_results.where = NULL;
		ok = xdr_replymsg(&xdrs, msg);
		/* Sized on growth, unless a Write chunk may take a result. */
		sc->reply_proc = r->g.divert ? NULL : xdr_proc;
		sc->reply_where = xdr_where;
		r->d.base = r->g.pos;
		r->d.armed = true;
		ok = ok && SVCAUTH_WRAP(&SVC_XP_AUTH(xprt), &xdrs, xdr_proc,
					xdr_where);
		r->d.armed = false;
	} else {
		ok = xdr_replymsg(&xdrs, msg);
	}
	sc->reply_proc = NULL;
	if (ok)
		return 0;
	if (r->g.overflow)
		shim_log(SHIM_LOG_WARN,
			 "server: reply to xid 0x%08x exceeds %s (%llu octets)",
			 sc->xid, rq->has_reply ? "the client's Reply chunk" :
			 "the inline threshold, and no Reply chunk was offered",
			 (unsigned long long)r->g.limit);
	else
		*why = "the reply cannot be encoded";
	return -EMSGSIZE;
}

/*
 * Place the reply: the call's Write list echoed with the octets written
 * (the diverted result RDMA-Written into the first Write chunk), and the
 * payload inline (s4.5.1) or RDMA-Written into the Reply chunk (s4.5.3).
 * Returns 0, or -errno with *why as for sc_reply_encode().
 */
static int
sc_reply_place(struct svc_rdma_conn *sc, struct sc_reply_state *r,
	       const char **why)
{
	const struct rpcrdma_hdr *rq = &sc->hdr;
	struct rpcrdma_hdr *h = &sc->rhdr;
	uint32_t lkey = sc->reply_pb ? sc->reply_pb->buf.mr->lkey :
				       ep_send_lkey(sc->ep, r->idx);
	unsigned int i;
	int ret;

	h->nwrites = rq->nwrites;
	h->nwsegs = rq->nwsegs;
	memcpy(h->writes, rq->writes, sizeof(h->writes[0]) * rq->nwrites);
	memcpy(h->wsegs, rq->wsegs, sizeof(h->wsegs[0]) * rq->nwsegs);
	/* s4.4.6.2: unused chunks go back with zero lengths; a used one
	 * gets the octets written (sc_build_writes, from its capacities). */
	for (i = 0; i < h->nwsegs; i++)
		if (!r->d.used || i < h->writes[0].first ||
		    i >= h->writes[0].first + h->writes[0].nsegs)
			h->wsegs[i].length = 0;
	if (r->d.used && sc->ddp_heap) {
		ret = sc_write_bounced(sc, sc->ddp_heap, r->d.len,
				       &h->wsegs[h->writes[0].first],
				       h->writes[0].nsegs);
		if (ret < 0) {
			*why = ret == -EMSGSIZE ?
			       "the result does not fit the Write chunk" : NULL;
			return ret;
		}
	} else if (r->d.used) {
		ret = sc_build_writes(sc, sc->ddp_pb->buf.addr,
				      sc->ddp_pb->buf.mr->lkey, r->d.len,
				      &h->wsegs[h->writes[0].first],
				      h->writes[0].nsegs, 0);
		if (ret < 0) {
			*why = "the result does not fit the Write chunk";
			return ret;
		}
		r->nwr = ret;
	}

	/* Ordinary memory cannot be sent: it goes by the Reply chunk. */
	if (r->g.len <= r->inline_cap && r->g.buf != sc->reply_heap) {
		/* s4.5.1: a short reply, inline after the header. */
		h->proc = RDMA_MSG;
		h->has_reply = false;
		h->nreply = 0;
		r->hlen = r->hlen_msg;
		return 0;
	}
	if (r->g.len <= r->reply_cap) {
		/* s4.5.3: a long reply, written into the Reply chunk. */
		h->proc = RDMA_NOMSG;
		h->has_reply = true;
		h->nreply = rq->nreply;
		memcpy(h->reply, rq->reply, sizeof(h->reply[0]) * rq->nreply);
		r->hlen = r->room;
		if (r->g.buf == sc->reply_heap) {
			ret = sc_write_bounced(sc, r->g.buf, r->g.len, h->reply,
					       h->nreply);
			if (ret < 0)
				*why = NULL;
			return ret < 0 ? ret : 0;
		}
		ret = sc_build_writes(sc, r->g.buf, lkey, r->g.len, h->reply,
				      h->nreply, (unsigned int)r->nwr);
		if (ret < 0) {
			*why = "the reply needs too many RDMA Writes";
			return ret;
		}
		r->nwr = ret;
		return 0;
	}
	shim_log(SHIM_LOG_WARN,
		 "server: reply of %zu octets to xid 0x%08x exceeds the inline threshold (%u) and %s",
		 r->g.len, sc->xid, ep_send_max(sc->ep),
		 rq->has_reply ? "the client's Reply chunk" : "no Reply chunk was offered");
	return -EMSGSIZE;
}

/* The transport header, written just before the payload. */
static int
sc_reply_header(struct svc_rdma_conn *sc, struct sc_reply_state *r)
{
	struct rpcrdma_hdr *h = &sc->rhdr;
	int ret;

	h->xid = sc->xid;
	h->vers = RPCRDMA1_VERSION;
	h->credits = sc->credits;
	h->nreads = 0;
	ret = (int)sc_reply_hdr_encode(sc, r->sbuf + r->room - r->hlen,
					r->hlen, h);
	if (ret != (int)r->hlen) {
		shim_log(SHIM_LOG_ERROR,
			 "server: reply header for xid 0x%08x: %d octets, %zu expected",
			 sc->xid, ret, r->hlen);
		return -EPROTO;
	}
	return 0;
}

/* The Send of header and inline payload, behind the RDMA Writes. */
static int
sc_reply_send(struct svc_rdma_conn *sc, struct sc_reply_state *r)
{
	uint8_t *hbuf = r->sbuf + r->room - r->hlen;
	struct rdma_pbuf *attach[EP_SEND_ATTACH_MAX];
	struct ibv_sge sge[2];
	int nsge = 1;

	sge[0].addr = (uintptr_t)hbuf;
	sge[0].lkey = ep_send_lkey(sc->ep, r->idx);
	sge[0].length = (uint32_t)r->hlen;
	if (sc->rhdr.proc == RDMA_MSG) {
		if (r->g.buf == r->sbuf + r->room) {
			sge[0].length += (uint32_t)r->g.len;	/* contiguous */
		} else {
			sge[1].addr = (uintptr_t)r->g.buf;
			sge[1].length = (uint32_t)r->g.len;
			sge[1].lkey = sc->reply_pb->buf.mr->lkey;
			nsge = 2;
		}
	}
	/* The buffers stay until this Send completes (it retires the writes). */
	attach[0] = sc->ddp_pb;
	attach[1] = sc->reply_pb;
	sc->reply_pb = NULL;
	sc->ddp_pb = NULL;
	return sc_post_send(sc, r->idx, r->nwr ? sc->wrs : NULL,
			    (unsigned int)r->nwr, sge, nsge, sc_inv_rkey(sc),
			    attach, EP_SEND_ATTACH_MAX);
}

bool_t
sc_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	struct ep *ep = sc->ep;
	struct sc_reply_state r;
	const char *why = NULL;
	int ret;

	CP_MARK(CP_SVC_REPLY);
	if (!sc->in_call || ep_dead(ep))
		return FALSE;
	sc->in_call = false;
	ret = sc_get_send(sc);
	if (ret < 0)
		return FALSE;
	memset(&r, 0, sizeof(r));
	r.idx = (uint32_t)ret;
	r.sbuf = ep_send_buf(ep, r.idx);

	if (sc_reply_encode(sc, xprt, msg, &r, &why) ||
	    sc_reply_place(sc, &r, &why) || sc_reply_header(sc, &r))
		goto out_error;
	ret = sc_reply_send(sc, &r);
	if (ret) {
		sc_fail(sc, -ret, "cannot post a reply");
		return FALSE;
	}
	SHIM_STATS_ADD(sc->stats, bytes_out, r.g.len);
	/* The octets written, as the reply's chunks say (s4.4.6). */
	if (r.d.used)
		SHIM_STATS_ADD(sc->stats, write_chunk_bytes, r.d.len);
	if (sc->rhdr.proc == RDMA_NOMSG) {
		SHIM_STATS_ADD(sc->stats, long_out, 1);
		SHIM_STATS_ADD(sc->stats, reply_chunk_bytes, r.g.len);
	}
	if (sc_inv_rkey(sc))
		SHIM_STATS_ADD(sc->stats, send_inv, 1);
	return TRUE;

out_error:
	/*
	 * s5.5.3: no RPC-level reply is possible for this XID.  Tell the
	 * client rather than leave it waiting for its timeout.
	 */
	if (why)
		shim_log(SHIM_LOG_WARN, "server: no reply to xid 0x%08x: %s",
			 sc->xid, why);
	SHIM_STATS_ADD(sc->stats, errors, 1);
	ep_put_send(ep, r.idx);
	rdma_pool_put(ep_dev(ep), sc->reply_pb);
	rdma_pool_put(ep_dev(ep), sc->ddp_pb);
	sc->reply_pb = NULL;
	sc->ddp_pb = NULL;
	sc_send_error(sc, sc->xid, sc->hdr.vers, RDMA_ERR_BADHEADER);
	return FALSE;
}
