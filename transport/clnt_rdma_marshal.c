/*
 * The client's messages (clnt_rdma_int.h): the call, encoded once into
 * registered memory from the device pool, with its transport header; and
 * the reply, found inline or in the chunks the call offered, decoded the
 * way libtirpc's clnt_vc does.
 *
 * A call that fits the inline threshold goes as RDMA_MSG, header and
 * payload gathered in one Send; otherwise as RDMA_NOMSG with a
 * position-zero Read chunk (RFC 8166 s4.5.3).  Every call offers a Reply
 * chunk of max_reply octets (s5.3.3: the reply size is not known in
 * advance), so replies of any size up to that work.  Its memory comes from
 * the pool for the call and goes back after it (ct_slots_idle).
 */
#include <errno.h>
#include <string.h>

#include "clnt_rdma_int.h"
#include "common/log.h"
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
	return 0;
}

/*
 * The call's transport header (s5.2, s5.3): RDMA_MSG with only the Reply
 * chunk for an inline call; RDMA_NOMSG with a position-zero Read chunk
 * holding the whole call for a long one (s4.5.3).  A single segment per
 * chunk: the server splits its RDMA operations as its device needs.
 */
static ssize_t
ct_encode_header(struct ct_rdma *ct, uint8_t *buf, uint32_t xid,
		 const struct ct_slot *slot, size_t call_len, bool long_call)
{
	struct rpcrdma_hdr *h = &ct->ct_shdr;

	h->xid = xid;
	h->vers = RPCRDMA1_VERSION;
	h->credits = ct->ct_credits_req;
	h->proc = long_call ? RDMA_NOMSG : RDMA_MSG;
	h->nreads = 0;
	if (long_call) {
		h->nreads = 1;
		h->reads[0].position = 0;
		h->reads[0].target.handle = slot->win[CT_WIN_READ].rkey;
		h->reads[0].target.length = (uint32_t)call_len;
		h->reads[0].target.offset = (uintptr_t)slot->callbuf->buf.addr;
	}
	h->nwrites = 0;
	h->nwsegs = 0;
	h->has_reply = false;
	h->nreply = 0;
	/* A call whose reply is not waited for offers nothing for it. */
	if (!slot->wait_reply)
		return rpcrdma_hdr_encode(buf, CT_SEND_BUF, h);
	if (ct->ct_write_chunk) {
		/* s4.4.6: one Write chunk for the first opaque result. */
		h->nwrites = 1;
		h->writes[0].first = 0;
		h->writes[0].nsegs = 1;
		h->nwsegs = 1;
		h->wsegs[0].handle = slot->win[CT_WIN_WRITE].rkey;
		h->wsegs[0].length = (uint32_t)ct->ct_write_chunk;
		h->wsegs[0].offset = (uintptr_t)slot->ddpbuf->buf.addr;
	}
	h->has_reply = true;
	h->nreply = 1;
	h->reply[0].handle = slot->win[CT_WIN_REPLY].rkey;
	h->reply[0].length = (uint32_t)ct->ct_max_reply;
	h->reply[0].offset = (uintptr_t)slot->replybuf->buf.addr;
	return rpcrdma_hdr_encode(buf, CT_SEND_BUF, h);
}

/*
 * Octets of the inline call header: prefix, empty Read list, the Write
 * list (one one-segment chunk when offered), one-segment Reply chunk.
 */
static size_t
ct_msg_hdr_len(const struct ct_rdma *ct)
{
	size_t len = RPCRDMA1_PREFIX_LEN + 4 + 4 + 8 + RPCRDMA1_SEGMENT_LEN;

	if (ct->ct_write_chunk)
		len += 8 + RPCRDMA1_SEGMENT_LEN;
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
		if (ct_wait_room(ct, deadline))
			return ep_dead(ep) ? -ep_dead(ep) : -ETIMEDOUT;
	}
}

int
ct_send_call(struct ct_rdma *ct, unsigned int s, uint32_t xid, size_t len,
	     int64_t deadline)
{
	struct ep *ep = ct->ct_ep;
	struct ct_slot *slot = &ct->ct_slots[s];
	bool long_call = ct_msg_hdr_len(ct) + len > ep_send_max(ep);
	struct ibv_send_wr binds[CT_NWIN];
	struct ibv_sge sge[2];
	ssize_t hdrlen;
	int nbinds, sidx, ret;

	/* s4.3.1: the reply will find a posted receive. */
	ret = ep_recv_reserve(ep, deadline);
	if (ret)
		return ret;
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
		ret = ep_post_send(ep, (uint32_t)sidx, binds, (unsigned int)nbinds,
				   sge, long_call ? 1 : 2, 0, NULL, 0);
		if (ret != -EAGAIN)
			break;
		if (ct_wait_room(ct, deadline)) {
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
	ct->ct_outstanding++;
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

/*
 * Decode the reply in buf the way clnt_vc does (RFC 5531 reply body).
 * *refresh is set when the credentials were refreshed and the call should
 * be sent again.
 */
static enum clnt_stat
ct_decode_reply(CLIENT *cl, struct ct_rdma *ct, uint32_t xid, uint8_t *buf,
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
	 * the reduced reply as it is decoded (s4.4.6).
	 */
	memset(&ddp, 0, sizeof(ddp));
	ddp.buf = buf;
	ddp.len = len;
	ddp.chunk = chunk;
	ddp.chunk_len = chunk_len;
	xdr_ddp_create(&xdrs, &ddp);
	if (!xdr_replymsg(&xdrs, &reply_msg) || reply_msg.rm_xid != xid) {
		XDR_DESTROY(&xdrs);
		return ct_fail(ct, RPC_CANTDECODERES, 0);
	}
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
 * Where the reply's RPC message is: inline after the header (RDMA_MSG) or
 * in the Reply chunk (RDMA_NOMSG, s4.5.3).  Returns -EBADMSG for a reply
 * that does not fit what this call offered.
 */
static int
ct_reply_payload(struct ct_rdma *ct, const struct ct_slot *slot,
		 uint8_t **buf, uint32_t *len, uint32_t *ddp_len)
{
	const struct ct_reply *rep = &ct->ct_rep;
	const struct rpcrdma_hdr *h = &rep->hdr;
	uint64_t total = 0;
	unsigned int i;

	/*
	 * s4.4.6: the Write chunk comes back as offered, with the octets
	 * written; without one offered, none may come back filled.
	 */
	*ddp_len = 0;
	if (ct->ct_write_chunk && h->nwrites) {
		if (h->nwrites != 1 || h->writes[0].nsegs != 1 ||
		    h->wsegs[0].handle != slot->win[CT_WIN_WRITE].rkey ||
		    h->wsegs[0].offset != (uintptr_t)slot->ddpbuf->buf.addr ||
		    h->wsegs[0].length > ct->ct_write_chunk)
			return -EBADMSG;
		*ddp_len = h->wsegs[0].length;
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
	if (!h->has_reply || h->nreply != 1 ||
	    h->reply[0].handle != slot->win[CT_WIN_REPLY].rkey ||
	    h->reply[0].offset != (uintptr_t)slot->replybuf->buf.addr)
		return -EBADMSG;
	for (i = 0; i < h->nreply; i++)
		total += h->reply[i].length;
	if (total > ct->ct_max_reply)
		return -EBADMSG;
	*buf = slot->replybuf->buf.addr;
	*len = (uint32_t)total;
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
	if (ct->ct_rep.hdr.proc == RDMA_NOMSG || ddp_len)
		SHIM_STATS_ADD(ct->ct_stats, long_in, 1);
	/* The lengths the server returned (s4.4.6), not the sizes offered. */
	SHIM_STATS_ADD(ct->ct_stats, write_chunk_bytes, ddp_len);
	if (ct->ct_rep.hdr.proc == RDMA_NOMSG)
		SHIM_STATS_ADD(ct->ct_stats, reply_chunk_bytes, plen);
	return ct_decode_reply(cl, ct, xid, payload, plen,
			       ddp_len ? slot->ddpbuf->buf.addr : NULL, ddp_len,
			       xdr_results, results_ptr, refreshes, refresh);
}

/* s5.5: RDMA_ERROR completes this XID's call. */
static enum clnt_stat
ct_reply_error(struct ct_rdma *ct, uint32_t xid)
{
	const struct rpcrdma_hdr *h = &ct->ct_rep.hdr;

	SHIM_STATS_ADD(ct->ct_stats, rdma_errors, 1);
	if (h->err == RDMA_ERR_VERS) {
		shim_log(SHIM_LOG_WARN,
			 "client: server answered RDMA_ERROR (ERR_VERS %u..%u) to xid 0x%08x",
			 h->vers_low, h->vers_high, xid);
		return ct_fail(ct, RPC_CANTRECV, EPROTONOSUPPORT);
	}
	shim_log(SHIM_LOG_WARN,
		 "client: server answered RDMA_ERROR (BADHEADER) to xid 0x%08x: no reply is possible; a reply above max_reply (%llu octets) or a call above the server's max_call gives this",
		 xid, (unsigned long long)ct->ct_max_reply_cfg);
	return ct_fail(ct, RPC_CANTRECV, EMSGSIZE);
}

enum clnt_stat
ct_reply_result(CLIENT *cl, struct ct_rdma *ct, const struct ct_slot *slot,
		uint32_t xid, xdrproc_t xdr_results, void *results_ptr,
		int *refreshes, bool *refresh)
{
	uint32_t proc = ct->ct_rep.hdr.proc;

	*refresh = false;
	switch (proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
		return ct_reply_msg(cl, ct, slot, xid, xdr_results, results_ptr,
				    refreshes, refresh);
	case RDMA_ERROR:
		return ct_reply_error(ct, xid);
	default:
		shim_log(SHIM_LOG_WARN,
			 "client: malformed reply (%s) to xid 0x%08x",
			 rpcrdma_proc_name(proc), xid);
		return ct_fail(ct, RPC_CANTDECODERES, EBADMSG);
	}
}
