/*
 * Per-device protection domain and limits, shared by all connections.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rdma_dev.h"

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
	pthread_mutex_lock(&devs_lock);
}

void
rdma_dev_fork_unlock(void)
{
	pthread_mutex_unlock(&devs_lock);
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
	pthread_mutex_unlock(&devs_lock);
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
rdma_dev_put(struct rdma_dev *dev)
{
	struct rdma_dev **pp;

	if (!dev)
		return;
	pthread_mutex_lock(&devs_lock);
	if (--dev->refs == 0) {
		for (pp = &devs; *pp; pp = &(*pp)->next) {
			if (*pp == dev) {
				*pp = dev->next;
				break;
			}
		}
		while (dev->idle) {
			struct rdma_pbuf *pb = dev->idle;

			dev->idle = pb->idle_next;
			rdma_pool_buf_free(&pb->buf);
			free(pb);
		}
		ibv_dealloc_pd(dev->pd);
		free(dev);
	}
	pthread_mutex_unlock(&devs_lock);
}

int
rdma_buf_alloc(struct rdma_dev *dev, struct rdma_buf *buf, size_t len,
	       int access)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *addr;

	len = (len + page - 1) & ~(page - 1);
	addr = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (addr == MAP_FAILED)
		return -errno;
	buf->mr = ibv_reg_mr(dev->pd, addr, len, access);
	if (!buf->mr) {
		int err = errno ? -errno : -ENOMEM;

		munmap(addr, len);
		return err;
	}
	buf->addr = addr;
	buf->len = len;
	return 0;
}

void
rdma_buf_free(struct rdma_buf *buf)
{
	if (buf->mr)
		ibv_dereg_mr(buf->mr);
	if (buf->addr)
		munmap(buf->addr, buf->len);
	memset(buf, 0, sizeof(*buf));
}

/* Powers of two up to 1 MiB, then whole MiB: few classes, little waste. */
size_t
rdma_pool_class(size_t len)
{
	size_t c = RDMA_POOL_MIN;

	if (len > ((size_t)1 << 20))
		return (len + ((size_t)1 << 20) - 1) & ~(((size_t)1 << 20) - 1);
	while (c < len)
		c <<= 1;
	return c;
}

struct rdma_pbuf *
rdma_pool_get(struct rdma_dev *dev, size_t len)
{
	size_t want = rdma_pool_class(len);
	struct rdma_pbuf *pb, **pp;
	int access = IBV_ACCESS_LOCAL_WRITE;

	pthread_mutex_lock(&devs_lock);
	for (pp = &dev->idle; (pb = *pp) != NULL; pp = &pb->idle_next) {
		if (pb->buf.len == want) {
			*pp = pb->idle_next;
			dev->nidle--;
			pthread_mutex_unlock(&devs_lock);
			pb->idle_next = NULL;
			return pb;
		}
	}
	pthread_mutex_unlock(&devs_lock);

	pb = calloc(1, sizeof(*pb));
	if (!pb)
		return NULL;
	if (dev->mw_type2)
		access |= IBV_ACCESS_MW_BIND;
	if (rdma_pool_buf_alloc(dev, &pb->buf, want, access)) {
		free(pb);
		return NULL;
	}
	return pb;
}

void
rdma_pool_put(struct rdma_dev *dev, struct rdma_pbuf *pb)
{
	struct rdma_pbuf *victim = NULL, **pp;

	if (!pb)
		return;
	pthread_mutex_lock(&devs_lock);
	pb->idle_next = dev->idle;
	dev->idle = pb;
	if (++dev->nidle > RDMA_POOL_IDLE_MAX) {
		/* Drop the oldest idle buffer (the list tail). */
		for (pp = &dev->idle; (*pp)->idle_next; pp = &(*pp)->idle_next)
			;
		victim = *pp;
		*pp = NULL;
		dev->nidle--;
	}
	pthread_mutex_unlock(&devs_lock);
	if (victim) {
		rdma_pool_buf_free(&victim->buf);
		free(victim);
	}
}
