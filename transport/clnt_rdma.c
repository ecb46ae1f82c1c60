/*
 * RPC-over-RDMA Version One client (RFC 8166) behind libtirpc's CLIENT.
 *
 * One call at a time per CLIENT, as libtirpc's clnt_vc does: callers on
 * several threads are serialized by ct_lock.  A call is encoded once into
 * registered memory from the device pool.  When it fits the inline
 * threshold it goes as RDMA_MSG, header and payload gathered in one Send;
 * otherwise as RDMA_NOMSG with a position-zero Read chunk (s4.5.3).  Every
 * call offers a Reply chunk of max_reply octets (s5.3.3: the reply size is
 * not known in advance), so replies of any size up to that work.
 *
 * Memory fencing (s5.4.1, s10.1.3).  Pool memory is registered for local
 * access only.  A call's chunks are exposed through type 2 memory windows
 * bound in the same Send chain and invalidated before the reply is decoded
 * (or remotely, when the server sends With Invalidate: RFC 8797 s4.1); on
 * devices without windows, through a registration made for the call and
 * released before the reply is decoded.  A call that times out keeps its
 * memory (an "orphan" slot) until its late reply arrives, so a slow server
 * can never write into memory reused for another call.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "clnt_rdma.h"
#include "common/log.h"
#include "common/stats.h"
#include "rpcrdma_xdr.h"
#include "xdr_ddp.h"
#include "xdr_grow.h"

/* Room for the serialized call header: xid, direction, rpcvers, prog, vers. */
#define MCALL_MSG_SIZE 24
/* Header send buffers: transport headers only, never payload. */
#define CT_NSEND 8
#define CT_SEND_BUF 1024
/* Call slots: the active call plus timed-out calls still exposed. */
#define CT_SLOTS 3
/* Bound on invalidating a window once the reply is in. */
#define CT_FENCE_MS 5000

enum slot_state {
	SLOT_FREE,
	SLOT_ACTIVE,		/* the call in progress */
	SLOT_ORPHAN,		/* timed out, its reply may still come */
	SLOT_FENCING,		/* reply in, invalidation in flight */
};

/* Memory exposed to the server for one call (one Read or Reply chunk). */
struct ct_window {
	struct ibv_mw *mw;	/* type 2 window; NULL: per-call registration */
	struct ibv_mr *mr;	/* the per-call registration, while exposed */
	uint32_t rkey;		/* the key the server was given */
	bool bound;		/* the server may use rkey right now */
	bool inv_pending;	/* local invalidate posted, not completed */
};

struct ct_slot {
	enum slot_state state;
	uint32_t xid;
	uint64_t orphaned;	/* order in which slots became orphans */
	struct rdma_pbuf *callbuf;	/* the call is encoded here */
	struct rdma_pbuf *replybuf;	/* the Reply chunk */
	struct rdma_pbuf *ddpbuf;	/* the Write chunk, when offered */
	struct ct_window win[3];	/* by CT_WIN_* */
};

enum { CT_WIN_READ, CT_WIN_REPLY, CT_WIN_WRITE, CT_NWIN };

struct ct_rdma {
	pthread_mutex_t ct_lock;
	struct rdma_conn *ct_conn;
	int ct_fd;			/* the socket libtirpc gave us */
	bool ct_closeit;		/* close ct_fd on destroy */
	struct netbuf ct_addr;		/* server address as given */
	struct rpc_err ct_error;
	struct timeval ct_wait;
	bool ct_waitset;		/* ct_wait set by CLSET_TIMEOUT */
	union {
		char ct_mcallc[MCALL_MSG_SIZE];
		uint32_t ct_mcalli;
	} ct_u;
	u_int ct_mpos;			/* octets of ct_mcallc in use */

	/* RFC 8166 s4.3: credits granted by the server, calls in flight. */
	unsigned int ct_granted;
	unsigned int ct_outstanding;
	unsigned int ct_credits_req;

	uint64_t ct_max_reply;		/* the Reply chunk offered */
	uint64_t ct_max_reply_cfg;	/* the same, as configured */
	uint64_t ct_write_chunk;	/* the Write chunk offered, 0: none */
	struct ct_slot ct_slots[CT_SLOTS];
	uint64_t ct_orphans;		/* orphan counter, for ordering */
	uint32_t ct_rep_inv;		/* rkey the reply invalidated, or 0 */

	struct rpcrdma_hdr ct_hdr;	/* scratch: decoded reply header */
	struct rpcrdma_hdr ct_shdr;	/* scratch: call header to encode */
	struct shim_stats_conn *ct_stats;
};

static struct clnt_ops *clnt_rdma_ops(void);

static struct ct_rdma *
ct_of(CLIENT *cl)
{
	return (struct ct_rdma *)cl->cl_private;
}

/* The server may send at most this many replies we have not consumed. */
static unsigned int
ct_window(const struct ct_rdma *ct)
{
	unsigned int w = ct->ct_granted;

	if (w > ct->ct_conn->attr.nrecv)
		w = ct->ct_conn->attr.nrecv;
	return w ? w : 1;
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

/* ------------------------------------------------------------------ */
/* Exposure: memory windows or per-call registrations                  */
/* ------------------------------------------------------------------ */

#define WIN_ID(slot, w) ((uint32_t)((slot) * CT_NWIN + (w)))

/*
 * Expose len octets at addr for one call.  With a memory window this
 * fills *bind (a work request to chain before the Send) and returns 1;
 * with a registration it registers now and returns 0; -errno on failure.
 */
static int
win_expose(struct ct_rdma *ct, unsigned int s, unsigned int w,
	   struct rdma_pbuf *pb, size_t len, int access,
	   struct ibv_send_wr *bind)
{
	struct ct_window *win = &ct->ct_slots[s].win[w];

	if (win->mw) {
		win->rkey = ibv_inc_rkey(win->rkey);
		memset(bind, 0, sizeof(*bind));
		bind->wr_id = RDMA_WRID(RDMA_WR_BIND, WIN_ID(s, w));
		bind->opcode = IBV_WR_BIND_MW;
		bind->bind_mw.mw = win->mw;
		bind->bind_mw.rkey = win->rkey;
		bind->bind_mw.bind_info.mr = pb->buf.mr;
		bind->bind_mw.bind_info.addr = (uintptr_t)pb->buf.addr;
		bind->bind_mw.bind_info.length = len;
		bind->bind_mw.bind_info.mw_access_flags = access;
		/* Bound once the chain with this request is posted. */
		return 1;
	}
	win->mr = ibv_reg_mr(ct->ct_conn->dev->pd, pb->buf.addr, len,
			     IBV_ACCESS_LOCAL_WRITE | access);
	if (!win->mr)
		return errno ? -errno : -ENOMEM;
	win->rkey = win->mr->rkey;
	win->bound = true;
	return 0;
}

/*
 * Start fencing a window: a local invalidate for a memory window (its
 * completion clears inv_pending), deregistration for a registration.
 */
static int
win_fence(struct ct_rdma *ct, unsigned int s, unsigned int w)
{
	struct ct_window *win = &ct->ct_slots[s].win[w];
	struct ibv_send_wr wr;
	int ret;

	if (!win->bound || win->inv_pending)
		return 0;
	if (!win->mw) {
		if (win->mr && ibv_dereg_mr(win->mr))
			return -EIO;
		win->mr = NULL;
		win->bound = false;
		return 0;
	}
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = RDMA_WRID(RDMA_WR_LOCAL_INV, WIN_ID(s, w));
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = win->rkey;
	ret = rdma_conn_post_one(ct->ct_conn, &wr);
	if (ret == 0)
		win->inv_pending = true;
	return ret;
}

/*
 * The key a Send With Invalidate revoked, or 0.  rxe (Linux 6.1) reports
 * it with the kernel's flag value, which reads as IBV_WC_IP_CSUM_OK in
 * user space; on a reliable-connected receive that flag means nothing
 * else.  Only a key this client exposed is ever taken from it.
 */
static uint32_t
wc_invalidated(const struct ibv_wc *wc)
{
	if (wc->wc_flags & (IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK))
		return wc->invalidated_rkey;
	return 0;
}

/* The server invalidated rkey with its Send (RFC 8797 s4.1). */
static void
slot_remote_inv(struct ct_slot *slot, uint32_t rkey)
{
	unsigned int w;

	for (w = 0; w < CT_NWIN; w++)
		if (rkey && slot->win[w].mw && slot->win[w].bound &&
		    slot->win[w].rkey == rkey)
			slot->win[w].bound = false;
}

static bool
slot_exposed(const struct ct_slot *slot)
{
	unsigned int w;

	for (w = 0; w < CT_NWIN; w++)
		if (slot->win[w].bound)
			return true;
	return false;
}

/* Fence what is still exposed; the slot is free once nothing is. */
static int
slot_fence(struct ct_rdma *ct, unsigned int s)
{
	struct ct_slot *slot = &ct->ct_slots[s];
	unsigned int w;
	int ret;

	for (w = 0; w < CT_NWIN; w++) {
		ret = win_fence(ct, s, w);
		if (ret)
			return ret;
	}
	slot->state = slot_exposed(slot) ? SLOT_FENCING : SLOT_FREE;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Completions                                                         */
/* ------------------------------------------------------------------ */

/* Connection-manager events: only a disconnect matters once connected. */
static void
ct_cm_events(struct ct_rdma *ct)
{
	struct rdma_cm_event *ev;

	for (;;) {
		if (rdma_get_cm_event(ct->ct_conn->ech, &ev)) {
			/*
			 * Anything but "no event" (EACCES once the process
			 * changed its credentials) leaves the channel
			 * readable for good: the connection is unusable.
			 */
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				rdma_conn_set_dead(ct->ct_conn, errno);
			break;
		}
		shim_log(SHIM_LOG_DEBUG, "client: %s", rdma_event_str(ev->event));
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			rdma_conn_set_dead(ct->ct_conn, ECONNRESET);
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

/* A reply-sized buffer came back to us: account for it (s4.3.1). */
static void
ct_reply_arrived(struct ct_rdma *ct, uint32_t credits)
{
	if (ct->ct_outstanding)
		ct->ct_outstanding--;
	/* s4.3.1: a granted value of zero is invalid; never deadlock on it. */
	ct->ct_granted = credits ? credits : 1;
	if (ct->ct_stats && ct->ct_stats->credits != ct->ct_granted)
		__atomic_store_n(&ct->ct_stats->credits, ct->ct_granted,
				 __ATOMIC_RELAXED);
}

/* A reply to a call that timed out: fence that call's memory now. */
static void
ct_late_reply(struct ct_rdma *ct, uint32_t xid, uint32_t inv_rkey)
{
	unsigned int s;

	for (s = 0; s < CT_SLOTS; s++) {
		struct ct_slot *slot = &ct->ct_slots[s];

		if (slot->state == SLOT_ORPHAN && slot->xid == xid) {
			slot_remote_inv(slot, inv_rkey);
			if (slot_fence(ct, s))
				rdma_conn_set_dead(ct->ct_conn, EIO);
			return;
		}
	}
}

/*
 * Handle one completion.  Returns 1 when it is the reply to 'xid' (only
 * when 'match'; its receive buffer index in *idx, length in *len, header
 * in ct->ct_hdr, remotely invalidated rkey in ct->ct_rep_inv), 0 when it
 * was something else, -1 when the connection failed.
 */
static int
ct_completion(struct ct_rdma *ct, const struct ibv_wc *wc, bool match,
	      uint32_t xid, uint32_t *idx, uint32_t *len)
{
	struct rdma_conn *c = ct->ct_conn;
	uint32_t i, inv;
	int ret;

	if (RDMA_WRID_KIND(wc->wr_id) == RDMA_WR_LOCAL_INV) {
		uint32_t id = RDMA_WRID_IDX(wc->wr_id);
		struct ct_slot *slot = &ct->ct_slots[id / CT_NWIN];
		struct ct_window *win = &slot->win[id % CT_NWIN];

		win->inv_pending = false;
		if (wc->status == IBV_WC_SUCCESS)
			win->bound = false;
		if (slot->state == SLOT_FENCING && !slot_exposed(slot))
			slot->state = SLOT_FREE;
	}
	if (rdma_conn_reap_send(c, wc))
		return c->dead ? -1 : 0;

	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			shim_log(SHIM_LOG_WARN, "client: receive failed: %s",
				 ibv_wc_status_str(wc->status));
		rdma_conn_set_dead(c, ECONNRESET);
		return -1;
	}

	i = RDMA_WRID_IDX(wc->wr_id);
	inv = wc_invalidated(wc);
	ret = rpcrdma_hdr_decode(rdma_conn_recv_buf(c, i), wc->byte_len,
				 &ct->ct_hdr);
	if (ret == -EMSGSIZE) {
		/* Not even an XID: nothing to match it with (s5.5). */
		shim_log(SHIM_LOG_WARN, "client: dropped a %u-octet message",
			 wc->byte_len);
		return rdma_conn_post_recv(c, i) ? -1 : 0;
	}
	if (match && ct->ct_hdr.xid == xid) {
		*idx = i;
		*len = wc->byte_len;
		ct->ct_rep_inv = inv;
		/* A malformed reply still completes its call, with an error. */
		if (ret < 0)
			ct->ct_hdr.proc = UINT32_MAX;
		return 1;
	}
	/* A reply to a call that timed out earlier: it returns its credit. */
	shim_log(SHIM_LOG_DEBUG, "client: late reply xid 0x%08x dropped",
		 ct->ct_hdr.xid);
	ct_reply_arrived(ct, ret == 0 ? ct->ct_hdr.credits : ct->ct_granted);
	ct_late_reply(ct, ct->ct_hdr.xid, inv);
	return rdma_conn_post_recv(c, i) ? -1 : 0;
}

enum ct_until {
	CT_UNTIL_REPLY,		/* the reply to xid */
	CT_UNTIL_ROOM,		/* a credit, a header buffer, send queue room */
	CT_UNTIL_FENCED,	/* slot xid (an index here) fully fenced */
	CT_UNTIL_SLOT,		/* any slot free */
};

static bool
ct_done(struct ct_rdma *ct, enum ct_until until, uint32_t arg)
{
	struct rdma_conn *c = ct->ct_conn;
	unsigned int s;

	switch (until) {
	case CT_UNTIL_ROOM:
		return ct->ct_outstanding < ct_window(ct) && c->nsend_free &&
		       c->sq_used + 4 <= c->attr.max_send_wr;
	case CT_UNTIL_FENCED:
		return !slot_exposed(&ct->ct_slots[arg]);
	case CT_UNTIL_SLOT:
		for (s = 0; s < CT_SLOTS; s++)
			if (ct->ct_slots[s].state == SLOT_FREE)
				return true;
		return false;
	default:
		return false;
	}
}

/*
 * Process completions, sleeping on the completion and CM channels, until
 * the condition holds, the deadline passes or the connection fails.
 * Returns RPC_SUCCESS, RPC_TIMEDOUT or RPC_CANTRECV.
 *
 * Completions are taken one at a time: a reply found must be the last one
 * consumed, since its header lives in ct->ct_hdr.
 */
static enum clnt_stat
ct_wait(struct ct_rdma *ct, enum ct_until until, uint32_t xid,
	int64_t deadline, uint32_t *idx, uint32_t *len)
{
	struct rdma_conn *c = ct->ct_conn;
	struct ibv_wc wc;
	int n, ret;

	for (;;) {
		if (until != CT_UNTIL_REPLY && ct_done(ct, until, xid))
			return RPC_SUCCESS;
		n = rdma_conn_poll(c, &wc, 1);
		if (n < 0) {
			rdma_conn_set_dead(c, EIO);
			return RPC_CANTRECV;
		}
		if (n > 0) {
			ret = ct_completion(ct, &wc, until == CT_UNTIL_REPLY,
					    xid, idx, len);
			if (ret < 0)
				return RPC_CANTRECV;
			if (ret > 0)
				return RPC_SUCCESS;
			continue;
		}
		if (c->dead)
			return RPC_CANTRECV;

		{
			struct pollfd pfd[2] = {
				{ .fd = c->cch->fd, .events = POLLIN },
				{ .fd = c->ech->fd, .events = POLLIN },
			};
			int64_t left = deadline - rdma_now_ms();

			if (left <= 0)
				return RPC_TIMEDOUT;
			ret = poll(pfd, 2, (int)(left > 60000 ? 60000 : left));
			if (ret < 0 && errno != EINTR) {
				rdma_conn_set_dead(c, errno);
				return RPC_CANTRECV;
			}
			if (ret > 0 && pfd[1].revents)
				ct_cm_events(ct);
		}
	}
}

/*
 * RFC 8166 s5.5.4: memory that cannot be invalidated is fenced by closing
 * the connection.  Waits for the slot's invalidations, bounded.
 */
static bool
ct_fence_now(struct ct_rdma *ct, unsigned int s)
{
	uint32_t idx, len;

	if (slot_fence(ct, s) == 0 &&
	    ct_wait(ct, CT_UNTIL_FENCED, s, rdma_now_ms() + CT_FENCE_MS, &idx,
		    &len) == RPC_SUCCESS) {
		ct->ct_slots[s].state = SLOT_FREE;
		return true;
	}
	shim_log(SHIM_LOG_WARN,
		 "client: cannot invalidate a call's memory, closing the connection");
	rdma_conn_set_dead(ct->ct_conn, EIO);
	rdma_conn_disconnect(ct->ct_conn);
	ct->ct_slots[s].state = SLOT_FREE;
	return false;
}

/* A free slot for the next call: the oldest orphan is fenced if needed. */
static int
ct_get_slot(struct ct_rdma *ct, int64_t deadline)
{
	unsigned int s, oldest = CT_SLOTS;
	uint32_t idx, len;

	for (s = 0; s < CT_SLOTS; s++)
		if (ct->ct_slots[s].state == SLOT_FREE)
			return (int)s;
	/* Invalidations already under way finish quickly. */
	for (s = 0; s < CT_SLOTS; s++)
		if (ct->ct_slots[s].state == SLOT_FENCING)
			break;
	if (s < CT_SLOTS &&
	    ct_wait(ct, CT_UNTIL_SLOT, 0, deadline, &idx, &len) == RPC_SUCCESS)
		return ct_get_slot(ct, deadline);
	for (s = 0; s < CT_SLOTS; s++)
		if (ct->ct_slots[s].state == SLOT_ORPHAN &&
		    (oldest == CT_SLOTS ||
		     ct->ct_slots[s].orphaned < ct->ct_slots[oldest].orphaned))
			oldest = s;
	if (oldest == CT_SLOTS)
		return -1;
	/*
	 * Give up on the oldest timed-out call: its memory is invalidated,
	 * and a reply the server still writes there fails on its side.
	 */
	if (!ct_fence_now(ct, oldest))
		return -1;
	return (int)oldest;
}

/* ------------------------------------------------------------------ */
/* Encoding                                                            */
/* ------------------------------------------------------------------ */

struct ct_grow_ctx {
	struct ct_rdma *ct;
	struct ct_slot *slot;
};

/* Move the call being encoded into a bigger pool buffer. */
static bool
ct_callbuf_grow(struct xdr_grow *g, size_t need)
{
	struct ct_grow_ctx *gc = g->ctx;
	struct rdma_dev *dev = gc->ct->ct_conn->dev;
	struct rdma_pbuf *nb = rdma_pool_get(dev, need);

	if (!nb)
		return false;
	memcpy(nb->buf.addr, g->buf, g->len);
	rdma_pool_put(dev, gc->slot->callbuf);
	gc->slot->callbuf = nb;
	g->buf = nb->buf.addr;
	g->cap = nb->buf.len;
	return true;
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

/* ------------------------------------------------------------------ */
/* clnt_ops                                                            */
/* ------------------------------------------------------------------ */

static enum clnt_stat
ct_fail(struct ct_rdma *ct, enum clnt_stat st, int err)
{
	ct->ct_error.re_status = st;
	ct->ct_error.re_errno = err;
	return st;
}

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
 * in the Reply chunk (RDMA_NOMSG, s4.5.3).  Returns false for a reply
 * that does not fit what this call offered.
 */
static bool
ct_reply_payload(struct ct_rdma *ct, const struct ct_slot *slot, uint32_t ridx,
		 uint32_t rlen, uint8_t **buf, uint32_t *len, uint32_t *ddp_len)
{
	const struct rpcrdma_hdr *h = &ct->ct_hdr;
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
			return false;
		*ddp_len = h->wsegs[0].length;
	} else {
		for (i = 0; i < h->nwsegs; i++)
			if (h->wsegs[i].length)
				return false;
	}
	if (h->proc == RDMA_MSG) {
		*buf = rdma_conn_recv_buf(ct->ct_conn, ridx) + h->hdrlen;
		*len = rlen - (uint32_t)h->hdrlen;
		return true;
	}
	/* RDMA_NOMSG: the Reply chunk we offered, with the lengths written. */
	if (!h->has_reply || h->nreply != 1 ||
	    h->reply[0].handle != slot->win[CT_WIN_REPLY].rkey ||
	    h->reply[0].offset != (uintptr_t)slot->replybuf->buf.addr)
		return false;
	for (i = 0; i < h->nreply; i++)
		total += h->reply[i].length;
	if (total > ct->ct_max_reply)
		return false;
	*buf = slot->replybuf->buf.addr;
	*len = (uint32_t)total;
	return true;
}

/* Expose the slot's memory and send the call.  Returns 0 or -errno. */
static int
ct_send_call(struct ct_rdma *ct, unsigned int s, uint32_t xid, size_t len,
	     int64_t deadline)
{
	struct rdma_conn *c = ct->ct_conn;
	struct ct_slot *slot = &ct->ct_slots[s];
	bool long_call = ct_msg_hdr_len(ct) + len > c->send_max;
	struct ibv_send_wr binds[CT_NWIN];
	struct ibv_sge sge[2];
	unsigned int nbinds = 0;
	uint32_t idx, rlen;
	ssize_t hdrlen;
	int sidx, ret;

	ret = win_expose(ct, s, CT_WIN_REPLY, slot->replybuf, ct->ct_max_reply,
			 IBV_ACCESS_REMOTE_WRITE, &binds[nbinds]);
	if (ret < 0)
		return ret;
	nbinds += (unsigned int)ret;
	if (long_call) {
		ret = win_expose(ct, s, CT_WIN_READ, slot->callbuf, len,
				 IBV_ACCESS_REMOTE_READ, &binds[nbinds]);
		if (ret < 0)
			return ret;
		nbinds += (unsigned int)ret;
	}
	if (ct->ct_write_chunk) {
		ret = win_expose(ct, s, CT_WIN_WRITE, slot->ddpbuf,
				 ct->ct_write_chunk, IBV_ACCESS_REMOTE_WRITE,
				 &binds[nbinds]);
		if (ret < 0)
			return ret;
		nbinds += (unsigned int)ret;
	}

	for (;;) {
		sidx = rdma_conn_get_send(c);
		if (sidx >= 0)
			break;
		if (ct_wait(ct, CT_UNTIL_ROOM, 0, deadline, &idx, &rlen) !=
		    RPC_SUCCESS)
			return c->dead ? -c->dead : -ETIMEDOUT;
	}
	hdrlen = ct_encode_header(ct, rdma_conn_send_buf(c, (uint32_t)sidx), xid,
				  slot, len, long_call);
	if (hdrlen < 0) {
		rdma_conn_put_send(c, (uint32_t)sidx);
		return (int)hdrlen;
	}
	sge[0] = rdma_conn_hdr_sge(c, (uint32_t)sidx, (uint32_t)hdrlen);
	sge[1].addr = (uintptr_t)slot->callbuf->buf.addr;
	sge[1].length = (uint32_t)len;
	sge[1].lkey = slot->callbuf->buf.mr->lkey;
	for (;;) {
		ret = rdma_conn_post_send(c, (uint32_t)sidx, binds, nbinds, sge,
					  long_call ? 1 : 2, 0, NULL);
		if (ret != -EAGAIN)
			break;
		if (ct_wait(ct, CT_UNTIL_ROOM, 0, deadline, &idx, &rlen) !=
		    RPC_SUCCESS) {
			ret = c->dead ? -c->dead : -ETIMEDOUT;
			break;
		}
	}
	if (ret) {
		rdma_conn_put_send(c, (uint32_t)sidx);
		return ret;
	}
	/*
	 * A type 2 window bound through the send queue keeps its key in the
	 * application's ibv_mw: the next bind names it as the current key.
	 */
	for (ret = 0; ret < CT_NWIN; ret++) {
		struct ct_window *win = &slot->win[ret];

		if (win->mw && (ret == CT_WIN_REPLY || (ret == CT_WIN_READ && long_call) ||
				(ret == CT_WIN_WRITE && ct->ct_write_chunk))) {
			win->mw->rkey = win->rkey;
			win->bound = true;
		}
	}
	slot->state = SLOT_ACTIVE;
	slot->xid = xid;
	ct->ct_outstanding++;
	SHIM_STATS_ADD(ct->ct_stats, bytes_out, len);
	if (long_call)
		SHIM_STATS_ADD(ct->ct_stats, long_out, 1);
	return 0;
}

/* The call was sent but its reply will not be waited for. */
static void
ct_orphan(struct ct_rdma *ct, unsigned int s)
{
	ct->ct_slots[s].state = slot_exposed(&ct->ct_slots[s]) ? SLOT_ORPHAN :
								 SLOT_FREE;
	ct->ct_slots[s].orphaned = ++ct->ct_orphans;
}

static enum clnt_stat
clnt_rdma_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xdr_args, void *args_ptr,
	       xdrproc_t xdr_results, void *results_ptr, struct timeval timeout)
{
	struct ct_rdma *ct = ct_of(cl);
	struct rdma_conn *c = ct->ct_conn;
	uint32_t *msg_x_id = &ct->ct_u.ct_mcalli;
	struct rdma_dev *dev = c->dev;
	int refreshes = 2;
	enum clnt_stat st;
	struct ct_slot *slot;
	int64_t deadline;
	uint32_t x_id, ridx = 0, rlen = 0, plen, ddp_len;
	uint8_t *payload;
	bool refresh;
	int s, ret;

	pthread_mutex_lock(&ct->ct_lock);
	if (!ct->ct_waitset && !time_not_ok(&timeout))
		ct->ct_wait = timeout;

call_again:
	memset(&ct->ct_error, 0, sizeof(ct->ct_error));
	if (c->dead) {
		st = ct_fail(ct, RPC_CANTSEND, c->dead);
		goto out;
	}
	deadline = rdma_now_ms() + tv_ms(&ct->ct_wait);

	/* s4.3.3, s4.3.1: never more calls in flight than granted. */
	st = ct_wait(ct, CT_UNTIL_ROOM, 0, deadline, &ridx, &rlen);
	if (st != RPC_SUCCESS) {
		st = ct_fail(ct, st, st == RPC_TIMEDOUT ? 0 : c->dead);
		goto out;
	}
	s = ct_get_slot(ct, deadline);
	if (s < 0) {
		st = ct_fail(ct, c->dead ? RPC_CANTSEND : RPC_TIMEDOUT, c->dead);
		goto out;
	}
	slot = &ct->ct_slots[s];
	if (!slot->callbuf)
		slot->callbuf = rdma_pool_get(dev, RDMA_POOL_MIN);
	if (!slot->replybuf)
		slot->replybuf = rdma_pool_get(dev, ct->ct_max_reply);
	if (ct->ct_write_chunk && !slot->ddpbuf)
		slot->ddpbuf = rdma_pool_get(dev, ct->ct_write_chunk);
	if (!slot->callbuf || !slot->replybuf ||
	    (ct->ct_write_chunk && !slot->ddpbuf)) {
		shim_log(SHIM_LOG_WARN,
			 "client: cannot register %llu octets for replies (memlock limit?)",
			 (unsigned long long)ct->ct_max_reply);
		st = ct_fail(ct, RPC_CANTSEND, ENOMEM);
		goto out;
	}

	/* Same XID sequence as clnt_vc: decrement the stored word. */
	x_id = ntohl(--(*msg_x_id));

	{
		struct ct_grow_ctx gc = { .ct = ct, .slot = slot };
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
		    !AUTH_WRAP(cl->cl_auth, &xdrs, xdr_args, args_ptr)) {
			st = ct_fail(ct, RPC_CANTENCODEARGS,
				     g.overflow ? EMSGSIZE : 0);
			goto out;
		}
		ret = ct_send_call(ct, (unsigned int)s, x_id, g.len, deadline);
		if (ret) {
			/* Nothing reached the server: nothing stays exposed. */
			ct_fence_now(ct, (unsigned int)s);
			st = ct_fail(ct, ret == -ETIMEDOUT ? RPC_TIMEDOUT :
				     RPC_CANTSEND, -ret);
			goto out;
		}
	}

	/*
	 * As clnt_vc: a batched call (no results, zero timeout) succeeds
	 * without waiting; any call with a zero timeout is "message passing"
	 * and times out at once.  Their replies, if any, come as late ones.
	 */
	if (timeout.tv_sec == 0 && timeout.tv_usec == 0) {
		ct_orphan(ct, (unsigned int)s);
		st = ct_fail(ct, xdr_results == NULL ? RPC_SUCCESS : RPC_TIMEDOUT,
			     0);
		goto out;
	}

	st = ct_wait(ct, CT_UNTIL_REPLY, x_id, deadline, &ridx, &rlen);
	if (st != RPC_SUCCESS) {
		if (st == RPC_TIMEDOUT)
			ct_orphan(ct, (unsigned int)s);
		else
			slot->state = SLOT_FREE;	/* the QP is gone */
		st = ct_fail(ct, st, st == RPC_TIMEDOUT ? 0 : c->dead);
		goto out;
	}

	ct_reply_arrived(ct, ct->ct_hdr.credits);
	/* s5.4.1: nothing of this call stays reachable once it returns. */
	slot_remote_inv(slot, ct->ct_rep_inv);
	if (!ct_fence_now(ct, (unsigned int)s)) {
		(void)rdma_conn_post_recv(c, ridx);
		st = ct_fail(ct, RPC_CANTRECV, EIO);
		goto out;
	}

	refresh = false;
	switch (ct->ct_hdr.proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
		if (!ct_reply_payload(ct, slot, ridx, rlen, &payload, &plen,
				      &ddp_len)) {
			shim_log(SHIM_LOG_WARN,
				 "client: reply to xid 0x%08x does not match the chunks offered",
				 x_id);
			st = ct_fail(ct, RPC_CANTDECODERES, EBADMSG);
			break;
		}
		if (ddp_len)
			shim_log(SHIM_LOG_DEBUG,
				 "client: xid 0x%08x: %u octets of the result came in the Write chunk",
				 x_id, ddp_len);
		SHIM_STATS_ADD(ct->ct_stats, bytes_in, plen + ddp_len);
		if (ct->ct_hdr.proc == RDMA_NOMSG || ddp_len)
			SHIM_STATS_ADD(ct->ct_stats, long_in, 1);
		st = ct_decode_reply(cl, ct, x_id, payload, plen,
				     ddp_len ? slot->ddpbuf->buf.addr : NULL,
				     ddp_len, xdr_results, results_ptr,
				     &refreshes, &refresh);
		break;
	case RDMA_ERROR:
		/* s5.5: RDMA_ERROR completes this XID's call. */
		SHIM_STATS_ADD(ct->ct_stats, rdma_errors, 1);
		if (ct->ct_hdr.err == RDMA_ERR_VERS) {
			shim_log(SHIM_LOG_WARN,
				 "client: server answered RDMA_ERROR (ERR_VERS %u..%u) to xid 0x%08x",
				 ct->ct_hdr.vers_low, ct->ct_hdr.vers_high, x_id);
			st = ct_fail(ct, RPC_CANTRECV, EPROTONOSUPPORT);
		} else {
			shim_log(SHIM_LOG_WARN,
				 "client: server answered RDMA_ERROR (BADHEADER) to xid 0x%08x: no reply is possible; a reply above max_reply (%llu octets) or a call above the server's max_call gives this",
				 x_id, (unsigned long long)ct->ct_max_reply_cfg);
			st = ct_fail(ct, RPC_CANTRECV, EMSGSIZE);
		}
		break;
	default:
		shim_log(SHIM_LOG_WARN,
			 "client: malformed reply (%s) to xid 0x%08x",
			 rpcrdma_proc_name(ct->ct_hdr.proc), x_id);
		st = ct_fail(ct, RPC_CANTDECODERES, EBADMSG);
		break;
	}
	if (rdma_conn_post_recv(c, ridx)) {
		st = ct_fail(ct, RPC_CANTRECV, c->dead);
		goto out;
	}
	if (refresh)
		goto call_again;

out:
	SHIM_STATS_ADD(ct->ct_stats, calls, 1);
	if (st == RPC_TIMEDOUT)
		SHIM_STATS_ADD(ct->ct_stats, timeouts, 1);
	else if (st != RPC_SUCCESS)
		SHIM_STATS_ADD(ct->ct_stats, errors, 1);
	pthread_mutex_unlock(&ct->ct_lock);
	return st;
}

static void
clnt_rdma_geterr(CLIENT *cl, struct rpc_err *errp)
{
	*errp = ct_of(cl)->ct_error;
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
	bool_t ret = TRUE;

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
	pthread_mutex_unlock(&ct->ct_lock);
	return ret;
}

static void
ct_free(struct ct_rdma *ct)
{
	unsigned int s, w;

	shim_stats_close(ct->ct_stats);
	if (ct->ct_conn) {
		struct rdma_dev *dev = ct->ct_conn->dev;

		rdma_conn_disconnect(ct->ct_conn);
		/*
		 * Windows and buffers belong to the device's protection
		 * domain, which the connection holds: release them first.
		 * Deallocating a window (or a registration) revokes it.
		 */
		for (s = 0; s < CT_SLOTS; s++) {
			struct ct_slot *slot = &ct->ct_slots[s];

			for (w = 0; w < CT_NWIN; w++) {
				if (slot->win[w].mw)
					ibv_dealloc_mw(slot->win[w].mw);
				if (slot->win[w].mr)
					ibv_dereg_mr(slot->win[w].mr);
			}
			rdma_pool_put(dev, slot->callbuf);
			rdma_pool_put(dev, slot->replybuf);
			rdma_pool_put(dev, slot->ddpbuf);
		}
		rdma_conn_destroy(ct->ct_conn);
	}
	free(ct->ct_addr.buf);
	pthread_mutex_destroy(&ct->ct_lock);
	free(ct);
}

static void
clnt_rdma_destroy(CLIENT *cl)
{
	struct ct_rdma *ct = ct_of(cl);

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

void
clnt_rdma_publish(CLIENT *cl, rpcprog_t prog, rpcvers_t vers)
{
	struct ct_rdma *ct = ct_of(cl);
	struct rdma_conn *c = ct->ct_conn;
	struct shim_stats_conn *s;

	s = shim_stats_open(SHIM_STATS_CLIENT, SHIM_STATS_RDMA,
			    rdma_get_peer_addr(c->id), rdma_get_local_addr(c->id));
	if (!s)
		return;
	s->prog = (uint32_t)prog;
	s->vers = (uint32_t)vers;
	s->inline_send = c->send_max;
	s->inline_recv = c->recv_max;
	s->credits = ct->ct_granted;
	s->rinv = c->rinv;
	s->peer_pdata = c->peer_pd_valid;
	ct->ct_stats = s;
	shim_stats_publish(s);
}

bool
clnt_is_rdma(const CLIENT *cl)
{
	return cl && cl->cl_ops == clnt_rdma_ops();
}

void
clnt_rdma_info(CLIENT *cl, struct rdma_conn_info *info)
{
	struct ct_rdma *ct = ct_of(cl);

	pthread_mutex_lock(&ct->ct_lock);
	info->send_max = ct->ct_conn->send_max;
	info->recv_max = ct->ct_conn->recv_max;
	info->credits = ct->ct_granted;
	info->rinv = ct->ct_conn->rinv;
	info->peer_pdata = ct->ct_conn->peer_pd_valid;
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

CLIENT *
clnt_rdma_create(int fd, const struct netbuf *raddr, const struct sockaddr *dst,
		 rpcprog_t prog, rpcvers_t vers, u_int sendsz, u_int recvsz,
		 const struct clnt_rdma_params *p, enum rdma_fail *why, int *err)
{
	struct rdma_conn_attr attr = {
		.inline_send = p->inline_send,
		.inline_recv = p->inline_recv,
		.nrecv = p->credits,
		.nsend = CT_NSEND,
		.send_buf_size = CT_SEND_BUF,
		/* Per call: two binds and a Send, then two invalidations. */
		.max_send_wr = CT_NSEND + 8 * CT_SLOTS,
		.remote_inv = p->remote_inv,
	};
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	const struct sockaddr *src = NULL;
	struct rpc_msg call_msg;
	struct ct_rdma *ct;
	CLIENT *cl;
	XDR xdrs;

	/* Keep a bound local port of the socket (see rdma_conn_connect). */
	if (getsockname(fd, (struct sockaddr *)&local, &llen) == 0 &&
	    local.ss_family == dst->sa_family &&
	    ((local.ss_family == AF_INET &&
	      ((struct sockaddr_in *)&local)->sin_port) ||
	     (local.ss_family == AF_INET6 &&
	      ((struct sockaddr_in6 *)&local)->sin6_port)))
		src = (struct sockaddr *)&local;

	cl = calloc(1, sizeof(*cl));
	ct = calloc(1, sizeof(*ct));
	if (!cl || !ct)
		goto out_nomem;
	pthread_mutex_init(&ct->ct_lock, NULL);
	ct->ct_fd = fd;
	ct->ct_addr.buf = malloc(raddr->len);
	if (!ct->ct_addr.buf)
		goto out_nomem;
	memcpy(ct->ct_addr.buf, raddr->buf, raddr->len);
	ct->ct_addr.len = ct->ct_addr.maxlen = raddr->len;

	ct->ct_conn = rdma_conn_connect(dst, src, p->connect_timeout_ms, &attr,
					why, err);
	if (!ct->ct_conn)
		goto out_free;
	/*
	 * The Reply chunk covers the largest reply accepted: max_reply, or
	 * the recvsz the program asked for when that is larger.
	 */
	ct->ct_max_reply_cfg = recvsz > p->max_reply ? recvsz : p->max_reply;
	ct->ct_max_reply = ct->ct_max_reply_cfg + RDMA_MSG_HDR_SLACK;
	ct->ct_write_chunk = p->write_chunk > UINT32_MAX ? UINT32_MAX :
			     p->write_chunk;
	if (ct->ct_max_reply > UINT32_MAX)
		ct->ct_max_reply = UINT32_MAX;

	/* One read and one reply window per slot, where the device has them. */
	if (ct->ct_conn->dev->mw_type2) {
		unsigned int s, w;

		for (s = 0; s < CT_SLOTS; s++) {
			for (w = 0; w < CT_NWIN; w++) {
				struct ct_window *win = &ct->ct_slots[s].win[w];

				if (w == CT_WIN_WRITE && !ct->ct_write_chunk)
					continue;

				win->mw = ibv_alloc_mw(ct->ct_conn->dev->pd,
						       IBV_MW_TYPE_2);
				if (!win->mw)
					goto out_mw;
				win->rkey = win->mw->rkey;
			}
		}
	}

windows_done:
	/*
	 * The first call's memory now: a process whose locked-memory limit
	 * cannot hold max_reply falls back to TCP here rather than fail
	 * every call.
	 */
	ct->ct_slots[0].callbuf = rdma_pool_get(ct->ct_conn->dev, RDMA_POOL_MIN);
	ct->ct_slots[0].replybuf = rdma_pool_get(ct->ct_conn->dev,
						 ct->ct_max_reply);
	if (ct->ct_write_chunk)
		ct->ct_slots[0].ddpbuf = rdma_pool_get(ct->ct_conn->dev,
						       ct->ct_write_chunk);
	if (!ct->ct_slots[0].callbuf || !ct->ct_slots[0].replybuf ||
	    (ct->ct_write_chunk && !ct->ct_slots[0].ddpbuf)) {
		struct rlimit rl;

		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			shim_log(SHIM_LOG_WARN,
				 "client: cannot register %llu octets for replies: the locked-memory limit is %llu KiB (ulimit -l); lower max_reply or raise the limit",
				 (unsigned long long)ct->ct_max_reply,
				 (unsigned long long)rl.rlim_cur / 1024);
		else
			shim_log(SHIM_LOG_WARN,
				 "client: cannot register %llu octets for replies",
				 (unsigned long long)ct->ct_max_reply);
		*why = RDMA_FAIL_MEMLOCK;
		*err = ENOMEM;
		goto out_free;
	}
	ct->ct_granted = 1;	/* s4.3.3: one credit until a reply says more */
	ct->ct_credits_req = p->credits;

	/* Serialize the constant part of the call header once. */
	memset(&call_msg, 0, sizeof(call_msg));
	call_msg.rm_xid = initial_xid();
	call_msg.rm_direction = CALL;
	call_msg.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	call_msg.rm_call.cb_prog = (uint32_t)prog;
	call_msg.rm_call.cb_vers = (uint32_t)vers;
	xdrmem_create(&xdrs, ct->ct_u.ct_mcallc, MCALL_MSG_SIZE, XDR_ENCODE);
	if (!xdr_callhdr(&xdrs, &call_msg)) {
		*why = RDMA_FAIL_ERROR;
		*err = EINVAL;
		goto out_free;
	}
	ct->ct_mpos = XDR_GETPOS(&xdrs);
	XDR_DESTROY(&xdrs);

	cl->cl_ops = clnt_rdma_ops();
	cl->cl_private = ct;
	cl->cl_auth = authnone_create();
	cl->cl_netid = NULL;
	cl->cl_tp = NULL;
	(void)sendsz;
	return cl;

out_mw:
	/*
	 * Without windows for every slot, per-call registrations serve, but
	 * those keys must never be invalidated remotely (rxe breaks the
	 * connection): only go on if we did not advertise R.
	 */
	if (!ct->ct_conn->local_pd.remote_inv) {
		unsigned int s, w;

		for (s = 0; s < CT_SLOTS; s++)
			for (w = 0; w < CT_NWIN; w++)
				if (ct->ct_slots[s].win[w].mw) {
					ibv_dealloc_mw(ct->ct_slots[s].win[w].mw);
					ct->ct_slots[s].win[w].mw = NULL;
				}
		shim_log(SHIM_LOG_DEBUG,
			 "client: no memory windows, registering per call");
		goto windows_done;
	}
	*why = RDMA_FAIL_ERROR;
	*err = ENOMEM;
	goto out_free;
out_nomem:
	*why = RDMA_FAIL_ERROR;
	*err = ENOMEM;
out_free:
	if (ct)
		ct_free(ct);
	free(cl);
	return NULL;
}
