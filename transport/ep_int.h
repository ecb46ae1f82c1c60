/*
 * The endpoint's insides, shared by ep.c (setup, teardown, RDMA-CM) and
 * ep_io.c (posting, polling).  Nothing else includes this: the RPC
 * transports use ep.h.
 */
#ifndef TRANSPORT_EP_INT_H
#define TRANSPORT_EP_INT_H

#include "ep.h"
#include "pvtdata.h"

/* Per header send buffer, while its Send is posted. */
struct ep_send {
	uint16_t nwr;		/* send queue entries its completion retires */
	/* Pool buffers given back then (the payload it carried). */
	struct rdma_pbuf *attach[EP_SEND_ATTACH_MAX];
};

struct ep {
	struct rdma_cm_id *id;	/* id->context is this endpoint */
	struct rdma_event_channel *ech;	/* a client's own; NULL on the server */
	bool cm_lost;		/* the id's channel is gone (ep_cm_lost) */
	unsigned int gen;	/* cred_gen() when made: the parent's if older */
	void *owner;
	struct rdma_dev *dev;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	bool armed;		/* CQ notification requested */

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

	/* Receive ring: nrecv buffers of attr.inline_recv octets. */
	struct rdma_buf recv;

	/* Header send buffers, attr.nsend of attr.send_buf_size octets. */
	struct rdma_buf send;
	uint32_t *send_free;
	unsigned int nsend_free;
	struct ep_send *sends;	/* by send buffer */

	struct rdma_pbuf *held;	/* released after the queue pair */
	unsigned int sq_used;	/* send queue entries not yet retired */
	uint32_t max_msg;	/* largest single RDMA operation */
	int dead;		/* errno once the connection failed */
};

/* Consume pending completion-channel events without blocking. */
void ep_ack_cq_events(struct ep *ep);

/* Give the pool buffers a Send carried back to the pool. */
void ep_release_attach(struct ep *ep, struct ep_send *s);

#endif
