/*
 * Shared receive queues (rdma_dev.h): one per device and role, holding the
 * receive buffers of all its queue pairs.
 *
 * Every receive a peer may consume is reserved first: a server
 * connection reserves its credits for its lifetime, a client one receive
 * per call in flight.  So a message sent within the credits always finds
 * a posted buffer (RFC 8166 s4.3: no receiver-not-ready), although the
 * queue holds only what is promised, not a ring per connection.  A buffer
 * taken by a completion is the receiver's until it posts it again
 * (rdma_srq_post); completions flushed from a queue pair that goes away
 * give their buffers back the same way (ep_destroy), so none is lost.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ep.h"
#include "rdma_dev.h"

/* Buffers registered at a time. */
#define SRQ_BLOCK 16u
/* Work requests the queue is created with; it doubles when resizable. */
#define SRQ_FIRST_WR 256u

struct rdma_srq {
	struct rdma_dev *dev;		/* a reference of ours */
	enum rdma_srq_role role;
	struct ibv_srq *srq;
	uint32_t buf_size;
	pthread_mutex_t lock;		/* everything below */
	pthread_cond_t released;	/* a reservation went */
	unsigned int users;		/* queue pairs (and setters-up) */
	unsigned int reserved;
	unsigned int nbufs;		/* registered and (re)posted */
	unsigned int max_wr;		/* the queue's capacity */
	struct rdma_buf *blocks;	/* nbufs / SRQ_BLOCK of them */
	unsigned int blocks_cap;
};

/*
 * Guards the devices' srq pointers and the users counts; taken before
 * devs_lock (a new queue registers its buffers under it).
 */
static pthread_mutex_t srqs_lock = PTHREAD_MUTEX_INITIALIZER;

void
rdma_srqs_fork_lock(void)
{
	pthread_mutex_lock(&srqs_lock);
}

void
rdma_srqs_fork_unlock(void)
{
	pthread_mutex_unlock(&srqs_lock);
}

static struct rdma_srq *
srq_create(struct rdma_dev *dev, enum rdma_srq_role role, uint32_t buf_size)
{
	struct ibv_srq_init_attr ia;
	struct rdma_srq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	memset(&ia, 0, sizeof(ia));
	q->max_wr = SRQ_FIRST_WR;
	/* Without resizing, room for what the device allows from the start. */
	if (!(dev->attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE))
		q->max_wr = 16384;
	if (dev->attr.max_srq_wr > 0 && q->max_wr > (unsigned int)dev->attr.max_srq_wr)
		q->max_wr = (unsigned int)dev->attr.max_srq_wr;
	ia.attr.max_wr = q->max_wr;
	ia.attr.max_sge = 1;
	q->srq = ibv_create_srq(dev->pd, &ia);
	if (!q->srq) {
		free(q);
		return NULL;
	}
	q->max_wr = ia.attr.max_wr > q->max_wr ? ia.attr.max_wr : q->max_wr;
	q->dev = dev;
	q->role = role;
	q->buf_size = buf_size;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->released, NULL);
	rdma_dev_hold(dev);
	return q;
}

struct rdma_srq *
rdma_srq_get(struct rdma_dev *dev, enum rdma_srq_role role, uint32_t buf_size)
{
	struct rdma_srq *q;

	if (dev->attr.max_srq <= 0) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	pthread_mutex_lock(&srqs_lock);
	q = dev->srq[role];
	if (!q) {
		q = srq_create(dev, role, buf_size);
		dev->srq[role] = q;
	}
	if (q)
		q->users++;
	pthread_mutex_unlock(&srqs_lock);
	return q;
}

static void
srq_free(struct rdma_srq *q)
{
	unsigned int i;

	ibv_destroy_srq(q->srq);
	for (i = 0; i < q->nbufs / SRQ_BLOCK; i++)
		rdma_buf_free(&q->blocks[i]);
	free(q->blocks);
	pthread_cond_destroy(&q->released);
	pthread_mutex_destroy(&q->lock);
	rdma_dev_put(q->dev);
	free(q);
}

void
rdma_srq_put(struct rdma_srq *q)
{
	bool last;

	if (!q)
		return;
	pthread_mutex_lock(&srqs_lock);
	last = --q->users == 0;
	if (last)
		q->dev->srq[q->role] = NULL;
	pthread_mutex_unlock(&srqs_lock);
	if (last)
		srq_free(q);
}

struct ibv_srq *
rdma_srq_ibv(const struct rdma_srq *q)
{
	return q->srq;
}

uint32_t
rdma_srq_buf_size(const struct rdma_srq *q)
{
	return q->buf_size;
}

uint8_t *
rdma_srq_buf(const struct rdma_srq *q, uint32_t idx)
{
	return q->blocks[idx / SRQ_BLOCK].addr +
	       (size_t)(idx % SRQ_BLOCK) * q->buf_size;
}

int
rdma_srq_post(struct rdma_srq *q, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rdma_srq_buf(q, idx),
		.length = q->buf_size,
		.lkey = q->blocks[idx / SRQ_BLOCK].mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = EP_WRID(EP_WR_RECV, idx),
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	return -ibv_post_srq_recv(q->srq, &wr, &bad);
}

/* Room for one more block in the queue.  Holds q->lock. */
static int
srq_room_locked(struct rdma_srq *q)
{
	struct ibv_srq_attr a;
	unsigned int want = q->max_wr;

	if (q->nbufs + SRQ_BLOCK <= q->max_wr)
		return 0;
	while (want < q->nbufs + SRQ_BLOCK)
		want *= 2;
	if (!(q->dev->attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE) ||
	    (q->dev->attr.max_srq_wr > 0 && want > (unsigned int)q->dev->attr.max_srq_wr))
		return -ENOSPC;
	memset(&a, 0, sizeof(a));
	a.max_wr = want;
	if (ibv_modify_srq(q->srq, &a, IBV_SRQ_MAX_WR))
		return -ENOSPC;
	q->max_wr = want;
	return 0;
}

/* Register and post one more block of receives.  Holds q->lock. */
static int
srq_grow_locked(struct rdma_srq *q)
{
	unsigned int b = q->nbufs / SRQ_BLOCK, i;
	int ret;

	ret = srq_room_locked(q);
	if (ret)
		return ret;
	if (b == q->blocks_cap) {
		unsigned int cap = q->blocks_cap ? 2 * q->blocks_cap : 8;
		struct rdma_buf *nb = realloc(q->blocks, cap * sizeof(*nb));

		if (!nb)
			return -ENOMEM;
		q->blocks = nb;
		q->blocks_cap = cap;
	}
	ret = rdma_buf_alloc(q->dev, &q->blocks[b],
			     (size_t)SRQ_BLOCK * q->buf_size, IBV_ACCESS_LOCAL_WRITE);
	if (ret)
		return ret;
	q->nbufs += SRQ_BLOCK;
	for (i = 0; i < SRQ_BLOCK; i++) {
		ret = rdma_srq_post(q, b * SRQ_BLOCK + i);
		if (ret)
			return ret;	/* the queue is broken: nothing to undo */
	}
	return 0;
}

int
rdma_srq_reserve(struct rdma_srq *q, unsigned int n, bool wait,
		 int64_t deadline_ms)
{
	int ret = 0;

	pthread_mutex_lock(&q->lock);
	while (q->reserved + n > q->nbufs) {
		struct timespec ts;
		int64_t ms;

		ret = srq_grow_locked(q);
		if (ret == 0)
			continue;
		/* Others' calls end and give theirs back; one's own do not. */
		if (!wait || !q->reserved)
			break;
		ms = deadline_ms - ep_now_ms();
		if (ms <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += ms / 1000;
		ts.tv_nsec += (ms % 1000) * 1000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		(void)pthread_cond_timedwait(&q->released, &q->lock, &ts);
		ret = 0;
	}
	if (q->reserved + n <= q->nbufs) {
		q->reserved += n;
		ret = 0;
	} else if (ret != -ETIMEDOUT) {
		ret = -ENOMEM;
	}
	pthread_mutex_unlock(&q->lock);
	return ret;
}

void
rdma_srq_unreserve(struct rdma_srq *q, unsigned int n)
{
	if (!q || !n)
		return;
	pthread_mutex_lock(&q->lock);
	q->reserved = q->reserved >= n ? q->reserved - n : 0;
	pthread_cond_broadcast(&q->released);
	pthread_mutex_unlock(&q->lock);
}

uint64_t
rdma_srq_spare_bytes(struct rdma_dev *dev, enum rdma_srq_role role)
{
	struct rdma_srq *q;
	uint64_t n = 0;

	pthread_mutex_lock(&srqs_lock);
	q = dev->srq[role];
	if (q) {
		pthread_mutex_lock(&q->lock);
		n = (uint64_t)(q->nbufs - q->reserved) * q->buf_size;
		pthread_mutex_unlock(&q->lock);
	}
	pthread_mutex_unlock(&srqs_lock);
	return n;
}
