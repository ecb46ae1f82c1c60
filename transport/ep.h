/*
 * The endpoint: one RPC-over-RDMA connection below the RPC transports.
 * An RDMA-CM id with its RC queue pair, completion queues signalling a
 * pollable completion channel, receives in the device's shared receive
 * queue, send buffers taken per message, and what the RFC 8797 private
 * data negotiated.  Client endpoints share one RDMA-CM channel and one
 * completion channel per device (ep_hub.c); a server connection has a
 * completion channel of its own (its transport's xp_fd) and lives on its
 * listener's RDMA-CM channel.
 *
 * The client (clnt_rdma*.c) and the server (svc_rdma*.c) see it only
 * through the functions below: setup, teardown and RDMA-CM in ep.c,
 * posting, polling and send accounting in ep_io.c.  Nothing here blocks
 * without a deadline.  One thread at a time uses an endpoint (its owner's
 * lock or svc_run's thread: see README.md).  Functions that can fail
 * return 0 (or a count) or a negative errno.
 */
#ifndef TRANSPORT_EP_H
#define TRANSPORT_EP_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "common/reason.h"
#include "rdma_dev.h"

struct ep;

/*
 * max_reply and max_call bound the data of a message; its RPC header and
 * credentials come on top, up to this many octets.
 */
#define EP_MSG_HDR_SLACK 4096u

/* What an endpoint is built with. */
struct ep_attr {
	uint32_t inline_send;	/* own largest Send (RFC 8797 Send Size) */
	uint32_t inline_recv;	/* own receive buffer size (Receive Size) */
	unsigned int nrecv;	/* server: receives reserved (its credits);
				 * a client reserves one per call instead */
	unsigned int nsend;	/* Sends in flight at most */
	uint32_t send_buf_size;	/* bytes per send buffer */
	unsigned int max_send_wr;
	bool remote_inv;	/* advertise the R flag */
};

/* Work request ids: kind in the high word, a buffer index in the low. */
enum ep_wr_kind {
	EP_WR_RECV = 1,
	EP_WR_SEND,
	EP_WR_READ,
	EP_WR_WRITE,
	EP_WR_BIND,
	EP_WR_LOCAL_INV,
	EP_WR_WRITE_SIGNALED,	/* an RDMA Write that completes on its own */
	EP_WR_WAKE,		/* flushed at once: wakes the channel (ep_wake) */
};
#define EP_WRID(kind, idx) (((uint64_t)(kind) << 32) | (uint32_t)(idx))
#define EP_WRID_KIND(wrid) ((enum ep_wr_kind)((wrid) >> 32))
#define EP_WRID_IDX(wrid) ((uint32_t)(wrid))

/* Pool buffers one Send can carry back to the pool (reply and result). */
#define EP_SEND_ATTACH_MAX 2

/* ------------------------------------------------------------------ */
/* Setup and teardown (ep.c)                                           */
/* ------------------------------------------------------------------ */

/*
 * Client side: resolve, build the queue pair, connect with our private
 * data and wait for the peer's answer, all within timeout_ms, on the
 * process's shared channels.  src, when not NULL, is a local address to
 * bind first (best effort).  Returns 0 with *out, or a negative errno
 * with *why saying what kind of failure it was (RDMA_FAIL_MEMLOCK: the
 * budget of registered memory).
 */
int ep_connect(const struct sockaddr *dst, const struct sockaddr *src,
	       int timeout_ms, const struct ep_attr *attr, struct ep **out,
	       enum rdma_fail *why);

/*
 * Server side: for a CONNECT_REQUEST on a listener, build the queue pair,
 * reserve attr->nrecv receives of the shared receive queue and accept
 * with our private data.  The id stays on the listener's event channel;
 * id->context is the endpoint from now on.  Returns 0 with *out, or a
 * negative errno after rejecting (the caller still owns the id then;
 * -ENOMEM: the budget could not cover the receives; -ECONNABORTED: the
 * client withdrew the request first).
 */
int ep_accept(struct rdma_cm_id *id, const struct rdma_conn_param *req,
	      const struct ep_attr *attr, struct ep **out);

/* Move the queue pair to error: every posted request is flushed. */
void ep_disconnect(struct ep *ep);

/*
 * Make the completion channel of a failed connection readable: its
 * receives live in the shared queue and are not flushed with it, so a
 * work request is posted to the queue pair, moved to error, to be
 * flushed (or, where the move is refused, an RDMA Write of no octets).
 */
void ep_wake(struct ep *ep);

/* Release everything, including the id (and a client's channel). */
void ep_destroy(struct ep *ep);

/*
 * fork(): true in a child for an endpoint its parent made.  Such an
 * endpoint is the parent's: nothing may be posted, polled or destroyed on
 * it; ep_abandon() only closes this process's copies of its descriptors
 * and frees the record.
 */
bool ep_forked(const struct ep *ep);
void ep_abandon(struct ep *ep);
/*
 * The same from what an owner remembered of its endpoints (ep_gen),
 * without touching one that another thread may be replacing.
 */
unsigned int ep_gen(const struct ep *ep);
bool ep_gen_forked(unsigned int gen);

/*
 * The event channel of the id is gone (a server connection whose
 * listener's channel was closed): no RDMA-CM command may name the id any
 * more, so ep_disconnect() does nothing and ep_destroy() leaves the id.
 */
void ep_cm_lost(struct ep *ep);

/* The endpoint of a connection's id (its context, set by ep_accept). */
struct ep *ep_from_id(const struct rdma_cm_id *id);

/* What the endpoint belongs to (a server connection), or NULL. */
void ep_set_owner(struct ep *ep, void *owner);
void *ep_owner(const struct ep *ep);

/* What the connection negotiated (RFC 8797 s4.2) and runs on. */
uint32_t ep_send_max(const struct ep *ep);	/* largest Send we may post */
uint32_t ep_recv_max(const struct ep *ep);	/* largest the peer may post */
bool ep_rinv(const struct ep *ep);		/* both ends set R */
bool ep_rinv_offered(const struct ep *ep);	/* we set R */
bool ep_peer_pdata(const struct ep *ep);	/* the peer sent private data */
/*
 * RPC-over-RDMA Version Two was agreed (draft-cel-nfsv4-rpcrdma-version-
 * two-01 s5.1): with a peer that sent no private data, its default
 * threshold (4096, s2.3) replaces Version One's both ways, within our own
 * sizes; the connection goes on (s5.2).
 */
void ep_inline_v2(struct ep *ep);
uint8_t ep_read_depth(const struct ep *ep);	/* RDMA Reads we may have out */
uint32_t ep_max_msg(const struct ep *ep);	/* largest single operation */
unsigned int ep_nrecv(const struct ep *ep);	/* receives reserved */
struct rdma_dev *ep_dev(const struct ep *ep);
const struct sockaddr *ep_local_addr(const struct ep *ep);
const struct sockaddr *ep_peer_addr(const struct ep *ep);

/* A server connection's completion channel: readable when ep_poll() has work. */
int ep_comp_fd(const struct ep *ep);

/* ------------------------------------------------------------------ */
/* Posting, polling, send accounting (ep_io.c)                          */
/* ------------------------------------------------------------------ */

/* 0 while the connection works, else the errno that ended it. */
int ep_dead(const struct ep *ep);
/* Mark the connection failed (keeps the first cause). */
void ep_set_dead(struct ep *ep, int err);

/* Receive buffer i of the shared receive queue, inline_recv octets. */
uint8_t *ep_recv_buf(const struct ep *ep, uint32_t i);
/* Post receive buffer i again once its message was read. */
int ep_post_recv(struct ep *ep, uint32_t idx);

/*
 * A client's receive for one more call in flight (RFC 8166 s4.3: the
 * reply must find a posted receive): 0, -ENOMEM when the budget cannot
 * cover one, -ETIMEDOUT when other threads' calls hold them all until
 * the deadline.  Given back by ep_recv_unreserve when the reply came,
 * or with the endpoint.
 */
int ep_recv_reserve(struct ep *ep, int64_t deadline);
void ep_recv_unreserve(struct ep *ep, unsigned int n);

/* Send buffer i (from ep_get_send): ep_send_buf_size() octets. */
uint8_t *ep_send_buf(const struct ep *ep, uint32_t i);
uint32_t ep_send_buf_size(const struct ep *ep);
/* The key of send buffer i, for SGEs inside it. */
uint32_t ep_send_lkey(const struct ep *ep, uint32_t i);
/* An SGE for the first len octets of send buffer idx. */
struct ibv_sge ep_hdr_sge(const struct ep *ep, uint32_t idx, uint32_t len);

/*
 * A send context with its buffer: -ENOBUFS when all are in flight,
 * -ENOMEM when no buffer can be registered (the budget).
 */
int ep_get_send(struct ep *ep);
void ep_put_send(struct ep *ep, uint32_t idx);
unsigned int ep_nsend_free(const struct ep *ep);

/* Room for n more work requests on the send queue. */
bool ep_sq_room(const struct ep *ep, unsigned int n);
/* Every work request posted has completed (its completion was taken). */
bool ep_sq_idle(const struct ep *ep);

/*
 * Post npre unsignaled work requests (memory window binds, RDMA Writes)
 * chained before a signaled Send of sge[0..nsge) on behalf of header send
 * buffer idx; inv_rkey, when not zero, makes it a Send With Invalidate.
 * The Send's completion retires them all, returns idx to the free list
 * and gives the nattach pool buffers of attach (at most
 * EP_SEND_ATTACH_MAX, NULL entries skipped) back to the pool, in order.
 * Returns 0; -EAGAIN when the send queue has no room (reap completions
 * and try again); another negative errno when the connection failed.
 * On failure nothing is taken: idx and attach stay the caller's.
 */
int ep_post_send(struct ep *ep, uint32_t idx, struct ibv_send_wr *pre,
		 unsigned int npre, struct ibv_sge *sge, int nsge,
		 uint32_t inv_rkey, struct rdma_pbuf *const *attach,
		 unsigned int nattach);

/*
 * Post one work request that completes on its own (signaled): an RDMA
 * Read, a local invalidate.  -EAGAIN when the send queue is full.
 */
int ep_post_one(struct ep *ep, struct ibv_send_wr *wr);

/*
 * Keep pb until the endpoint is destroyed, after its queue pair: for
 * memory an RDMA operation may still be using.
 */
void ep_hold(struct ep *ep, struct rdma_pbuf *pb);

/*
 * Poll for completions.  Returns how many were stored in wc (at most max),
 * or -EIO when the completion queue failed.  A return of 0 guarantees
 * that the completion channel will signal the next completion: wait
 * (ep_wait) only after a poll returned 0.
 */
int ep_poll(struct ep *ep, struct ibv_wc *wc, int max);

/*
 * Poll without arming the completion channel: for busy polling before
 * ep_poll() and a sleep.  Only the thread that would sleep on the
 * endpoint calls it (its owner's poller); nothing but the CQs is touched.
 */
int ep_poll_busy(struct ep *ep, struct ibv_wc *wc, int max);

/*
 * A client endpoint: make its ep_wait() return (now, or at once when it
 * is called next) although no completion came: another thread changed
 * what its waiter waits for.  ep_interrupted() tells (once) a waiter
 * that is busy polling instead; ep_wait() forgets it when it returns.
 */
void ep_interrupt(struct ep *ep);
bool ep_interrupted(struct ep *ep);

/*
 * Only the send side's completions (a server connection's own CQ for
 * them), without arming: for reaping another connection's finished Sends.
 */
int ep_poll_send(struct ep *ep, struct ibv_wc *wc, int max);

/*
 * Sleep until the endpoint may have completions or its connection ended,
 * at most until deadline (ep_now_ms).  0, -ETIMEDOUT, or -errno when the
 * channels failed (the endpoint is dead then).
 */
int ep_wait(struct ep *ep, int64_t deadline);

/*
 * Account for a send-side completion (Send, RDMA Write/Read, bind,
 * invalidate): returns true when wc was one.  A failed one marks the
 * connection dead.
 */
bool ep_reap_send(struct ep *ep, const struct ibv_wc *wc);

/*
 * Server: make the completion channel readable soon although nothing new
 * arrived (messages already taken wait in the connection's ring): a
 * signaled RDMA Write of no octets, whose completion on the armed send
 * CQ raises the event.  Nothing is done while the send queue is full
 * (those requests' completions raise it).  False when it could not be
 * posted and none are in flight.
 */
bool ep_kick(struct ep *ep);
/*
 * Server: arm the send CQ so that the next send-side completion makes the
 * completion channel readable; poll once more after it.  Returns true
 * when it was armed now (completions before it need that poll).
 */
bool ep_arm_send(struct ep *ep);

/*
 * Between two polls of a busy-polling loop: whatever else is runnable on
 * this CPU runs first (as the kernel's busy polling stops at
 * need_resched()): threads the poller woke, and with soft-RoCE the
 * kernel work that moves the very packets being waited for.
 */
static inline void
ep_relax(void)
{
	(void)sched_yield();
}

/* Milliseconds and microseconds on the monotonic clock (ep_clock.c). */
int64_t ep_now_ms(void);
int64_t ep_now_us(void);
/*
 * ep_now_ms() as of the coarse clock's last tick: behind it by less than
 * a tick, and read without a system call where the fine one needs one.
 */
int64_t ep_coarse_ms(void);

/*
 * A deadline on ep_now_ms()'s clock at least ms from now, and at most a
 * tick of the coarse clock later, read without a system call: for the
 * bounds of waits (seconds), not for timing.
 */
int64_t ep_deadline_ms(int64_t ms);

/*
 * Whether a wait's busy poll pays, from how the last ones ended: a
 * window (poll_us) that ended without the message waited for (a reply, a
 * client's next call) cost its CPU time for nothing.  After
 * EP_SPIN_MISSES such windows in a row, waits sleep at once (a slow
 * procedure, a client that calls now and then), and every EP_SPIN_PROBE-th
 * of them polls to look again; a message a poll finds makes every wait
 * poll again.  Each waiter keeps its own (a CLIENT, a server connection).
 */
#define EP_SPIN_MISSES 16
#define EP_SPIN_PROBE 8

struct ep_spin_hist {
	uint8_t misses;		/* windows in a row without the message */
	uint8_t skipped;	/* waits that slept at once since the last probe */
};

/* Whether this wait polls; false when it sleeps at once. */
static inline bool
ep_spin_wanted(struct ep_spin_hist *h)
{
	if (h->misses < EP_SPIN_MISSES)
		return true;
	if (++h->skipped < EP_SPIN_PROBE)
		return false;
	h->skipped = 0;
	return true;
}

/* A poll found the message waited for. */
static inline void
ep_spin_hit(struct ep_spin_hist *h)
{
	h->misses = 0;
	h->skipped = 0;
}

/* A window ended without it. */
static inline void
ep_spin_miss(struct ep_spin_hist *h)
{
	if (h->misses < EP_SPIN_MISSES)
		h->misses++;
}

/*
 * A bounded busy poll's clock: the first look sets *until (0 before) to
 * us from now and says false; later ones say whether it has passed.
 */
static inline bool
ep_spin_over(int64_t *until, unsigned int us)
{
	int64_t now = ep_now_us();

	if (!*until) {
		*until = now + us;
		return false;
	}
	return now >= *until;
}

#endif
