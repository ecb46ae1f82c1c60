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
 *   svc_rdma_hold.c      a call answered after the dispatch holds the
 *                        next; the listener's alarm
 *
 * libtirpc calls xp_recv, the dispatch and xp_stat in the thread that
 * runs svc_run(); a reply may come from any thread, during or after the
 * dispatch (svc_sendreply from a worker, as over libtirpc's TCP).  Each
 * connection's lock guards it whole (endpoint, ring, call, reply); the
 * listener's lock guards its list of connections.  Lock order: a
 * connection's, then the listener's; other connections only by trylock
 * (README.md "Threading").  Functions return 0 or a negative errno;
 * bool_t and enum xprt_stat only where libtirpc is answered.
 */
#ifndef TRANSPORT_SVC_RDMA_INT_H
#define TRANSPORT_SVC_RDMA_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>
#include <rpc/svc_mt.h>

#include "common/stats.h"
#include "cp_trace.h"
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
/*
 * Descriptors of RLIMIT_NOFILE RDMA connections leave to the rest (TCP
 * connections, files): a client opening connections without end meets
 * this, as over TCP, and the budget of registered memory before it.
 */
#define SC_FD_RESERVE 16u
/*
 * Fairness (one connection must not hold svc_run's thread): every how
 * many calls a turn looks at the program's other descriptors, and ends if
 * one is ready, and how long a turn may last in any case (the program's
 * own loop runs then); the connection's descriptor is left readable
 * (ep_kick) so that svc_run comes back to it.
 */
#define SC_ROUND_CALLS 4
#define SC_ROUND_MS 5
/*
 * How long a reply may wait for queue room or a send buffer the budget
 * cannot register yet.  A call is taken only with a send context and the
 * queue room of its reply set aside (svc_rdma_recvfrom.c), so a client
 * that keeps to its credits never makes a reply wait.
 */
#define SC_SEND_WAIT_MS 10
/* Send queue entries one reply may take at most: its RDMA Writes and Send. */
#define SC_REPLY_WRS (SC_MAX_WRITES + 1)
/* Bound on pulling a call's Read chunks, and on bounced RDMA Writes. */
#define SC_RW_TIMEOUT_MS 60000
/* RDMA Writes one reply may need (Write chunk and Reply chunk). */
#define SC_MAX_WRITES 256

/*
 * Procedures a listener remembers as answered late or never (their calls
 * hold nothing, svc_rdma_hold.c); past this many, no call holds any.
 */
#define SC_UNHELD_MAX 16

struct svc_rdma_conn;

/*
 * Where Read chunks land.  Directly: staging is the destination.  Through
 * the bounce: staged octets are copied to dst + done once read.
 */
struct sc_sink {
	uint8_t *dst;
	struct rdma_pbuf *stage;	/* what the Reads target */
	bool bounced;
	uint64_t done;			/* octets already at dst (bounced) */
	uint64_t staged;		/* octets in stage */
};

/*
 * A call's Read chunks being pulled: the RDMA Reads go out as room
 * allows and svc_run serves others until their completions wake the
 * connection again (sc_pull_step).  The message's receive is held.
 */
struct sc_pull {
	bool active;
	uint32_t ridx, rlen;		/* the message's receive */
	struct rpcrdma_read_chunk ch[RPCRDMA1_MAX_READ_SEGS];
	unsigned int nch, c, i;		/* chunk, segment being read */
	uint32_t seg_done;		/* octets of segment i posted */
	uint64_t total;
	int64_t deadline;
	struct sc_sink k;
};

struct svc_rdma_listener {
	SVCXPRT xprt;			/* the listener transport */
	char ext[SVC_EXT_SIZE];
	struct shim_stats_conn *stats;	/* the rendezvous' slot, or ours */
	bool stats_own;			/* a slot of this process (after fork) */
	struct rdma_event_channel *ech;	/* NULL once it failed (lst_fail) */
	struct rdma_cm_id *id;
	unsigned int gen;		/* cred_gen() of the process serving it */
	struct svc_rdma_params params;
	pthread_mutex_t lock;		/* conns, closing, unheld, the alarm */
	struct svc_rdma_conn *conns;
	/*
	 * The TCP rendezvous is gone: no longer listening; freed with the
	 * last of its connections (lst_last_conn_gone).
	 */
	bool closing;
	/* Procedures whose calls hold nothing (svc_rdma_hold.c). */
	struct {
		uint32_t prog, vers, proc;
	} unheld[SC_UNHELD_MAX];
	unsigned int unheld_n;		/* > SC_UNHELD_MAX: none holds */
	/* Wakes svc_run when a held call's wait is over; -1: not made yet. */
	int alarm_fd;
	unsigned int alarm_gen;		/* cred_gen() of the process it is for */
	int64_t alarm_at;		/* ms, 0: disarmed */
	SVCXPRT alarm;
	char alarm_ext[SVC_EXT_SIZE];
};

struct svc_rdma_conn {
	SVCXPRT xprt;
	char ext[SVC_EXT_SIZE];
	struct svc_rdma_listener *lst;
	struct svc_rdma_conn *next;	/* the listener's connections */
	pthread_mutex_t lock;		/* all of this connection */
	struct ep *ep;			/* owned; its owner is this */
	struct sockaddr_storage raddr;
	struct sockaddr_storage laddr;

	/* RFC 8166 s4.3.1: calls granted, receives reserved for them. */
	unsigned int credits;

	bool took_call;			/* xp_recv gave a call since xp_stat */

	/* Completed receives not yet served: ring of credits entries. */
	uint32_t *rq_idx;
	uint32_t *rq_len;
	unsigned int rq_head;
	unsigned int rq_count;

	/* svc_run's turn on this connection (SC_ROUND_CALLS, SC_ROUND_MS). */
	unsigned int round_calls;
	int64_t round_start;
	bool stalled;			/* waits for a completion */
	bool dispatching;		/* between xp_recv and xp_stat */
	bool late_said;			/* a reply too late was logged */
	/* A send context set aside for the next reply; -1: none. */
	int reply_idx;
	unsigned int reply_wrs;		/* send queue entries it may take */
	struct sc_pull pull;

	/*
	 * The call being served: the last one taken, until it is replied
	 * to or the next is taken (a reply after the dispatch goes to it,
	 * as libtirpc's TCP answers the last call it read).
	 */
	bool in_call;
	uint32_t xid;
	uint32_t prog, vers, proc;
	/*
	 * It was not answered in its dispatch: the next call waits for its
	 * reply until then (ms; 0: does not wait).
	 */
	int64_t hold_until;
	struct ep_spin_hist spin;	/* whether polling for it pays */
	struct rpcrdma_hdr hdr;		/* its transport header */
	struct ulb_call ulb;		/* what its binding says (ulb.h) */
	uint8_t *callbuf;		/* an inline or rebuilt call */
	size_t callbuf_cap;
	bool args_garbage;		/* its chunks do not fit: no arguments */
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
/* 0 when one more connection fits (SC_PLAN_MAX, SC_FD_RESERVE), else the cap. */
unsigned int sc_room(void);

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

/*
 * Take every completion available: receives are queued, sends reaped.
 * sc_drain leaves the completion queue armed, so that what comes next
 * wakes the connection's descriptor: before the connection sleeps or goes
 * back to the program's loop.  sc_collect does not arm it: while the
 * connection is served, an armed queue would cost a completion event (in
 * rxe a tasklet, run by ksoftirqd) for every call.  sc_drain returns
 * how many completions it took.
 */
unsigned int sc_drain(struct svc_rdma_conn *sc);
void sc_collect(struct svc_rdma_conn *sc);
/* Handle n completions polled from the connection's CQs (sc_drain's). */
void sc_completions(struct svc_rdma_conn *sc, const struct ibv_wc *wc, int n);

/* ------------------------------------------------------------------ */
/* Polling for the next call (svc_rdma_poll.c)                         */
/* ------------------------------------------------------------------ */

/*
 * After a call was answered, within the connection's turn (sc_turn):
 * poll its CQs for the client's next call, for up to poll_us, unless
 * another of the program's descriptors is ready (alone: they were just
 * looked at, none was).  True when a call came (in the ring).  Holds
 * sc->lock.
 */
bool sc_poll_next(struct svc_rdma_conn *sc, bool alone);
/* Whether another of the program's descriptors is readable now. */
bool sc_others_ready(const struct svc_rdma_conn *sc);
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
/* Transports that carry no call: the listener, its alarm              */
/* (svc_rdma_listen.c)                                                 */
/* ------------------------------------------------------------------ */

/* Their xp_ops but xp_recv: idle, no arguments, no reply. */
enum xprt_stat sc_quiet_stat(SVCXPRT *xprt);
bool_t sc_quiet_no_call(SVCXPRT *xprt, xdrproc_t proc, void *where);
bool_t sc_quiet_no_reply(SVCXPRT *xprt, struct rpc_msg *msg);
/* xp_destroy: unregistered only; their owner frees them. */
void sc_quiet_destroy(SVCXPRT *xprt);
/* The last connection of a closing listener is gone: free the listener. */
void lst_last_conn_gone(struct svc_rdma_listener *lst);
/* Fill such a transport in: descriptor, ops, owner (xp_p1), xp_p3 room. */
void sc_quiet_init(SVCXPRT *xprt, int fd, const struct xp_ops *ops, void *p1,
		   char *ext);

/* ------------------------------------------------------------------ */
/* Calls answered after the dispatch (svc_rdma_hold.c)                 */
/* ------------------------------------------------------------------ */

/* xp_stat after a dispatch: its call, unanswered, holds the next. */
void sc_hold_begin(struct svc_rdma_conn *sc);
/*
 * xp_recv: whether the next call still waits for the last one's reply.
 * Past defer_wait it does not (said once per procedure, remembered).
 */
bool sc_hold_next(struct svc_rdma_conn *sc);
/* Calls are waiting behind an unanswered one. */
bool sc_holding(const struct svc_rdma_conn *sc);
/* Wake svc_run for sc when its wait is over (the listener's alarm). */
void sc_hold_wake_at(struct svc_rdma_conn *sc);
/* The listener's end, or fork(): the alarm goes. */
void sc_alarm_close(struct svc_rdma_listener *lst);

/* ------------------------------------------------------------------ */
/* RDMA Read and Write (svc_rdma_rw.c)                                 */
/* ------------------------------------------------------------------ */

/*
 * Start pulling the Read chunks of the message in receive ridx (rlen
 * octets, header in sc->hdr).  Returns 0 (sc->pull active), -EBADMSG,
 * -EMSGSIZE over max_call, or -ENOMEM, nothing read.
 */
int sc_pull_start(struct svc_rdma_conn *sc, uint32_t ridx, uint32_t rlen);
/*
 * Post what Reads room allows and copy what finished (after sc_drain).
 * Returns 0 when every chunk is in, -EINPROGRESS while Reads are out (a
 * completion wakes the connection), or another -errno (the connection
 * is then closed).
 */
int sc_pull_step(struct svc_rdma_conn *sc);
/*
 * The call of the pulled message, its chunks re-inserted (inline part
 * inl, inl_len octets).  Fills *call, *clen.  Returns 0, -EBADMSG for
 * chunks that do not fit the call, -EMSGSIZE over max_call, -ENOMEM.
 */
int sc_pull_call(struct svc_rdma_conn *sc, const uint8_t *inl,
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
