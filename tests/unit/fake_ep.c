/*
 * The fake endpoint of the client's unit test (fake_ep.h): the ep_*
 * functions of transport/ep.h and the pool of transport/rdma_dev.h over
 * plain memory, with a scripted server behind ep_post_send().
 *
 * It keeps its own account of which keys the server can reach (bound by
 * the client's window binds, revoked by a local or a remote invalidation)
 * and counts as a violation every invalidation of a key that is not bound
 * (rxe would crash on one), every Read of memory not exposed and every
 * message the server would send beyond the receives posted.  The scripted
 * server itself is in fake_srv.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rpc/rpc.h>

#include "fake_ep.h"
#include "fake_ep_int.h"
#include "rpcrdma_xdr.h"
#include "xdr_grow.h"

/*
 * The fake's state (keys, receives, the server's calls) is shared by the
 * client's threads, each under its CLIENT's lock, and the test's own
 * thread answering held calls: one lock around every entry point.
 */
static pthread_mutex_t state_lock;
static pthread_once_t state_once = PTHREAD_ONCE_INIT;

static void
state_lock_init(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&state_lock, &a);
	pthread_mutexattr_destroy(&a);
}

void
fake_lock(void)
{
	pthread_once(&state_once, state_lock_init);
	pthread_mutex_lock(&state_lock);
}

void
fake_unlock(void)
{
	pthread_mutex_unlock(&state_lock);
}

/* ------------------------------------------------------------------ */
/* The device: memory windows through the context's ops, a plain pool  */
/* ------------------------------------------------------------------ */

unsigned int recv_reserved, fake_connects;
unsigned int fake_sleeps, fake_busy_polls;
bool fake_refuse;
int fake_connect_ms;
unsigned int fake_connecting;
static struct ibv_context fake_ctx;
static struct ibv_pd fake_pd = { .context = &fake_ctx };
static struct rdma_dev fake_dev;
static uint32_t next_mw_key = 0x100;
int mws_alive, pbufs_alive;

static struct ibv_mw *
fake_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw = calloc(1, sizeof(*mw));

	if (!mw)
		return NULL;
	mw->context = pd->context;
	mw->pd = pd;
	mw->type = type;
	fake_lock();
	mw->rkey = next_mw_key;		/* the low octet is the tag */
	next_mw_key += 0x100;
	mws_alive++;
	fake_unlock();
	return mw;
}

/* Deallocating a window revokes the key it was bound with. */
static int
fake_dealloc_mw(struct ibv_mw *mw)
{
	fake_lock();
	(void)key_unbind(mw->rkey);
	mws_alive--;
	fake_unlock();
	free(mw);
	return 0;
}

uint64_t fake_pool_limit, fake_pool_bytes, fake_pool_peak;
unsigned int fake_pool_refused;

struct rdma_pbuf *
rdma_pool_get(struct rdma_dev *dev, size_t len)
{
	size_t want = len < RDMA_POOL_MIN ? RDMA_POOL_MIN : len;
	struct rdma_pbuf *pb;

	/* The memory-lock limit: what the buffers alive may not pass. */
	fake_lock();
	if (fake_pool_limit && fake_pool_bytes + want > fake_pool_limit) {
		fake_pool_refused++;
		fake_unlock();
		errno = ENOMEM;
		return NULL;
	}
	fake_pool_bytes += want;
	if (fake_pool_bytes > fake_pool_peak)
		fake_pool_peak = fake_pool_bytes;
	fake_unlock();
	pb = calloc(1, sizeof(*pb));
	if (!pb)
		return NULL;
	pb->buf.len = want;
	pb->buf.addr = calloc(1, pb->buf.len);
	pb->buf.mr = calloc(1, sizeof(*pb->buf.mr));
	pb->buf.mr->lkey = 0x77;
	__atomic_add_fetch(&pbufs_alive, 1, __ATOMIC_RELAXED);
	return pb;
}

size_t
rdma_pool_class(size_t len)
{
	return len < RDMA_POOL_MIN ? RDMA_POOL_MIN : len;
}

uint64_t rdma_pool_idle_bytes(void) { return 0; }
uint64_t rdma_mem_available(void) { return fake_mem_available; }
uint64_t fake_mem_available = UINT64_MAX;

void
rdma_pool_put(struct rdma_dev *dev, struct rdma_pbuf *pb)
{
	if (!pb)
		return;
	fake_lock();
	fake_pool_bytes -= pb->buf.len;
	fake_unlock();
	free(pb->buf.addr);
	free(pb->buf.mr);
	free(pb);
	__atomic_sub_fetch(&pbufs_alive, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* What the server can reach                                           */
/* ------------------------------------------------------------------ */

static uint32_t bound[F_KEYS];
unsigned int nbound;
static uint32_t local_invs[F_KEYS];	/* keys invalidated locally, in order */
unsigned int nlocal_inv;
unsigned int violations;

/* Where key is among keys[0..n), or n. */
static unsigned int
key_index(const uint32_t *keys, unsigned int n, uint32_t key)
{
	unsigned int i = 0;

	while (i < n && keys[i] != key)
		i++;
	return i;
}

bool
key_bound(uint32_t key)
{
	return key_index(bound, nbound, key) < nbound;
}

void
key_bind(uint32_t key)
{
	if (!key_bound(key) && nbound < F_KEYS)
		bound[nbound++] = key;
}

/* False when the key was not bound. */
bool
key_unbind(uint32_t key)
{
	unsigned int i = key_index(bound, nbound, key);

	if (i == nbound)
		return false;
	bound[i] = bound[--nbound];
	return true;
}

bool
was_invalidated_locally(uint32_t key)
{
	return key_index(local_invs, nlocal_inv, key) < nlocal_inv;
}

/* ------------------------------------------------------------------ */
/* The endpoint                                                        */
/* ------------------------------------------------------------------ */


static uint32_t fake_send_max = 4096;
struct sockaddr_in fake_addr = { .sin_family = AF_INET };

void
cq_push(struct ep *ep, const struct ibv_wc *wc)
{
	pthread_mutex_lock(&ep->cq_lock);
	if (ep->cq_count == F_CQ) {
		violations++;
	} else {
		ep->cq[(ep->cq_head + ep->cq_count) % F_CQ] = *wc;
		__atomic_add_fetch(&ep->cq_count, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&ep->cq_lock);
}

int
ep_connect(const struct sockaddr *dst, const struct sockaddr *src,
	   int timeout_ms, const struct ep_attr *attr, struct ep **out,
	   enum rdma_fail *why)
{
	struct ep *ep;
	unsigned int i;

	if (fake_refuse) {
		*why = RDMA_FAIL_UNREACHABLE;
		return -ECONNREFUSED;
	}
	if (fake_connect_ms) {
		__atomic_add_fetch(&fake_connecting, 1, __ATOMIC_RELEASE);
		(void)poll(NULL, 0, fake_connect_ms < timeout_ms ?
				    fake_connect_ms : timeout_ms);
		__atomic_sub_fetch(&fake_connecting, 1, __ATOMIC_RELEASE);
		if (fake_connect_ms > timeout_ms) {
			*why = RDMA_FAIL_TIMEOUT;
			return -ETIMEDOUT;
		}
	}
	ep = calloc(1, sizeof(*ep));
	fake_connects++;
	ep->local = fake_addr;
	ep->local.sin_port = htons((uint16_t)(40000 + fake_connects));
	pthread_mutex_init(&ep->cq_lock, NULL);
	ep->attr = *attr;
	ep->recv = calloc(attr->nrecv, attr->inline_recv);
	ep->recv_posted = calloc(attr->nrecv, sizeof(bool));
	ep->send = calloc(attr->nsend, attr->send_buf_size);
	ep->send_free = calloc(attr->nsend, sizeof(uint32_t));
	ep->send_nwr = calloc(attr->nsend, sizeof(uint16_t));
	for (i = 0; i < attr->nrecv; i++)
		ep->recv_posted[i] = true;
	for (i = attr->nsend; i > 0; i--)
		ep->send_free[ep->nsend_free++] = i - 1;
	*why = RDMA_FAIL_NONE;
	*out = ep;
	return 0;
}

void
ep_disconnect(struct ep *ep)
{
	ep->disconnected = true;
}

void
ep_destroy(struct ep *ep)
{
	recv_reserved -= ep->reserved;
	free(ep->recv);
	free(ep->recv_posted);
	free(ep->send);
	free(ep->send_free);
	free(ep->send_nwr);
	free(ep);
}

/* fork(): the endpoints are the parent's while fake_forked is set. */
bool fake_forked;
unsigned int fake_abandoned;

bool
ep_forked(const struct ep *ep)
{
	return fake_forked;
}

unsigned int ep_gen(const struct ep *ep) { return 0; }
bool ep_gen_forked(unsigned int gen) { return fake_forked; }

void
ep_abandon(struct ep *ep)
{
	fake_abandoned++;
	ep_destroy(ep);
}

struct rdma_dev *ep_dev(const struct ep *ep) { return &fake_dev; }
uint32_t ep_send_max(const struct ep *ep) { return fake_send_max; }
uint32_t ep_recv_max(const struct ep *ep) { return ep->attr.inline_recv; }
bool ep_rinv(const struct ep *ep) { return true; }
bool ep_rinv_offered(const struct ep *ep) { return true; }
bool ep_peer_pdata(const struct ep *ep) { return true; }
void ep_inline_v2(struct ep *ep) { (void)ep; }
unsigned int ep_nrecv(const struct ep *ep) { return ep->attr.nrecv; }
int ep_comp_fd(const struct ep *ep) { return -1; }
/* Atomic: the test's thread ends a connection under the client's calls. */
int ep_dead(const struct ep *ep) { return __atomic_load_n(&ep->dead, __ATOMIC_ACQUIRE); }

const struct sockaddr *
ep_local_addr(const struct ep *ep)
{
	return (const struct sockaddr *)&ep->local;
}

const struct sockaddr *
ep_peer_addr(const struct ep *ep)
{
	return (const struct sockaddr *)&fake_addr;
}

void
ep_set_dead(struct ep *ep, int err)
{
	int none = 0;

	(void)__atomic_compare_exchange_n(&ep->dead, &none, err ? err : ECONNRESET,
					  false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

uint8_t *
ep_recv_buf(const struct ep *ep, uint32_t i)
{
	return ep->recv + (size_t)i * ep->attr.inline_recv;
}

int
ep_post_recv(struct ep *ep, uint32_t idx)
{
	fake_lock();
	if (ep->recv_posted[idx])
		violations++;		/* posted twice */
	ep->recv_posted[idx] = true;
	fake_unlock();
	return 0;
}

uint8_t *
ep_send_buf(const struct ep *ep, uint32_t i)
{
	return ep->send + (size_t)i * ep->attr.send_buf_size;
}

uint32_t ep_send_buf_size(const struct ep *ep) { return ep->attr.send_buf_size; }
uint32_t ep_send_lkey(const struct ep *ep, uint32_t i) { return 0x55; }

int
ep_recv_reserve(struct ep *ep, int64_t deadline)
{
	fake_lock();
	ep->reserved++;
	recv_reserved++;
	fake_unlock();
	return 0;
}

void
ep_recv_unreserve(struct ep *ep, unsigned int n)
{
	fake_lock();
	if (n > ep->reserved)
		violations++;	/* more given back than taken */
	ep->reserved -= n;
	recv_reserved -= n;
	fake_unlock();
}

/*
 * Nothing signals but ep_interrupt() and a completion another thread
 * made (the scripted server answers as calls are posted): sleep in short
 * steps, as poll() on the channel would until one of those.
 */
int
ep_wait(struct ep *ep, int64_t deadline)
{
	int64_t left;

	fake_sleeps++;
	for (;;) {
		if (__atomic_exchange_n(&ep->kicked, 0, __ATOMIC_ACQ_REL) ||
		    __atomic_load_n(&ep->cq_count, __ATOMIC_ACQUIRE))
			return 0;
		left = deadline - ep_now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		(void)poll(NULL, 0, left < 2 ? (int)left : 2);
	}
}

void
fake_kill(struct ep *ep)
{
	ep_set_dead(ep, ECONNRESET);
	/* What wakes a client when its connection ends (ep_hub.c). */
	__atomic_store_n(&ep->kicked, 1, __ATOMIC_RELEASE);
}

void
ep_interrupt(struct ep *ep)
{
	__atomic_store_n(&ep->kicked, 1, __ATOMIC_RELEASE);
}

bool
ep_interrupted(struct ep *ep)
{
	return __atomic_exchange_n(&ep->kicked, 0, __ATOMIC_ACQ_REL);
}

struct ibv_sge
ep_hdr_sge(const struct ep *ep, uint32_t idx, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)ep_send_buf(ep, idx),
		.length = len,
		.lkey = 0x55,
	};

	return sge;
}

int
ep_get_send(struct ep *ep)
{
	if (!ep->nsend_free)
		return -ENOBUFS;
	return (int)ep->send_free[--ep->nsend_free];
}

void
ep_put_send(struct ep *ep, uint32_t idx)
{
	ep->send_free[ep->nsend_free++] = idx;
}

unsigned int ep_nsend_free(const struct ep *ep) { return ep->nsend_free; }

bool
ep_sq_room(const struct ep *ep, unsigned int n)
{
	return ep->sq_used + n <= ep->attr.max_send_wr;
}

bool ep_sq_idle(const struct ep *ep) { return ep->sq_used == 0; }

int
ep_post_send(struct ep *ep, uint32_t idx, struct ibv_send_wr *pre,
	     unsigned int npre, struct ibv_sge *sge, int nsge,
	     uint32_t inv_rkey, struct rdma_pbuf *const *attach,
	     unsigned int nattach)
{
	struct ibv_wc wc = {
		.wr_id = EP_WRID(EP_WR_SEND, idx),
		.status = IBV_WC_SUCCESS,
	};
	unsigned int i;

	if (ep->dead)
		return -ep->dead;
	if (!ep_sq_room(ep, npre + 1))
		return -EAGAIN;
	fake_lock();
	/* rxe replays local operations queued behind a retried request. */
	if (npre && ep->sq_used)
		violations++;
	ep->sq_used += npre + 1;
	ep->send_nwr[idx] = (uint16_t)(npre + 1);
	if (npre && srv.bind_fail) {
		struct ibv_wc bwc = {
			.wr_id = pre[0].wr_id,
			.status = IBV_WC_MW_BIND_ERR,
		};

		srv.bind_fail--;
		cq_push(ep, &bwc);
		for (i = 1; i < npre; i++) {
			bwc.wr_id = pre[i].wr_id;
			bwc.status = IBV_WC_WR_FLUSH_ERR;
			cq_push(ep, &bwc);
		}
		wc.status = IBV_WC_WR_FLUSH_ERR;
		cq_push(ep, &wc);
		fake_unlock();
		return 0;
	}
	for (i = 0; i < npre; i++)
		if (pre[i].opcode == IBV_WR_BIND_MW)
			key_bind(pre[i].bind_mw.rkey);
	cq_push(ep, &wc);
	srv_on_call(ep, sge, nsge);
	fake_unlock();
	return 0;
}

int
ep_post_one(struct ep *ep, struct ibv_send_wr *wr)
{
	struct ibv_wc wc = {
		.wr_id = wr->wr_id,
		.status = IBV_WC_SUCCESS,
	};

	if (ep->dead)
		return -ep->dead;
	if (!ep_sq_room(ep, 1))
		return -EAGAIN;
	fake_lock();
	if (wr->opcode == IBV_WR_LOCAL_INV && ep->sq_used &&
	    !(wr->send_flags & IBV_SEND_FENCE))
		violations++;	/* queued behind what may be retried */
	ep->sq_used++;
	if (wr->opcode == IBV_WR_LOCAL_INV && srv.inv_fail) {
		wc.status = IBV_WC_WR_FLUSH_ERR;
		ep->dead = ECONNRESET;
		if (srv.inv_fail == INV_FAIL_FLUSHED)
			cq_push(ep, &wc);
		srv.inv_fail = INV_FAIL_NONE;
		fake_unlock();
		return 0;
	}
	if (wr->opcode == IBV_WR_LOCAL_INV) {
		if (!key_unbind(wr->invalidate_rkey))
			violations++;	/* invalidated twice */
		if (nlocal_inv < F_KEYS)
			local_invs[nlocal_inv++] = wr->invalidate_rkey;
	}
	cq_push(ep, &wc);
	fake_unlock();
	return 0;
}

int
ep_poll(struct ep *ep, struct ibv_wc *wc, int max)
{
	int n = 0;

	pthread_mutex_lock(&ep->cq_lock);
	while (n < max && ep->cq_count) {
		wc[n++] = ep->cq[ep->cq_head];
		ep->cq_head = (ep->cq_head + 1) % F_CQ;
		__atomic_sub_fetch(&ep->cq_count, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&ep->cq_lock);
	return n;
}

int
ep_poll_busy(struct ep *ep, struct ibv_wc *wc, int max)
{
	fake_busy_polls++;
	return ep_poll(ep, wc, max);
}

bool
ep_reap_send(struct ep *ep, const struct ibv_wc *wc)
{
	enum ep_wr_kind kind = EP_WRID_KIND(wc->wr_id);
	uint32_t idx = EP_WRID_IDX(wc->wr_id);
	unsigned int n = 1;

	if (kind == EP_WR_RECV)
		return false;
	if (wc->status != IBV_WC_SUCCESS)
		ep_set_dead(ep, EIO);
	if (kind == EP_WR_SEND) {
		n = ep->send_nwr[idx];
		ep_put_send(ep, idx);
	} else if (kind == EP_WR_BIND) {
		n = 0;	/* unsignaled: the Send retires it */
	}
	ep->sq_used -= n;
	return true;
}

void
fake_reset(uint32_t send_max)
{
	memset(&srv, 0, sizeof(srv));
	nbound = nlocal_inv = violations = 0;
	fake_forked = false;
	fake_refuse = false;
	fake_connect_ms = 0;
	fake_abandoned = 0;
	fake_send_max = send_max;
	fake_ctx.ops.alloc_mw = fake_alloc_mw;
	fake_ctx.ops.dealloc_mw = fake_dealloc_mw;
	fake_dev.pd = &fake_pd;
	fake_dev.mw_type2 = true;
	fake_dev.replays_local_ops = true;
	fake_addr.sin_port = htons(20049);
	fake_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

unsigned int
fake_recv_missing(const struct ep *ep)
{
	unsigned int i, n = 0;

	for (i = 0; i < ep->attr.nrecv; i++)
		n += !ep->recv_posted[i];
	return n;
}

bool
fake_disconnected(const struct ep *ep)
{
	return ep->disconnected;
}
