/*
 * The endpoint's insides, shared by ep.c (setup, teardown, RDMA-CM),
 * ep_io.c (posting, polling) and ep_hub.c (the channels clients share).
 * Nothing else includes this: the RPC transports use ep.h.
 */
#ifndef TRANSPORT_EP_INT_H
#define TRANSPORT_EP_INT_H

#include "ep.h"
#include "ep_hub.h"
#include "pvtdata.h"

/* Per send context, while its Send is built and posted. */
struct ep_send {
	struct rdma_sbuf *buf;	/* its registered buffer, from the slab */
	uint16_t nwr;		/* send queue entries its completion retires */
	/* Pool buffers given back then (the payload it carried). */
	struct rdma_pbuf *attach[EP_SEND_ATTACH_MAX];
};

/*
 * Sends up to this size are posted inline: the provider copies them into
 * the send queue at the post, and the device (rxe: the kernel) reads no
 * registered memory for them, so looks up no memory region per SGE.
 */
#define EP_INLINE_DATA 256u

struct ep {
	struct rdma_cm_id *id;	/* id->context is this endpoint */
	bool cm_lost;		/* the id's channel is gone (ep_cm_lost) */
	unsigned int gen;	/* cred_gen() when made: the parent's if older */
	void *owner;
	struct rdma_dev *dev;
	struct ibv_comp_channel *cch;
	bool cch_owned;		/* a server connection's own channel */
	struct ibv_cq *cq;	/* receives (a client's: everything) */
	struct ibv_cq *scq;	/* sends; the same CQ on a client */
	struct ibv_qp *qp;
	bool armed;		/* notification requested on cq */
	bool sarmed;		/* ... and on a separate scq (only to wait) */

	/* A client's: the shared channels (ep_hub.c). */
	struct ep_hub *hub;
	int cq_fired;		/* atomic: a completion event came */
	int cm_err;		/* atomic: the connection ended (errno) */
	int kicked;		/* atomic: ep_interrupt() */
	bool cm_connected;	/* under the hub's lock */
	bool cm_ev_ready;	/* under the hub's lock: cm_ev is new */
	struct ep_cm_ev cm_ev;

	/* Negotiated when the connection was set up (RFC 8797 s4.2). */
	struct rpcrdma_cm_pdata local_pd;
	struct rpcrdma_cm_pdata peer_pd;
	bool peer_pd_valid;	/* false: peer sent none, v1 defaults */
	uint32_t send_max;	/* largest Send we may post */
	uint32_t recv_max;	/* largest Send the peer may post */
	bool rinv;		/* both sides set R */
	uint8_t initiator_depth;	/* RDMA Reads we may have in flight */
	uint8_t responder_resources;

	struct ep_attr attr;

	/* Receives: the device's shared receive queue for our role. */
	struct rdma_srq *srq;
	unsigned int reserved;	/* receives of it reserved by us */

	/* Send contexts, attr.nsend of them; their buffers come and go. */
	struct rdma_slab *slab;	/* where their buffers come from */
	struct ep_send *sends;
	uint32_t *send_free;
	unsigned int nsend_free;

	struct rdma_pbuf *held;	/* released after the queue pair */
	unsigned int sq_used;	/* send queue entries not yet retired */
	uint32_t max_msg;	/* largest single RDMA operation */
	uint32_t max_inline;	/* largest Send posted inline (EP_INLINE_DATA) */
	int dead;		/* errno once the connection failed */
};

/* Consume pending completion-channel events without blocking. */
void ep_ack_cq_events(struct ep *ep);

/* Give the pool buffers a Send carried back to the pool. */
void ep_release_attach(struct ep *ep, struct ep_send *s);

/* Give back what a queue pair that is gone left in its CQs. */
void ep_drain_dead(struct ep *ep);
/* O_NONBLOCK on a channel's descriptor: 0 or -errno. */
int ep_set_nonblock(int fd);

#endif
