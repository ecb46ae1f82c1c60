/*
 * The fake endpoint's insides, shared by fake_ep.c (the endpoint, keys,
 * the pool) and fake_srv.c (the scripted server).
 */
#ifndef TESTS_UNIT_FAKE_EP_INT_H
#define TESTS_UNIT_FAKE_EP_INT_H

#include <netinet/in.h>
#include <pthread.h>

#include "fake_ep.h"

#define F_CQ 256

struct ep {
	struct ep_attr attr;
	unsigned int reserved;	/* receives reserved (ep_recv_reserve) */
	int dead;
	bool disconnected;
	uint8_t *recv;
	bool *recv_posted;
	uint8_t *send;
	uint32_t *send_free;
	unsigned int nsend_free;
	uint16_t *send_nwr;
	unsigned int sq_used;
	struct ibv_wc cq[F_CQ];
	unsigned int cq_head, cq_count;
	int kicked;
	pthread_mutex_t cq_lock;	/* the poller polls without ct_lock */
	struct sockaddr_in local;	/* a port of its own per connection */
};

/*
 * The fake's state (keys, receives, the server's calls) is shared by the
 * client's threads and the test's own: every entry point holds this.
 */
void fake_lock(void);
void fake_unlock(void);

/* A completion into the endpoint's CQ (a violation when it is full). */
void cq_push(struct ep *ep, const struct ibv_wc *wc);
/* The server can reach key from now on, or no longer (false: it could not). */
void key_bind(uint32_t key);
bool key_unbind(uint32_t key);

/* The server gets the call the client posted (sge[0] its header). */
void srv_on_call(struct ep *ep, const struct ibv_sge *sge, int nsge);

#endif
