/*
 * Per-device protection domain and limits, shared by all connections;
 * every registration of the process, charged to its budget; the pool of
 * large buffers.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "budget.h"
#include "rdma_dev.h"

/* The vendor id Linux's soft-RoCE driver (rxe) reports. */
#define RXE_VENDOR_ID 0xffffffu

#define MiB ((size_t)1 << 20)

/* Guards the device list, reference counts and every device's pool. */
static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rdma_dev *devs;

/* How the pool registers its buffers (tests/unit/test_pool.c replaces them). */
int (*rdma_pool_buf_alloc)(struct rdma_dev *dev, struct rdma_buf *buf,
			   size_t len, int access) = rdma_buf_alloc;
void (*rdma_pool_buf_free)(struct rdma_buf *buf) = rdma_buf_free;

/* fork(): the list is held across it (shim/fork.c). */
void
rdma_dev_fork_lock(void)
{
	rdma_srqs_fork_lock();
	pthread_mutex_lock(&devs_lock);
	rdma_slabs_fork_lock();
	budget_fork_lock();
}

void
rdma_dev_fork_unlock(void)
{
	budget_fork_unlock();
	rdma_slabs_fork_unlock();
	pthread_mutex_unlock(&devs_lock);
	rdma_srqs_fork_unlock();
}

/*
 * In the child: the parent's devices are forgotten, not released.  Their
 * protection domains and registrations are the parent's, and the pool's
 * memory is not even mapped in a fork-protected child.
 */
void
rdma_dev_fork_child(void)
{
	devs = NULL;
	budget_fork_child();
	budget_fork_unlock();
	rdma_slabs_fork_unlock();
	pthread_mutex_unlock(&devs_lock);
	rdma_srqs_fork_unlock();
}

struct rdma_dev *
rdma_dev_get(struct ibv_context *verbs)
{
	struct rdma_dev *dev;

	pthread_mutex_lock(&devs_lock);
	for (dev = devs; dev; dev = dev->next) {
		if (dev->verbs == verbs) {
			dev->refs++;
			goto out;
		}
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		goto out;
	dev->verbs = verbs;
	if (ibv_query_device(verbs, &dev->attr))
		goto out_free;
	dev->pd = ibv_alloc_pd(verbs);
	if (!dev->pd)
		goto out_free;
	dev->mw_type2 = dev->attr.max_mw > 0 &&
			(dev->attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	dev->replays_local_ops = dev->attr.vendor_id == RXE_VENDOR_ID;
	dev->refs = 1;
	dev->next = devs;
	devs = dev;
out:
	pthread_mutex_unlock(&devs_lock);
	return dev;

out_free:
	free(dev);
	dev = NULL;
	goto out;
}

void
rdma_dev_hold(struct rdma_dev *dev)
{
	pthread_mutex_lock(&devs_lock);
	dev->refs++;
	pthread_mutex_unlock(&devs_lock);
}

/* Take the whole idle list of a device.  Caller holds devs_lock. */
static struct rdma_pbuf *
idle_take_all_locked(struct rdma_dev *dev)
{
	struct rdma_pbuf *list = dev->idle;

	dev->idle = NULL;
	dev->nidle = 0;
	dev->idle_bytes = 0;
	return list;
}

static void
pbufs_free(struct rdma_pbuf *list)
{
	while (list) {
		struct rdma_pbuf *pb = list;

		list = pb->idle_next;
		rdma_pool_buf_free(&pb->buf);
		free(pb);
	}
}

void
rdma_dev_put(struct rdma_dev *dev)
{
	struct rdma_pbuf *idle = NULL;
	struct rdma_dev **pp;
	bool last;

	if (!dev)
		return;
	pthread_mutex_lock(&devs_lock);
	last = --dev->refs == 0;
	if (last) {
		for (pp = &devs; *pp; pp = &(*pp)->next) {
			if (*pp == dev) {
				*pp = dev->next;
				break;
			}
		}
		idle = idle_take_all_locked(dev);
	}
	pthread_mutex_unlock(&devs_lock);
	if (!last)
		return;
	/* Every connection is gone: so are the queues' users. */
	pbufs_free(idle);
	rdma_slabs_free(dev);
	ibv_dealloc_pd(dev->pd);
	free(dev);
}

/* ------------------------------------------------------------------ */
/* Registration                                                        */
/* ------------------------------------------------------------------ */

static size_t
page_round(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) & ~(page - 1);
}

/* The budget's octets for len, giving back idle pool buffers if needed. */
static bool
charge(struct rdma_dev *dev, size_t len)
{
	if (budget_charge(len))
		return true;
	rdma_pool_reclaim(dev, len);
	return budget_charge(len);
}

int
rdma_buf_alloc(struct rdma_dev *dev, struct rdma_buf *buf, size_t len,
	       int access)
{
	void *addr;
	int err;

	len = page_round(len ? len : 1);
	if (!charge(dev, len))
		return -ENOMEM;
	addr = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED) {
		err = -errno;
		goto out_release;
	}
	buf->mr = ibv_reg_mr(dev->pd, addr, len, access);
	if (!buf->mr) {
		/* The kernel's own limit (RLIMIT_MEMLOCK) says ENOMEM or EPERM. */
		err = errno == EPERM || errno == EAGAIN || !errno ? -ENOMEM : -errno;
		munmap(addr, len);
		goto out_release;
	}
	buf->addr = addr;
	buf->len = len;
	return 0;

out_release:
	budget_release(len);
	return err;
}

void
rdma_buf_free(struct rdma_buf *buf)
{
	if (buf->mr)
		ibv_dereg_mr(buf->mr);
	if (buf->addr) {
		munmap(buf->addr, buf->len);
		budget_release(buf->len);
	}
	memset(buf, 0, sizeof(*buf));
}

/* ------------------------------------------------------------------ */
/* The pool                                                            */
/* ------------------------------------------------------------------ */

/*
 * Powers of two up to 1 MiB, then four classes per doubling: few
 * classes, less than a quarter wasted.
 */
size_t
rdma_pool_class(size_t len)
{
	size_t c = RDMA_POOL_MIN, step;

	if (len > MiB) {
		for (step = MiB; step * 2 < len; step *= 2)
			;
		step /= 4;
		return (len + step - 1) / step * step;
	}
	while (c < len)
		c <<= 1;
	return c;
}

/*
 * An idle buffer of exactly the class: a larger one would hold more of
 * the budget than asked for, and may be what another registration needs.
 * Holds devs_lock.
 */
static struct rdma_pbuf *
idle_take_locked(struct rdma_dev *dev, size_t want)
{
	struct rdma_pbuf *pb, **pp;

	for (pp = &dev->idle; (pb = *pp) != NULL; pp = &pb->idle_next) {
		if (pb->buf.len == want) {
			*pp = pb->idle_next;
			pb->idle_next = NULL;
			dev->nidle--;
			dev->idle_bytes -= pb->buf.len;
			return pb;
		}
	}
	return NULL;
}

struct rdma_pbuf *
rdma_pool_get(struct rdma_dev *dev, size_t len)
{
	size_t want = rdma_pool_class(len);
	int access = IBV_ACCESS_LOCAL_WRITE;
	struct rdma_pbuf *pb;
	int ret;

	pthread_mutex_lock(&devs_lock);
	pb = idle_take_locked(dev, want);
	pthread_mutex_unlock(&devs_lock);
	if (pb)
		return pb;

	pb = calloc(1, sizeof(*pb));
	if (!pb)
		return NULL;
	if (dev->mw_type2)
		access |= IBV_ACCESS_MW_BIND;
	ret = rdma_pool_buf_alloc(dev, &pb->buf, want, access);
	if (ret == -ENOMEM && (dev->idle || rdma_pool_idle_bytes())) {
		rdma_pool_reclaim(dev, want);
		ret = rdma_pool_buf_alloc(dev, &pb->buf, want, access);
	}
	if (ret) {
		free(pb);
		errno = -ret;
		return NULL;
	}
	return pb;
}

/* Half the budget may sit idle in the pools. */
static uint64_t
idle_cap(void)
{
	return budget_total() / 2;
}

/* All devices' idle octets, dev's among them.  Caller holds devs_lock. */
static uint64_t
idle_bytes_locked(const struct rdma_dev *dev)
{
	uint64_t n = dev ? dev->idle_bytes : 0;
	struct rdma_dev *d;

	for (d = devs; d; d = d->next)
		if (d != dev)
			n += d->idle_bytes;
	return n;
}

/*
 * Unlink the oldest idle buffer of dev, else of any device.  Caller holds
 * devs_lock.
 */
static struct rdma_pbuf *
oldest_idle_locked(struct rdma_dev *dev)
{
	struct rdma_pbuf **pp, *pb;
	struct rdma_dev *d = dev && dev->idle ? dev : NULL;

	for (struct rdma_dev *e = devs; !d && e; e = e->next)
		if (e->idle)
			d = e;
	if (!d)
		return NULL;
	for (pp = &d->idle; (*pp)->idle_next; pp = &(*pp)->idle_next)
		;
	pb = *pp;
	*pp = NULL;
	d->nidle--;
	d->idle_bytes -= pb->buf.len;
	return pb;
}

void
rdma_pool_put(struct rdma_dev *dev, struct rdma_pbuf *pb)
{
	struct rdma_pbuf *victims = NULL, *v;
	uint64_t cap = idle_cap();

	if (!pb)
		return;
	pthread_mutex_lock(&devs_lock);
	pb->idle_next = dev->idle;
	dev->idle = pb;
	dev->nidle++;
	dev->idle_bytes += pb->buf.len;
	/* Over the cap: the buffers idle longest go (this one last). */
	while (idle_bytes_locked(dev) > cap && (v = oldest_idle_locked(dev))) {
		v->idle_next = victims;
		victims = v;
	}
	pthread_mutex_unlock(&devs_lock);
	pbufs_free(victims);
}

uint64_t
rdma_pool_idle_bytes(void)
{
	uint64_t n;

	pthread_mutex_lock(&devs_lock);
	n = idle_bytes_locked(NULL);
	pthread_mutex_unlock(&devs_lock);
	return n;
}

void
rdma_pool_reclaim(struct rdma_dev *dev, uint64_t need)
{
	struct rdma_pbuf *victims = NULL, *v;
	uint64_t freed = 0, left;

	left = budget_total();
	left = left > budget_used() ? left - budget_used() : 0;
	pthread_mutex_lock(&devs_lock);
	while (left + freed < need && (v = oldest_idle_locked(dev))) {
		freed += v->buf.len;
		v->idle_next = victims;
		victims = v;
	}
	pthread_mutex_unlock(&devs_lock);
	pbufs_free(victims);
}

uint64_t
rdma_mem_available(void)
{
	uint64_t total = budget_total(), used = budget_used();

	return (total > used ? total - used : 0) + rdma_pool_idle_bytes();
}
