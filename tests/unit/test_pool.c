/*
 * The buffer pool of transport/rdma_dev.c: its size classes, reuse of idle
 * buffers, and the cap on idle buffers per device.  Registration is
 * replaced by a fake that only allocates and records, so no device is
 * needed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	if (fail_alloc)
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
	free(buf->addr);
	memset(buf, 0, sizeof(*buf));
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
		/* Above 1 MiB: whole MiB, not powers of two. */
		{ 1 * MiB + 1, 2 * MiB },
		{ 3 * MiB - 1, 3 * MiB },
		{ 5 * MiB, 5 * MiB },
		{ 64 * MiB, 64 * MiB },
		{ 64 * MiB + 1, 65 * MiB },
	};
	size_t i, len;
	bool ok = true;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_EQ_U(rdma_pool_class(t[i].len), t[i].class,
			   "a request of %zu octets takes the %zu-octet class",
			   t[i].len, t[i].class);

	/* Every class holds the request, wastes less than half (or 1 MiB). */
	for (len = 1; len <= 70 * MiB && ok; len += len / 7 + 1) {
		size_t c = rdma_pool_class(len);

		ok = c >= len && c >= RDMA_POOL_MIN && c % (4 * KiB) == 0 &&
		     (c == RDMA_POOL_MIN || c - len < (len > MiB ? MiB : len)) &&
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
	rdma_pool_put(&dev, b);
	rdma_pool_put(&dev, c);

	dev.mw_type2 = true;
	a = rdma_pool_get(&dev, 8 * MiB);
	CHECK(a && a->buf.len == 8 * MiB &&
	      last_access == (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND),
	      "with memory windows: local access and window binding, never remote access");
	rdma_pool_put(&dev, a);

	rdma_pool_put(&dev, NULL);
	CHECK_EQ_U(dev.nidle, 3, "putting back nothing changes nothing");

	fail_alloc = true;
	CHECK(rdma_pool_get(&dev, 32 * MiB) == NULL,
	      "a buffer that cannot be registered: NULL");
	fail_alloc = false;
	CHECK_EQ_U(nfree, 0, "no buffer was freed while the pool had room");

	while (dev.idle) {
		struct rdma_pbuf *pb = dev.idle;

		dev.idle = pb->idle_next;
		fake_free(&pb->buf);
		free(pb);
	}
}

static void
test_idle_cap(void)
{
	enum { N = RDMA_POOL_IDLE_MAX + 3 };
	struct rdma_pbuf *pb[N];
	void *addr[N];
	struct rdma_dev dev;
	unsigned int i;
	bool oldest = true;

	memset(&dev, 0, sizeof(dev));
	nalloc = nfree = 0;
	for (i = 0; i < N; i++) {
		pb[i] = rdma_pool_get(&dev, 4 * KiB);
		addr[i] = pb[i] ? pb[i]->buf.addr : NULL;
	}
	CHECK_EQ_U(nalloc, N, "%u buffers in use at once: %u registered", N, N);

	for (i = 0; i < N; i++)
		rdma_pool_put(&dev, pb[i]);
	CHECK_EQ_U(dev.nidle, RDMA_POOL_IDLE_MAX, "at most %u idle buffers are kept",
		   RDMA_POOL_IDLE_MAX);
	CHECK_EQ_U(nfree, N - RDMA_POOL_IDLE_MAX, "the others are deregistered at once");
	for (i = 0; i < N - RDMA_POOL_IDLE_MAX; i++)
		oldest = oldest && freed[i] == addr[i];
	CHECK(oldest, "the buffers idle longest go first");

	CHECK(rdma_pool_get(&dev, 1) == pb[N - 1],
	      "the buffer put back last is taken first");
}

int
main(void)
{
	rdma_pool_buf_alloc = fake_alloc;
	rdma_pool_buf_free = fake_free;
	test_classes();
	test_reuse();
	test_idle_cap();
	return check_done();
}
