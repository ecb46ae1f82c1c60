/*
 * Building and comparing Version Two headers (struct rpcrdma2_hdr) in the
 * codec tests.
 *
 *   hdr2_init(&h, RDMA2_MSG);          xid 0xfeedface, vers 2, 64 credits,
 *                                      direction CALL, no chunks
 *   hdr2_add_read(&h, 8, seg(...));    hdr2_add_write(&h, n, handle);
 *   hdr2_set_reply(&h, n);             hdr2_eq(&a, &b)
 *
 * The lists are built and compared by rpcrdma_fixture.h (seg(),
 * add_write_from(), set_reply_from(), lists_eq()).
 */
#ifndef TESTS_UNIT_RPCRDMA2_FIXTURE_H
#define TESTS_UNIT_RPCRDMA2_FIXTURE_H

#include <stdbool.h>
#include <string.h>

#include "rpcrdma2_xdr.h"
#include "rpcrdma_fixture.h"

static inline void
hdr2_init(struct rpcrdma2_hdr *h, uint32_t proc)
{
	memset(h, 0, sizeof(*h));
	h->xid = 0xfeedface;
	h->vers = RPCRDMA2_VERSION;
	h->credits = 64;
	h->proc = proc;
	h->direction = RDMA2_DIR_CALL;
}

static inline void
hdr2_add_read(struct rpcrdma2_hdr *h, uint32_t position,
	      struct rpcrdma_segment s)
{
	add_read(&h->chunks, position, s);
}

/* Append a Write chunk of n segments. */
static inline void
hdr2_add_write(struct rpcrdma2_hdr *h, unsigned int n, uint32_t handle)
{
	add_write_from(&h->chunks, n, handle, 0xabcd000000000000ull);
}

static inline void
hdr2_set_reply(struct rpcrdma2_hdr *h, unsigned int n)
{
	set_reply_from(&h->chunks, n, 0x7700, 0x200000000ull);
}

/* What the wire carries is equal (an RDMA2_ERROR has no direction). */
static inline bool
hdr2_eq(const struct rpcrdma2_hdr *a, const struct rpcrdma2_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers ||
	    a->credits != b->credits || a->proc != b->proc)
		return false;
	switch (a->proc) {
	case RDMA2_ERROR:
		return a->err == b->err && (a->err != RDMA2_ERR_VERS ||
		       (a->vers_low == b->vers_low &&
			a->vers_high == b->vers_high));
	case RDMA2_OPTIONAL:
		return a->direction == b->direction &&
		       a->opttype == b->opttype && a->optlen == b->optlen &&
		       (!a->optlen ||
			memcmp(a->optinfo, b->optinfo, a->optlen) == 0);
	default:
		return a->direction == b->direction &&
		       lists_eq(&a->chunks, &b->chunks);
	}
}

#endif
