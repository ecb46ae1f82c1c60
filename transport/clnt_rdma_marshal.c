/*
 * The client's messages (clnt_rdma_int.h): the call, encoded once into
 * registered memory from the device pool, with its transport header; and
 * the reply, found inline or in the chunks the call offered, decoded the
 * way libtirpc's clnt_vc does.
 *
 * A call that fits the inline threshold goes as RDMA_MSG, header and
 * payload gathered in one Send; otherwise as RDMA_NOMSG with a
 * position-zero Read chunk (RFC 8166 s4.5.3).  The Upper Layer Binding
 * (ulb.h) says how large the reply can be and which result is
 * DDP-eligible: a call offers a Reply chunk only when its reply may not
 * fit inline (s5.3.3), a Write chunk only for an eligible result
 * (s5.3.2), both in segments the peer accepts.  A server that refuses
 * the segments (ERR_CHUNK before running the call, as Linux before 5.11
 * does above about 1 MiB) gets smaller ones from then on, and the call again
 * when its reply cannot have been the cause (ct_reply_error).  Chunk
 * memory comes from the pool for the call and goes back after it
 * (ct_slots_idle).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "clnt_rdma.h"
#include "clnt_rdma_int.h"
#include "common/log.h"
#include "common/sockaddr.h"
#include "xdr_ddp.h"
#include "xdr_grow.h"

/* ------------------------------------------------------------------ */
/* The call                                                            */
/* ------------------------------------------------------------------ */

/*
 * What the RPC header, credentials and verifier (MAX_AUTH_BYTES each) and
 * an RPCSEC_GSS wrapping may add to the arguments' own size.
 */
#define CT_CALL_SLACK 8192

struct ct_grow_ctx {
	struct ct_rdma *ct;
	struct ct_slot *slot;
	xdrproc_t xdr_args;
	void *args_ptr;
	bool sized;		/* the arguments' size was asked for */
	bool nomem;		/* the pool could not give a buffer */
};

/*
 * Move the call being encoded into a bigger pool buffer.  The first time,
 * straight to the size of the whole call (xdr_sizeof): growing by halves
 * would copy it several times and could end well above its size, holding
 * registered memory for nothing.
 */
static bool
ct_callbuf_grow(struct xdr_grow *g, size_t need)
{
	struct ct_grow_ctx *gc = g->ctx;
	struct rdma_dev *dev = ep_dev(gc->ct->ct_ep);
	struct rdma_pbuf *nb;

	if (!gc->sized && gc->xdr_args) {
		size_t whole = xdr_sizeof(gc->xdr_args, gc->args_ptr) + CT_CALL_SLACK;

		gc->sized = true;
		if (whole > need)
			need = whole;
	}
	nb = rdma_pool_get(dev, need);

	if (!nb) {
		gc->nomem = true;
		return false;
	}
	memcpy(nb->buf.addr, g->buf, g->len);
	rdma_pool_put(dev, gc->slot->callbuf);
	gc->slot->callbuf = nb;
	g->buf = nb->buf.addr;
	g->cap = nb->buf.len;
	return true;
}

/*
 * The largest segment each peer accepted: ULB_SEG_MAX until one answers
 * ERR_CHUNK, then halved (not below ULB_SEG_MIN) for that peer, for the
 * rest of the process.  A small table, oldest entry replaced.
 */
#define CT_PEERS 32

static struct {
	struct peer_key key;
	uint32_t seg_max;
} ct_peers[CT_PEERS];
static unsigned int ct_npeers, ct_peer_next;
static pthread_mutex_t ct_peers_lock = PTHREAD_MUTEX_INITIALIZER;

static int
ct_peer_find(const struct peer_key *k)
{
	unsigned int i;

	for (i = 0; i < ct_npeers; i++)
		if (!memcmp(&ct_peers[i].key, k, sizeof(*k)))
			return (int)i;
	return -1;
}

static uint32_t
ct_peer_seg_max(const struct ct_rdma *ct)
{
	struct peer_key k;
	uint32_t seg = ULB_SEG_MAX;
	int i;

	if (!peer_key_from(&k, ep_peer_addr(ct->ct_ep)))
		return seg;
	pthread_mutex_lock(&ct_peers_lock);
	i = ct_peer_find(&k);
	if (i >= 0)
		seg = ct_peers[i].seg_max;
	pthread_mutex_unlock(&ct_peers_lock);
	return seg;
}

/* The peer refused segments of seg octets: remember a smaller size. */
static uint32_t
ct_peer_refused(const struct ct_rdma *ct, uint32_t seg)
{
	struct peer_key k;
	uint32_t smaller = (seg / 2) & ~4095u;
	int i;

	if (smaller < ULB_SEG_MIN)
		smaller = ULB_SEG_MIN;
	if (!peer_key_from(&k, ep_peer_addr(ct->ct_ep)))
		return smaller;
	pthread_mutex_lock(&ct_peers_lock);
	i = ct_peer_find(&k);
	if (i < 0) {
		i = (int)(ct_npeers < CT_PEERS ? ct_npeers++ :
			  ct_peer_next++ % CT_PEERS);
		ct_peers[i].key = k;
	} else if (ct_peers[i].seg_max < smaller) {
		smaller = ct_peers[i].seg_max;
	}
	ct_peers[i].seg_max = smaller;
	pthread_mutex_unlock(&ct_peers_lock);
	return smaller;
}

void
clnt_rdma_fork_lock(void)
{
	pthread_mutex_lock(&ct_peers_lock);
}

void
clnt_rdma_fork_unlock(void)
{
	pthread_mutex_unlock(&ct_peers_lock);
}

void
ct_peers_forget(void)
{
	pthread_mutex_lock(&ct_peers_lock);
	ct_npeers = ct_peer_next = 0;
	pthread_mutex_unlock(&ct_peers_lock);
}

/*
 * libtirpc's decoders whose results always take the same octets: nothing
 * (xdr_void: NULL procedures, pings) or one item of RFC 4506 s4.1-s4.7
 * (an int, an enum, a bool, a hyper, a float, a double).  Results that
 * are one of these, as rpcgen makes for a procedure returning int or
 * bool, need no chunk.  The addresses are those the program passes: a
 * function's address is the same in every object of the process.
 */
#define CT_FN(f) ((void (*)(void))(f))
static const struct {
	void (*fn)(void);
	uint8_t len;
} ct_fixed_results[] = {
	{ CT_FN(xdr_void), 0 },
	{ CT_FN(xdr_int), 4 },		{ CT_FN(xdr_u_int), 4 },
	{ CT_FN(xdr_long), 4 },		{ CT_FN(xdr_u_long), 4 },
	{ CT_FN(xdr_short), 4 },	{ CT_FN(xdr_u_short), 4 },
	{ CT_FN(xdr_char), 4 },		{ CT_FN(xdr_u_char), 4 },
	{ CT_FN(xdr_bool), 4 },		{ CT_FN(xdr_enum), 4 },
	{ CT_FN(xdr_float), 4 },
	{ CT_FN(xdr_int8_t), 4 },	{ CT_FN(xdr_u_int8_t), 4 },
	{ CT_FN(xdr_uint8_t), 4 },
	{ CT_FN(xdr_int16_t), 4 },	{ CT_FN(xdr_u_int16_t), 4 },
	{ CT_FN(xdr_uint16_t), 4 },
	{ CT_FN(xdr_int32_t), 4 },	{ CT_FN(xdr_u_int32_t), 4 },
	{ CT_FN(xdr_uint32_t), 4 },
	{ CT_FN(xdr_hyper), 8 },	{ CT_FN(xdr_u_hyper), 8 },
	{ CT_FN(xdr_longlong_t), 8 },	{ CT_FN(xdr_u_longlong_t), 8 },
	{ CT_FN(xdr_quad_t), 8 },	{ CT_FN(xdr_u_quad_t), 8 },
	{ CT_FN(xdr_int64_t), 8 },	{ CT_FN(xdr_u_int64_t), 8 },
	{ CT_FN(xdr_uint64_t), 8 },
	{ CT_FN(xdr_double), 8 },
};

int
ct_results_len(xdrproc_t xdr_results)
{
	for (size_t i = 0; i < sizeof(ct_fixed_results) / sizeof(ct_fixed_results[0]); i++)
		if (CT_FN(xdr_results) == ct_fixed_results[i].fn)
			return ct_fixed_results[i].len;
	return -1;
}

/*
 * Decide the call's chunks from its encoded message (ulb.h): what the
 * binding says of the reply, this connection's inline threshold, and the
 * segments the peer accepts.
 */
static void
ct_plan_call(struct ct_rdma *ct, struct ct_slot *slot, size_t len)
{
	struct ct_plan *p = &slot->plan;
	struct ulb_limits l = {
		.max_reply = ct->ct_max_reply,
		.write_chunk = ct->ct_write_chunk,
		.inline_recv = ep_recv_max(ct->ct_ep),
		.seg_max = ct_peer_seg_max(ct),
	};
	struct ulb_chunks ch;

	if (ulb_parse_call(slot->callbuf->buf.addr, len, &p->ulb)) {
		/* Not a call this binding reads: the convention's chunks. */
		memset(&p->ulb, 0, sizeof(p->ulb));
		p->ulb.item = ULB_ITEM_FIRST_OPAQUE;
		p->ulb.placement = true;
	}
	/*
	 * Results of a known fixed size (ct_results_len): the reply is an
	 * RPC header, verifier and RPCSEC_GSS wrapping included, and at most
	 * one hyper, which fits any inline threshold of s3.3.2 (1024 octets
	 * at least): no Reply chunk to bind and fence (s5.3.3).
	 */
	if (slot->results_len >= 0) {
		p->ulb.known = true;
		p->ulb.item = ULB_ITEM_NONE;
		p->ulb.item_max = 0;
		p->ulb.max_reply = ULB_REPLY_HDR_MAX + (uint64_t)slot->results_len;
	}
	ulb_chunks(&p->ulb, &l, &ch);
	/* A call whose reply is not waited for offers nothing for it. */
	p->reply_len = slot->wait_reply ? ch.reply_len : 0;
	p->write_len = slot->wait_reply ? ch.write_len : 0;
	p->seg_lim = l.seg_max;
	/*
	 * The binding knows how large the reply can be, and it is offered
	 * room for all of it (inline, or chunks cut to fit it): no reply of
	 * this call can be too large for what it offers (ct_reply_error).
	 */
	p->reply_bounded = p->ulb.max_reply != 0 && ch.reply_len < l.max_reply &&
			   p->ulb.item_max <= l.max_reply;
}

int
ct_encode_call(CLIENT *cl, struct ct_rdma *ct, struct ct_slot *slot,
	       rpcproc_t proc, xdrproc_t xdr_args, void *args_ptr, size_t *len)
{
	struct ct_grow_ctx gc = {
		.ct = ct,
		.slot = slot,
		.xdr_args = xdr_args,
		.args_ptr = args_ptr,
	};
	struct xdr_grow g = {
		.buf = slot->callbuf->buf.addr,
		.cap = slot->callbuf->buf.len,
		.limit = UINT32_MAX,
		.grow = ct_callbuf_grow,
		.ctx = &gc,
	};
	uint32_t proc32 = (uint32_t)proc;
	XDR xdrs;

	xdr_grow_create(&xdrs, &g);
	if (!XDR_PUTBYTES(&xdrs, ct->ct_u.ct_mcallc, ct->ct_mpos) ||
	    !XDR_PUTINT32(&xdrs, (int32_t *)&proc32) ||
	    !AUTH_MARSHALL(cl->cl_auth, &xdrs) ||
	    !AUTH_WRAP(cl->cl_auth, &xdrs, xdr_args, args_ptr))
		return g.overflow ? -EMSGSIZE : gc.nomem ? -ENOMEM : -EINVAL;
	*len = g.len;
	ct_plan_call(ct, slot, g.len);
	return 0;
}

/* Segments of a chunk of len octets, cut as the plan says. */
static unsigned int
ct_nsegs(const struct ct_plan *p, uint64_t len)
{
	uint32_t seg = ulb_seg_size(len, p->seg_lim);

	return (unsigned int)((len + seg - 1) / seg);
}

/*
 * The segments of the slot's chunk behind window w (its buffer, the
 * plan's length), all under the window's one key; returns how many.
 */
static unsigned int
ct_segs(const struct ct_slot *slot, unsigned int w,
	struct rpcrdma_segment *segs)
{
	const struct ct_plan *p = &slot->plan;
	uint64_t len = w == CT_WIN_WRITE ? p->write_len :
		       w == CT_WIN_READ ? p->read_len : p->reply_len;
	const struct rdma_pbuf *pb = w == CT_WIN_WRITE ? slot->ddpbuf :
				     w == CT_WIN_READ ? slot->callbuf :
							slot->replybuf;
	uint32_t seg = ulb_seg_size(len, p->seg_lim);
	unsigned int n = 0;
	uint64_t off;

	for (off = 0; off < len; off += seg, n++) {
		segs[n].handle = slot->win[w].rkey;
		segs[n].offset = (uintptr_t)pb->buf.addr + off;
		segs[n].length = (uint32_t)(len - off < seg ? len - off : seg);
	}
	return n;
}

/*
 * The call's transport header (s5.2, s5.3): RDMA_MSG for an inline call;
 * RDMA_NOMSG with a position-zero Read chunk holding the whole call for a
 * long one (s4.5.3).  The chunks of the call's plan, each behind one key.
 */
static ssize_t
ct_encode_header(struct ct_rdma *ct, uint8_t *buf, uint32_t xid,
		 const struct ct_slot *slot, size_t call_len, bool long_call)
{
	struct rpcrdma_hdr *h = &ct->ct_shdr;
	const struct ct_plan *p = &slot->plan;

	h->xid = xid;
	h->vers = slot->rvers;
	h->credits = ct->ct_credits_req;
	h->proc = long_call ? RDMA_NOMSG : RDMA_MSG;
	h->nreads = 0;
	if (long_call) {
		/* s4.4.5: one position-zero chunk, in segments as the others. */
		struct rpcrdma_segment segs[RPCRDMA1_MAX_READ_SEGS];
		unsigned int i;

		h->nreads = ct_segs(slot, CT_WIN_READ, segs);
		for (i = 0; i < h->nreads; i++) {
			h->reads[i].position = 0;
			h->reads[i].target = segs[i];
		}
	}
	h->nwrites = 0;
	h->nwsegs = 0;
	if (p->write_len) {
		/* s4.4.6: one Write chunk, for the DDP-eligible result. */
		h->nwrites = 1;
		h->writes[0].first = 0;
		h->nwsegs = ct_segs(slot, CT_WIN_WRITE, h->wsegs);
		h->writes[0].nsegs = h->nwsegs;
	}
	h->has_reply = p->reply_len != 0;
	h->nreply = h->has_reply ? ct_segs(slot, CT_WIN_REPLY, h->reply) : 0;
	return ct_hdr_encode(buf, CT_SEND_BUF, h);
}

/*
 * Octets of the inline call header: prefix, empty Read list, the Write
 * list and the Reply chunk of the plan (s5.7 grammar).
 */
static size_t
ct_msg_hdr_len(const struct ct_slot *slot)
{
	const struct ct_plan *p = &slot->plan;
	size_t len = RPCRDMA1_PREFIX_LEN + 4 + 4 + 4 + ct_hdr_extra(slot->rvers);

	if (p->write_len)
		len += 8 + RPCRDMA1_SEGMENT_LEN *
			   ct_nsegs(p, p->write_len);
	if (p->reply_len)
		len += 4 + RPCRDMA1_SEGMENT_LEN *
			   ct_nsegs(p, p->reply_len);
	return len;
}

/* A header send buffer, waiting for one to come free; -errno. */
static int
ct_get_send(struct ct_rdma *ct, int64_t deadline)
{
	struct ep *ep = ct->ct_ep;
	int sidx;

	for (;;) {
		sidx = ep_get_send(ep);
		if (sidx >= 0 || sidx == -ENOMEM)
			return sidx;
		if (ct_wait_room(ct, false, deadline))
			return ep_dead(ep) ? -ep_dead(ep) : -ETIMEDOUT;
	}
}

int
ct_send_call(struct ct_rdma *ct, unsigned int s, uint32_t xid, size_t len,
	     int64_t deadline)
{
	struct ep *ep = ct->ct_ep;
	struct ct_slot *slot = &ct->ct_slots[s];
	struct ibv_send_wr binds[CT_NWIN];
	struct ibv_sge sge[2];
	ssize_t hdrlen;
	int nbinds, sidx, ret;
	bool long_call, busy;

	/* Its version first: a Version Two header is one word longer. */
	ct_call_vers(ct, slot);
	long_call = ct_msg_hdr_len(slot) + len > ep_send_max(ep);

	slot->plan.read_len = long_call ? len : 0;
	/*
	 * s4.3.1: the reply will find a posted receive.  Not waiting for one
	 * under ct_lock while other calls of this CLIENT hold theirs: they
	 * give them back only once they have the lock.
	 */
	busy = ct_others_under_way(ct, s);
	ret = ep_recv_reserve(ep, busy ? 0 : deadline);
	if (ret)
		return busy && ret == -ETIMEDOUT ? -ENOBUFS : ret;
	nbinds = ct_expose_call(ct, s, long_call, len, binds);
	sidx = nbinds < 0 ? nbinds : ct_get_send(ct, deadline);
	if (sidx < 0) {
		ep_recv_unreserve(ep, 1);
		return sidx;
	}
	hdrlen = ct_encode_header(ct, ep_send_buf(ep, (uint32_t)sidx), xid,
				  slot, len, long_call);
	if (hdrlen < 0) {
		ep_put_send(ep, (uint32_t)sidx);
		ep_recv_unreserve(ep, 1);
		return (int)hdrlen;
	}
	sge[0] = ep_hdr_sge(ep, (uint32_t)sidx, (uint32_t)hdrlen);
	sge[1].addr = (uintptr_t)slot->callbuf->buf.addr;
	sge[1].length = (uint32_t)len;
	sge[1].lkey = slot->callbuf->buf.mr->lkey;
	for (;;) {
		CP_MARK(CP_CALL_POST);
		ret = nbinds && !ct_binds_may_post(ct) ? -EAGAIN :
		      ep_post_send(ep, (uint32_t)sidx, binds,
				   (unsigned int)nbinds, sge,
				   long_call ? 1 : 2, 0, NULL, 0);
		CP_MARK(CP_CALL_POSTED);
		if (ret != -EAGAIN)
			break;
		if (ct_wait_room(ct, nbinds != 0, deadline)) {
			ret = ep_dead(ep) ? -ep_dead(ep) : -ETIMEDOUT;
			break;
		}
	}
	if (ret) {
		ep_put_send(ep, (uint32_t)sidx);
		ep_recv_unreserve(ep, 1);
		return ret;
	}
	ct_exposed(ct, s, long_call);
	slot->state = SLOT_ACTIVE;
	slot->xid = xid;
	slot->recv_held = true;
	SHIM_STATS_ADD(ct->ct_stats, bytes_out, len);
	if (long_call) {
		SHIM_STATS_ADD(ct->ct_stats, long_out, 1);
		/* s4.4.5.2: the server pulls the whole Read chunk. */
		SHIM_STATS_ADD(ct->ct_stats, read_chunk_bytes, len);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The reply                                                           */
/* ------------------------------------------------------------------ */

/* The binding's decision for the item the decoder is about to read. */
static bool
ct_ddp_match(struct xdr_ddp *d, const uint8_t *res, size_t len,
	     uint32_t item_len)
{
	const struct ct_plan *p = d->ctx;

	return ulb_is_item(&p->ulb, res, len, item_len);
}

/*
 * Decode the reply in buf the way clnt_vc does (RFC 5531 reply body).
 * *refresh is set when the credentials were refreshed and the call should
 * be sent again.
 */
static enum clnt_stat
ct_decode_reply(CLIENT *cl, struct ct_rdma *ct, const struct ct_plan *plan,
		uint32_t xid, uint8_t *buf,
		uint32_t len, const uint8_t *chunk, uint32_t chunk_len,
		xdrproc_t xdr_results, void *results_ptr, int *refreshes,
		bool *refresh)
{
	struct rpc_msg reply_msg;
	struct xdr_ddp ddp;
	XDR xdrs;

	*refresh = false;
	memset(&reply_msg, 0, sizeof(reply_msg));
	reply_msg.acpted_rply.ar_verf = _null_auth;
	reply_msg.acpted_rply.ar_results.where = NULL;
	reply_msg.acpted_rply.ar_results.proc = XDRPROC(xdr_void);

	/*
	 * A result the server placed in the Write chunk is put back into
	 * the reduced reply as it is decoded (s4.4.6): the item the Upper
	 * Layer Binding names (s5.3.2), found in the results as they are
	 * read.
	 */
	memset(&ddp, 0, sizeof(ddp));
	ddp.buf = buf;
	ddp.len = len;
	ddp.chunk = chunk;
	ddp.chunk_len = chunk_len;
	ddp.match = ct_ddp_match;
	ddp.ctx = plan;
	xdr_ddp_create(&xdrs, &ddp);
	if (!xdr_replymsg(&xdrs, &reply_msg) || reply_msg.rm_xid != xid) {
		XDR_DESTROY(&xdrs);
		return ct_fail(ct, RPC_CANTDECODERES, 0);
	}
	ddp.base = ddp.pos;
	ddp.armed = true;

	_seterr_reply(&reply_msg, &ct->ct_error);
	if (ct->ct_error.re_status == RPC_SUCCESS) {
		if (!AUTH_VALIDATE(cl->cl_auth,
				   &reply_msg.acpted_rply.ar_verf)) {
			ct->ct_error.re_status = RPC_AUTHERROR;
			ct->ct_error.re_why = AUTH_INVALIDRESP;
		} else if (!AUTH_UNWRAP(cl->cl_auth, &xdrs, xdr_results,
					results_ptr) || (chunk_len && !ddp.used)) {
			/* Also a Write chunk no result could be taken from. */
			if (ct->ct_error.re_status == RPC_SUCCESS)
				ct->ct_error.re_status = RPC_CANTDECODERES;
		}
		if (reply_msg.acpted_rply.ar_verf.oa_base != NULL) {
			xdrs.x_op = XDR_FREE;
			(void)xdr_opaque_auth(&xdrs,
					      &reply_msg.acpted_rply.ar_verf);
		}
	} else if ((*refreshes)-- > 0 && AUTH_REFRESH(cl->cl_auth, &reply_msg)) {
		/* Maybe the credentials needed a refresh: send again. */
		*refresh = true;
	}
	XDR_DESTROY(&xdrs);
	return ct->ct_error.re_status;
}

/*
 * The octets a returned chunk says were written into the slot's chunk w
 * (s4.4.6.2, s4.5.3): its segments as offered, each length at most the
 * offered one, filled in order (a partly written segment ends the data).
 * Returns the total, or -1 when the chunk is not the one offered.
 */
static int64_t
ct_chunk_written(const struct ct_slot *slot, unsigned int w,
		 const struct rpcrdma_segment *got, unsigned int n)
{
	struct rpcrdma_segment want[RPCRDMA1_MAX_REPLY_SEGS];
	unsigned int i, nwant = ct_segs(slot, w, want);
	uint64_t total = 0;
	bool ended = false;

	if (n != nwant)
		return -1;
	for (i = 0; i < n; i++) {
		if (got[i].handle != want[i].handle ||
		    got[i].offset != want[i].offset ||
		    got[i].length > want[i].length ||
		    (ended && got[i].length))
			return -1;
		ended = got[i].length < want[i].length;
		total += got[i].length;
	}
	return (int64_t)total;
}

/*
 * Where the reply's RPC message is: inline after the header (RDMA_MSG) or
 * in the Reply chunk (RDMA_NOMSG, s4.5.3).  Returns -EBADMSG for a reply
 * that does not fit what this call offered.
 */
static int
ct_reply_payload(struct ct_rdma *ct, const struct ct_slot *slot,
		 uint8_t **buf, uint32_t *len, uint32_t *ddp_len)
{
	const struct ct_reply *rep = &slot->rep;
	const struct rpcrdma_hdr *h = &rep->hdr;
	const struct ct_plan *p = &slot->plan;
	int64_t n;
	unsigned int i;

	/*
	 * s4.4.6: the Write chunk comes back as offered, with the octets
	 * written; without one offered, none may come back filled.
	 */
	*ddp_len = 0;
	if (p->write_len && h->nwrites) {
		if (h->nwrites != 1)
			return -EBADMSG;
		n = ct_chunk_written(slot, CT_WIN_WRITE, h->wsegs,
				     h->writes[0].nsegs);
		if (n < 0)
			return -EBADMSG;
		*ddp_len = (uint32_t)n;
	} else {
		for (i = 0; i < h->nwsegs; i++)
			if (h->wsegs[i].length)
				return -EBADMSG;
	}
	if (h->proc == RDMA_MSG) {
		*buf = ep_recv_buf(ct->ct_ep, rep->ridx) + h->hdrlen;
		*len = rep->rlen - (uint32_t)h->hdrlen;
		return 0;
	}
	/* RDMA_NOMSG: the Reply chunk we offered, with the lengths written. */
	if (!p->reply_len || !h->has_reply)
		return -EBADMSG;
	n = ct_chunk_written(slot, CT_WIN_REPLY, h->reply, h->nreply);
	if (n < 0)
		return -EBADMSG;
	*buf = slot->replybuf->buf.addr;
	*len = (uint32_t)n;
	return 0;
}

/* RDMA_MSG or RDMA_NOMSG: the RPC reply, inline or in the chunks. */
static enum clnt_stat
ct_reply_msg(CLIENT *cl, struct ct_rdma *ct, const struct ct_slot *slot,
	     uint32_t xid, xdrproc_t xdr_results, void *results_ptr,
	     int *refreshes, bool *refresh)
{
	uint32_t plen, ddp_len;
	uint8_t *payload;

	if (ct_reply_payload(ct, slot, &payload, &plen, &ddp_len)) {
		shim_log(SHIM_LOG_WARN,
			 "client: reply to xid 0x%08x does not match the chunks offered",
			 xid);
		return ct_fail(ct, RPC_CANTDECODERES, EBADMSG);
	}
	if (ddp_len)
		shim_log(SHIM_LOG_DEBUG,
			 "client: xid 0x%08x: %u octets of the result came in the Write chunk",
			 xid, ddp_len);
	SHIM_STATS_ADD(ct->ct_stats, bytes_in, plen + ddp_len);
	if (slot->rep.hdr.proc == RDMA_NOMSG || ddp_len)
		SHIM_STATS_ADD(ct->ct_stats, long_in, 1);
	/* The lengths the server returned (s4.4.6), not the sizes offered. */
	SHIM_STATS_ADD(ct->ct_stats, write_chunk_bytes, ddp_len);
	if (slot->rep.hdr.proc == RDMA_NOMSG)
		SHIM_STATS_ADD(ct->ct_stats, reply_chunk_bytes, plen);
	return ct_decode_reply(cl, ct, &slot->plan, xid, payload, plen,
			       ddp_len ? slot->ddpbuf->buf.addr : NULL, ddp_len,
			       xdr_results, results_ptr, refreshes, refresh);
}

/* The longest segment the call's chunks were cut into. */
static uint32_t
ct_plan_seg(const struct ct_plan *p)
{
	uint64_t lens[3] = { p->reply_len, p->write_len, p->read_len };
	uint32_t seg = 0, s;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		s = ulb_seg_size(lens[i], p->seg_lim);
		if (lens[i] < s)
			s = (uint32_t)lens[i];
		if (s > seg)
			seg = s;
	}
	return seg;
}

/*
 * s5.5: RDMA_ERROR completes this XID's call.  ERR_CHUNK (BADHEADER) to
 * a call whose segments a server may have found too large: the peer gets
 * smaller segments from now on.  A server refusing segments answers
 * before the call runs (Linux svcrdma checks the header first), but a
 * Reply chunk too small for the reply gets the same answer once the call
 * has run (s5.5.3: no RPC-level reply is possible).  So the call is sent
 * again (*refresh) only when its reply cannot have been larger than what
 * it offered (plan.reply_bounded); otherwise it fails, and is never run
 * twice.
 */
static enum clnt_stat
ct_reply_error(struct ct_rdma *ct, const struct ct_slot *slot, uint32_t xid,
	       bool *refresh)
{
	const struct rpcrdma_hdr *h = &slot->rep.hdr;
	uint32_t seg = ct_plan_seg(&slot->plan);

	SHIM_STATS_ADD(ct->ct_stats, rdma_errors, 1);
	if (h->err == RDMA_ERR_VERS) {
		shim_log(SHIM_LOG_WARN,
			 "client: server answered RDMA_ERROR (ERR_VERS %u..%u) to xid 0x%08x",
			 h->vers_low, h->vers_high, xid);
		return ct_fail(ct, RPC_CANTRECV, EPROTONOSUPPORT);
	}
	if (seg > ULB_SEG_MIN && slot->plan.seg_lim > ULB_SEG_MIN) {
		uint32_t lim = ct_peer_refused(ct, seg);

		if (slot->plan.reply_bounded) {
			shim_log(SHIM_LOG_INFO,
				 "client: server answered ERR_CHUNK to xid 0x%08x with segments of %u octets: sending it again with segments of at most %u",
				 xid, seg, lim);
			*refresh = true;
			return ct_fail(ct, RPC_CANTRECV, EMSGSIZE);
		}
		shim_log(SHIM_LOG_WARN,
			 "client: server answered RDMA_ERROR (BADHEADER) to xid 0x%08x: no reply is possible; a reply above max_reply (%llu octets), a call above the server's max_call or segments of %u octets refused give this; the call is not sent again (the server may have run it), later calls use segments of at most %u",
			 xid, (unsigned long long)ct->ct_max_reply_cfg, seg, lim);
		return ct_fail(ct, RPC_CANTRECV, EMSGSIZE);
	}
	shim_log(SHIM_LOG_WARN,
		 "client: server answered RDMA_ERROR (BADHEADER) to xid 0x%08x: no reply is possible; a reply above max_reply (%llu octets) or a call above the server's max_call gives this",
		 xid, (unsigned long long)ct->ct_max_reply_cfg);
	return ct_fail(ct, RPC_CANTRECV, EMSGSIZE);
}

enum clnt_stat
ct_reply_result(CLIENT *cl, struct ct_rdma *ct, struct ct_slot *slot,
		uint32_t xid, xdrproc_t xdr_results, void *results_ptr,
		int *refreshes, bool *refresh)
{
	uint32_t proc = slot->rep.hdr.proc;
	enum clnt_stat st;

	*refresh = false;
	if (ct_v2_answer(ct, slot, xid, refresh, &st))
		return st;
	switch (proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
		return ct_reply_msg(cl, ct, slot, xid, xdr_results, results_ptr,
				    refreshes, refresh);
	case RDMA_ERROR:
		return ct_reply_error(ct, slot, xid, refresh);
	default:
		shim_log(SHIM_LOG_WARN,
			 "client: malformed reply (%s) to xid 0x%08x",
			 rpcrdma_proc_name(proc), xid);
		return ct_fail(ct, RPC_CANTDECODERES, EBADMSG);
	}
}
