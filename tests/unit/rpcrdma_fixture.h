/*
 * Building and comparing Version One headers (struct rpcrdma_hdr) in the
 * codec tests.
 *
 *   hdr_init(&h, RDMA_MSG);            xid 0xdeadbeef, vers 1, 128 credits,
 *                                      no chunks
 *   add_read(&h, 8, seg(...));         add_write(&h, n, handle);
 *   set_reply(&h, n);                  hdr_eq(&a, &b)
 *
 * seg(), add_write_from(), set_reply_from(), seg_eq() and lists_eq() serve
 * the Version Two tests as well (rpcrdma2_fixture.h): both versions carry
 * the same chunk lists.
 */
#ifndef TESTS_UNIT_RPCRDMA_FIXTURE_H
#define TESTS_UNIT_RPCRDMA_FIXTURE_H

#include <stdbool.h>
#include <string.h>

#include "rpcrdma_xdr.h"

static inline struct rpcrdma_segment
seg(uint32_t handle, uint32_t length, uint64_t offset)
{
	struct rpcrdma_segment s = {
		.handle = handle, .length = length, .offset = offset,
	};
	return s;
}

static inline void
add_read(struct rpcrdma_hdr *hdr, uint32_t position, struct rpcrdma_segment s)
{
	hdr->reads[hdr->nreads].position = position;
	hdr->reads[hdr->nreads].target = s;
	hdr->nreads++;
}

/*
 * Append a Write chunk of n segments to the lists of hdr: handles from
 * handle, lengths 4096, 8192, ..., offsets from offset 4096 apart.
 */
static inline void
add_write_from(struct rpcrdma_hdr *hdr, unsigned int n, uint32_t handle,
	       uint64_t offset)
{
	unsigned int i;

	hdr->writes[hdr->nwrites].first = hdr->nwsegs;
	hdr->writes[hdr->nwrites].nsegs = n;
	hdr->nwrites++;
	for (i = 0; i < n; i++)
		hdr->wsegs[hdr->nwsegs++] = seg(handle + i, 4096 * (i + 1),
						offset + (uint64_t)i * 4096);
}

static inline void
add_write(struct rpcrdma_hdr *hdr, unsigned int n, uint32_t handle)
{
	add_write_from(hdr, n, handle, 0xfedcba9800000000ull);
}

/*
 * A Reply chunk of n segments of 8192 octets in the lists of hdr: handles
 * from handle, offsets stride, 2 * stride, ...
 */
static inline void
set_reply_from(struct rpcrdma_hdr *hdr, unsigned int n, uint32_t handle,
	       uint64_t stride)
{
	unsigned int i;

	hdr->has_reply = true;
	hdr->nreply = n;
	for (i = 0; i < n; i++)
		hdr->reply[i] = seg(handle + i, 8192, stride * (i + 1));
}

static inline void
set_reply(struct rpcrdma_hdr *hdr, unsigned int n)
{
	set_reply_from(hdr, n, 0x7000, 0x100000000ull);
}

static inline void
hdr_init(struct rpcrdma_hdr *hdr, uint32_t proc)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->xid = 0xdeadbeef;
	hdr->vers = RPCRDMA1_VERSION;
	hdr->credits = 128;
	hdr->proc = proc;
}

static inline bool
seg_eq(const struct rpcrdma_segment *a, const struct rpcrdma_segment *b)
{
	return a->handle == b->handle && a->length == b->length &&
	       a->offset == b->offset;
}

/* The read list, write list and Reply chunk are equal. */
static inline bool
lists_eq(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	unsigned int i;

	if (a->nreads != b->nreads || a->nwrites != b->nwrites ||
	    a->nwsegs != b->nwsegs || a->has_reply != b->has_reply ||
	    a->nreply != b->nreply)
		return false;
	for (i = 0; i < a->nreads; i++)
		if (a->reads[i].position != b->reads[i].position ||
		    !seg_eq(&a->reads[i].target, &b->reads[i].target))
			return false;
	for (i = 0; i < a->nwrites; i++)
		if (a->writes[i].first != b->writes[i].first ||
		    a->writes[i].nsegs != b->writes[i].nsegs)
			return false;
	for (i = 0; i < a->nwsegs; i++)
		if (!seg_eq(&a->wsegs[i], &b->wsegs[i]))
			return false;
	for (i = 0; i < a->nreply; i++)
		if (!seg_eq(&a->reply[i], &b->reply[i]))
			return false;
	return true;
}

/* What the wire carries is equal. */
static inline bool
hdr_eq(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	if (a->xid != b->xid || a->vers != b->vers ||
	    a->credits != b->credits || a->proc != b->proc)
		return false;
	if (a->proc == RDMA_ERROR)
		return a->err == b->err && (a->err != RDMA_ERR_VERS ||
		       (a->vers_low == b->vers_low &&
			a->vers_high == b->vers_high));
	return lists_eq(a, b);
}

#endif
