/*
 * RDMA-CM connection setup and the verbs plumbing shared by client and
 * server: queue pair, completion channel, receive ring, header buffers.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "common/log.h"
#include "common/sockaddr.h"
#include "rdma_conn.h"

/* RDMA Reads the peer may have outstanding against us, and we against it. */
#define RDMA_RD_ATOM_MAX 16

int64_t
rdma_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

void
rdma_conn_set_dead(struct rdma_conn *c, int err)
{
	if (!c->dead)
		c->dead = err ? err : ECONNRESET;
}

/* ------------------------------------------------------------------ */
/* Queue pair, completion queue and buffers                            */
/* ------------------------------------------------------------------ */

int
rdma_conn_post_recv(struct rdma_conn *c, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rdma_conn_recv_buf(c, idx),
		.length = c->attr.inline_recv,
		.lkey = c->recv.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = RDMA_WRID(RDMA_WR_RECV, idx),
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;
	int ret = ibv_post_recv(c->qp, &wr, &bad);

	if (ret) {
		rdma_conn_set_dead(c, ret);
		return -ret;
	}
	return 0;
}

int
rdma_conn_get_send(struct rdma_conn *c)
{
	if (!c->nsend_free)
		return -1;
	return (int)c->send_free[--c->nsend_free];
}

void
rdma_conn_put_send(struct rdma_conn *c, uint32_t idx)
{
	c->send_free[c->nsend_free++] = idx;
}

void
rdma_conn_release(struct rdma_conn *c, struct rdma_pbuf *chain)
{
	while (chain) {
		struct rdma_pbuf *next = chain->next;

		chain->next = NULL;
		rdma_pool_put(c->dev, chain);
		chain = next;
	}
}

void
rdma_conn_hold(struct rdma_conn *c, struct rdma_pbuf *pb)
{
	if (pb) {
		pb->next = c->hold;
		c->hold = pb;
	}
}

static bool
sq_room(const struct rdma_conn *c, unsigned int n)
{
	return c->sq_used + n <= c->attr.max_send_wr;
}

int
rdma_conn_post_send(struct rdma_conn *c, uint32_t idx, struct ibv_send_wr *pre,
		    unsigned int npre, struct ibv_sge *sge, int nsge,
		    uint32_t inv_rkey, struct rdma_pbuf *attach)
{
	struct ibv_send_wr wr = {
		.wr_id = RDMA_WRID(RDMA_WR_SEND, idx),
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = inv_rkey ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad, *first = &wr;
	unsigned int i;
	int ret;

	if (c->dead)
		return -c->dead;
	if (!sq_room(c, npre + 1))
		return -EAGAIN;
	if (inv_rkey)
		wr.invalidate_rkey = inv_rkey;
	if (npre) {
		for (i = 0; i + 1 < npre; i++)
			pre[i].next = &pre[i + 1];
		pre[npre - 1].next = &wr;
		first = pre;
	}
	ret = ibv_post_send(c->qp, first, &bad);
	if (ret) {
		rdma_conn_set_dead(c, ret);
		return -ret;
	}
	c->sq_used += npre + 1;
	c->send_wrs[idx] = (uint16_t)(npre + 1);
	c->send_attach[idx] = attach;
	return 0;
}

int
rdma_conn_post_one(struct rdma_conn *c, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret;

	if (c->dead)
		return -c->dead;
	if (!sq_room(c, 1))
		return -EAGAIN;
	wr->next = NULL;
	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(c->qp, wr, &bad);
	if (ret) {
		rdma_conn_set_dead(c, ret);
		return -ret;
	}
	c->sq_used++;
	return 0;
}

/* Consume pending completion-channel events without blocking. */
static void
drain_cq_events(struct rdma_conn *c)
{
	struct ibv_cq *cq;
	void *ctx;
	unsigned int n = 0;

	while (ibv_get_cq_event(c->cch, &cq, &ctx) == 0)
		n++;
	if (n) {
		ibv_ack_cq_events(c->cq, n);
		c->armed = false;
	}
}

int
rdma_conn_poll(struct rdma_conn *c, struct ibv_wc *wc, int max)
{
	int n;

	drain_cq_events(c);
	for (;;) {
		n = ibv_poll_cq(c->cq, max, wc);
		if (n != 0 || c->armed)
			return n < 0 ? -1 : n;
		/* Arm, then poll once more: nothing can slip in between. */
		if (ibv_req_notify_cq(c->cq, 0))
			return -1;
		c->armed = true;
	}
}

bool
rdma_conn_reap_send(struct rdma_conn *c, const struct ibv_wc *wc)
{
	enum rdma_wr_kind kind = RDMA_WRID_KIND(wc->wr_id);
	uint32_t idx = RDMA_WRID_IDX(wc->wr_id);
	unsigned int n = 1;

	if (kind == RDMA_WR_RECV)
		return false;
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			shim_log(SHIM_LOG_WARN, "RDMA %s failed: %s",
				 kind == RDMA_WR_SEND ? "send" :
				 kind == RDMA_WR_READ ? "read" :
				 kind == RDMA_WR_WRITE ? "write" :
				 kind == RDMA_WR_BIND ? "memory window bind" :
				 "invalidate", ibv_wc_status_str(wc->status));
		rdma_conn_set_dead(c, EIO);
	}
	if (kind == RDMA_WR_SEND) {
		n = c->send_wrs[idx];
		c->send_wrs[idx] = 0;
		rdma_conn_release(c, c->send_attach[idx]);
		c->send_attach[idx] = NULL;
		rdma_conn_put_send(c, idx);
	} else if (kind == RDMA_WR_WRITE || kind == RDMA_WR_BIND) {
		/* Unsignaled: seen only when failed; the Send retires it. */
		n = 0;
	}
	c->sq_used = c->sq_used >= n ? c->sq_used - n : 0;
	return true;
}

/* Build the CQ, QP and buffers on c->id, and post every receive. */
static int
setup_qp(struct rdma_conn *c)
{
	struct ibv_qp_init_attr qa;
	unsigned int i, cqe;
	int ret;

	c->dev = rdma_dev_get(c->id->verbs);
	if (!c->dev)
		return -ENOMEM;
	/*
	 * R (RFC 8797 s4.1) only where keys are memory windows: rxe breaks
	 * the connection when a registration's key is invalidated remotely,
	 * and the windows of a device with type 2 windows are what a client
	 * exposes and a server can invalidate.
	 */
	if (!c->dev->mw_type2)
		c->local_pd.remote_inv = false;

	c->cch = ibv_create_comp_channel(c->id->verbs);
	if (!c->cch)
		return errno ? -errno : -ENOMEM;
	ret = set_nonblock(c->cch->fd);
	if (ret)
		return ret;

	cqe = c->attr.nrecv + c->attr.max_send_wr + 1;
	if ((int)cqe > c->dev->attr.max_cqe)
		cqe = (unsigned int)c->dev->attr.max_cqe;
	c->cq = ibv_create_cq(c->id->verbs, (int)cqe, c, c->cch, 0);
	if (!c->cq)
		return errno ? -errno : -ENOMEM;
	if (ibv_req_notify_cq(c->cq, 0))
		return -EIO;
	c->armed = true;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = c->attr.max_send_wr;
	qa.cap.max_recv_wr = c->attr.nrecv;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->dev->pd, &qa))
		return errno ? -errno : -ENOMEM;
	c->qp = c->id->qp;

	{
		struct ibv_port_attr pa;

		c->max_msg = 1u << 20;
		if (ibv_query_port(c->id->verbs, c->id->port_num, &pa) == 0 &&
		    pa.max_msg_sz)
			c->max_msg = pa.max_msg_sz;
	}

	ret = rdma_buf_alloc(c->dev, &c->recv,
			     (size_t)c->attr.nrecv * c->attr.inline_recv,
			     IBV_ACCESS_LOCAL_WRITE);
	if (ret)
		return ret;
	ret = rdma_buf_alloc(c->dev, &c->send,
			     (size_t)c->attr.nsend * c->attr.send_buf_size,
			     IBV_ACCESS_LOCAL_WRITE);
	if (ret)
		return ret;
	c->send_free = calloc(c->attr.nsend, sizeof(*c->send_free));
	c->send_wrs = calloc(c->attr.nsend, sizeof(*c->send_wrs));
	c->send_attach = calloc(c->attr.nsend, sizeof(*c->send_attach));
	if (!c->send_free || !c->send_wrs || !c->send_attach)
		return -ENOMEM;
	for (i = c->attr.nsend; i > 0; i--)
		rdma_conn_put_send(c, i - 1);

	for (i = 0; i < c->attr.nrecv; i++) {
		ret = rdma_conn_post_recv(c, i);
		if (ret)
			return ret;
	}
	return 0;
}

static struct rdma_conn *
conn_alloc(const struct rdma_conn_attr *attr)
{
	struct rdma_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->attr = *attr;
	c->local_pd.remote_inv = attr->remote_inv;
	c->local_pd.send_size = attr->inline_send;
	c->local_pd.recv_size = attr->inline_recv;
	return c;
}

/* RFC 8797 s4.2, s5: take the peer's private data or the v1 defaults. */
static void
apply_peer_pdata(struct rdma_conn *c, const void *data, size_t len)
{
	c->peer_pd_valid = rpcrdma_cmp_decode(data, len, &c->peer_pd);
	rpcrdma_cmp_thresholds(&c->local_pd, &c->peer_pd, &c->send_max,
			       &c->recv_max);
	/* s4.1: remote invalidation only when both ends set R. */
	c->rinv = c->local_pd.remote_inv && c->peer_pd.remote_inv;
}

/* RDMA Read resources we offer: what the device allows, at most 16. */
static uint8_t
rd_atom_offer(int device_max)
{
	int v = device_max < RDMA_RD_ATOM_MAX ? device_max : RDMA_RD_ATOM_MAX;

	return (uint8_t)(v > 0 ? v : 1);
}

/* What the server may use: never more than the client offered (0 too). */
static uint8_t
rd_atom_accept(int device_max, unsigned int peer)
{
	unsigned int v = device_max > 0 ? (unsigned int)device_max : 0;

	if (v > RDMA_RD_ATOM_MAX)
		v = RDMA_RD_ATOM_MAX;
	return (uint8_t)(v < peer ? v : peer);
}

void
rdma_conn_disconnect(struct rdma_conn *c)
{
	if (c && c->id)
		rdma_disconnect(c->id);
}

void
rdma_conn_destroy(struct rdma_conn *c)
{
	if (!c)
		return;
	if (c->qp)
		rdma_destroy_qp(c->id);
	rdma_conn_release(c, c->hold);
	rdma_buf_free(&c->recv);
	rdma_buf_free(&c->send);
	if (c->send_attach) {
		unsigned int i;

		for (i = 0; i < c->attr.nsend; i++)
			rdma_conn_release(c, c->send_attach[i]);
	}
	free(c->send_attach);
	free(c->send_wrs);
	free(c->send_free);
	if (c->cq) {
		drain_cq_events(c);
		ibv_destroy_cq(c->cq);
	}
	if (c->cch)
		ibv_destroy_comp_channel(c->cch);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ech)
		rdma_destroy_event_channel(c->ech);
	rdma_dev_put(c->dev);
	free(c);
}

/* ------------------------------------------------------------------ */
/* Client: resolve and connect                                         */
/* ------------------------------------------------------------------ */

/*
 * Wait for the next event on a client's own channel until the deadline.
 * Returns 0 with *ev (to be acked by the caller) or -ETIMEDOUT / -errno.
 */
static int
next_event(struct rdma_event_channel *ch, int64_t deadline,
	   struct rdma_cm_event **ev)
{
	for (;;) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
		int64_t left;
		int ret;

		if (rdma_get_cm_event(ch, ev) == 0)
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		left = deadline - rdma_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		ret = poll(&pfd, 1, (int)left);
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
}

/* One switch from RDMA-CM events to the outcome of a connect step. */
static enum rdma_fail
event_failure(const struct rdma_cm_event *ev, int *err)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		/* No RDMA device serves the route to this address. */
		*err = ev->status ? -ev->status : ENETUNREACH;
		return RDMA_FAIL_NOT_RDMA;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		*err = ev->status ? -ev->status : EHOSTUNREACH;
		return RDMA_FAIL_UNREACHABLE;
	case RDMA_CM_EVENT_REJECTED:
		*err = ECONNREFUSED;
		return RDMA_FAIL_REFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		*err = ev->status ? abs(ev->status) : EHOSTUNREACH;
		return RDMA_FAIL_UNREACHABLE;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		*err = ENODEV;
		return RDMA_FAIL_NO_DEVICE;
	default:
		*err = EPROTO;
		return RDMA_FAIL_ERROR;
	}
}

/* Wait for 'want'; anything else is a failure mapped by event_failure(). */
static enum rdma_fail
expect_event(struct rdma_conn *c, int64_t deadline,
	     enum rdma_cm_event_type want, int *err)
{
	struct rdma_cm_event *ev;
	enum rdma_fail why = RDMA_FAIL_NONE;
	int ret = next_event(c->ech, deadline, &ev);

	if (ret == -ETIMEDOUT) {
		*err = ETIMEDOUT;
		return RDMA_FAIL_TIMEOUT;
	}
	if (ret) {
		*err = -ret;
		return RDMA_FAIL_ERROR;
	}
	shim_log(SHIM_LOG_DEBUG, "connect: %s (status %d)",
		 rdma_event_str(ev->event), ev->status);
	if (ev->event != want)
		why = event_failure(ev, err);
	else if (want == RDMA_CM_EVENT_ESTABLISHED)
		apply_peer_pdata(c, ev->param.conn.private_data,
				 ev->param.conn.private_data_len);
	rdma_ack_cm_event(ev);
	return why;
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

struct rdma_conn *
rdma_conn_connect(const struct sockaddr *dst, const struct sockaddr *src,
		  int timeout_ms, const struct rdma_conn_attr *attr,
		  enum rdma_fail *why, int *err)
{
	int64_t deadline = rdma_now_ms() + timeout_ms;
	struct rdma_conn_param param;
	struct sockaddr_storage bind_sa;
	uint8_t pdata[RPCRDMA1_CMP_LEN];
	struct rdma_conn *c;
	int ret;

	*why = RDMA_FAIL_ERROR;
	*err = ENOMEM;
	c = conn_alloc(attr);
	if (!c)
		return NULL;

	c->ech = rdma_create_event_channel();
	if (!c->ech) {
		*err = errno;
		if (errno_is_no_device(errno))
			*why = RDMA_FAIL_NO_DEVICE;
		goto out_destroy;
	}
	if (set_nonblock(c->ech->fd))
		goto out_errno;
	if (rdma_create_id(c->ech, &c->id, c, RDMA_PS_TCP)) {
		c->id = NULL;
		*err = errno;
		if (errno_is_no_device(errno))
			*why = RDMA_FAIL_NO_DEVICE;
		goto out_destroy;
	}

	/*
	 * Bind to the source address the routing table picks for dst: when
	 * that address is not on an RDMA device we know at once, instead of
	 * after RDMA-CM's address resolution gives up (seconds).  Keep the
	 * local port of the socket libtirpc bound too (a reserved port for
	 * root callers): servers check it for "secure" requests.  The RDMA
	 * port space is separate from TCP's, so this usually works; if not,
	 * an ephemeral port is as good as TCP without bindresvport.
	 */
	ret = route_source(dst, src, &bind_sa);
	if (ret) {
		*err = -ret;
		*why = RDMA_FAIL_UNREACHABLE;
		goto out_destroy;
	}
	if (rdma_bind_addr(c->id, (struct sockaddr *)&bind_sa)) {
		if (!sa_port((struct sockaddr *)&bind_sa) ||
		    (errno != EADDRINUSE && errno != EACCES)) {
			/* ENODEV, EADDRNOTAVAIL: no RDMA device on that route. */
			*err = errno;
			*why = RDMA_FAIL_NOT_RDMA;
			goto out_destroy;
		}
		shim_log(SHIM_LOG_DEBUG, "connect: cannot keep local port %u: %s",
			 sa_port((struct sockaddr *)&bind_sa), strerror(errno));
		rdma_destroy_id(c->id);
		if (rdma_create_id(c->ech, &c->id, c, RDMA_PS_TCP)) {
			c->id = NULL;
			goto out_errno;
		}
		sa_set_port((struct sockaddr *)&bind_sa, 0);
		if (rdma_bind_addr(c->id, (struct sockaddr *)&bind_sa)) {
			*err = errno;
			*why = RDMA_FAIL_NOT_RDMA;
			goto out_destroy;
		}
	}
	if (!c->id->verbs) {
		*err = ENODEV;
		*why = RDMA_FAIL_NOT_RDMA;
		goto out_destroy;
	}

	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)dst,
			      (int)(deadline - rdma_now_ms()))) {
		*err = errno;
		*why = errno_is_no_device(errno) || errno == EADDRNOTAVAIL ?
		       RDMA_FAIL_NOT_RDMA : RDMA_FAIL_UNREACHABLE;
		goto out_destroy;
	}
	*why = expect_event(c, deadline, RDMA_CM_EVENT_ADDR_RESOLVED, err);
	if (*why)
		goto out_destroy;

	if (rdma_resolve_route(c->id, (int)(deadline - rdma_now_ms()))) {
		*err = errno;
		*why = RDMA_FAIL_UNREACHABLE;
		goto out_destroy;
	}
	*why = expect_event(c, deadline, RDMA_CM_EVENT_ROUTE_RESOLVED, err);
	if (*why)
		goto out_destroy;

	ret = setup_qp(c);
	if (ret) {
		*why = RDMA_FAIL_ERROR;
		*err = -ret;
		goto out_destroy;
	}

	/* RFC 8797 s4: our private data; s5.1: the server may ignore it. */
	rpcrdma_cmp_encode(pdata, &c->local_pd);
	memset(&param, 0, sizeof(param));
	param.private_data = pdata;
	param.private_data_len = sizeof(pdata);
	c->responder_resources = rd_atom_offer(c->dev->attr.max_qp_rd_atom);
	c->initiator_depth = rd_atom_offer(c->dev->attr.max_qp_init_rd_atom);
	param.responder_resources = c->responder_resources;
	param.initiator_depth = c->initiator_depth;
	/* Bounded transport retries; RNR means broken flow control. */
	param.retry_count = 6;
	param.rnr_retry_count = 6;
	if (rdma_connect(c->id, &param)) {
		*err = errno;
		*why = RDMA_FAIL_UNREACHABLE;
		goto out_destroy;
	}
	*why = expect_event(c, deadline, RDMA_CM_EVENT_ESTABLISHED, err);
	if (*why)
		goto out_destroy;
	*err = 0;
	return c;

out_errno:
	*err = errno;
out_destroy:
	rdma_conn_destroy(c);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Server: accept                                                      */
/* ------------------------------------------------------------------ */

struct rdma_conn *
rdma_conn_accept(struct rdma_cm_id *id, const struct rdma_conn_param *req,
		 const struct rdma_conn_attr *attr, int *err)
{
	struct rdma_conn_param param;
	uint8_t pdata[RPCRDMA1_CMP_LEN];
	struct rdma_conn *c;
	int ret;

	c = conn_alloc(attr);
	if (!c) {
		*err = ENOMEM;
		rdma_reject(id, NULL, 0);
		return NULL;
	}
	c->id = id;
	id->context = c;

	ret = setup_qp(c);
	if (ret) {
		*err = -ret;
		goto out_reject;
	}
	apply_peer_pdata(c, req->private_data, req->private_data_len);

	rpcrdma_cmp_encode(pdata, &c->local_pd);
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
	c->initiator_depth = rd_atom_accept(c->dev->attr.max_qp_init_rd_atom,
					    req->initiator_depth);
	c->responder_resources = rd_atom_accept(c->dev->attr.max_qp_rd_atom,
						req->responder_resources);
	param.initiator_depth = c->initiator_depth;
	param.responder_resources = c->responder_resources;
	param.retry_count = 6;
	param.rnr_retry_count = 6;
	if (rdma_accept(id, &param)) {
		*err = errno;
		goto out_reject;
	}
	*err = 0;
	return c;

out_reject:
	rdma_reject(id, NULL, 0);
	/* The caller still owns the id (it came with the event). */
	if (c->qp) {
		rdma_destroy_qp(id);
		c->qp = NULL;
	}
	c->id = NULL;
	id->context = NULL;
	rdma_conn_destroy(c);
	return NULL;
}
