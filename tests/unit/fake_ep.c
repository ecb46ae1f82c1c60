/*
 * The fake endpoint of the client's unit test (fake_ep.h): the ep_*
 * functions of transport/ep.h and the pool of transport/rdma_dev.h over
 * plain memory, with a scripted server behind ep_post_send().
 *
 * It keeps its own account of which keys the server can reach (bound by
 * the client's window binds, revoked by a local or a remote invalidation)
 * and counts as a violation every invalidation of a key that is not bound
 * (rxe would crash on one), every Read of memory not exposed and every
 * message the server would send beyond the receives posted.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rpc/rpc.h>

#include "fake_ep.h"
#include "rpcrdma2_xdr.h"
#include "rpcrdma_xdr.h"
#include "xdr_grow.h"

#define F_CQ 256

/* ------------------------------------------------------------------ */
/* The device: memory windows through the context's ops, a plain pool  */
/* ------------------------------------------------------------------ */

static bool key_unbind(uint32_t key);

unsigned int recv_reserved, fake_connects;
bool fake_refuse;
static struct ibv_context fake_ctx;
static struct ibv_pd fake_pd = { .context = &fake_ctx };
static struct rdma_dev fake_dev;
static uint32_t next_mw_key = 0x100;
int mws_alive, pbufs_alive;

static struct ibv_mw *
fake_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw = calloc(1, sizeof(*mw));

	if (!mw)
		return NULL;
	mw->context = pd->context;
	mw->pd = pd;
	mw->type = type;
	mw->rkey = next_mw_key;		/* the low octet is the tag */
	next_mw_key += 0x100;
	mws_alive++;
	return mw;
}

/* Deallocating a window revokes the key it was bound with. */
static int
fake_dealloc_mw(struct ibv_mw *mw)
{
	(void)key_unbind(mw->rkey);
	mws_alive--;
	free(mw);
	return 0;
}

struct rdma_pbuf *
rdma_pool_get(struct rdma_dev *dev, size_t len)
{
	struct rdma_pbuf *pb = calloc(1, sizeof(*pb));

	if (!pb)
		return NULL;
	pb->buf.len = len < RDMA_POOL_MIN ? RDMA_POOL_MIN : len;
	pb->buf.addr = calloc(1, pb->buf.len);
	pb->buf.mr = calloc(1, sizeof(*pb->buf.mr));
	pb->buf.mr->lkey = 0x77;
	pbufs_alive++;
	return pb;
}

size_t
rdma_pool_class(size_t len)
{
	return len < RDMA_POOL_MIN ? RDMA_POOL_MIN : len;
}

uint64_t rdma_pool_idle_bytes(void) { return 0; }
uint64_t rdma_mem_available(void) { return fake_mem_available; }
uint64_t fake_mem_available = UINT64_MAX;

void
rdma_pool_put(struct rdma_dev *dev, struct rdma_pbuf *pb)
{
	if (!pb)
		return;
	free(pb->buf.addr);
	free(pb->buf.mr);
	free(pb);
	pbufs_alive--;
}

/* ------------------------------------------------------------------ */
/* What the server can reach                                           */
/* ------------------------------------------------------------------ */

static uint32_t bound[F_KEYS];
unsigned int nbound;
static uint32_t local_invs[F_KEYS];	/* keys invalidated locally, in order */
unsigned int nlocal_inv;
unsigned int violations;

/* Where key is among keys[0..n), or n. */
static unsigned int
key_index(const uint32_t *keys, unsigned int n, uint32_t key)
{
	unsigned int i = 0;

	while (i < n && keys[i] != key)
		i++;
	return i;
}

bool
key_bound(uint32_t key)
{
	return key_index(bound, nbound, key) < nbound;
}

static void
key_bind(uint32_t key)
{
	if (!key_bound(key) && nbound < F_KEYS)
		bound[nbound++] = key;
}

/* False when the key was not bound. */
static bool
key_unbind(uint32_t key)
{
	unsigned int i = key_index(bound, nbound, key);

	if (i == nbound)
		return false;
	bound[i] = bound[--nbound];
	return true;
}

bool
was_invalidated_locally(uint32_t key)
{
	return key_index(local_invs, nlocal_inv, key) < nlocal_inv;
}

/* ------------------------------------------------------------------ */
/* The endpoint                                                        */
/* ------------------------------------------------------------------ */

struct ep {
	struct ep_attr attr;
	unsigned int reserved;	/* receives reserved (ep_recv_reserve) */
	int dead;
	bool disconnected;
	uint8_t *recv;
	bool *recv_posted;
	uint8_t *send;
	uint32_t *send_free;
	unsigned int nsend_free;
	uint16_t *send_nwr;
	unsigned int sq_used;
	struct ibv_wc cq[F_CQ];
	unsigned int cq_head, cq_count;
};

static uint32_t fake_send_max = 4096;
struct sockaddr_in fake_addr = { .sin_family = AF_INET };

static void srv_on_call(struct ep *ep, const struct ibv_sge *sge, int nsge);

static void
cq_push(struct ep *ep, const struct ibv_wc *wc)
{
	if (ep->cq_count == F_CQ) {
		violations++;
		return;
	}
	ep->cq[(ep->cq_head + ep->cq_count++) % F_CQ] = *wc;
}

int
ep_connect(const struct sockaddr *dst, const struct sockaddr *src,
	   int timeout_ms, const struct ep_attr *attr, struct ep **out,
	   enum rdma_fail *why)
{
	struct ep *ep;
	unsigned int i;

	if (fake_refuse) {
		*why = RDMA_FAIL_UNREACHABLE;
		return -ECONNREFUSED;
	}
	ep = calloc(1, sizeof(*ep));
	fake_connects++;
	ep->attr = *attr;
	ep->recv = calloc(attr->nrecv, attr->inline_recv);
	ep->recv_posted = calloc(attr->nrecv, sizeof(bool));
	ep->send = calloc(attr->nsend, attr->send_buf_size);
	ep->send_free = calloc(attr->nsend, sizeof(uint32_t));
	ep->send_nwr = calloc(attr->nsend, sizeof(uint16_t));
	for (i = 0; i < attr->nrecv; i++)
		ep->recv_posted[i] = true;
	for (i = attr->nsend; i > 0; i--)
		ep->send_free[ep->nsend_free++] = i - 1;
	*why = RDMA_FAIL_NONE;
	*out = ep;
	return 0;
}

void
ep_disconnect(struct ep *ep)
{
	ep->disconnected = true;
}

void
ep_destroy(struct ep *ep)
{
	recv_reserved -= ep->reserved;
	free(ep->recv);
	free(ep->recv_posted);
	free(ep->send);
	free(ep->send_free);
	free(ep->send_nwr);
	free(ep);
}

/* fork(): the endpoints are the parent's while fake_forked is set. */
bool fake_forked;
unsigned int fake_abandoned;

bool
ep_forked(const struct ep *ep)
{
	return fake_forked;
}

void
ep_abandon(struct ep *ep)
{
	fake_abandoned++;
	ep_destroy(ep);
}

struct rdma_dev *ep_dev(const struct ep *ep) { return &fake_dev; }
uint32_t ep_send_max(const struct ep *ep) { return fake_send_max; }
uint32_t ep_recv_max(const struct ep *ep) { return ep->attr.inline_recv; }
bool ep_rinv(const struct ep *ep) { return true; }
bool ep_rinv_offered(const struct ep *ep) { return true; }
bool ep_peer_pdata(const struct ep *ep) { return true; }
void ep_inline_v2(struct ep *ep) { (void)ep; }
unsigned int ep_nrecv(const struct ep *ep) { return ep->attr.nrecv; }
int ep_comp_fd(const struct ep *ep) { return -1; }
int ep_dead(const struct ep *ep) { return ep->dead; }

const struct sockaddr *
ep_local_addr(const struct ep *ep)
{
	return (const struct sockaddr *)&fake_addr;
}

const struct sockaddr *
ep_peer_addr(const struct ep *ep)
{
	return (const struct sockaddr *)&fake_addr;
}

void
ep_set_dead(struct ep *ep, int err)
{
	if (!ep->dead)
		ep->dead = err ? err : ECONNRESET;
}

uint8_t *
ep_recv_buf(const struct ep *ep, uint32_t i)
{
	return ep->recv + (size_t)i * ep->attr.inline_recv;
}

int
ep_post_recv(struct ep *ep, uint32_t idx)
{
	if (ep->recv_posted[idx])
		violations++;		/* posted twice */
	ep->recv_posted[idx] = true;
	return 0;
}

uint8_t *
ep_send_buf(const struct ep *ep, uint32_t i)
{
	return ep->send + (size_t)i * ep->attr.send_buf_size;
}

uint32_t ep_send_buf_size(const struct ep *ep) { return ep->attr.send_buf_size; }
uint32_t ep_send_lkey(const struct ep *ep, uint32_t i) { return 0x55; }

int
ep_recv_reserve(struct ep *ep, int64_t deadline)
{
	ep->reserved++;
	recv_reserved++;
	return 0;
}

void
ep_recv_unreserve(struct ep *ep, unsigned int n)
{
	if (n > ep->reserved)
		violations++;	/* more given back than taken */
	ep->reserved -= n;
	recv_reserved -= n;
}

/* Nothing signals: sleep as poll() on no descriptor would. */
int
ep_wait(struct ep *ep, int64_t deadline)
{
	int64_t left = deadline - ep_now_ms();

	if (left <= 0)
		return -ETIMEDOUT;
	(void)poll(NULL, 0, (int)left);
	return 0;
}

struct ibv_sge
ep_hdr_sge(const struct ep *ep, uint32_t idx, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ep_send_buf(ep, idx),
		.length = len,
		.lkey = 0x55,
	};

	return sge;
}

int
ep_get_send(struct ep *ep)
{
	if (!ep->nsend_free)
		return -ENOBUFS;
	return (int)ep->send_free[--ep->nsend_free];
}

void
ep_put_send(struct ep *ep, uint32_t idx)
{
	ep->send_free[ep->nsend_free++] = idx;
}

unsigned int ep_nsend_free(const struct ep *ep) { return ep->nsend_free; }

bool
ep_sq_room(const struct ep *ep, unsigned int n)
{
	return ep->sq_used + n <= ep->attr.max_send_wr;
}

int
ep_post_send(struct ep *ep, uint32_t idx, struct ibv_send_wr *pre,
	     unsigned int npre, struct ibv_sge *sge, int nsge,
	     uint32_t inv_rkey, struct rdma_pbuf *const *attach,
	     unsigned int nattach)
{
	struct ibv_wc wc = {
		.wr_id = EP_WRID(EP_WR_SEND, idx),
		.status = IBV_WC_SUCCESS,
	};
	unsigned int i;

	if (ep->dead)
		return -ep->dead;
	if (!ep_sq_room(ep, npre + 1))
		return -EAGAIN;
	for (i = 0; i < npre; i++)
		if (pre[i].opcode == IBV_WR_BIND_MW)
			key_bind(pre[i].bind_mw.rkey);
	ep->sq_used += npre + 1;
	ep->send_nwr[idx] = (uint16_t)(npre + 1);
	cq_push(ep, &wc);
	srv_on_call(ep, sge, nsge);
	return 0;
}

int
ep_post_one(struct ep *ep, struct ibv_send_wr *wr)
{
	struct ibv_wc wc = {
		.wr_id = wr->wr_id,
		.status = IBV_WC_SUCCESS,
	};

	if (ep->dead)
		return -ep->dead;
	if (!ep_sq_room(ep, 1))
		return -EAGAIN;
	ep->sq_used++;
	if (wr->opcode == IBV_WR_LOCAL_INV) {
		if (!key_unbind(wr->invalidate_rkey))
			violations++;	/* invalidated twice */
		if (nlocal_inv < F_KEYS)
			local_invs[nlocal_inv++] = wr->invalidate_rkey;
	}
	cq_push(ep, &wc);
	return 0;
}

int
ep_poll(struct ep *ep, struct ibv_wc *wc, int max)
{
	int n = 0;

	while (n < max && ep->cq_count) {
		wc[n++] = ep->cq[ep->cq_head];
		ep->cq_head = (ep->cq_head + 1) % F_CQ;
		ep->cq_count--;
	}
	return n;
}

bool
ep_reap_send(struct ep *ep, const struct ibv_wc *wc)
{
	enum ep_wr_kind kind = EP_WRID_KIND(wc->wr_id);
	uint32_t idx = EP_WRID_IDX(wc->wr_id);
	unsigned int n = 1;

	if (kind == EP_WR_RECV)
		return false;
	if (wc->status != IBV_WC_SUCCESS)
		ep_set_dead(ep, EIO);
	if (kind == EP_WR_SEND) {
		n = ep->send_nwr[idx];
		ep_put_send(ep, idx);
	}
	ep->sq_used -= n;
	return true;
}

int64_t
ep_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* The scripted server                                                 */
/* ------------------------------------------------------------------ */

struct fake_server srv;

static void
deliver(struct ep *ep, const uint8_t *msg, size_t len, uint32_t inv_rkey)
{
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS };
	unsigned int i;

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

/* An RDMA_MSG reply to a NULL call: header, then the RPC reply. */
static void
srv_reply(struct ep *ep, uint32_t xid, uint32_t inv_rkey)
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
	if (!len) {
		violations++;
		return;
	}
	deliver(ep, msg, (size_t)n + len, inv_rkey);
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
	if (!srv.nheld)
		return;
	srv_reply(ep, srv.held[0], 0);
	memmove(srv.held, srv.held + 1, --srv.nheld * sizeof(srv.held[0]));
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

static void
srv_on_call(struct ep *ep, const struct ibv_sge *sge, int nsge)
{
	struct rpcrdma_hdr h;
	unsigned int c = srv.calls;
	uint32_t inv = 0;
	uint8_t msg[64];
	uint32_t xid, vers;
	ssize_t n;

	if (!rpcrdma_peek_version((const void *)(uintptr_t)sge[0].addr,
				  sge[0].length, &xid, &vers) &&
	    vers == RPCRDMA2_VERSION) {
		/* draft-cel-nfsv4-rpcrdma-version-two-01 s5.2, RFC 8166 s5.5.1 */
		srv.v2_calls++;
		srv.v2_xid = xid;
		n = rpcrdma_encode_error(msg, sizeof(msg), xid, vers,
					 srv.credits, RDMA_ERR_VERS);
		if (!srv.drop_v2 && n > 0)
			deliver(ep, msg, (size_t)n, 0);
		return;
	}
	if (rpcrdma_hdr_decode((const void *)(uintptr_t)sge[0].addr,
			       sge[0].length, &h) || c == F_CALLS) {
		violations++;
		return;
	}
	srv.calls++;
	srv.xid[c] = h.xid;
	srv.reply_key[c] = h.has_reply ? h.reply[0].handle : 0;
	srv.read_key[c] = h.nreads ? h.reads[0].target.handle : 0;
	/* The Read chunk is pulled now: its memory must be reachable. */
	if (h.nreads && !key_bound(h.reads[0].target.handle))
		violations++;
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

void
fake_reset(uint32_t send_max)
{
	memset(&srv, 0, sizeof(srv));
	nbound = nlocal_inv = violations = 0;
	fake_forked = false;
	fake_refuse = false;
	fake_abandoned = 0;
	fake_send_max = send_max;
	fake_ctx.ops.alloc_mw = fake_alloc_mw;
	fake_ctx.ops.dealloc_mw = fake_dealloc_mw;
	fake_dev.pd = &fake_pd;
	fake_dev.mw_type2 = true;
	fake_addr.sin_port = htons(20049);
	fake_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}
