/*
 * The client's insides, shared by its files and by its unit test:
 *
 *   clnt_rdma.c          the libtirpc clnt_ops: call, control, destroy, create
 *   clnt_rdma_mw.c       call slots and their exposure: memory windows or
 *                        per-call registrations, fencing, remote invalidation
 *   clnt_rdma_marshal.c  the call (transport header, RPC message) and its
 *                        Send; where the reply's payload is; decoding it
 *   clnt_rdma_cq.c       completions, credits, and the waits built on them
 *   clnt_rdma_wait.c     waiting with several callers: who polls, busy
 *                        polling, who is woken
 *
 * Calls of several threads are in flight together, up to the credits
 * (RFC 8166 s4.3); ct_lock guards the CLIENT and every function here runs
 * under it, but waits let it go (clnt_rdma_wait.c).  Functions return 0
 * or a negative errno;
 * enum clnt_stat appears only where libtirpc is answered (clnt_rdma.c, and
 * the reply's RPC decoding in clnt_rdma_marshal.c, which sets ct_error as
 * clnt_vc does).
 */
#ifndef TRANSPORT_CLNT_RDMA_INT_H
#define TRANSPORT_CLNT_RDMA_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "common/stats.h"
#include "cp_trace.h"
#include "ep.h"
#include "rpcrdma_xdr.h"
#include "clnt_rdma_v2.h"
#include "ulb.h"

/* Room for the serialized call header: xid, direction, rpcvers, prog, vers. */
#define MCALL_MSG_SIZE 24
/*
 * Send contexts (Sends in flight) and the size of their buffers, taken
 * per call from the device's slab: transport headers only, never payload.
 */
#define CT_NSEND 16
#define CT_SEND_BUF 1024
/*
 * Registered memory a client may need besides its calls' own: a block of
 * shared receives and a chunk of send buffers, when none is spare yet.
 */
#define CT_SHARED_NEED ((uint64_t)128 << 10)
/*
 * Call slots: the calls in flight plus timed-out calls whose memory stays
 * exposed until their late replies come.  CT_SLOTS have windows from the
 * start; more are added while calls of several threads are in flight
 * together, up to CT_SLOTS_MAX, but never for more than CT_SLOTS
 * timed-out calls: when they hold every slot and no call is in flight,
 * the next call starts a new connection (ct_get_slot).  Revoking a
 * timed-out call's memory would make its late reply's RDMA Write fail,
 * and the server close the connection under a later call.
 */
#define CT_SLOTS 8
#define CT_SLOTS_MAX 16
/* Bound on invalidating a window once the reply is in. */
#define CT_FENCE_MS 5000

enum slot_state {
	SLOT_FREE,
	SLOT_CLAIMED,		/* taken by a call not sent yet */
	SLOT_ACTIVE,		/* a call in flight, waited for */
	SLOT_ORPHAN,		/* timed out, its reply may still come */
	SLOT_FENCING,		/* reply in, invalidation in flight */
};

/* A call's chunks, each exposed through its own window. */
enum { CT_WIN_READ, CT_WIN_REPLY, CT_WIN_WRITE, CT_NWIN };

/* Memory exposed to the server for one call (one Read or Reply chunk). */
struct ct_window {
	struct ibv_mw *mw;	/* type 2 window; NULL: per-call registration */
	struct ibv_mr *mr;	/* the per-call registration, while exposed */
	uint32_t rkey;		/* the key the server was given */
	bool bound;		/* the server may use rkey right now */
	bool inv_pending;	/* local invalidate posted, not completed */
};

/*
 * The chunks one call offers, decided by clnt_rdma_marshal.c from the
 * Upper Layer Binding (ulb.h) once the call is encoded: a Reply chunk
 * only when the reply may not fit inline (RFC 8166 s5.3.3), a Write
 * chunk only for a DDP-eligible result (s5.3.2), both cut into segments
 * no larger than the peer accepts.
 */
struct ct_plan {
	struct ulb_call ulb;
	uint64_t reply_len;	/* the Reply chunk, 0: none */
	uint64_t write_len;	/* the Write chunk, 0: none */
	uint64_t read_len;	/* a long call's Read chunk, 0: none */
	uint32_t seg_lim;	/* the peer's segment limit it was cut for */
	bool reply_bounded;	/* the binding bounds the reply within the offer */
};

/*
 * A call's reply: where it was received, and its transport header copied
 * out, so that completions taken later (while the call's memory is
 * fenced) cannot overwrite it.
 */
struct ct_reply {
	uint32_t ridx;		/* its receive buffer, posted again once read */
	uint32_t rlen;		/* octets received */
	struct rpcrdma_hdr hdr;	/* a malformed one has proc UINT32_MAX */
};

struct ct_slot {
	enum slot_state state;
	struct ct_plan plan;	/* what the call in this slot offers */
	uint32_t xid;
	uint32_t rvers;		/* its RPC-over-RDMA version (clnt_rdma_v2.c) */
	bool resend;		/* refused for its version: again, same XID */
	bool wait_reply;	/* the call offers chunks for its reply */
	int results_len;	/* its results' fixed octets, -1: not known */
	bool recv_held;		/* a receive is reserved for its reply */
	uint64_t orphaned;	/* order in which slots became orphans */
	bool replied;		/* its reply came, into rep */
	bool unsent;		/* a bind ahead of its Send did not run */
	struct ct_reply rep;
	struct rdma_pbuf *callbuf;	/* the call is encoded here */
	struct rdma_pbuf *replybuf;	/* the Reply chunk */
	struct rdma_pbuf *ddpbuf;	/* the Write chunk, when offered */
	struct ct_window win[CT_NWIN];
};

struct ct_rdma;
struct ct_waiter;

/* What a wait stops on (clnt_rdma_cq.c). */
struct ct_cond {
	bool (*done)(const struct ct_rdma *ct, const struct ct_cond *cond);
	unsigned int slot;	/* ct_replied, ct_slot_fenced */
	uint64_t returned;	/* ct_call_returned: ct_returned when it began */
	bool binds;		/* ct_has_room: for a call with binds */
};

struct ct_rdma {
	pthread_mutex_t ct_lock;
	/*
	 * Callers inside clnt_call (clnt_destroy waits for none), calls
	 * returned so far, and the waiters (clnt_rdma_wait.c): the one
	 * taking completions for all (ct_poller), the others asleep.
	 */
	unsigned int ct_callers;
	pthread_cond_t ct_idle;
	uint64_t ct_returned;
	bool ct_poller;
	bool ct_poller_asleep;		/* polling or sleeping without the lock */
	bool ct_renewing;		/* a thread renews the connection */
	const struct ct_cond *ct_poller_cond;
	struct ct_waiter *ct_waiters;
	unsigned int ct_poll_us;	/* busy polling before a sleep */
	struct ep_spin_hist ct_spin;	/* whether polling pays (the poller's) */
	uint64_t ct_id;			/* tells CLIENTs apart for clnt_geterr */

	struct ep *ct_ep;
	int ct_fd;			/* the socket libtirpc gave us */
	bool ct_closeit;		/* close ct_fd on destroy */
	bool ct_stand_in;		/* ct_fd answers as the connection (sockfd.h) */
	struct netbuf ct_addr;		/* server address as given */
	struct rpc_err ct_error;
	struct timeval ct_wait;
	bool ct_waitset;		/* ct_wait set by CLSET_TIMEOUT */
	union {
		char ct_mcallc[MCALL_MSG_SIZE];
		uint32_t ct_mcalli;
	} ct_u;
	u_int ct_mpos;			/* octets of ct_mcallc in use */

	/*
	 * RFC 8166 s4.3: credits granted by the server, and the calls in
	 * flight: only the call whose reply is waited for counts; a call
	 * given up on (timed out, or expecting no reply) gives its credit
	 * back at once, as TCP loses only that call.
	 */
	unsigned int ct_granted;
	unsigned int ct_outstanding;
	unsigned int ct_credits_req;

	uint64_t ct_max_reply;		/* the Reply chunk offered */
	uint64_t ct_max_reply_cfg;	/* the same, as configured */
	uint64_t ct_write_chunk;	/* the Write chunk offered, 0: none */
	struct ct_slot ct_slots[CT_SLOTS_MAX];
	unsigned int ct_nslots;		/* slots in use so far */
	bool ct_mw;			/* slots expose through windows */
	uint64_t ct_orphans;		/* orphan counter, for ordering */

	/* What a new connection for this CLIENT is made with (ct_renew). */
	struct sockaddr_storage ct_dst;
	struct sockaddr_storage ct_src;	/* the bound port to keep */
	bool ct_has_src;
	struct ep_attr ct_attr;
	int ct_connect_ms;
	unsigned int ct_gen;		/* the fork generation of its connections */
	bool ct_has_gen;

	struct rpcrdma_hdr ct_hdr;	/* scratch: a received header */
	struct rpcrdma_hdr ct_shdr;	/* scratch: call header to encode */
	struct shim_stats_conn *ct_stats;
	/* clnt_rdma_v2.c: enum rpcrdma_want, enum ct_vstate */
	unsigned int ct_vwant, ct_vstate;
};

/*
 * ct_error is the outcome of the call returning now: it is set under
 * ct_lock after the call's last wait, and copied for its thread before
 * the lock is let go (clnt_geterr).
 */
static inline enum clnt_stat
ct_fail(struct ct_rdma *ct, enum clnt_stat st, int err)
{
	memset(&ct->ct_error, 0, sizeof(ct->ct_error));
	ct->ct_error.re_status = st;
	ct->ct_error.re_errno = err;
	return st;
}

/* ------------------------------------------------------------------ */
/* Slots and exposure (clnt_rdma_mw.c)                                 */
/* ------------------------------------------------------------------ */

/*
 * One window per chunk of the first CT_SLOTS slots.  All or nothing: on
 * failure none is left and -ENOMEM returned.
 */
int ct_windows_alloc(struct ct_rdma *ct);
/*
 * One more slot (with its windows, where slots have them) for calls in
 * flight together: its index, or -ENOSPC at CT_SLOTS_MAX, -ENOMEM.
 */
int ct_slot_add(struct ct_rdma *ct);
/* Windows, registrations and pool buffers of every slot. */
void ct_slots_release(struct ct_rdma *ct);
/*
 * The slot's pool buffers for a call: its call buffer to encode into, then
 * the rest (Reply chunk, Write chunk); -ENOMEM when the budget cannot
 * cover them.
 */
int ct_slot_callbuf(struct ct_rdma *ct, struct ct_slot *slot);
int ct_slot_buffers(struct ct_rdma *ct, struct ct_slot *slot);
/* Free slots give their buffers back to the pool (after each call). */
void ct_slots_idle(struct ct_rdma *ct);
/* The slot's buffers back to the pool. */
void ct_slot_bufs_put(struct ct_rdma *ct, struct ct_slot *slot);

/*
 * Expose slot s's chunks for a call of len octets: with memory windows,
 * fills binds[] (to chain before the Send) and returns how many; with
 * registrations, registers now and returns 0.  -errno on failure.
 */
int ct_expose_call(struct ct_rdma *ct, unsigned int s, bool long_call,
		   size_t len, struct ibv_send_wr binds[CT_NWIN]);
/* Binds may be posted now (clnt_rdma_mw.c, "Local operations"). */
bool ct_binds_may_post(const struct ct_rdma *ct);
/* The Send with the binds was posted: the windows are bound now. */
void ct_exposed(struct ct_rdma *ct, unsigned int s, bool long_call);

/* The key a received Send invalidated, or 0. */
uint32_t ct_wc_invalidated(const struct ibv_wc *wc);
/*
 * The server invalidated rkey with a Send (RFC 8797 s4.1), whichever call
 * the Send answers: the window of any slot holding it is no longer bound.
 */
void ct_remote_inv(struct ct_rdma *ct, uint32_t rkey);
/* Slot memory the server can reach, or an invalidation still under way. */
bool ct_slot_exposed(const struct ct_slot *slot);
/* The slot's reserved receive goes back to the shared queue, once. */
void ct_slot_recv_put(struct ct_rdma *ct, struct ct_slot *slot);
/* A local invalidation completed. */
void ct_inv_done(struct ct_rdma *ct, const struct ibv_wc *wc);
/*
 * A bind of a call's chain completed in error: the Send behind it never
 * ran, and the call is marked unsent.
 */
void ct_bind_failed(struct ct_rdma *ct, const struct ibv_wc *wc);
/*
 * The connection is lost: its queue pair is put in the error state, so
 * that nothing reaches the memory of orphans being fenced, and their
 * slots are free (their invalidations may never complete).
 */
void ct_fencing_lost(struct ct_rdma *ct);
/*
 * Fence slot s now, waiting (bounded) for its invalidations; on failure
 * the connection is closed instead (RFC 8166 s5.5.4).  The slot stays
 * its call's (ct_slot_unclaim); returns false when the connection had
 * to go.
 */
bool ct_fence_now(struct ct_rdma *ct, unsigned int s);

/*
 * A slot for the next call, claimed (SLOT_CLAIMED): a free one or a new
 * one, else waiting for calls of other threads to free theirs (and
 * invalidations under way); -ENOSPC when timed-out calls still exposed
 * hold every slot and none is in flight (the caller starts a new
 * connection), another negative errno on failure.
 */
int ct_get_slot(struct ct_rdma *ct, int64_t deadline);
/* A claimed slot whose call was never sent is free again. */
void ct_slot_unclaim(struct ct_rdma *ct, unsigned int s);
/* Slots in a state. */
unsigned int ct_slots_in(const struct ct_rdma *ct, enum slot_state state);
/* Some slot holds a timed-out call's memory. */
bool ct_any_orphan(const struct ct_rdma *ct);
/* Slots a call holds now, or whose invalidation is under way. */
unsigned int ct_busy_slots(const struct ct_rdma *ct);
/*
 * Calls of other threads than slot self's that will give memory and
 * receives back: sent, or prepared and on their way to their Send.
 */
bool ct_others_under_way(const struct ct_rdma *ct, unsigned int self);

/*
 * The call in slot s was sent but its reply will not be waited for: its
 * credit comes back now; what it exposes stays until its reply comes.
 */
void ct_orphan(struct ct_rdma *ct, unsigned int s);
/* A late reply to xid came: fence the orphan that call left. */
void ct_orphan_replied(struct ct_rdma *ct, uint32_t xid);

/* ------------------------------------------------------------------ */
/* The call and the reply (clnt_rdma_marshal.c)                        */
/* ------------------------------------------------------------------ */

/*
 * Octets of the results a libtirpc decoder always takes (xdr_void 0, an
 * xdr_int 4, an xdr_hyper 8, ...), or -1 when the size is not known: the
 * call then offers a Reply chunk.
 */
int ct_results_len(xdrproc_t xdr_results);
/* Forget the segment limits peers were found to have (tests). */
void ct_peers_forget(void);
/*
 * Encode the RPC call into the slot's call buffer (grown from the pool as
 * needed): the serialized header, proc, credentials and arguments.
 * Returns 0 with *len, -EMSGSIZE beyond what a call may be, -ENOMEM when
 * the pool cannot give a larger buffer, -EINVAL otherwise.
 */
int ct_encode_call(CLIENT *cl, struct ct_rdma *ct, struct ct_slot *slot,
		   rpcproc_t proc, xdrproc_t xdr_args, void *args_ptr,
		   size_t *len);
/*
 * Reserve the reply's receive, expose the slot's memory and send its call
 * of len octets as xid.  Returns 0, -ETIMEDOUT when no room came free by
 * the deadline, -ENOMEM when no receive or send buffer could be
 * registered, -ENOBUFS when the receive would have to wait for those of
 * other calls of this CLIENT (wait for one to return, then again), or
 * another negative errno.
 */
int ct_send_call(struct ct_rdma *ct, unsigned int s, uint32_t xid,
		 size_t len, int64_t deadline);
/*
 * The RPC result of the reply in slot->rep (slot's call, xid): the payload
 * found inline or in the chunks offered and decoded as clnt_vc does, or
 * an RDMA_ERROR or malformed reply turned into an error.  *refresh is set
 * when the credentials were refreshed and the call should be sent again,
 * and with slot->resend too when it goes again with the same XID.
 */
enum clnt_stat ct_reply_result(CLIENT *cl, struct ct_rdma *ct,
			       struct ct_slot *slot, uint32_t xid,
			       xdrproc_t xdr_results, void *results_ptr,
			       int *refreshes, bool *refresh);

/* ------------------------------------------------------------------ */
/* Completions and waits (clnt_rdma_cq.c)                              */
/* ------------------------------------------------------------------ */

/* Replies the server may send that we have not consumed (s4.3). */
unsigned int ct_credit_window(const struct ct_rdma *ct);
/* The credits a well-formed reply grants (s4.3.1). */
void ct_granted_set(struct ct_rdma *ct, uint32_t credits);
/* The reply to the call in slot s came: its credit comes back. */
void ct_reply_arrived(struct ct_rdma *ct, unsigned int s, uint32_t credits);
/* The call in slot s is no longer waited for: its credit comes back. */
void ct_call_abandoned(struct ct_rdma *ct, unsigned int s);

/*
 * Take completions, sleeping on the completion and RDMA-CM channels,
 * until the condition holds.  Each returns 0, -ETIMEDOUT once the
 * deadline passed, or another negative errno when the connection failed
 * (ep_dead() says why).
 */
/* The reply to the call in slot s, into its rep. */
int ct_wait_reply(struct ct_rdma *ct, unsigned int s, int64_t deadline);
/* A credit for one more call in flight (s4.3.1). */
int ct_wait_credit(struct ct_rdma *ct, int64_t deadline);
/*
 * Room to post a call: a header buffer, send queue entries; for a call
 * with memory window binds, where the device needs it, an idle send queue
 * (ct_binds_may_post).
 */
int ct_wait_room(struct ct_rdma *ct, bool binds, int64_t deadline);
/* Slot s exposes nothing any more. */
int ct_wait_fenced(struct ct_rdma *ct, unsigned int s, int64_t deadline);
/* Some slot is free. */
int ct_wait_slot(struct ct_rdma *ct, int64_t deadline);
/*
 * Another call of this CLIENT returned (its memory back in the pool), or
 * none but slot s's is under way (ct_others_under_way).
 */
int ct_wait_returned(struct ct_rdma *ct, unsigned int s, int64_t deadline);
/* Take the completions already there, without sleeping. */
int ct_reap(struct ct_rdma *ct);
/* Handle one completion (clnt_rdma_cq.c): 0, or -errno when the connection failed. */
int ct_completion(struct ct_rdma *ct, const struct ibv_wc *wc);

/* ------------------------------------------------------------------ */
/* The connection under the calls (clnt_rdma_conn.c)                   */
/* ------------------------------------------------------------------ */

/*
 * Before a call: a connection that works, and a slot on it, made again
 * once per call (*renewed) when lost; why_lost, when not NULL, is what
 * the log says of the old one.  Returns the slot, or a negative errno.
 */
int ct_ready(struct ct_rdma *ct, int64_t deadline, bool *renewed,
	     const char *why_lost);

/* ------------------------------------------------------------------ */
/* Waiting with several callers (clnt_rdma_wait.c)                     */
/* ------------------------------------------------------------------ */

/*
 * Until cond holds: taking completions as the poller (busy polling for
 * up to ct_poll_us, then sleeping on the channels without ct_lock), or
 * asleep until the poller finds it done or leaves.  0, -ETIMEDOUT once
 * the deadline passed, or -errno when the connection failed.
 */
int ct_wait(struct ct_rdma *ct, struct ct_cond *cond, int64_t deadline);
/*
 * Something changed that other waiters may wait for (a credit, a slot,
 * memory given back): wake those whose condition holds now.
 */
void ct_wake_waiters(struct ct_rdma *ct);
/*
 * Before the connection is renewed: until no other thread uses it (no
 * poller, no slot held by a call).  0 or -ETIMEDOUT.
 */
int ct_wait_quiet(struct ct_rdma *ct, int64_t deadline);
/* Until the thread renewing the connection is done.  0 or -ETIMEDOUT. */
int ct_wait_renewed(struct ct_rdma *ct, int64_t deadline);

#endif
