/*
 * A fake endpoint for the client's unit test (fake_ep.c): transport/ep.h
 * and the pool of transport/rdma_dev.h over plain memory, a device whose
 * memory windows are allocated through its context's ops, and a scripted
 * server that answers the calls the client sends.
 */
#ifndef TESTS_UNIT_FAKE_EP_H
#define TESTS_UNIT_FAKE_EP_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "ep.h"

#define F_KEYS 64
#define F_CALLS 4096
/* The procedure the fake answers with its one unsigned argument. */
#define F_PROC_ECHO 7

enum srv_mode {
	SRV_REPLY,		/* answer at once */
	SRV_HOLD,		/* answer later, or never */
	SRV_MALFORMED,		/* a header with the right XID, a bad procedure */
	SRV_ERR_VERS,		/* RDMA_ERROR, ERR_VERS */
	SRV_BAD_ERROR,		/* RDMA_ERROR with the call's XID, an unknown code */
};

enum srv_inv {
	INV_NONE,
	INV_REPLY_CHUNK,	/* Send With Invalidate of the Reply chunk's key */
	INV_FOREIGN,		/* ... naming a key that is not the client's */
	INV_HELD,		/* ... naming the Reply chunk key of the oldest
				 * call held (another call's, still bound) */
};

struct fake_server {
	enum srv_mode mode;
	enum srv_inv inv;
	uint32_t credits;
	unsigned int calls;
	uint32_t held[F_CALLS];		/* calls not answered yet */
	unsigned int nheld;
	uint32_t xid[F_CALLS];		/* every call's XID ... */
	uint32_t reply_key[F_CALLS];	/* ... the key of its Reply chunk ... */
	uint8_t reply_segs[F_CALLS];	/* ... that chunk's segments ... */
	uint32_t read_key[F_CALLS];	/* ... and of its Read chunk, or 0 */
	bool late_error;		/* after the next reply: RDMA_ERROR to held[0] */
	unsigned int err_chunks;	/* the next calls get ERR_CHUNK (BADHEADER) */
	bool recv_error;		/* the next message's receive fails */
	bool kill_on_call;		/* the next call finds its connection
					 * failed (a local failure: the queue
					 * pair stays connected) */
	/*
	 * The connection fails under the next local invalidate, which is
	 * then flushed (INV_FAIL_FLUSHED) or never completes (INV_FAIL_LOST).
	 */
	enum { INV_FAIL_NONE, INV_FAIL_FLUSHED, INV_FAIL_LOST } inv_fail;
	/*
	 * The first bind of each of the next bind_fail chains with binds
	 * fails (IBV_WC_MW_BIND_ERR, as rxe's on a window still bound): the
	 * queue pair fails, the Send behind it is flushed, never received.
	 */
	unsigned int bind_fail;
	bool backward_call;		/* after each reply: a backward-direction
					 * call (RDMA_MSG, RPC CALL) granting 1 */
	/* SRV_REPLY through the call's chunks, as a responder does: */
	bool reply_chunk;		/* the RPC reply in the Reply chunk */
	uint32_t write_result;		/* an opaque result of this many octets
					 * (0xab) in the Write chunk, 0: none */
	/*
	 * SRV_REPLY: hold calls until this many are held, then answer them
	 * all, the newest first (0, 1: at once).  F_PROC_ECHO calls whose
	 * argument has F_NEVER set are never answered.
	 */
	unsigned int batch;
	uint32_t held_arg[F_CALLS];	/* F_PROC_ECHO: the argument of each held call */
	unsigned int inflight, max_inflight;	/* calls received, not answered */
	unsigned int answered;
	/*
	 * A server of Version One only: a Version Two call is answered
	 * ERR_VERS 1..1 (or nothing with drop_v2), never served; with
	 * batch, once that many are held.
	 */
	bool drop_v2;
	unsigned int v2_calls;
	uint32_t v2_xid;		/* the last one's XID */
	uint32_t v2_held[F_CALLS];
	unsigned int v2_nheld;
};
#define F_NEVER 0x80000000u

extern struct fake_server srv;

/* Keys the server can reach now, keys invalidated locally, violations. */
extern unsigned int nbound, nlocal_inv, violations;
/* Windows and pool buffers not given back. */
extern int mws_alive, pbufs_alive;
/* Receives reserved for calls in flight, over all endpoints. */
extern unsigned int recv_reserved;
/* Receive buffers of ep not posted (taken by a message not given back). */
unsigned int fake_recv_missing(const struct ep *ep);
/* Whether ep_disconnect() was called on ep. */
bool fake_disconnected(const struct ep *ep);
/* Endpoints connected so far; connects refused while fake_refuse. */
extern unsigned int fake_connects;
extern bool fake_refuse;
/*
 * A connect takes this long (0: none); one that would take longer than
 * its timeout fails with ETIMEDOUT when the timeout ends.  fake_connecting:
 * connects under way.
 */
extern int fake_connect_ms;
extern unsigned int fake_connecting;
/* What the budget can give (rdma_mem_available). */
extern uint64_t fake_mem_available;
/*
 * Octets of pool buffers alive, and the most so far; when fake_pool_limit
 * is not 0, a buffer that would take them past it is refused (ENOMEM,
 * counted).
 */
extern uint64_t fake_pool_limit, fake_pool_bytes, fake_pool_peak;
extern unsigned int fake_pool_refused;
/* The address the client connects to. */
extern struct sockaddr_in fake_addr;

/* ep_wait() sleeps, ep_poll_busy() calls. */
extern unsigned int fake_sleeps, fake_busy_polls;

/* fork(): ep_forked() answers fake_forked; ep_abandon() calls counted. */
extern bool fake_forked;
extern unsigned int fake_abandoned;

/* Forget every call and key; the next endpoint's inline threshold. */
void fake_reset(uint32_t send_max);

bool key_bound(uint32_t key);
bool was_invalidated_locally(uint32_t key);
/* The server answers the oldest call it held (a late reply). */
void srv_answer_held(struct ep *ep);
/* The connection ends now, as the hub would tell its waiters. */
void fake_kill(struct ep *ep);
/* A counter of srv, or fake_connecting, read while client threads run. */
unsigned int fake_read(const unsigned int *v);
/* The server answers the F_PROC_ECHO calls of a batch it holds now; how many. */
unsigned int srv_answer_batch_now(struct ep *ep);

#endif
