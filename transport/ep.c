/*
 * The endpoint's setup and teardown (ep.h): RDMA-CM resolve, connect and
 * accept with RFC 8797 private data, the queue pair, completion queues
 * and channel, and its share of the device's receive queue.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "budget.h"
#include "common/log.h"
#include "common/sockaddr.h"
#include "cred.h"
#include "ep_int.h"
#include "rpcrdma2_xdr.h"

/* RDMA Reads the peer may have outstanding against us, and we against it. */
#define EP_RD_ATOM_MAX 16

int
ep_set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/* ------------------------------------------------------------------ */
/* What was negotiated                                                 */
/* ------------------------------------------------------------------ */

uint32_t
ep_send_max(const struct ep *ep)
{
	return ep->send_max;
}

uint32_t
ep_recv_max(const struct ep *ep)
{
	return ep->recv_max;
}

bool
ep_rinv(const struct ep *ep)
{
	return ep->rinv;
}

bool
ep_rinv_offered(const struct ep *ep)
{
	return ep->local_pd.remote_inv;
}

bool
ep_peer_pdata(const struct ep *ep)
{
	return ep->peer_pd_valid;
}

void
ep_inline_v2(struct ep *ep)
{
	if (ep->peer_pd_valid)
		return;
	ep->send_max = ep->attr.inline_send < RPCRDMA2_INLINE_DEFAULT ?
		       ep->attr.inline_send : RPCRDMA2_INLINE_DEFAULT;
	ep->recv_max = ep->attr.inline_recv < RPCRDMA2_INLINE_DEFAULT ?
		       ep->attr.inline_recv : RPCRDMA2_INLINE_DEFAULT;
}

uint8_t
ep_read_depth(const struct ep *ep)
{
	return ep->initiator_depth;
}

uint32_t
ep_max_msg(const struct ep *ep)
{
	return ep->max_msg;
}

unsigned int
ep_nrecv(const struct ep *ep)
{
	return ep->attr.nrecv;
}

struct rdma_dev *
ep_dev(const struct ep *ep)
{
	return ep->dev;
}

int
ep_comp_fd(const struct ep *ep)
{
	return ep->cch->fd;
}

const struct sockaddr *
ep_local_addr(const struct ep *ep)
{
	return rdma_get_local_addr(ep->id);
}

const struct sockaddr *
ep_peer_addr(const struct ep *ep)
{
	return rdma_get_peer_addr(ep->id);
}

struct ep *
ep_from_id(const struct rdma_cm_id *id)
{
	return id->context;
}

void
ep_set_owner(struct ep *ep, void *owner)
{
	ep->owner = owner;
}

void *
ep_owner(const struct ep *ep)
{
	return ep ? ep->owner : NULL;
}

/* ------------------------------------------------------------------ */
/* Queue pair, completion queue and buffers                            */
/* ------------------------------------------------------------------ */

/* The completion channel: a client's shared one, a server's own. */
static int
setup_channel(struct ep *ep)
{
	if (ep->hub) {
		ep->cch = ep_hub_comp(ep->hub, ep->id->verbs);
		return ep->cch ? 0 : (errno ? -errno : -ENOMEM);
	}
	ep->cch = ibv_create_comp_channel(ep->id->verbs);
	if (!ep->cch)
		return errno ? -errno : -ENOMEM;
	ep->cch_owned = true;
	return ep_set_nonblock(ep->cch->fd);
}

static struct ibv_cq *
create_cq(struct ep *ep, unsigned int cqe)
{
	if ((int)cqe > ep->dev->attr.max_cqe)
		cqe = (unsigned int)ep->dev->attr.max_cqe;
	return ibv_create_cq(ep->id->verbs, (int)cqe, ep, ep->cch, 0);
}

/*
 * Completion queues: one for everything on a client; on a server, one
 * for receives and one for sends, so that other connections can reap
 * its finished Sends (and the buffers they hold) without taking its
 * calls.  The send CQ signals the channel only while the connection
 * waits for it (ep_wait, ep_wake): its completions are taken with the
 * next call's.
 */
static int
setup_cqs(struct ep *ep)
{
	unsigned int nrecv = ep->hub ? ep->attr.nsend + 8 : ep->attr.nrecv + 8;

	ep->cq = create_cq(ep, nrecv + (ep->hub ? ep->attr.max_send_wr + 1 : 0));
	if (!ep->cq)
		return errno ? -errno : -ENOMEM;
	ep->scq = ep->cq;
	if (!ep->hub) {
		ep->scq = create_cq(ep, ep->attr.max_send_wr + 1);
		if (!ep->scq)
			return errno ? -errno : -ENOMEM;
	}
	if (ibv_req_notify_cq(ep->cq, 0))
		return -EIO;
	ep->armed = true;
	return 0;
}

/*
 * The device's shared receive queue for our role, its buffer size our
 * Receive Size (RFC 8797 s4.2: what we announce is what is posted), and a
 * server connection's credits reserved in it.
 */
static int
setup_srq(struct ep *ep)
{
	int ret;

	ep->srq = rdma_srq_get(ep->dev, ep->hub ? RDMA_SRQ_CLIENT : RDMA_SRQ_SERVER,
			       ep->attr.inline_recv);
	if (!ep->srq)
		return errno ? -errno : -ENOMEM;
	ep->attr.inline_recv = rdma_srq_buf_size(ep->srq);
	ep->local_pd.recv_size = ep->attr.inline_recv;
	if (ep->hub || !ep->attr.nrecv)
		return 0;
	ret = rdma_srq_reserve(ep->srq, ep->attr.nrecv, false, 0);
	if (ret == 0)
		ep->reserved = ep->attr.nrecv;
	return ret;
}

/* Build the channel, CQs and QP on ep->id, and its share of receives. */
static int
setup_qp(struct ep *ep)
{
	struct ibv_qp_init_attr qa;
	struct ibv_port_attr pa;
	unsigned int i;
	int ret;

	ep->dev = rdma_dev_get(ep->id->verbs);
	if (!ep->dev)
		return -ENOMEM;
	ret = setup_channel(ep);
	if (!ret)
		ret = setup_cqs(ep);
	if (!ret)
		ret = setup_srq(ep);
	if (ret)
		return ret;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = ep->scq;
	qa.recv_cq = ep->cq;
	qa.srq = rdma_srq_ibv(ep->srq);
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = ep->attr.max_send_wr;
	qa.cap.max_send_sge = 2;
	qa.cap.max_inline_data = EP_INLINE_DATA;
	if (rdma_create_qp(ep->id, ep->dev->pd, &qa)) {
		/* A device that copies no data into its send queue. */
		qa.cap.max_inline_data = 0;
		if (rdma_create_qp(ep->id, ep->dev->pd, &qa))
			return errno ? -errno : -ENOMEM;
	}
	ep->qp = ep->id->qp;
	/* What the device granted (ibv_create_qp writes it back). */
	ep->max_inline = qa.cap.max_inline_data;

	ep->max_msg = 1u << 20;
	if (ibv_query_port(ep->id->verbs, ep->id->port_num, &pa) == 0 &&
	    pa.max_msg_sz)
		ep->max_msg = pa.max_msg_sz;

	ep->slab = rdma_slab_of(ep->dev, ep->attr.send_buf_size);
	ep->send_free = calloc(ep->attr.nsend, sizeof(*ep->send_free));
	ep->sends = calloc(ep->attr.nsend, sizeof(*ep->sends));
	if (!ep->slab || !ep->send_free || !ep->sends)
		return -ENOMEM;
	for (i = ep->attr.nsend; i > 0; i--)
		ep->send_free[ep->nsend_free++] = i - 1;
	return 0;
}

static struct ep *
ep_alloc(const struct ep_attr *attr)
{
	struct ep *ep = calloc(1, sizeof(*ep));

	if (!ep)
		return NULL;
	ep->attr = *attr;
	ep->gen = cred_gen();
	ep->local_pd.remote_inv = attr->remote_inv;
	ep->local_pd.send_size = attr->inline_send;
	ep->local_pd.recv_size = attr->inline_recv;
	return ep;
}

/* RFC 8797 s4.2, s5: take the peer's private data or the v1 defaults. */
static void
apply_peer_pdata(struct ep *ep, const void *data, size_t len)
{
	ep->peer_pd_valid = rpcrdma_cmp_decode(data, len, &ep->peer_pd);
	rpcrdma_cmp_thresholds(&ep->local_pd, &ep->peer_pd, &ep->send_max,
			       &ep->recv_max);
	/* s4.1: remote invalidation only when both ends set R. */
	ep->rinv = ep->local_pd.remote_inv && ep->peer_pd.remote_inv;
}

/* RDMA Read resources we offer: what the device allows, at most 16. */
static uint8_t
rd_atom_offer(int device_max)
{
	int v = device_max < EP_RD_ATOM_MAX ? device_max : EP_RD_ATOM_MAX;

	return (uint8_t)(v > 0 ? v : 1);
}

/* What the server may use: never more than the client offered (0 too). */
static uint8_t
rd_atom_accept(int device_max, unsigned int peer)
{
	unsigned int v = device_max > 0 ? (unsigned int)device_max : 0;

	if (v > EP_RD_ATOM_MAX)
		v = EP_RD_ATOM_MAX;
	return (uint8_t)(v < peer ? v : peer);
}

void
ep_disconnect(struct ep *ep)
{
	if (!ep || !ep->id || ep->cm_lost)
		return;
	/* The queue pair goes to error first; then the peer is told. */
	if (rdma_disconnect(ep->id) && cm_refused(ep->id->channel))
		rdma_disconnect(ep->id);
}

void
ep_cm_lost(struct ep *ep)
{
	ep->cm_lost = true;
}

/* Memory RDMA operations could target, now that the queue pair is gone. */
static void
ep_release_held(struct ep *ep)
{
	struct rdma_pbuf *pb;

	while ((pb = ep->held) != NULL) {
		ep->held = pb->held_next;
		pb->held_next = NULL;
		rdma_pool_put(ep->dev, pb);
	}
}

void
ep_destroy(struct ep *ep)
{
	unsigned int i;

	if (!ep)
		return;
	/* The shared channels hand out no event of ours meanwhile. */
	if (ep->hub)
		ep_hub_lock(ep->hub);
	if (ep->qp) {
		ep_drain_dead(ep);
		rdma_destroy_qp(ep->id);
		ep_drain_dead(ep);
	}
	ep_release_held(ep);
	if (ep->sends) {
		for (i = 0; i < ep->attr.nsend; i++) {
			ep_release_attach(ep, &ep->sends[i]);
			rdma_sbuf_put(ep->sends[i].buf);
		}
	}
	free(ep->sends);
	free(ep->send_free);
	if (ep->cq && !ep->hub)
		ep_ack_cq_events(ep);
	if (ep->scq && ep->scq != ep->cq)
		ibv_destroy_cq(ep->scq);
	if (ep->cq)
		ibv_destroy_cq(ep->cq);
	if (ep->cch && ep->cch_owned)
		ibv_destroy_comp_channel(ep->cch);
	/* An id whose channel is gone cannot be destroyed: it is left. */
	if (ep->id && !ep->cm_lost)
		cm_destroy_id(ep->id);
	if (ep->hub) {
		ep_hub_unlock(ep->hub);
		ep_hub_put(ep->hub);
	}
	if (ep->srq) {
		rdma_srq_unreserve(ep->srq, ep->reserved);
		rdma_srq_put(ep->srq);
	}
	rdma_dev_put(ep->dev);
	free(ep);
}

bool
ep_forked(const struct ep *ep)
{
	return ep->gen != cred_gen();
}

unsigned int
ep_gen(const struct ep *ep)
{
	return ep->gen;
}

bool
ep_gen_forked(unsigned int gen)
{
	return gen != cred_gen();
}

void
ep_abandon(struct ep *ep)
{
	if (!ep)
		return;
	/*
	 * Only this process's copies of the descriptors go: the queue pair,
	 * its memory (not even mapped here when fork-protected) and the
	 * verbs objects are the parent's.
	 */
	if (ep->cch && ep->cch_owned)
		close(ep->cch->fd);
	/*
	 * A client's shared channels are the parent's hub's: the child has a
	 * hub of its own (ep_hub.c), and the old one's lock may have been
	 * held at the fork.  Its descriptors are close-on-exec.
	 */
	free(ep->sends);
	free(ep->send_free);
	free(ep);
}

/* ------------------------------------------------------------------ */
/* Client: resolve and connect                                         */
/* ------------------------------------------------------------------ */

/* One switch from RDMA-CM events to the outcome of a connect step. */
static enum rdma_fail
event_failure(const struct ep_cm_ev *ev, int *err)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		/* No RDMA device serves the route to this address. */
		*err = ev->status ? ev->status : -ENETUNREACH;
		return RDMA_FAIL_NOT_RDMA;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		*err = ev->status ? ev->status : -EHOSTUNREACH;
		return RDMA_FAIL_UNREACHABLE;
	case RDMA_CM_EVENT_REJECTED:
		*err = -ECONNREFUSED;
		return RDMA_FAIL_REFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		*err = ev->status ? -abs(ev->status) : -EHOSTUNREACH;
		return RDMA_FAIL_UNREACHABLE;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		*err = -ENODEV;
		return RDMA_FAIL_NO_DEVICE;
	default:
		*err = -EPROTO;
		return RDMA_FAIL_ERROR;
	}
}

/*
 * Wait for 'want'; anything else is a failure mapped by event_failure().
 * Returns 0, or a negative errno with *why set.
 */
static int
expect_event(struct ep *ep, int64_t deadline, enum rdma_cm_event_type want,
	     enum rdma_fail *why)
{
	struct ep_cm_ev ev;
	int ret = ep_hub_cm_wait(ep, deadline, &ev);

	if (ret) {
		*why = ret == -ETIMEDOUT ? RDMA_FAIL_TIMEOUT : RDMA_FAIL_ERROR;
		return ret;
	}
	shim_log(SHIM_LOG_DEBUG, "connect: %s (status %d)",
		 rdma_event_str(ev.event), ev.status);
	if (ev.event != want)
		*why = event_failure(&ev, &ret);
	else if (want == RDMA_CM_EVENT_ESTABLISHED)
		apply_peer_pdata(ep, ev.pdata, ev.pdata_len);
	return ret;
}

/*
 * The local address the kernel would use to reach dst (a connected UDP
 * socket sends nothing), with the port of src when src is given.
 */
static int
route_source(const struct sockaddr *dst, const struct sockaddr *src,
	     struct sockaddr_storage *out)
{
	socklen_t len = sizeof(*out);
	int fd, ret = 0;

	fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, dst, sa_len(dst)) < 0 ||
	    getsockname(fd, (struct sockaddr *)out, &len) < 0)
		ret = -errno;
	close(fd);
	if (!ret)
		sa_set_port((struct sockaddr *)out, src ? sa_port(src) : 0);
	return ret;
}

/* rdma_create_event_channel() fails this way when RDMA-CM is absent. */
static bool
errno_is_no_device(int e)
{
	return e == ENODEV || e == ENOENT || e == ENXIO || e == ENOSYS ||
	       e == EAFNOSUPPORT || e == EPROTONOSUPPORT;
}

/* A new id on the client's channel, its context the endpoint. */
static int
create_id(struct ep *ep)
{
	return cm_create_id(ep_hub_cm(ep->hub), &ep->id, ep);
}

/*
 * Bind to the source address the routing table picks for dst: when that
 * address is not on an RDMA device we know at once, instead of after
 * RDMA-CM's address resolution gives up (seconds).  Keep the local port
 * of the socket libtirpc bound too (a reserved port for root callers):
 * servers check it for "secure" requests.  The RDMA port space is
 * separate from TCP's, so this usually works; if not, an ephemeral port
 * is as good as TCP without bindresvport.
 */
static int
bind_source(struct ep *ep, const struct sockaddr *dst,
	    const struct sockaddr *src, enum rdma_fail *why)
{
	struct sockaddr_storage bind_sa;
	struct sockaddr *sa = (struct sockaddr *)&bind_sa;
	int ret;

	ret = route_source(dst, src, &bind_sa);
	if (ret) {
		*why = RDMA_FAIL_UNREACHABLE;
		return ret;
	}
	if (rdma_bind_addr(ep->id, sa)) {
		if (!sa_port(sa) || (errno != EADDRINUSE && errno != EACCES)) {
			/* ENODEV, EADDRNOTAVAIL: no RDMA device on that route. */
			*why = RDMA_FAIL_NOT_RDMA;
			return -errno;
		}
		shim_log(SHIM_LOG_DEBUG, "connect: cannot keep local port %u: %s",
			 sa_port(sa), strerror(errno));
		cm_destroy_id(ep->id);
		*why = RDMA_FAIL_ERROR;
		ret = create_id(ep);
		if (ret)
			return ret;
		sa_set_port(sa, 0);
		if (rdma_bind_addr(ep->id, sa)) {
			*why = RDMA_FAIL_NOT_RDMA;
			return -errno;
		}
	}
	if (!ep->id->verbs) {
		*why = RDMA_FAIL_NOT_RDMA;
		return -ENODEV;
	}
	return 0;
}

/* Resolve the address, then the route, within the deadline. */
static int
resolve(struct ep *ep, const struct sockaddr *dst, int64_t deadline,
	enum rdma_fail *why)
{
	int ret;

	if (rdma_resolve_addr(ep->id, NULL, (struct sockaddr *)dst,
			      (int)(deadline - ep_now_ms()))) {
		*why = errno_is_no_device(errno) || errno == EADDRNOTAVAIL ?
		       RDMA_FAIL_NOT_RDMA : RDMA_FAIL_UNREACHABLE;
		return -errno;
	}
	ret = expect_event(ep, deadline, RDMA_CM_EVENT_ADDR_RESOLVED, why);
	if (ret)
		return ret;
	if (rdma_resolve_route(ep->id, (int)(deadline - ep_now_ms()))) {
		*why = RDMA_FAIL_UNREACHABLE;
		return -errno;
	}
	return expect_event(ep, deadline, RDMA_CM_EVENT_ROUTE_RESOLVED, why);
}

int
ep_connect(const struct sockaddr *dst, const struct sockaddr *src,
	   int timeout_ms, const struct ep_attr *attr, struct ep **out,
	   enum rdma_fail *why)
{
	int64_t deadline = ep_now_ms() + timeout_ms;
	struct rdma_conn_param param;
	uint8_t pdata[RPCRDMA1_CMP_LEN];
	struct ep *ep;
	int ret;

	*why = RDMA_FAIL_ERROR;
	ep = ep_alloc(attr);
	if (!ep)
		return -ENOMEM;

	ep->hub = ep_hub_get();
	if (!ep->hub) {
		ret = errno ? -errno : -ENOMEM;
		if (errno_is_no_device(errno))
			*why = RDMA_FAIL_NO_DEVICE;
		goto out_destroy;
	}
	ret = create_id(ep);
	if (ret) {
		if (errno_is_no_device(-ret))
			*why = RDMA_FAIL_NO_DEVICE;
		goto out_destroy;
	}
	ret = bind_source(ep, dst, src, why);
	if (ret)
		goto out_destroy;
	ret = resolve(ep, dst, deadline, why);
	if (ret)
		goto out_destroy;

	cred_verbs_fd(ep->id->verbs->cmd_fd);
	ret = setup_qp(ep);
	if (ret) {
		*why = ret == -ENOMEM ? RDMA_FAIL_MEMLOCK : RDMA_FAIL_ERROR;
		goto out_destroy;
	}
	/*
	 * R (RFC 8797 s4.1) from a client only where its keys are memory
	 * windows: rxe breaks the connection when a registration's key is
	 * invalidated remotely.  A server's R says it may send With
	 * Invalidate, which needs nothing of its own device.
	 */
	if (!ep->dev->mw_type2)
		ep->local_pd.remote_inv = false;

	/* RFC 8797 s4: our private data; s5.1: the server may ignore it. */
	rpcrdma_cmp_encode(pdata, &ep->local_pd);
	memset(&param, 0, sizeof(param));
	param.private_data = pdata;
	param.private_data_len = sizeof(pdata);
	/*
	 * Reads the server may issue (its Read chunks' pulls), none of our
	 * own: a client never reads from its server (as the Linux client).
	 */
	ep->responder_resources = rd_atom_offer(ep->dev->attr.max_qp_rd_atom);
	ep->initiator_depth = 0;
	param.responder_resources = ep->responder_resources;
	param.initiator_depth = ep->initiator_depth;
	/*
	 * Bounded transport retries.  No RNR retry, as the kernel's client
	 * and server: credits (RFC 8166 s4.3) promise a posted receive for
	 * every message, so a Send that finds none is a flow-control bug,
	 * to surface as a failed connection rather than be retried away.
	 */
	param.retry_count = 6;
	param.rnr_retry_count = 0;
	if (rdma_connect(ep->id, &param)) {
		ret = -errno;
		*why = RDMA_FAIL_UNREACHABLE;
		goto out_destroy;
	}
	ret = expect_event(ep, deadline, RDMA_CM_EVENT_ESTABLISHED, why);
	if (ret)
		goto out_destroy;
	ep_hub_connected(ep);
	*why = RDMA_FAIL_NONE;
	*out = ep;
	return 0;

out_destroy:
	ep_destroy(ep);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Server: accept                                                      */
/* ------------------------------------------------------------------ */

/*
 * The client withdrew the request (it gave up waiting, or its process
 * ended): its reject reached the CM first, which then refuses every step
 * of the answer, the queue pair's set-up and the accept, with EINVAL.
 * Asking the CM for the attributes of a queue pair's first state tells it
 * apart from a failure of our own; call it before rejecting.
 */
static bool
request_withdrawn(struct rdma_cm_id *id)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_INIT };
	int mask;

	return rdma_init_qp_attr(id, &qa, &mask) && errno == EINVAL;
}

int
ep_accept(struct rdma_cm_id *id, const struct rdma_conn_param *req,
	  const struct ep_attr *attr, struct ep **out)
{
	struct rdma_conn_param param;
	uint8_t pdata[RPCRDMA1_CMP_LEN];
	struct ep *ep;
	int ret;

	ep = ep_alloc(attr);
	if (!ep) {
		rdma_reject(id, NULL, 0);
		return -ENOMEM;
	}
	ep->id = id;
	id->context = ep;

	cred_verbs_fd(id->verbs->cmd_fd);
	ret = setup_qp(ep);
	if (ret)
		goto out_reject;
	apply_peer_pdata(ep, req->private_data, req->private_data_len);

	rpcrdma_cmp_encode(pdata, &ep->local_pd);
	memset(&param, 0, sizeof(param));
	param.private_data = pdata;
	param.private_data_len = sizeof(pdata);
	/*
	 * The request's parameters are already seen from our side: its
	 * initiator_depth is how many RDMA Reads the client will answer
	 * (its responder resources), its responder_resources the Reads the
	 * client may issue.  The Linux client offers 0 / N: it never reads
	 * from us, and answers N Reads (RFC 8166 s4.3.1: Read chunks need
	 * them).  Reads we issue are bounded by what the client answers.
	 */
	ep->initiator_depth = rd_atom_accept(ep->dev->attr.max_qp_init_rd_atom,
					     req->initiator_depth);
	ep->responder_resources = rd_atom_accept(ep->dev->attr.max_qp_rd_atom,
						 req->responder_resources);
	param.initiator_depth = ep->initiator_depth;
	param.responder_resources = ep->responder_resources;
	/* As in ep_connect: no RNR retry, the credits promise a receive. */
	param.retry_count = 6;
	param.rnr_retry_count = 0;
	if (rdma_accept(id, &param)) {
		ret = -errno;
		goto out_reject;
	}
	*out = ep;
	return 0;

out_reject:
	if (request_withdrawn(id))
		ret = -ECONNABORTED;
	else
		rdma_reject(id, NULL, 0);
	/* The caller still owns the id (it came with the event). */
	if (ep->qp) {
		rdma_destroy_qp(id);
		ep->qp = NULL;
	}
	ep->id = NULL;
	id->context = NULL;
	ep_destroy(ep);
	return ret;
}
