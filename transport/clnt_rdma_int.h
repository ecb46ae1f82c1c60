/*
 * The client's insides, shared by its files and by its unit test:
 *
 *   clnt_rdma.c          the libtirpc clnt_ops: call, control, destroy, create
 *   clnt_rdma_mw.c       call slots and their exposure: memory windows or
 *                        per-call registrations, fencing, remote invalidation
 *   clnt_rdma_marshal.c  the call (transport header, RPC message) and its
 *                        Send; where the reply's payload is; decoding it
 *   clnt_rdma_cq.c       completions, credits, and the waits built on them
 *
 * One call at a time per CLIENT (ct_lock, as libtirpc's clnt_vc): every
 * function here runs under it.  Functions return 0 or a negative errno;
 * enum clnt_stat appears only where libtirpc is answered (clnt_rdma.c, and
 * the reply's RPC decoding in clnt_rdma_marshal.c, which sets ct_error as
 * clnt_vc does).
 */
#ifndef TRANSPORT_CLNT_RDMA_INT_H
#define TRANSPORT_CLNT_RDMA_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "common/stats.h"
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
#define CT_NSEND 8
#define CT_SEND_BUF 1024
/*
 * Registered memory a client may need besides its calls' own: a block of
 * shared receives and a chunk of send buffers, when none is spare yet.
 */
#define CT_SHARED_NEED ((uint64_t)128 << 10)
/*
 * Call slots: the active call plus timed-out calls whose memory stays
 * exposed until their late replies come.  When every slot holds one, the
 * next call starts a new connection (ct_get_slot): revoking a timed-out
 * call's memory would make its late reply's RDMA Write fail, and the
 * server close the connection under a later call.
 */
#define CT_SLOTS 8
/* Bound on invalidating a window once the reply is in. */
#define CT_FENCE_MS 5000

enum slot_state {
	SLOT_FREE,
	SLOT_ACTIVE,		/* the call in progress */
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
};

struct ct_slot {
	enum slot_state state;
	struct ct_plan plan;	/* what the call in this slot offers */
	uint32_t xid;
	uint32_t rvers;		/* its RPC-over-RDMA version (clnt_rdma_v2.c) */
	bool wait_reply;	/* the call offers chunks for its reply */
	bool recv_held;		/* a receive is reserved for its reply */
	uint64_t orphaned;	/* order in which slots became orphans */
	struct rdma_pbuf *callbuf;	/* the call is encoded here */
	struct rdma_pbuf *replybuf;	/* the Reply chunk */
	struct rdma_pbuf *ddpbuf;	/* the Write chunk, when offered */
	struct ct_window win[CT_NWIN];
};

/*
 * The reply a wait found: where it was received, and its transport
 * header copied out, so that completions taken later (while the call's
 * memory is fenced) cannot overwrite it.
 */
struct ct_reply {
	uint32_t ridx;		/* its receive buffer, posted again once read */
	uint32_t rlen;		/* octets received */
	struct rpcrdma_hdr hdr;	/* a malformed one has proc UINT32_MAX */
};

struct ct_rdma {
	pthread_mutex_t ct_lock;
	struct ep *ct_ep;
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
	struct ct_slot ct_slots[CT_SLOTS];
	uint64_t ct_orphans;		/* orphan counter, for ordering */

	/* What a new connection for this CLIENT is made with (ct_renew). */
	struct sockaddr_storage ct_dst;
	struct sockaddr_storage ct_src;	/* the bound port to keep */
	bool ct_has_src;
	struct ep_attr ct_attr;
	int ct_connect_ms;

	struct rpcrdma_hdr ct_hdr;	/* scratch: a received header */
	struct rpcrdma_hdr ct_shdr;	/* scratch: call header to encode */
	struct ct_reply ct_rep;		/* the reply to the call in progress */
	struct shim_stats_conn *ct_stats;
	/* clnt_rdma_v2.c: enum rpcrdma_want, enum ct_vstate */
	unsigned int ct_vwant, ct_vstate;
};

static inline enum clnt_stat
ct_fail(struct ct_rdma *ct, enum clnt_stat st, int err)
{
	ct->ct_error.re_status = st;
	ct->ct_error.re_errno = err;
	return st;
}

/* ------------------------------------------------------------------ */
/* Slots and exposure (clnt_rdma_mw.c)                                 */
/* ------------------------------------------------------------------ */

/*
 * One window per chunk of every slot.  All or nothing: on failure none
 * is left and -ENOMEM returned.
 */
int ct_windows_alloc(struct ct_rdma *ct);
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

/*
 * Expose slot s's chunks for a call of len octets: with memory windows,
 * fills binds[] (to chain before the Send) and returns how many; with
 * registrations, registers now and returns 0.  -errno on failure.
 */
int ct_expose_call(struct ct_rdma *ct, unsigned int s, bool long_call,
		   size_t len, struct ibv_send_wr binds[CT_NWIN]);
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
 * Fence slot s now, waiting (bounded) for its invalidations; on failure
 * the connection is closed instead (RFC 8166 s5.5.4).  The slot is free
 * either way; returns false when the connection had to go.
 */
bool ct_fence_now(struct ct_rdma *ct, unsigned int s);

/*
 * A free slot for the next call, once invalidations under way are done;
 * -ENOSPC when every slot holds a timed-out call still exposed (the
 * caller starts a new connection), another negative errno on failure.
 */
int ct_get_slot(struct ct_rdma *ct, int64_t deadline);
/* Some slot holds a timed-out call's memory. */
bool ct_any_orphan(const struct ct_rdma *ct);
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
 * registered, or another negative errno.
 */
int ct_send_call(struct ct_rdma *ct, unsigned int s, uint32_t xid,
		 size_t len, int64_t deadline);
/*
 * The RPC result of the reply in ct_rep (slot's call, xid): the payload
 * found inline or in the chunks offered and decoded as clnt_vc does, or
 * an RDMA_ERROR or malformed reply turned into an error.  *refresh is set
 * when the credentials were refreshed and the call should be sent again.
 */
enum clnt_stat ct_reply_result(CLIENT *cl, struct ct_rdma *ct,
			       const struct ct_slot *slot, uint32_t xid,
			       xdrproc_t xdr_results, void *results_ptr,
			       int *refreshes, bool *refresh);

/* ------------------------------------------------------------------ */
/* Completions and waits (clnt_rdma_cq.c)                              */
/* ------------------------------------------------------------------ */

/* Replies the server may send that we have not consumed (s4.3). */
unsigned int ct_credit_window(const struct ct_rdma *ct);
/* The credits a well-formed reply grants (s4.3.1). */
void ct_granted_set(struct ct_rdma *ct, uint32_t credits);
/* The reply to the call in slot s came: its credit and receive come back. */
void ct_reply_arrived(struct ct_rdma *ct, unsigned int s, uint32_t credits);
/* The call in slot s is no longer waited for: its credit comes back. */
void ct_call_abandoned(struct ct_rdma *ct, unsigned int s);

/*
 * Take completions, sleeping on the completion and RDMA-CM channels,
 * until the condition holds.  Each returns 0, -ETIMEDOUT once the
 * deadline passed, or another negative errno when the connection failed
 * (ep_dead() says why).
 */
/* The reply to xid, into ct->ct_rep. */
int ct_wait_reply(struct ct_rdma *ct, uint32_t xid, int64_t deadline);
/* Room to send a call: a credit, a header buffer, send queue entries. */
int ct_wait_room(struct ct_rdma *ct, int64_t deadline);
/* Slot s exposes nothing any more. */
int ct_wait_fenced(struct ct_rdma *ct, unsigned int s, int64_t deadline);
/* Some slot is free. */
int ct_wait_slot(struct ct_rdma *ct, int64_t deadline);
/* Take the completions already there, without sleeping. */
int ct_reap(struct ct_rdma *ct);

#endif
