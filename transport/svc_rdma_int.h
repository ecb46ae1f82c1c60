/*
 * The server's insides, shared by its files:
 *
 *   svc_rdma.c           connection transports and their lifetime:
 *                        xp_ops, creation, destroy, control
 *   svc_rdma_listen.c    the listener transport: accept, connection events
 *   svc_rdma_recvfrom.c  completions, the receive ring, header checks, the
 *                        call taken (xp_recv, xp_getargs)
 *   svc_rdma_rw.c        pulling Read chunks, building RDMA Writes
 *   svc_rdma_sendto.c    the reply (xp_reply): encode, chunk placement,
 *                        header and Send; RDMA_ERROR replies
 *
 * Everything runs in the program's svc_run() thread, as libtirpc's own
 * transports do (README.md says what a multi-threaded server would
 * need).  Functions return 0 or a negative errno; bool_t and enum
 * xprt_stat only where libtirpc is answered.
 */
#ifndef TRANSPORT_SVC_RDMA_INT_H
#define TRANSPORT_SVC_RDMA_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>
#include <rpc/svc_mt.h>

#include "common/stats.h"
#include "ep.h"
#include "rpcrdma_xdr.h"
#include "svc_rdma.h"
#include "ulb.h"

/* libtirpc dereferences xp_p3 (SVCXPRT_EXT); give it zeroed room. */
#define SVC_EXT_SIZE 128
/* Send contexts beyond the credits, for RDMA_ERROR replies. */
#define SC_NSEND_EXTRA 4
/*
 * A call's Read chunks up to this many octets are read straight into a
 * pool buffer when the budget allows; larger ones, or any when it does
 * not, through a bounce buffer of SC_BOUNCE octets into ordinary memory.
 * Replies and Write chunk results are written out the same way.
 */
#define SC_DIRECT_MAX ((size_t)2 << 20)
#define SC_BOUNCE ((size_t)256 << 10)
/*
 * What new connections' credits leave of the budget for the calls of
 * the connections there are (one at a time: svc_run's thread): a bounce
 * buffer each way, and a chunk of send buffers.
 */
#define SC_KEEP (2 * SC_BOUNCE + ((size_t)64 << 10))
/* A connection keeps a heap buffer this large for rebuilt calls. */
#define SC_CALLBUF_KEEP ((size_t)64 << 10)
/* Connections a process plans credits for at most (one descriptor each). */
#define SC_PLAN_MAX 1024u
/* How long a reply may wait for a free send buffer or queue room. */
#define SC_SEND_WAIT_MS 5000
/* Bound on pulling a call's Read chunks. */
#define SC_RW_TIMEOUT_MS 60000
/* RDMA Writes one reply may need (Write chunk and Reply chunk). */
#define SC_MAX_WRITES 256

struct svc_rdma_conn;

struct svc_rdma_listener {
	SVCXPRT xprt;			/* the listener transport */
	char ext[SVC_EXT_SIZE];
	struct shim_stats_conn *stats;	/* the rendezvous' slot, or ours */
	bool stats_own;			/* a slot of this process (after fork) */
	struct rdma_event_channel *ech;	/* NULL once it failed (lst_fail) */
	struct rdma_cm_id *id;
	unsigned int gen;		/* cred_gen() of the process serving it */
	struct svc_rdma_params params;
	struct svc_rdma_conn *conns;
};

struct svc_rdma_conn {
	SVCXPRT xprt;
	char ext[SVC_EXT_SIZE];
	struct svc_rdma_listener *lst;
	struct svc_rdma_conn *next;	/* the listener's connections */
	struct ep *ep;			/* owned; its owner is this */
	struct sockaddr_storage raddr;
	struct sockaddr_storage laddr;

	/* RFC 8166 s4.3.1: calls granted, receives reserved for them. */
	unsigned int credits;

	/* Completed receives not yet served: ring of credits entries. */
	uint32_t *rq_idx;
	uint32_t *rq_len;
	unsigned int rq_head;
	unsigned int rq_count;

	/* The call being served. */
	bool in_call;
	uint32_t xid;
	struct rpcrdma_hdr hdr;		/* its transport header */
	struct ulb_call ulb;		/* what its binding says (ulb.h) */
	uint8_t *callbuf;		/* an inline or rebuilt call */
	size_t callbuf_cap;
	uint8_t *call_data;		/* its Read chunks' data: */
	struct rdma_pbuf *call_pb;	/*  read into this pool buffer, */
	uint8_t *call_heap;		/*  or through the bounce into this */
	struct rdma_pbuf *bounce;	/* for chunks beyond the pool (SC_BOUNCE) */
	unsigned int rw_inflight;	/* RDMA Reads and signaled Writes */
	XDR xdrs;			/* decodes the call */
	/*
	 * RFC 8166 s4.3.1: an RDMA_ERROR goes out only once the failed
	 * message's receive is posted again (the client may send at once).
	 */
	bool err_defer, err_pending;
	uint32_t err_xid, err_vers, err_code;

	/* The reply being built. */
	struct rpcrdma_hdr rhdr;
	xdrproc_t reply_proc;		/* its results, to size it (once) */
	void *reply_where;
	struct rdma_pbuf *reply_pb;	/* a reply beyond the send buffer */
	uint8_t *reply_heap;		/* ... or beyond what the pool gives */
	size_t reply_heap_cap;
	struct rdma_pbuf *ddp_pb;	/* the result placed in a Write chunk */
	uint8_t *ddp_heap;		/* ... or beyond what the pool gives */
	struct shim_stats_conn *stats;
	struct ibv_send_wr wrs[SC_MAX_WRITES];
	struct ibv_sge sges[SC_MAX_WRITES];
	/* svc_rdma_v2.c: the version of the first call, 0 before it. */
	uint32_t rvers;
};

static inline struct svc_rdma_conn *
sc_of(SVCXPRT *xprt)
{
	return (struct svc_rdma_conn *)xprt->xp_p1;
}

/* ------------------------------------------------------------------ */
/* Connection transports (svc_rdma.c)                                  */
/* ------------------------------------------------------------------ */

/* Fill the address fields of an SVCXPRT as svc_vc does; false: ENOMEM. */
bool svc_rdma_set_addrs(SVCXPRT *xprt, const struct sockaddr *local,
			const struct sockaddr *remote);
void svc_rdma_free_addrs(SVCXPRT *xprt);

/*
 * Credits for a connection lst is asked to accept on the device of id,
 * from what the budget of registered memory has left (budget_credits);
 * 0: refuse it.
 */
unsigned int sc_grant(const struct svc_rdma_listener *lst,
		      struct rdma_cm_id *id);

/*
 * The transport of a connection lst accepted with credits, registered
 * with libtirpc and published in the statistics.  Takes ep (destroyed on
 * failure).  Returns 0 with *out, or -ENOMEM.
 */
int sc_create(struct svc_rdma_listener *lst, struct ep *ep,
	      unsigned int credits, struct svc_rdma_conn **out);
/* xp_destroy: unregister and free a connection. */
void sc_destroy(SVCXPRT *xprt);
/* fork(): a child lets go of a connection of its parent (ep_abandon). */
void sc_abandon(struct svc_rdma_conn *sc);
/* The connection cannot go on (s5.5.4): flush it, libtirpc destroys it. */
void sc_fail(struct svc_rdma_conn *sc, int err, const char *why);
/* Everything the previous call held goes back. */
void sc_call_done(struct svc_rdma_conn *sc);

/* ------------------------------------------------------------------ */
/* Receiving (svc_rdma_recvfrom.c)                                     */
/* ------------------------------------------------------------------ */

/* Take every completion available: receives are queued, sends reaped. */
void sc_drain(struct svc_rdma_conn *sc);
/* Reap the finished Sends of the listener's other connections. */
void sc_reap_others(struct svc_rdma_conn *sc);
/* A pool buffer, reaping finished Sends first when the budget is short. */
struct rdma_pbuf *sc_pool_get(struct svc_rdma_conn *sc, size_t len);
/* Sleep until the next completion or the deadline; false when past it. */
bool sc_sleep(struct svc_rdma_conn *sc, int64_t deadline);
/* Wait (bounded) until no RDMA Read or signaled Write is in flight. */
int sc_rw_wait(struct svc_rdma_conn *sc, int64_t deadline);
/* Room for a call of len octets in sc->callbuf. */
bool sc_callbuf_reserve(struct svc_rdma_conn *sc, size_t len);

bool_t sc_recv(SVCXPRT *xprt, struct rpc_msg *msg);
bool_t sc_getargs(SVCXPRT *xprt, xdrproc_t xdr_args, void *args_ptr);
bool_t sc_freeargs(SVCXPRT *xprt, xdrproc_t xdr_args, void *args_ptr);

/* ------------------------------------------------------------------ */
/* RDMA Read and Write (svc_rdma_rw.c)                                 */
/* ------------------------------------------------------------------ */

/*
 * The call of a message with Read chunks (inline part inl, inl_len
 * octets), its chunks pulled and re-inserted.  Fills *call, *clen.
 * Returns 0, -EBADMSG for chunks that do not fit the call, -EMSGSIZE
 * over max_call, or another -errno (the connection is then closed).
 */
int sc_gather_call(struct svc_rdma_conn *sc, const uint8_t *inl,
		   size_t inl_len, uint8_t **call, size_t *clen);

/*
 * RDMA Writes placing len octets from src into the segments, from
 * sc->wrs[nwr] on; the segments' lengths become the octets written.
 * Returns the number of work requests then, or -EMSGSIZE.
 */
int sc_build_writes(struct svc_rdma_conn *sc, const uint8_t *src,
		    uint32_t lkey, uint64_t len, struct rpcrdma_segment *segs,
		    unsigned int nsegs, unsigned int nwr);

/*
 * The same from ordinary memory, through the bounce buffer: each
 * bounce-full is written and completed before the next is copied.
 * Returns 0, -EMSGSIZE when the segments are too small, -ENOMEM, or
 * another -errno (the connection failed).
 */
int sc_write_bounced(struct svc_rdma_conn *sc, const uint8_t *src,
		     uint64_t len, struct rpcrdma_segment *segs,
		     unsigned int nsegs);

/* The call's bounce buffer, registered on first use; NULL: no memory. */
struct rdma_pbuf *sc_bounce(struct svc_rdma_conn *sc);

/* ------------------------------------------------------------------ */
/* Replies (svc_rdma_sendto.c)                                         */
/* ------------------------------------------------------------------ */

bool_t sc_reply(SVCXPRT *xprt, struct rpc_msg *msg);
/* s5.5: answer a request we cannot serve with RDMA_ERROR. */
void sc_send_error(struct svc_rdma_conn *sc, uint32_t xid, uint32_t vers,
		   uint32_t err);

#endif
