/*
 * The buffer pool of transport/rdma_dev.c: its size classes, reuse of idle
 * buffers, the cap on idle octets, and idle buffers given back when the
 * budget of registered memory needs the room.  Registration is replaced
 * by a fake that charges the budget, allocates and records, so no device
 * is needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "check.h"
#include "rdma_dev.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

static unsigned int nalloc, nfree;
static int last_access;
static bool fail_alloc;
/* Addresses freed, in order. */
static void *freed[64];

static int
fake_alloc(struct rdma_dev *dev, struct rdma_buf *buf, size_t len, int access)
{
	if (fail_alloc || !budget_charge(len))
		return -ENOMEM;
	buf->addr = malloc(len);
	if (!buf->addr)
		return -ENOMEM;
	buf->len = len;
	buf->mr = NULL;
	last_access = access;
	nalloc++;
	return 0;
}

static void
fake_free(struct rdma_buf *buf)
{
	if (nfree < sizeof(freed) / sizeof(freed[0]))
		freed[nfree] = buf->addr;
	nfree++;
	budget_release(buf->len);
	free(buf->addr);
	memset(buf, 0, sizeof(*buf));
}

static void
pool_empty(struct rdma_dev *dev)
{
	while (dev->idle) {
		struct rdma_pbuf *pb = dev->idle;

		dev->idle = pb->idle_next;
		fake_free(&pb->buf);
		free(pb);
	}
	dev->nidle = 0;
	dev->idle_bytes = 0;
}

static void
test_classes(void)
{
	static const struct {
		size_t len, class;
	} t[] = {
		{ 0, 64 * KiB },
		{ 1, 64 * KiB },
		{ 4 * KiB, 64 * KiB },
		{ 64 * KiB, 64 * KiB },
		{ 64 * KiB + 1, 128 * KiB },
		{ 100000, 128 * KiB },
		{ 256 * KiB, 256 * KiB },
		{ 256 * KiB + 1, 512 * KiB },
		{ 1 * MiB - 1, 1 * MiB },
		{ 1 * MiB, 1 * MiB },
		/* Above 1 MiB: four classes per doubling. */
		{ 1 * MiB + 1, 1 * MiB + 256 * KiB },
		{ 1 * MiB + 4 * KiB, 1 * MiB + 256 * KiB },
		{ 1 * MiB + 256 * KiB + 1, 1 * MiB + 512 * KiB },
		{ 2 * MiB, 2 * MiB },
		{ 2 * MiB + 1, 2 * MiB + 512 * KiB },
		{ 3 * MiB - 1, 3 * MiB },
		{ 5 * MiB, 5 * MiB },
		{ 64 * MiB, 64 * MiB },
		{ 64 * MiB + 1, 80 * MiB },
	};
	size_t i, len;
	bool ok = true;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_EQ_U(rdma_pool_class(t[i].len), t[i].class,
			   "a request of %zu octets takes the %zu-octet class",
			   t[i].len, t[i].class);

	/* Every class holds the request, wastes less than half (a quarter above 1 MiB). */
	for (len = 1; len <= 70 * MiB && ok; len += len / 7 + 1) {
		size_t c = rdma_pool_class(len);

		ok = c >= len && c >= RDMA_POOL_MIN && c % (4 * KiB) == 0 &&
		     (c == RDMA_POOL_MIN || c - len < (len > MiB ? len / 4 : len)) &&
		     rdma_pool_class(c) == c;
		if (!ok)
			printf("# len %zu: class %zu\n", len, c);
	}
	CHECK(ok, "every class holds its request, in whole pages, with bounded waste, and is its own class");
}

static void
test_reuse(void)
{
	struct rdma_dev dev;
	struct rdma_pbuf *a, *b, *c;
	unsigned int allocs;

	memset(&dev, 0, sizeof(dev));
	nalloc = nfree = 0;

	a = rdma_pool_get(&dev, 100);
	CHECK(a && a->buf.len == 64 * KiB && nalloc == 1,
	      "a first request registers a buffer of its class");
	CHECK(last_access == IBV_ACCESS_LOCAL_WRITE,
	      "without memory windows: local access only");
	rdma_pool_put(&dev, a);
	CHECK_EQ_U(dev.nidle, 1, "a buffer put back is idle");

	allocs = nalloc;
	b = rdma_pool_get(&dev, 60000);
	CHECK(b == a && nalloc == allocs && dev.nidle == 0,
	      "a request of the same class takes the idle buffer, nothing registered");
	c = rdma_pool_get(&dev, 70000);
	CHECK(c && c != b && c->buf.len == 128 * KiB && nalloc == allocs + 1,
	      "a request of another class registers a new buffer");
	rdma_pool_put(&dev, b);
	rdma_pool_put(&dev, c);
	CHECK(rdma_pool_get(&dev, 64 * KiB + 1) == c && rdma_pool_get(&dev, 1) == b,
	      "idle buffers are found by class, whatever their order");
	rdma_pool_put(&dev, c);
	a = rdma_pool_get(&dev, 1);
	CHECK(a != c && nalloc == allocs + 2,
	      "an idle buffer of a larger class does not serve a smaller request");
	rdma_pool_put(&dev, a);
	rdma_pool_put(&dev, b);
	b = rdma_pool_get(&dev, 1);
	c = rdma_pool_get(&dev, 64 * KiB + 1);
	rdma_pool_put(&dev, b);
	rdma_pool_put(&dev, c);

	dev.mw_type2 = true;
	a = rdma_pool_get(&dev, 8 * MiB);
	CHECK(a && a->buf.len == 8 * MiB &&
	      last_access == (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND),
	      "with memory windows: local access and window binding, never remote access");
	rdma_pool_put(&dev, a);

	rdma_pool_put(&dev, NULL);
	CHECK_EQ_U(dev.nidle, 4, "putting back nothing changes nothing");
	CHECK_EQ_U(dev.idle_bytes, 8 * MiB + 256 * KiB, "their octets are counted");

	fail_alloc = true;
	CHECK(rdma_pool_get(&dev, 32 * MiB) == NULL,
	      "a buffer that cannot be registered: NULL");
	fail_alloc = false;
	CHECK_EQ_U(nfree, 0, "no buffer was freed while the pool had room");
	pool_empty(&dev);
}

/* The budget is 64 MiB: half of it may stay idle. */
static void
test_idle_cap(void)
{
	enum { N = 12 };
	struct rdma_pbuf *pb[N];
	void *addr[N];
	struct rdma_dev dev;
	unsigned int i;
	bool oldest = true;

	memset(&dev, 0, sizeof(dev));
	nalloc = nfree = 0;
	for (i = 0; i < N; i++) {
		pb[i] = rdma_pool_get(&dev, 4 * MiB);
		addr[i] = pb[i] ? pb[i]->buf.addr : NULL;
	}
	CHECK_EQ_U(nalloc, N, "%u buffers of 4 MiB in use at once: %u registered", N, N);
	CHECK_EQ_U(budget_used(), 48 * MiB, "48 MiB of the budget in use");

	for (i = 0; i < N; i++)
		rdma_pool_put(&dev, pb[i]);
	CHECK_EQ_U(dev.idle_bytes, 32 * MiB, "at most half the budget stays idle");
	CHECK_EQ_U(dev.nidle, 8, "8 of them");
	CHECK_EQ_U(nfree, N - 8, "the others are deregistered at once");
	for (i = 0; i < N - 8; i++)
		oldest = oldest && freed[i] == addr[i];
	CHECK(oldest, "the buffers idle longest go first");
	CHECK_EQ_U(64 * MiB - budget_used() + dev.idle_bytes, 64 * MiB,
		   "in use: only the idle buffers");

	CHECK(rdma_pool_get(&dev, 4 * MiB) == pb[N - 1],
	      "the buffer put back last is taken first");
	rdma_pool_put(&dev, pb[N - 1]);
	pool_empty(&dev);
}

/* A registration the budget cannot cover makes the pool give back idle ones. */
static void
test_pressure(void)
{
	struct rdma_dev dev;
	struct rdma_pbuf *a, *b, *c;

	memset(&dev, 0, sizeof(dev));
	nalloc = nfree = 0;
	a = rdma_pool_get(&dev, 20 * MiB);
	b = rdma_pool_get(&dev, 20 * MiB);
	rdma_pool_put(&dev, a);
	CHECK(a && b && dev.nidle == 1 && budget_used() == 40 * MiB,
	      "one 20 MiB buffer idle, one in use: 40 of 64 MiB");
	c = rdma_pool_get(&dev, 40 * MiB);
	CHECK(c != NULL && nfree == 1 && dev.nidle == 0,
	      "40 MiB more: the idle buffer was given back to make room");
	CHECK(rdma_pool_get(&dev, 8 * MiB) == NULL && errno == ENOMEM,
	      "beyond the budget with nothing idle: NULL, ENOMEM");
	CHECK(budget_refused() > 0, "the refusal is counted");
	rdma_pool_put(&dev, b);
	rdma_pool_put(&dev, c);
	pool_empty(&dev);
	CHECK_EQ_U(budget_used(), 0, "everything released: nothing in use");
}

int
main(void)
{
	rdma_pool_buf_alloc = fake_alloc;
	rdma_pool_buf_free = fake_free;
	budget_setup(64 * MiB);
	test_classes();
	test_reuse();
	test_idle_cap();
	test_pressure();
	return check_done();
}
