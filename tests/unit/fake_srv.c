/*
 * The scripted server of the fake endpoint (fake_ep.h): it answers the
 * calls the client posts as the test sets it to (srv), through what the
 * client exposed, into the receives it posted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "fake_ep.h"
#include "fake_ep_int.h"
#include "rpcrdma2_xdr.h"
#include "rpcrdma_xdr.h"
#include "xdr_grow.h"

struct fake_server srv;

static void
deliver(struct ep *ep, const uint8_t *msg, size_t len, uint32_t inv_rkey)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS };
	unsigned int i;

	srv.answered++;
	if (srv.inflight)
		srv.inflight--;
	for (i = 0; i < ep->attr.nrecv && !ep->recv_posted[i]; i++)
		;
	if (i == ep->attr.nrecv || len > ep->attr.inline_recv) {
		violations++;		/* receiver not ready: RNR */
		return;
	}
	memcpy(ep_recv_buf(ep, i), msg, len);
	ep->recv_posted[i] = false;
	wc.wr_id = EP_WRID(EP_WR_RECV, i);
	wc.byte_len = (uint32_t)len;
	if (srv.recv_error) {
		/* As a message longer than the receive buffer ends. */
		srv.recv_error = false;
		wc.status = IBV_WC_LOC_LEN_ERR;
	}
	if (inv_rkey) {
		(void)key_unbind(inv_rkey);
		wc.wc_flags = IBV_WC_WITH_INV;
		wc.invalidated_rkey = inv_rkey;
	}
	cq_push(ep, &wc);
}

/*
 * An accepted RPC reply to xid into buf, its octets or 0.  With result,
 * an opaque result of that many octets moved to a Write chunk: only its
 * length stays in the reply (RFC 8166 s4.4.6).
 */
static size_t
srv_rpc_reply(uint32_t xid, uint32_t result, uint8_t *buf, size_t cap)
{
	struct rpc_msg m;
	XDR x;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = REPLY;
	m.rm_reply.rp_stat = MSG_ACCEPTED;
	m.acpted_rply.ar_verf = _null_auth;
	m.acpted_rply.ar_stat = SUCCESS;
	m.acpted_rply.ar_results.proc = XDRPROC(xdr_void);
	xdrmem_create(&x, (char *)buf, (u_int)cap, XDR_ENCODE);
	if (!xdr_replymsg(&x, &m) || (result && !xdr_u_int32_t(&x, &result)))
		return 0;
	return XDR_GETPOS(&x);
}

/*
 * An RDMA_MSG reply: header, then the RPC reply, with result as its one
 * unsigned result when has_result (F_PROC_ECHO), else none (NULL).
 */
static void
srv_reply_result(struct ep *ep, uint32_t xid, uint32_t inv_rkey,
		 bool has_result, uint32_t result)
{
	struct rpcrdma_hdr h;
	uint8_t msg[512];
	size_t len = 0;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.xid = xid;
	h.vers = RPCRDMA1_VERSION;
	h.credits = srv.credits;
	h.proc = RDMA_MSG;
	n = rpcrdma_hdr_encode(msg, sizeof(msg), &h);
	if (n > 0)
		len = srv_rpc_reply(xid, 0, msg + n, sizeof(msg) - (size_t)n);
	if (len && has_result) {
		uint32_t be = htonl(result);

		memcpy(msg + n + len, &be, sizeof(be));
		len += sizeof(be);
	}
	if (!len) {
		violations++;
		return;
	}
	deliver(ep, msg, (size_t)n + len, inv_rkey);
}

static void
srv_reply(struct ep *ep, uint32_t xid, uint32_t inv_rkey)
{
	srv_reply_result(ep, xid, inv_rkey, false, 0);
}

/*
 * "RDMA Write" len octets to a segment the client exposed, which must be
 * reachable and large enough; false (a violation) otherwise.
 */
static bool
srv_write(const struct rpcrdma_segment *seg, const void *data, uint32_t len)
{
	if (!key_bound(seg->handle) || seg->length < len) {
		violations++;
		return false;
	}
	memcpy((void *)(uintptr_t)seg->offset, data, len);
	return true;
}

/*
 * A reply through the call's chunks (s4.4.6, s4.5.3): srv.write_result
 * octets written into its first Write chunk, and with srv.reply_chunk
 * the RPC reply written into its Reply chunk (RDMA_NOMSG); each segment
 * returned with the octets written, as a responder does.
 */
static void
srv_reply_chunks(struct ep *ep, const struct rpcrdma_hdr *call,
		 uint32_t inv_rkey)
{
	static uint8_t result[1 << 16];
	struct rpcrdma_hdr h;
	uint8_t msg[512], rpc[256];
	size_t len;
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.xid = call->xid;
	h.vers = RPCRDMA1_VERSION;
	h.credits = srv.credits;
	h.proc = srv.reply_chunk ? RDMA_NOMSG : RDMA_MSG;
	len = srv_rpc_reply(call->xid, srv.write_result, rpc, sizeof(rpc));
	if (srv.write_result) {
		memset(result, 0xab, sizeof(result));
		if (!call->nwrites || srv.write_result > sizeof(result) ||
		    !srv_write(&call->wsegs[0], result, srv.write_result))
			goto out_violation;
		h.nwrites = 1;
		h.writes[0].nsegs = 1;
		h.nwsegs = 1;
		h.wsegs[0] = call->wsegs[0];
		h.wsegs[0].length = srv.write_result;
	}
	if (srv.reply_chunk) {
		if (!call->has_reply || !srv_write(&call->reply[0], rpc, (uint32_t)len))
			goto out_violation;
		h.has_reply = true;
		h.nreply = 1;
		h.reply[0] = call->reply[0];
		h.reply[0].length = (uint32_t)len;
	}
	n = rpcrdma_hdr_encode(msg, sizeof(msg), &h);
	if (!len || n < 0 || (size_t)n + len > sizeof(msg))
		goto out_violation;
	if (!srv.reply_chunk) {
		memcpy(msg + n, rpc, len);
		n += (ssize_t)len;
	}
	deliver(ep, msg, (size_t)n, inv_rkey);
	return;
out_violation:
	violations++;
}

static void
srv_error(struct ep *ep, uint32_t xid, uint32_t err)
{
	uint8_t msg[64];
	ssize_t n = rpcrdma_encode_error(msg, sizeof(msg), xid, RPCRDMA1_VERSION,
					 srv.credits, err);

	if (n > 0)
		deliver(ep, msg, (size_t)n, 0);
}

/* A backward-direction call (RFC 8166 s7): an RPC CALL in an RDMA_MSG. */
static void
srv_backward_call(struct ep *ep, uint32_t xid)
{
	struct rpcrdma_hdr h;
	uint8_t msg[128];
	uint32_t call[6] = { htonl(xid), 0, htonl(2), htonl(0x40000000),
			     htonl(1), 0 };
	ssize_t n;

	memset(&h, 0, sizeof(h));
	h.xid = xid;
	h.vers = RPCRDMA1_VERSION;
	h.credits = 1;
	h.proc = RDMA_MSG;
	n = rpcrdma_hdr_encode(msg, sizeof(msg), &h);
	if (n <= 0 || (size_t)n + sizeof(call) > sizeof(msg)) {
		violations++;
		return;
	}
	memcpy(msg + n, call, sizeof(call));
	deliver(ep, msg, (size_t)n + sizeof(call), 0);
}

void
srv_answer_held(struct ep *ep)
{
	fake_lock();
	if (srv.nheld) {
		srv_reply(ep, srv.held[0], 0);
		memmove(srv.held, srv.held + 1, --srv.nheld * sizeof(srv.held[0]));
		memmove(srv.held_arg, srv.held_arg + 1, srv.nheld * sizeof(srv.held_arg[0]));
	}
	fake_unlock();
}

/*
 * The procedure of the call in sge (inline, after its transport header)
 * and, for F_PROC_ECHO with AUTH_NONE, its argument.
 */
static uint32_t
call_proc(const struct ibv_sge *sge, int nsge, uint32_t *arg)
{
	const uint8_t *rpc;
	uint32_t w;

	*arg = 0;
	if (nsge < 2 || sge[1].length < 24)
		return 0;
	rpc = (const uint8_t *)(uintptr_t)sge[1].addr;
	memcpy(&w, rpc + 20, sizeof(w));
	if (ntohl(w) == F_PROC_ECHO && sge[1].length >= 44)
		memcpy(arg, rpc + 40, sizeof(*arg)), *arg = ntohl(*arg);
	return ntohl(w);
}

/* Batched: every call held is answered, the newest first. */
static void
srv_answer_batch(struct ep *ep)
{
	while (srv.nheld) {
		srv.nheld--;
		srv_reply_result(ep, srv.held[srv.nheld], 0, true,
				 srv.held_arg[srv.nheld]);
	}
}

unsigned int
fake_read(const unsigned int *v)
{
	unsigned int n;

	/* Under the lock for srv's counters, atomic for fake_connecting. */
	fake_lock();
	n = __atomic_load_n(v, __ATOMIC_ACQUIRE);
	fake_unlock();
	return n;
}

unsigned int
srv_answer_batch_now(struct ep *ep)
{
	unsigned int n;

	fake_lock();
	n = srv.nheld;
	srv_answer_batch(ep);
	fake_unlock();
	return n;
}

/* The Reply chunk key of the oldest call held, or 0. */
static uint32_t
held_reply_key(void)
{
	unsigned int c;

	for (c = 0; c < srv.calls; c++)
		if (srv.xid[c] == srv.held[0])
			return srv.reply_key[c];
	return 0;
}

void
srv_on_call(struct ep *ep, const struct ibv_sge *sge, int nsge)
{
	struct rpcrdma_hdr h;
	unsigned int c = srv.calls;
	uint32_t inv = 0, proc, arg;
	uint8_t msg[64];
	uint32_t xid, vers;
	ssize_t n;

	if (srv.kill_on_call) {
		srv.kill_on_call = false;
		ep->dead = ECONNRESET;
		return;
	}
	if (!rpcrdma_peek_version((const void *)(uintptr_t)sge[0].addr,
				  sge[0].length, &xid, &vers) &&
	    vers == RPCRDMA2_VERSION) {
		/* draft-cel-nfsv4-rpcrdma-version-two-01 s5.2, RFC 8166 s5.5.1 */
		srv.v2_calls++;
		srv.v2_xid = xid;
		srv.v2_held[srv.v2_nheld++] = xid;
		if (srv.drop_v2 || srv.v2_nheld < srv.batch) {
			if (srv.drop_v2)
				srv.v2_nheld = 0;
			return;
		}
		while (srv.v2_nheld) {
			xid = srv.v2_held[--srv.v2_nheld];
			n = rpcrdma_encode_error(msg, sizeof(msg), xid, vers,
						 srv.credits, RDMA_ERR_VERS);
			if (n > 0)
				deliver(ep, msg, (size_t)n, 0);
		}
		return;
	}
	if (rpcrdma_hdr_decode((const void *)(uintptr_t)sge[0].addr,
			       sge[0].length, &h) || c == F_CALLS) {
		violations++;
		return;
	}
	srv.calls++;
	if (++srv.inflight > srv.max_inflight)
		srv.max_inflight = srv.inflight;
	srv.xid[c] = h.xid;
	srv.reply_key[c] = h.has_reply ? h.reply[0].handle : 0;
	srv.reply_segs[c] = h.has_reply ? (uint8_t)h.nreply : 0;
	srv.read_key[c] = h.nreads ? h.reads[0].target.handle : 0;
	/* The Read chunk is pulled now: its memory must be reachable. */
	if (h.nreads && !key_bound(h.reads[0].target.handle))
		violations++;
	if (srv.err_chunks) {
		/* As Linux before 5.11 refuses segments, before the call runs. */
		srv.err_chunks--;
		srv_error(ep, h.xid, RDMA_ERR_BADHEADER);
		return;
	}
	proc = call_proc(sge, nsge, &arg);
	/* RFC 8166 s4.2.1: the call inline carries the header's XID. */
	if (nsge >= 2 && sge[1].length >= 4) {
		uint32_t rxid;

		memcpy(&rxid, (const void *)(uintptr_t)sge[1].addr, sizeof(rxid));
		if (rxid != htonl(h.xid))
			violations++;
	}
	if (proc == F_PROC_ECHO && srv.mode == SRV_REPLY) {
		if (arg & F_NEVER)
			return;
		if (srv.batch > 1) {
			srv.held_arg[srv.nheld] = arg;
			srv.held[srv.nheld++] = h.xid;
			if (srv.nheld >= srv.batch)
				srv_answer_batch(ep);
			return;
		}
		srv_reply_result(ep, h.xid, 0, true, arg);
		return;
	}
	switch (srv.mode) {
	case SRV_REPLY:
		if (srv.inv == INV_REPLY_CHUNK)
			inv = srv.reply_key[c];
		else if (srv.inv == INV_FOREIGN)
			inv = 0xdead0001;
		else if (srv.inv == INV_HELD && srv.nheld)
			inv = held_reply_key();
		if (srv.reply_chunk || srv.write_result)
			srv_reply_chunks(ep, &h, inv);
		else
			srv_reply(ep, h.xid, inv);
		if (srv.backward_call)
			srv_backward_call(ep, ~h.xid);
		if (srv.late_error && srv.nheld) {
			srv_error(ep, srv.held[0], RDMA_ERR_BADHEADER);
			memmove(srv.held, srv.held + 1, --srv.nheld * sizeof(srv.held[0]));
			srv.late_error = false;
		}
		break;
	case SRV_HOLD:
		srv.held[srv.nheld++] = h.xid;
		break;
	case SRV_MALFORMED:
		/* The prefix of a reply, with a procedure that does not exist. */
		memset(msg, 0, sizeof(msg));
		h.credits = srv.credits;
		h.proc = 7;
		(void)rpcrdma_encode_prefix(msg, msg + sizeof(msg), h.xid,
					    RPCRDMA1_VERSION, h.credits, h.proc);
		deliver(ep, msg, 28, 0);
		break;
	case SRV_ERR_VERS:
		srv_error(ep, h.xid, RDMA_ERR_VERS);
		break;
	case SRV_BAD_ERROR:
		memset(msg, 0, sizeof(msg));
		(void)rpcrdma_encode_prefix(msg, msg + sizeof(msg), h.xid,
					    RPCRDMA1_VERSION, srv.credits,
					    RDMA_ERROR);
		msg[19] = 9;	/* rdma_err 9: no such error */
		deliver(ep, msg, 20, 0);
		break;
	}
}

