/*
 * The channels client endpoints share (ep_hub.c): one RDMA-CM event
 * channel for the process and one completion channel per device, so that
 * a process holds a constant number of descriptors however many CLIENTs
 * it has (libtirpc already holds a socket for each).  For ep.c and
 * ep_io.c only.
 *
 * A thread that waits for its endpoint becomes the one that polls the
 * shared descriptors, or sleeps until that one hands the events out: a
 * completion event marks its endpoint's cq_fired, a connection event is
 * copied into the endpoint (connect phase) or ends it (cm_err).  Events
 * are acknowledged at once, under the hub's lock, so an endpoint's queue
 * or id can be destroyed under that lock at any time.
 */
#ifndef TRANSPORT_EP_HUB_H
#define TRANSPORT_EP_HUB_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

struct ep;
struct ep_hub;

/* What ep.c needs of an RDMA-CM event once it was acknowledged. */
struct ep_cm_ev {
	enum rdma_cm_event_type event;
	int status;
	uint8_t pdata_len;
	uint8_t pdata[64];
};

/*
 * The process's hub (a counted reference), made on first use, or made
 * anew in a child after fork() or after the old one failed.  NULL with
 * errno set when RDMA-CM is not there.
 */
struct ep_hub *ep_hub_get(void);
void ep_hub_put(struct ep_hub *hub);

struct rdma_event_channel *ep_hub_cm(struct ep_hub *hub);
/* The completion channel for a device's CQs; NULL with errno. */
struct ibv_comp_channel *ep_hub_comp(struct ep_hub *hub,
				     struct ibv_context *verbs);

void ep_hub_lock(struct ep_hub *hub);
void ep_hub_unlock(struct ep_hub *hub);

/*
 * Sleep until the endpoint may have completions or its connection ended,
 * or the deadline (ms, monotonic).  0 or -ETIMEDOUT; -errno when the
 * shared channels failed (the endpoint is dead then).
 */
int ep_hub_wait(struct ep *ep, int64_t deadline);

/* Wake the thread in poll() for everyone (an endpoint was interrupted). */
void ep_hub_interrupt(struct ep_hub *hub);

/* The next connect-phase event of the endpoint: 0, -ETIMEDOUT, -errno. */
int ep_hub_cm_wait(struct ep *ep, int64_t deadline, struct ep_cm_ev *ev);

/* The endpoint is connected: later events only end it. */
void ep_hub_connected(struct ep *ep);

#endif
