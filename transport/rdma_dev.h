/*
 * Per-device state shared by every connection of the process that runs on
 * that device: one protection domain, the device limits, and what the
 * device can do for memory fencing.
 */
#ifndef TRANSPORT_RDMA_DEV_H
#define TRANSPORT_RDMA_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct rdma_pbuf;

struct rdma_dev {
	struct ibv_context *verbs;	/* owned by librdmacm */
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	bool mw_type2;			/* can bind and invalidate type 2 MWs */
	unsigned int refs;
	struct rdma_dev *next;
	struct rdma_pbuf *idle;		/* the pool's idle buffers */
	unsigned int nidle;
};

/* Find or create the state for a device context; counted reference. */
struct rdma_dev *rdma_dev_get(struct ibv_context *verbs);
void rdma_dev_put(struct rdma_dev *dev);

/*
 * fork(): the device list's lock is held across it (shim/fork.c); the
 * child forgets the parent's devices and makes its own.
 */
void rdma_dev_fork_lock(void);
void rdma_dev_fork_unlock(void);
void rdma_dev_fork_child(void);

/*
 * A page-aligned buffer registered with the device.  Buffers used only for
 * Send and Receive are registered for local access only (RFC 8166 s5.4:
 * no exposure, so they can live as long as the connection).
 */
struct rdma_buf {
	uint8_t *addr;
	size_t len;
	struct ibv_mr *mr;
};

int rdma_buf_alloc(struct rdma_dev *dev, struct rdma_buf *buf, size_t len,
		   int access);
void rdma_buf_free(struct rdma_buf *buf);

/*
 * The per-device pool of large buffers (calls, replies, chunk data).
 * Registering memory for each call is slow and, on some devices, exhausts
 * keys; instead buffers are registered once, in sizes rounded up to a
 * power of two from RDMA_POOL_MIN or to whole MiB above 1 MiB, and kept
 * for reuse.  They are registered for local access
 * (and memory-window binding where the device has windows) only: nothing
 * in the pool is ever remotely accessible by itself.  Exposure to a peer
 * is per call, through a memory window or a short-lived registration
 * (clnt_rdma_mw.c).
 */
#define RDMA_POOL_MIN ((size_t)64 << 10)
#define RDMA_POOL_IDLE_MAX 8		/* idle buffers kept per device */

struct rdma_pbuf {
	struct rdma_buf buf;
	struct rdma_pbuf *idle_next;	/* the pool's idle list (rdma_dev.c) */
	struct rdma_pbuf *held_next;	/* an endpoint's held list (ep.c) */
};

/* The size class of a request: what the pool registers for len octets. */
size_t rdma_pool_class(size_t len);

/* rdma_buf_alloc and rdma_buf_free, as the pool calls them. */
extern int (*rdma_pool_buf_alloc)(struct rdma_dev *dev, struct rdma_buf *buf,
				  size_t len, int access);
extern void (*rdma_pool_buf_free)(struct rdma_buf *buf);

/* A buffer of at least len octets; NULL when it cannot be registered. */
struct rdma_pbuf *rdma_pool_get(struct rdma_dev *dev, size_t len);
void rdma_pool_put(struct rdma_dev *dev, struct rdma_pbuf *pb);

#endif
