/*
 * The client's call slots and what they expose (clnt_rdma_int.h).
 *
 * Memory fencing (RFC 8166 s5.4.1, s10.1.3).  Pool memory is registered
 * for local access only.  A call's chunks are exposed through type 2
 * memory windows bound in the same Send chain and invalidated before the
 * reply is decoded (or remotely, when the server sends With Invalidate:
 * RFC 8797 s4.1); on devices without windows, through a registration made
 * for the call and released before the reply is decoded.  A call that
 * times out keeps its memory (an "orphan" slot) until its late reply
 * arrives, so a slow server can never write into memory reused for
 * another call, and its late reply lands where it was told to.  When
 * timed-out calls hold every slot, the CLIENT moves to a new connection
 * (clnt_rdma.c ct_renew) instead of revoking one: the orphans' memory
 * goes with the old one.  Calls of several threads each have a slot of
 * their own, added as needed.  A call that waits for no reply (a zero
 * timeout) offers no chunk for one.
 *
 * A window is invalidated once, never twice (rxe 6.1 panics on the
 * second): "bound" says whether it still needs it, cleared by a local
 * invalidation's completion (a failed one leaves the queue pair in the
 * error state), by any Send With Invalidate naming its key, whichever
 * call that Send answers, or by the connection's loss (ct_fencing_lost).
 *
 * Local operations never wait on rxe's send queue behind a request not
 * yet acknowledged.  When rxe retries a request (its acknowledgment late
 * or lost) it walks the queue again from there and executes once more
 * every local operation it finds behind it: a window bound twice fails
 * (IBV_WC_MW_BIND_ERR) and takes the connection down; one invalidated
 * twice may crash the kernel.  So on rxe a call's binds are posted only
 * once every earlier work request has completed (ct_binds_may_post), and
 * a local invalidate always carries IBV_SEND_FENCE, with which rxe starts
 * it only then (and which orders it after earlier RDMA Reads and atomics
 * elsewhere: this client posts none, so it costs nothing there).
 */
#include <errno.h>
#include <string.h>

#include "clnt_rdma_int.h"
#include "common/log.h"

#define WIN_ID(slot, w) ((uint32_t)((slot) * CT_NWIN + (w)))

/* ------------------------------------------------------------------ */
/* Windows and registrations                                           */
/* ------------------------------------------------------------------ */

/* The windows of one slot, all or none. */
static int
slot_windows_alloc(struct ct_rdma *ct, struct ct_slot *slot)
{
	struct ibv_pd *pd = ep_dev(ct->ct_ep)->pd;
	unsigned int w;

	for (w = 0; w < CT_NWIN; w++) {
		struct ct_window *win = &slot->win[w];

		win->mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		if (!win->mw)
			goto out_dealloc;
		win->rkey = win->mw->rkey;
	}
	return 0;

out_dealloc:
	for (w = 0; w < CT_NWIN; w++) {
		if (slot->win[w].mw)
			ibv_dealloc_mw(slot->win[w].mw);
		slot->win[w].mw = NULL;
	}
	return -ENOMEM;
}

int
ct_windows_alloc(struct ct_rdma *ct)
{
	unsigned int s, w;

	for (s = 0; s < CT_SLOTS; s++)
		if (slot_windows_alloc(ct, &ct->ct_slots[s]))
			goto out_dealloc;
	ct->ct_mw = true;
	return 0;

out_dealloc:
	while (s--) {
		for (w = 0; w < CT_NWIN; w++) {
			ibv_dealloc_mw(ct->ct_slots[s].win[w].mw);
			ct->ct_slots[s].win[w].mw = NULL;
		}
	}
	return -ENOMEM;
}

int
ct_slot_add(struct ct_rdma *ct)
{
	struct ct_slot *slot;

	if (ct->ct_nslots == CT_SLOTS_MAX)
		return -ENOSPC;
	slot = &ct->ct_slots[ct->ct_nslots];
	memset(slot, 0, sizeof(*slot));
	if (ct->ct_mw && slot_windows_alloc(ct, slot))
		return -ENOMEM;
	return (int)ct->ct_nslots++;
}

/*
 * Windows and buffers belong to the device's protection domain, which
 * the endpoint holds: release them before it.  Deallocating a window (or
 * a registration) revokes it.
 */
void
ct_slots_release(struct ct_rdma *ct)
{
	struct rdma_dev *dev = ep_dev(ct->ct_ep);
	unsigned int s, w;

	for (s = 0; s < ct->ct_nslots; s++) {
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
}

void
ct_slot_bufs_put(struct ct_rdma *ct, struct ct_slot *slot)
{
	struct rdma_dev *dev = ep_dev(ct->ct_ep);

	rdma_pool_put(dev, slot->callbuf);
	rdma_pool_put(dev, slot->replybuf);
	rdma_pool_put(dev, slot->ddpbuf);
	slot->callbuf = slot->replybuf = slot->ddpbuf = NULL;
}

/* A free slot's buffers go back to the pool: idle clients hold none. */
void
ct_slots_idle(struct ct_rdma *ct)
{
	unsigned int s;

	if (!ct->ct_ep)
		return;		/* no connection since the last one was lost */
	for (s = 0; s < ct->ct_nslots; s++)
		if (ct->ct_slots[s].state == SLOT_FREE)
			ct_slot_bufs_put(ct, &ct->ct_slots[s]);
}

int
ct_slot_callbuf(struct ct_rdma *ct, struct ct_slot *slot)
{
	if (!slot->callbuf)
		slot->callbuf = rdma_pool_get(ep_dev(ct->ct_ep), RDMA_POOL_MIN);
	return slot->callbuf ? 0 : -ENOMEM;
}

int
ct_slot_buffers(struct ct_rdma *ct, struct ct_slot *slot)
{
	struct rdma_dev *dev = ep_dev(ct->ct_ep);

	const struct ct_plan *p = &slot->plan;

	if (!slot->callbuf)
		slot->callbuf = rdma_pool_get(dev, RDMA_POOL_MIN);
	/* The chunks this call's plan offers (clnt_rdma_marshal.c). */
	if (slot->replybuf && slot->replybuf->buf.len < p->reply_len) {
		rdma_pool_put(dev, slot->replybuf);
		slot->replybuf = NULL;
	}
	if (slot->ddpbuf && slot->ddpbuf->buf.len < p->write_len) {
		rdma_pool_put(dev, slot->ddpbuf);
		slot->ddpbuf = NULL;
	}
	if (p->reply_len && !slot->replybuf)
		slot->replybuf = rdma_pool_get(dev, p->reply_len);
	if (p->write_len && !slot->ddpbuf)
		slot->ddpbuf = rdma_pool_get(dev, p->write_len);
	if (!slot->callbuf || (p->reply_len && !slot->replybuf) ||
	    (p->write_len && !slot->ddpbuf))
		return -ENOMEM;
	return 0;
}

bool
ct_binds_may_post(const struct ct_rdma *ct)
{
	return !ep_dev(ct->ct_ep)->replays_local_ops || ep_sq_idle(ct->ct_ep);
}

/*
 * Expose len octets of pb for one call.  With a memory window this fills
 * *bind (a work request to chain before the Send) and returns 1; with a
 * registration it registers now and returns 0; -errno on failure.
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
		bind->wr_id = EP_WRID(EP_WR_BIND, WIN_ID(s, w));
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
	win->mr = ibv_reg_mr(ep_dev(ct->ct_ep)->pd, pb->buf.addr, len,
			     IBV_ACCESS_LOCAL_WRITE | access);
	if (!win->mr)
		return errno ? -errno : -ENOMEM;
	win->rkey = win->mr->rkey;
	win->bound = true;
	return 0;
}

/* Whether the call in slot exposes window w: its plan's chunks. */
static bool
win_used(const struct ct_slot *slot, unsigned int w, bool long_call)
{
	switch (w) {
	case CT_WIN_READ:
		return long_call;
	case CT_WIN_REPLY:
		return slot->plan.reply_len != 0;
	default:
		return slot->plan.write_len != 0;
	}
}

int
ct_expose_call(struct ct_rdma *ct, unsigned int s, bool long_call,
	       size_t len, struct ibv_send_wr binds[CT_NWIN])
{
	struct ct_slot *slot = &ct->ct_slots[s];
	const struct ct_plan *p = &slot->plan;
	int n = 0, ret;

	if (p->reply_len) {
		ret = win_expose(ct, s, CT_WIN_REPLY, slot->replybuf,
				 p->reply_len, IBV_ACCESS_REMOTE_WRITE,
				 &binds[n]);
		if (ret < 0)
			return ret;
		n += ret;
	}
	if (long_call) {
		ret = win_expose(ct, s, CT_WIN_READ, slot->callbuf, len,
				 IBV_ACCESS_REMOTE_READ, &binds[n]);
		if (ret < 0)
			return ret;
		n += ret;
	}
	if (p->write_len) {
		ret = win_expose(ct, s, CT_WIN_WRITE, slot->ddpbuf,
				 p->write_len, IBV_ACCESS_REMOTE_WRITE,
				 &binds[n]);
		if (ret < 0)
			return ret;
		n += ret;
	}
	return n;
}

void
ct_exposed(struct ct_rdma *ct, unsigned int s, bool long_call)
{
	unsigned int w;

	/*
	 * A type 2 window bound through the send queue keeps its key in the
	 * application's ibv_mw: the next bind names it as the current key.
	 */
	for (w = 0; w < CT_NWIN; w++) {
		struct ct_window *win = &ct->ct_slots[s].win[w];

		if (win->mw && win_used(&ct->ct_slots[s], w, long_call)) {
			win->mw->rkey = win->rkey;
			win->bound = true;
		}
	}
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
	wr.wr_id = EP_WRID(EP_WR_LOCAL_INV, WIN_ID(s, w));
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.send_flags = IBV_SEND_FENCE;
	wr.invalidate_rkey = win->rkey;
	ret = ep_post_one(ct->ct_ep, &wr);
	if (ret == 0)
		win->inv_pending = true;
	return ret;
}

/* ------------------------------------------------------------------ */
/* Invalidation                                                        */
/* ------------------------------------------------------------------ */

/*
 * rxe (Linux 6.1) reports the key a Send With Invalidate revoked with the
 * kernel's flag value, which reads as IBV_WC_IP_CSUM_OK in user space; on
 * a reliable-connected receive that flag means nothing else.  Only a key
 * this client exposed is ever taken from it.
 */
uint32_t
ct_wc_invalidated(const struct ibv_wc *wc)
{
	if (wc->wc_flags & (IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK))
		return wc->invalidated_rkey;
	return 0;
}

void
ct_remote_inv(struct ct_rdma *ct, uint32_t rkey)
{
	unsigned int s, w;

	for (s = 0; s < ct->ct_nslots; s++) {
		for (w = 0; w < CT_NWIN; w++) {
			struct ct_window *win = &ct->ct_slots[s].win[w];

			if (win->mw && win->bound && win->rkey == rkey) {
				win->bound = false;
				return;
			}
		}
	}
	shim_log(SHIM_LOG_WARN,
		 "client: the server invalidated key 0x%08x, which no call of this connection exposes",
		 rkey);
}

bool
ct_slot_exposed(const struct ct_slot *slot)
{
	unsigned int w;

	for (w = 0; w < CT_NWIN; w++)
		if (slot->win[w].bound || slot->win[w].inv_pending)
			return true;
	return false;
}

void
ct_slot_recv_put(struct ct_rdma *ct, struct ct_slot *slot)
{
	if (slot->recv_held) {
		slot->recv_held = false;
		ep_recv_unreserve(ct->ct_ep, 1);
	}
}

void
ct_inv_done(struct ct_rdma *ct, const struct ibv_wc *wc)
{
	uint32_t id = EP_WRID_IDX(wc->wr_id);
	struct ct_slot *slot = &ct->ct_slots[id / CT_NWIN];
	struct ct_window *win = &slot->win[id % CT_NWIN];

	/*
	 * Failed or flushed, it leaves the queue pair in the error state,
	 * through which nothing reaches the window any more.
	 */
	win->inv_pending = false;
	win->bound = false;
	if (slot->state == SLOT_FENCING && !ct_slot_exposed(slot))
		slot->state = SLOT_FREE;
}

static const char *const win_names[CT_NWIN] = {
	[CT_WIN_READ] = "Read chunk",
	[CT_WIN_REPLY] = "Reply chunk",
	[CT_WIN_WRITE] = "Write chunk",
};

/*
 * A send queue runs its work requests in order: when a bind of a call's
 * chain failed, or was flushed because the queue pair had failed before
 * it, the Send behind it never ran.  The connection is lost (the queue
 * pair is in the error state), the call never left, and it goes on a new
 * connection (clnt_rdma.c ct_call_once).
 */
void
ct_bind_failed(struct ct_rdma *ct, const struct ibv_wc *wc)
{
	uint32_t id = EP_WRID_IDX(wc->wr_id);
	struct ct_slot *slot;

	if (wc->status == IBV_WC_SUCCESS || id / CT_NWIN >= ct->ct_nslots)
		return;
	slot = &ct->ct_slots[id / CT_NWIN];
	slot->unsent = true;
	if (wc->status != IBV_WC_WR_FLUSH_ERR)
		shim_log(SHIM_LOG_INFO,
			 "client: the %s window of the call in slot %u (key 0x%08x) could not be bound: %s; the call was not sent",
			 win_names[id % CT_NWIN], id / CT_NWIN,
			 slot->win[id % CT_NWIN].rkey,
			 ibv_wc_status_str(wc->status));
}

void
ct_fencing_lost(struct ct_rdma *ct)
{
	unsigned int s, w;

	ep_disconnect(ct->ct_ep);
	for (s = 0; s < ct->ct_nslots; s++) {
		struct ct_slot *slot = &ct->ct_slots[s];

		if (slot->state != SLOT_FENCING)
			continue;
		for (w = 0; w < CT_NWIN; w++) {
			slot->win[w].bound = false;
			slot->win[w].inv_pending = false;
		}
		slot->state = SLOT_FREE;
	}
}

/*
 * Fence what is still exposed.  An orphan's slot is free once nothing is
 * (ct_inv_done); a call's own slot (keep) stays its call's until it
 * returns: its reply is still to be read there.
 */
static int
slot_fence(struct ct_rdma *ct, unsigned int s, bool keep)
{
	struct ct_slot *slot = &ct->ct_slots[s];
	unsigned int w;
	int ret;

	for (w = 0; w < CT_NWIN; w++) {
		ret = win_fence(ct, s, w);
		if (ret)
			return ret;
	}
	if (!keep)
		slot->state = ct_slot_exposed(slot) ? SLOT_FENCING : SLOT_FREE;
	return 0;
}

bool
ct_fence_now(struct ct_rdma *ct, unsigned int s)
{
	if (slot_fence(ct, s, true) == 0 &&
	    ct_wait_fenced(ct, s, ep_deadline_ms(CT_FENCE_MS)) == 0)
		return true;
	shim_log(SHIM_LOG_WARN,
		 "client: cannot invalidate a call's memory, closing the connection");
	ep_set_dead(ct->ct_ep, EIO);
	ep_disconnect(ct->ct_ep);
	return false;
}

/* ------------------------------------------------------------------ */
/* Slots                                                               */
/* ------------------------------------------------------------------ */

/* The first free slot, or -ENOENT. */
static int
free_slot(const struct ct_rdma *ct)
{
	unsigned int s;

	for (s = 0; s < ct->ct_nslots; s++)
		if (ct->ct_slots[s].state == SLOT_FREE)
			return (int)s;
	return -ENOENT;
}

unsigned int
ct_slots_in(const struct ct_rdma *ct, enum slot_state state)
{
	unsigned int s, n = 0;

	for (s = 0; s < ct->ct_nslots; s++)
		n += ct->ct_slots[s].state == state;
	return n;
}

bool
ct_any_orphan(const struct ct_rdma *ct)
{
	return ct_slots_in(ct, SLOT_ORPHAN) != 0;
}

unsigned int
ct_busy_slots(const struct ct_rdma *ct)
{
	return ct_slots_in(ct, SLOT_CLAIMED) + ct_slots_in(ct, SLOT_ACTIVE) +
	       ct_slots_in(ct, SLOT_FENCING);
}

bool
ct_others_under_way(const struct ct_rdma *ct, unsigned int self)
{
	unsigned int s;

	/*
	 * A prepared call holds its buffers and a receive while it waits
	 * for room to send (on rxe, for an idle send queue to bind in).
	 */
	for (s = 0; s < ct->ct_nslots; s++) {
		const struct ct_slot *t = &ct->ct_slots[s];

		if (s != self && (t->state == SLOT_ACTIVE ||
				  (t->state == SLOT_CLAIMED && t->callbuf)))
			return true;
	}
	return false;
}

int
ct_get_slot(struct ct_rdma *ct, int64_t deadline)
{
	int s, ret;

	/* Late replies already received free their orphans. */
	if (free_slot(ct) < 0) {
		ret = ct_reap(ct);
		if (ret)
			return ret;
	}
	for (;;) {
		s = free_slot(ct);
		if (s < 0 && ct_slots_in(ct, SLOT_ORPHAN) < CT_SLOTS)
			s = ct_slot_add(ct);
		if (s >= 0) {
			ct->ct_slots[s].state = SLOT_CLAIMED;
			ct->ct_slots[s].replied = false;
			ct->ct_slots[s].unsent = false;
			return s;
		}
		/*
		 * Calls of other threads, or invalidations under way, free
		 * theirs soon.  Else every slot is a timed-out call whose reply
		 * may still be written into its memory: revoking any would make
		 * that reply fail on the server, which then closes the
		 * connection under a later call.
		 */
		if (!ct_busy_slots(ct))
			return ct_any_orphan(ct) ? -ENOSPC : -EBUSY;
		if (ct_wait_slot(ct, deadline))
			return ep_dead(ct->ct_ep) ? -ep_dead(ct->ct_ep) : -ETIMEDOUT;
	}
}

void
ct_slot_unclaim(struct ct_rdma *ct, unsigned int s)
{
	ct->ct_slots[s].state = SLOT_FREE;
}

void
ct_orphan(struct ct_rdma *ct, unsigned int s)
{
	struct ct_slot *slot = &ct->ct_slots[s];

	ct_call_abandoned(ct, s);
	slot->orphaned = ++ct->ct_orphans;
	if (ct_slot_exposed(slot)) {
		slot->state = SLOT_ORPHAN;
		return;
	}
	slot->state = SLOT_FREE;
	ct_slot_recv_put(ct, slot);
}

void
ct_orphan_replied(struct ct_rdma *ct, uint32_t xid)
{
	unsigned int s;

	for (s = 0; s < ct->ct_nslots; s++) {
		struct ct_slot *slot = &ct->ct_slots[s];

		if (slot->state == SLOT_ORPHAN && slot->xid == xid) {
			ct_slot_recv_put(ct, slot);
			if (slot_fence(ct, s, false))
				ep_set_dead(ct->ct_ep, EIO);
			return;
		}
	}
}
