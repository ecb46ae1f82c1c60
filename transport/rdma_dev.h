/*
 * Per-device state shared by every connection of the process that runs on
 * that device: one protection domain, the device limits, what the device
 * can do for memory fencing, and the registered memory connections share:
 * the pool of large buffers, small send buffers (rdma_slab.c) and the
 * shared receive queues (rdma_srq.c).
 *
 * Every registration goes through rdma_buf_alloc(), which charges the
 * process's budget (budget.h) first: memory the budget cannot cover is
 * refused with -ENOMEM before the kernel is asked.
 */
#ifndef TRANSPORT_RDMA_DEV_H
#define TRANSPORT_RDMA_DEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

struct rdma_pbuf;
struct rdma_slab;
struct rdma_srq;

/* The shared receive queues of a device: one for clients, one for servers. */
enum rdma_srq_role { RDMA_SRQ_CLIENT, RDMA_SRQ_SERVER, RDMA_SRQ_ROLES };

struct rdma_dev {
	struct ibv_context *verbs;	/* owned by librdmacm */
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	bool mw_type2;			/* can bind and invalidate type 2 MWs */
	bool replays_local_ops;		/* rxe: clnt_rdma_mw.c, "Local operations" */
	unsigned int refs;
	struct rdma_dev *next;
	struct rdma_pbuf *idle;		/* the pool's idle buffers, newest first */
	unsigned int nidle;
	uint64_t idle_bytes;
	struct rdma_slab *slabs;	/* small send buffers, by size */
	struct rdma_srq *srq[RDMA_SRQ_ROLES];
};

/* Find or create the state for a device context; counted reference. */
struct rdma_dev *rdma_dev_get(struct ibv_context *verbs);
/* One more reference to a device already held. */
void rdma_dev_hold(struct rdma_dev *dev);
void rdma_dev_put(struct rdma_dev *dev);

/*
 * fork(): the device list's lock is held across it (shim/fork.c), the
 * shared queues' before it, the slab lists' and the budget's after it;
 * the child forgets the parent's devices and makes its own.
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

/*
 * Register len octets (rounded up to pages).  -ENOMEM when the budget
 * cannot cover them, even after the pool gave back its idle buffers, or
 * when the kernel refused to lock them; another -errno otherwise.
 */
int rdma_buf_alloc(struct rdma_dev *dev, struct rdma_buf *buf, size_t len,
		   int access);
void rdma_buf_free(struct rdma_buf *buf);

/*
 * The per-device pool of large buffers (calls, replies, chunk data).
 * Registering memory for each call is slow and, on some devices, exhausts
 * keys; instead buffers are registered in few sizes (powers of two from
 * RDMA_POOL_MIN to 1 MiB, quarter steps above) and kept for reuse while
 * idle, up to half the budget in all (the oldest go first), and given back
 * at once when a registration needs the room.  They are registered for
 * local access (and memory-window binding where the device has windows)
 * only: nothing in the pool is ever remotely accessible by itself.
 * Exposure to a peer is per call, through a memory window or a
 * short-lived registration (clnt_rdma_mw.c).
 */
#define RDMA_POOL_MIN ((size_t)64 << 10)

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

/*
 * A buffer of at least len octets: an idle one of its class, else a new
 * registration.  NULL when it cannot be registered (errno ENOMEM: the
 * budget).
 */
struct rdma_pbuf *rdma_pool_get(struct rdma_dev *dev, size_t len);
void rdma_pool_put(struct rdma_dev *dev, struct rdma_pbuf *pb);

/* Octets the pools of all devices keep idle (they can be given back). */
uint64_t rdma_pool_idle_bytes(void);
/*
 * Give idle buffers back, dev's first (NULL: any device's), until need
 * octets of the budget are free or none is idle.
 */
void rdma_pool_reclaim(struct rdma_dev *dev, uint64_t need);
/* What the budget can still give, idle pool buffers counted as free. */
uint64_t rdma_mem_available(void);

/* ------------------------------------------------------------------ */
/* Small send buffers (rdma_slab.c)                                    */
/* ------------------------------------------------------------------ */

/*
 * A buffer of a fixed size carved from a registered chunk shared by all
 * connections of the device: transport headers and inline messages, held
 * from the moment a message is built until its Send completes.
 */
struct rdma_sbuf {
	uint8_t *addr;
	uint32_t lkey;
	struct rdma_sbuf *next;		/* the slab's free list */
	struct rdma_slab_chunk *chunk;
};

/* The device's slab of buffers of size octets (made on first use), or NULL. */
struct rdma_slab *rdma_slab_of(struct rdma_dev *dev, uint32_t size);
/* A free buffer of the slab; NULL when none can be registered. */
struct rdma_sbuf *rdma_sbuf_get(struct rdma_dev *dev, struct rdma_slab *s);
void rdma_sbuf_put(struct rdma_sbuf *b);
/* Release every slab of the device (rdma_dev_put). */
void rdma_slabs_free(struct rdma_dev *dev);
/* fork(): the slab lists' lock, held across it (rdma_dev_fork_lock). */
void rdma_slabs_fork_lock(void);
void rdma_slabs_fork_unlock(void);

/* ------------------------------------------------------------------ */
/* Shared receive queues (rdma_srq.c)                                  */
/* ------------------------------------------------------------------ */

/*
 * The receive buffers of every queue pair of one role on a device
 * (RFC 8166 s4.3.1: credits backed by posted receives; the responder "MAY
 * adjust the granted credit value ... to accommodate the available
 * resources in a shared receive queue").  Receive memory grows with the
 * credits promised, not with the connections: receives are reserved
 * (a server connection's credits, a client's calls in flight) and the
 * queue registers more buffers, in blocks, only when a reservation needs
 * them.  A buffer's index names it in work request ids and completions.
 */
struct rdma_srq *rdma_srq_get(struct rdma_dev *dev, enum rdma_srq_role role,
			      uint32_t buf_size);
/* A queue pair stopped using it; the last one releases it. */
void rdma_srq_put(struct rdma_srq *srq);
/* fork(): the queues' lock, held across it (rdma_dev_fork_lock, before devs_lock). */
void rdma_srqs_fork_lock(void);
void rdma_srqs_fork_unlock(void);
struct ibv_srq *rdma_srq_ibv(const struct rdma_srq *srq);
uint32_t rdma_srq_buf_size(const struct rdma_srq *srq);

/*
 * Reserve n posted receives, registering more when none are spare.
 * With wait, a reservation that cannot grow waits (until deadline_ms on
 * the monotonic clock) for others to release theirs.  0, -ENOMEM when the
 * budget cannot cover them, -ETIMEDOUT.
 */
int rdma_srq_reserve(struct rdma_srq *srq, unsigned int n, bool wait,
		     int64_t deadline_ms);
void rdma_srq_unreserve(struct rdma_srq *srq, unsigned int n);
/* Octets of a device's receives registered but not reserved (0: none). */
uint64_t rdma_srq_spare_bytes(struct rdma_dev *dev, enum rdma_srq_role role);

uint8_t *rdma_srq_buf(const struct rdma_srq *srq, uint32_t idx);
/* Post buffer idx again once its message was read; 0 or -errno. */
int rdma_srq_post(struct rdma_srq *srq, uint32_t idx);

#endif
