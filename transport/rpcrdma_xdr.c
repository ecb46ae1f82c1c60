/*
 * RPC-over-RDMA Version One transport header codec (RFC 8166 s5).
 *
 * Every XDR element has a small encoder and a small decoder.  Both take a
 * cursor p and the end of the buffer, check that the element fits before
 * touching it, and return the cursor after the element, or NULL.  Words are
 * written and read octet by octet, big-endian (RFC 4506 s3), so neither the
 * host's byte order nor the buffer's alignment matters (xdr_word.h).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "rpcrdma_xdr.h"
#include "xdr_word.h"

/* RFC 8166 s5.1.3: rpcrdma1_error, ERR_VERS arm: err vers_low vers_high. */
#define RPCRDMA1_ERR_VERS_BODY_LEN (3 * XDR_UNIT)
#define RPCRDMA1_ERR_BODY_LEN XDR_UNIT

/* RFC 4506 s4.19: optional-data discriminators. */
#define XDR_ABSENT 0u
#define XDR_PRESENT 1u

/* RFC 4506 s4.5: unsigned hyper, most significant word first. */
static inline uint64_t
get_be64(const uint8_t *p)
{
	return (uint64_t)get_be32(p) << 32 | get_be32(p + XDR_UNIT);
}

static inline uint8_t *
put_be64(uint8_t *p, uint64_t v)
{
	p = put_be32(p, (uint32_t)(v >> 32));
	return put_be32(p, (uint32_t)v);
}

/*
 * RFC 4506 s4.19: the discriminator of optional-data is an XDR bool, so
 * anything but 0 or 1 is malformed (s4.4).
 */
static const uint8_t *
decode_item_present(const uint8_t *p, const uint8_t *end, bool *present)
{
	uint32_t v;

	p = decode_word(p, end, &v);
	if (!p || (v != XDR_ABSENT && v != XDR_PRESENT))
		return NULL;
	*present = v == XDR_PRESENT;
	return p;
}

/*
 * RFC 8166 s5.1.2, s5.2: struct rpcrdma_prefix.
 *
 *   xid vers credits proc
 */
uint8_t *
rpcrdma_encode_prefix(uint8_t *p, const uint8_t *end, uint32_t xid,
		      uint32_t vers, uint32_t credits, uint32_t proc)
{
	if (!fits(p, end, RPCRDMA1_PREFIX_LEN))
		return NULL;
	p = put_be32(p, xid);
	p = put_be32(p, vers);
	p = put_be32(p, credits);
	return put_be32(p, proc);
}

const uint8_t *
rpcrdma_decode_prefix(const uint8_t *p, const uint8_t *end, uint32_t *xid,
		      uint32_t *vers, uint32_t *credits, uint32_t *proc)
{
	if (!fits(p, end, RPCRDMA1_PREFIX_LEN))
		return NULL;
	*xid = get_be32(p);
	*vers = get_be32(p + 4);
	*credits = get_be32(p + 8);
	*proc = get_be32(p + 12);
	return p + RPCRDMA1_PREFIX_LEN;
}

/*
 * RFC 8166 s4.4.3, s5.1.3: struct rpcrdma1_segment.
 *
 *   HLOO: handle length offset(64)
 */
uint8_t *
rpcrdma_encode_segment(uint8_t *p, const uint8_t *end,
		       const struct rpcrdma_segment *seg)
{
	if (!fits(p, end, RPCRDMA1_SEGMENT_LEN))
		return NULL;
	p = put_be32(p, seg->handle);
	p = put_be32(p, seg->length);
	return put_be64(p, seg->offset);
}

static const uint8_t *
decode_segment(const uint8_t *p, const uint8_t *end,
	       struct rpcrdma_segment *seg)
{
	if (!fits(p, end, RPCRDMA1_SEGMENT_LEN))
		return NULL;
	seg->handle = get_be32(p);
	seg->length = get_be32(p + 4);
	seg->offset = get_be64(p + 8);
	return p + RPCRDMA1_SEGMENT_LEN;
}

/*
 * RFC 8166 s4.4.5, s5.1.3: struct rpcrdma1_read_segment.
 *
 *   PHLOO: position, then a plain segment
 */
uint8_t *
rpcrdma_encode_read_segment(uint8_t *p, const uint8_t *end,
			    const struct rpcrdma_read_segment *rseg)
{
	if (!fits(p, end, RPCRDMA1_READ_SEGMENT_LEN))
		return NULL;
	p = put_be32(p, rseg->position);
	return rpcrdma_encode_segment(p, end, &rseg->target);
}

static const uint8_t *
decode_read_segment(const uint8_t *p, const uint8_t *end,
		    struct rpcrdma_read_segment *rseg)
{
	if (!fits(p, end, RPCRDMA1_READ_SEGMENT_LEN))
		return NULL;
	rseg->position = get_be32(p);
	return decode_segment(p + XDR_UNIT, end, &rseg->target);
}

/*
 * RFC 8166 s5.3.1, s5.7: the Read list, a linked list of read segments.
 *
 *   { 1 PHLOO } 0          e.g. 1 PHLOO 1 PHLOO 1 PHLOO 0
 */
uint8_t *
rpcrdma_encode_read_list(uint8_t *p, const uint8_t *end,
			 const struct rpcrdma_read_segment *segs,
			 unsigned int nsegs)
{
	unsigned int i;

	for (i = 0; i < nsegs && p; i++) {
		p = encode_word(p, end, XDR_PRESENT);
		p = p ? rpcrdma_encode_read_segment(p, end, &segs[i]) : NULL;
	}
	return encode_word(p, end, XDR_ABSENT);
}

/*
 * RFC 8166 s4.4.5.1: every position is a multiple of four; s4.4.5: the
 * segments of one chunk share a position and follow each other, so the
 * positions never decrease along the list.
 */
static const uint8_t *
decode_read_list(const uint8_t *p, const uint8_t *end, struct rpcrdma_hdr *hdr)
{
	struct rpcrdma_read_segment *rseg;
	bool present;

	for (;;) {
		p = decode_item_present(p, end, &present);
		if (!p)
			return NULL;
		if (!present)
			return p;
		if (hdr->nreads >= RPCRDMA1_MAX_READ_SEGS)
			return NULL;
		rseg = &hdr->reads[hdr->nreads];
		p = decode_read_segment(p, end, rseg);
		if (!p)
			return NULL;
		if (rseg->position % XDR_UNIT)
			return NULL;
		if (hdr->nreads &&
		    rseg->position < hdr->reads[hdr->nreads - 1].position)
			return NULL;
		hdr->nreads++;
	}
}

/*
 * RFC 8166 s4.4.6, s5.1.3, s5.7: a Write chunk, a counted array of plain
 * segments.
 *
 *   N { HLOO }N            e.g. 3 HLOO HLOO HLOO
 */
uint8_t *
rpcrdma_encode_write_chunk(uint8_t *p, const uint8_t *end,
			   const struct rpcrdma_segment *segs,
			   unsigned int nsegs)
{
	unsigned int i;

	p = encode_word(p, end, nsegs);
	for (i = 0; i < nsegs && p; i++)
		p = rpcrdma_encode_segment(p, end, &segs[i]);
	return p;
}

/*
 * Decode one counted array into segs[*used..], at most max entries in all.
 * The count is checked against the limit and against the octets left
 * before any segment is read, so a huge count costs nothing.
 */
static const uint8_t *
decode_write_chunk(const uint8_t *p, const uint8_t *end,
		   struct rpcrdma_segment *segs, unsigned int *used,
		   unsigned int max)
{
	uint32_t count, i;

	p = decode_word(p, end, &count);
	if (!p)
		return NULL;
	if (count > max - *used)
		return NULL;
	if (count > room(p, end) / RPCRDMA1_SEGMENT_LEN)
		return NULL;
	for (i = 0; i < count; i++)
		p = decode_segment(p, end, &segs[*used + i]);
	*used += count;
	return p;
}

/*
 * RFC 8166 s5.3.2, s5.7: the Write list, a linked list of Write chunks.
 *
 *   { 1 N { HLOO }N } 0    e.g. 1 3 HLOO HLOO HLOO 1 2 HLOO HLOO 0
 */
uint8_t *
rpcrdma_encode_write_list(uint8_t *p, const uint8_t *end,
			  const struct rpcrdma_write_chunk *chunks,
			  unsigned int nchunks,
			  const struct rpcrdma_segment *segs)
{
	unsigned int i;

	for (i = 0; i < nchunks && p; i++) {
		p = encode_word(p, end, XDR_PRESENT);
		p = rpcrdma_encode_write_chunk(p, end, segs + chunks[i].first,
					       chunks[i].nsegs);
	}
	return encode_word(p, end, XDR_ABSENT);
}

static const uint8_t *
decode_write_list(const uint8_t *p, const uint8_t *end,
		  struct rpcrdma_hdr *hdr)
{
	struct rpcrdma_write_chunk *chunk;
	bool present;

	for (;;) {
		p = decode_item_present(p, end, &present);
		if (!p)
			return NULL;
		if (!present)
			return p;
		if (hdr->nwrites >= RPCRDMA1_MAX_WRITE_CHUNKS)
			return NULL;
		chunk = &hdr->writes[hdr->nwrites];
		chunk->first = hdr->nwsegs;
		p = decode_write_chunk(p, end, hdr->wsegs, &hdr->nwsegs,
				       RPCRDMA1_MAX_WRITE_SEGS);
		if (!p)
			return NULL;
		chunk->nsegs = hdr->nwsegs - chunk->first;
		hdr->nwrites++;
	}
}

/*
 * RFC 8166 s5.3.3, s5.7: the Reply chunk, an optional Write chunk.
 *
 *   0 | 1 N { HLOO }N      e.g. 1 2 HLOO HLOO
 */
uint8_t *
rpcrdma_encode_reply_chunk(uint8_t *p, const uint8_t *end, bool present,
			   const struct rpcrdma_segment *segs,
			   unsigned int nsegs)
{
	if (!present)
		return encode_word(p, end, XDR_ABSENT);
	p = encode_word(p, end, XDR_PRESENT);
	return rpcrdma_encode_write_chunk(p, end, segs, nsegs);
}

static const uint8_t *
decode_reply_chunk(const uint8_t *p, const uint8_t *end,
		   struct rpcrdma_hdr *hdr)
{
	p = decode_item_present(p, end, &hdr->has_reply);
	if (!p || !hdr->has_reply)
		return p;
	return decode_write_chunk(p, end, hdr->reply, &hdr->nreply,
				  RPCRDMA1_MAX_REPLY_SEGS);
}

/*
 * RFC 8166 s5.1.3: union rpcrdma1_error.
 *
 *   1 vers_low vers_high   (RDMA_ERR_VERS)
 *   2                      (RDMA_ERR_BADHEADER)
 */
uint8_t *
rpcrdma_encode_error_body(uint8_t *p, const uint8_t *end, uint32_t err,
			  uint32_t vers_low, uint32_t vers_high)
{
	p = encode_word(p, end, err);
	if (err == RDMA_ERR_VERS) {
		p = encode_word(p, end, vers_low);
		p = encode_word(p, end, vers_high);
	}
	return p;
}

static const uint8_t *
decode_error_body(const uint8_t *p, const uint8_t *end,
		  struct rpcrdma_hdr *hdr)
{
	p = decode_word(p, end, &hdr->err);
	if (!p)
		return NULL;
	switch (hdr->err) {
	case RDMA_ERR_VERS:
		p = decode_word(p, end, &hdr->vers_low);
		return decode_word(p, end, &hdr->vers_high);
	case RDMA_ERR_BADHEADER:
		return p;
	default:
		return NULL;
	}
}

static void
chunks_reset(struct rpcrdma_hdr *hdr)
{
	hdr->nreads = hdr->nwrites = hdr->nwsegs = hdr->nreply = 0;
	hdr->has_reply = false;
}

/*
 * RFC 8166 s5.1.3: struct rpcrdma1_chunks, the body of RDMA_MSG and
 * RDMA_NOMSG (and, after a direction word, of RDMA2_MSG and RDMA2_NOMSG).
 *
 *   read-list write-list reply-chunk       (no chunks: 0 0 0, s5.7)
 */
uint8_t *
rpcrdma_encode_chunks(uint8_t *p, const uint8_t *end,
		      const struct rpcrdma_hdr *hdr)
{
	p = rpcrdma_encode_read_list(p, end, hdr->reads, hdr->nreads);
	p = rpcrdma_encode_write_list(p, end, hdr->writes, hdr->nwrites,
				      hdr->wsegs);
	return rpcrdma_encode_reply_chunk(p, end, hdr->has_reply, hdr->reply,
					  hdr->nreply);
}

const uint8_t *
rpcrdma_decode_chunks(const uint8_t *p, const uint8_t *end,
		      struct rpcrdma_hdr *hdr)
{
	chunks_reset(hdr);
	p = decode_read_list(p, end, hdr);
	p = p ? decode_write_list(p, end, hdr) : NULL;
	return p ? decode_reply_chunk(p, end, hdr) : NULL;
}

/* RFC 8166 s5.2.4: position-zero Read chunk or Reply chunk (s4.5.3). */
bool
rpcrdma_nomsg_has_payload_chunk(const struct rpcrdma_hdr *hdr)
{
	/* Positions never decrease, so a position-zero chunk comes first. */
	return (hdr->nreads && hdr->reads[0].position == 0) || hdr->has_reply;
}

static void
hdr_reset(struct rpcrdma_hdr *hdr)
{
	hdr->xid = hdr->vers = hdr->credits = hdr->proc = 0;
	chunks_reset(hdr);
	hdr->err = hdr->vers_low = hdr->vers_high = 0;
	hdr->hdrlen = 0;
}

void
rpcrdma_hdr_copy(struct rpcrdma_hdr *dst, const struct rpcrdma_hdr *src)
{
	dst->xid = src->xid;
	dst->vers = src->vers;
	dst->credits = src->credits;
	dst->proc = src->proc;
	dst->nreads = src->nreads;
	memcpy(dst->reads, src->reads, src->nreads * sizeof(src->reads[0]));
	dst->nwrites = src->nwrites;
	memcpy(dst->writes, src->writes,
	       src->nwrites * sizeof(src->writes[0]));
	dst->nwsegs = src->nwsegs;
	memcpy(dst->wsegs, src->wsegs, src->nwsegs * sizeof(src->wsegs[0]));
	dst->has_reply = src->has_reply;
	dst->nreply = src->nreply;
	memcpy(dst->reply, src->reply, src->nreply * sizeof(src->reply[0]));
	dst->err = src->err;
	dst->vers_low = src->vers_low;
	dst->vers_high = src->vers_high;
	dst->hdrlen = src->hdrlen;
}

/* RFC 8166 s5.1.4: a prefix, then the body that rdma_proc selects. */
int
rpcrdma_hdr_decode(const void *buf, size_t len, struct rpcrdma_hdr *hdr)
{
	const uint8_t *start = buf;
	const uint8_t *end, *p;

	hdr_reset(hdr);
	if (!start)
		return -EMSGSIZE;
	end = start + len;

	p = rpcrdma_decode_prefix(start, end, &hdr->xid, &hdr->vers,
				  &hdr->credits, &hdr->proc);
	if (!p)
		return -EMSGSIZE;
	/* RFC 8166 s5.5.1 */
	if (hdr->vers != RPCRDMA1_VERSION)
		return -EPROTONOSUPPORT;

	switch (hdr->proc) {
	case RDMA_MSG:
		p = rpcrdma_decode_chunks(p, end, hdr);
		break;
	case RDMA_NOMSG:
		p = rpcrdma_decode_chunks(p, end, hdr);
		if (p && !rpcrdma_nomsg_has_payload_chunk(hdr))
			p = NULL;
		break;
	case RDMA_ERROR:
		p = decode_error_body(p, end, hdr);
		break;
	default:
		/* RFC 8166 s5.6.1, s5.6.2: RDMA_MSGP, RDMA_DONE; s5.1.4 */
		p = NULL;
		break;
	}
	if (!p)
		return -EBADMSG;
	hdr->hdrlen = (size_t)(p - start);
	return 0;
}

/* RFC 8166 s4.4.5.1, s4.4.5: positions multiples of four, non-decreasing. */
static bool
read_list_valid(const struct rpcrdma_read_segment *segs, unsigned int nsegs)
{
	unsigned int i;

	if (nsegs > RPCRDMA1_MAX_READ_SEGS)
		return false;
	for (i = 0; i < nsegs; i++) {
		if (segs[i].position % XDR_UNIT)
			return false;
		if (i && segs[i].position < segs[i - 1].position)
			return false;
	}
	return true;
}

/* The layout rpcrdma_hdr_decode() produces: chunks back to back. */
static bool
write_list_valid(const struct rpcrdma_hdr *hdr)
{
	unsigned int i, next = 0;

	if (hdr->nwrites > RPCRDMA1_MAX_WRITE_CHUNKS ||
	    hdr->nwsegs > RPCRDMA1_MAX_WRITE_SEGS)
		return false;
	for (i = 0; i < hdr->nwrites; i++) {
		if (hdr->writes[i].first != next ||
		    hdr->writes[i].nsegs > hdr->nwsegs - next)
			return false;
		next += hdr->writes[i].nsegs;
	}
	return next == hdr->nwsegs;
}

bool
rpcrdma_chunks_valid(const struct rpcrdma_hdr *hdr)
{
	if (!read_list_valid(hdr->reads, hdr->nreads) ||
	    !write_list_valid(hdr))
		return false;
	return hdr->nreply <= (hdr->has_reply ? RPCRDMA1_MAX_REPLY_SEGS : 0);
}

static bool
chunks_valid(const struct rpcrdma_hdr *hdr)
{
	if (hdr->vers != RPCRDMA1_VERSION || !rpcrdma_chunks_valid(hdr))
		return false;
	if (hdr->proc == RDMA_NOMSG && !rpcrdma_nomsg_has_payload_chunk(hdr))
		return false;
	return true;
}

/*
 * RFC 8166 s5.1.4, s5.7:
 *
 *   RDMA_MSG, RDMA_NOMSG:  xid 1 credits proc  { 1 PHLOO } 0
 *                          { 1 N { HLOO }N } 0  ( 0 | 1 N { HLOO }N )
 *   RDMA_ERROR:            xid vers credits 4  err [ vers_low vers_high ]
 */
ssize_t
rpcrdma_hdr_encode(void *buf, size_t len, struct rpcrdma_hdr *hdr)
{
	uint8_t *start = buf;
	const uint8_t *end = start ? start + len : NULL;
	uint8_t *p;

	switch (hdr->proc) {
	case RDMA_MSG:
	case RDMA_NOMSG:
		if (!chunks_valid(hdr))
			return -EINVAL;
		p = rpcrdma_encode_prefix(start, end, hdr->xid, hdr->vers,
					  hdr->credits, hdr->proc);
		p = rpcrdma_encode_chunks(p, end, hdr);
		break;
	case RDMA_ERROR:
		if (hdr->err != RDMA_ERR_VERS && hdr->err != RDMA_ERR_BADHEADER)
			return -EINVAL;
		p = rpcrdma_encode_prefix(start, end, hdr->xid, hdr->vers,
					  hdr->credits, hdr->proc);
		p = rpcrdma_encode_error_body(p, end, hdr->err,
					      hdr->vers_low, hdr->vers_high);
		break;
	default:
		/* RFC 8166 s5.6: senders never send RDMA_MSGP or RDMA_DONE. */
		return -EINVAL;
	}
	if (!p)
		return -ENOSPC;
	hdr->hdrlen = (size_t)(p - start);
	return (ssize_t)hdr->hdrlen;
}

static ssize_t
encode_error(void *buf, size_t len, uint32_t xid, uint32_t vers,
	     uint32_t credits, uint32_t err, uint32_t low, uint32_t high)
{
	uint8_t *start = buf;
	const uint8_t *end = start ? start + len : NULL;
	uint8_t *p;

	p = rpcrdma_encode_prefix(start, end, xid, vers, credits, RDMA_ERROR);
	p = rpcrdma_encode_error_body(p, end, err, low, high);
	if (!p)
		return -ENOSPC;
	return p - start;
}

/*
 * RFC 8166 s5.5, s5.5.1, s5.5.2:
 *
 *   xid vers credits 4  1 1 1     (ERR_VERS: we support 1..1)
 *   xid vers credits 4  2         (ERR_BADHEADER)
 */
ssize_t
rpcrdma_encode_error(void *buf, size_t len, uint32_t xid, uint32_t vers,
		     uint32_t credits, uint32_t err)
{
	if (err != RDMA_ERR_VERS && err != RDMA_ERR_BADHEADER)
		return -EINVAL;
	return encode_error(buf, len, xid, vers, credits, err,
			    RPCRDMA1_VERSION, RPCRDMA1_VERSION);
}

/*
 * RFC 8166 s5.1.2 (rpcrdma_prefix, rpcrdma_err_vers), s5.5.1, s9.1: the
 * same octets in every version, so any version's receiver reads them.
 *
 *   xid vers credits 4  1 low high
 */
ssize_t
rpcrdma_encode_err_vers(void *buf, size_t len, uint32_t xid, uint32_t vers,
			uint32_t credits, uint32_t low, uint32_t high)
{
	if (low > high)
		return -EINVAL;
	return encode_error(buf, len, xid, vers, credits, RDMA_ERR_VERS, low,
			    high);
}

const char *
rpcrdma_proc_name(uint32_t proc)
{
	switch (proc) {
	case RDMA_MSG:
		return "RDMA_MSG";
	case RDMA_NOMSG:
		return "RDMA_NOMSG";
	case RDMA_MSGP:
		return "RDMA_MSGP";
	case RDMA_DONE:
		return "RDMA_DONE";
	case RDMA_ERROR:
		return "RDMA_ERROR";
	default:
		return "unknown";
	}
}

/*
 * RFC 8166 s4.4.5: "a receiver inserts the first segment in a Read chunk
 * into the Payload stream at the byte offset indicated by its Position
 * field.  Segments whose Position field value match this offset are
 * concatenated afterwards".  Chunks therefore follow each other in the
 * list with strictly increasing positions.
 */
int
rpcrdma_read_chunks(const struct rpcrdma_hdr *hdr,
		    struct rpcrdma_read_chunk *chunks, unsigned int max)
{
	const struct rpcrdma_read_segment *rseg;
	struct rpcrdma_read_chunk *cur = NULL;
	unsigned int i, n = 0;

	if (hdr->nreads > RPCRDMA1_MAX_READ_SEGS)
		return -EBADMSG;
	for (i = 0; i < hdr->nreads; i++) {
		rseg = &hdr->reads[i];
		if (rseg->position % XDR_UNIT)
			return -EBADMSG;
		if (cur && rseg->position == cur->position) {
			cur->nsegs++;
			cur->length += rseg->target.length;
			continue;
		}
		/* A new chunk, or a segment out of place. */
		if (cur && rseg->position < cur->position)
			return -EBADMSG;
		if (n == max)
			return -ENOSPC;
		cur = &chunks[n++];
		cur->position = rseg->position;
		cur->first = i;
		cur->nsegs = 1;
		cur->length = rseg->target.length;
	}
	return (int)n;
}

/* RFC 8166 s4.4.5.1; RFC 4506 s3 round-up, for chunk lengths. */
static inline uint64_t
roundup64(uint64_t n)
{
	return (n + 3u) & ~(uint64_t)3u;
}

uint64_t
rpcrdma_read_rebuild_len(size_t inline_len,
			 const struct rpcrdma_read_chunk *chunks,
			 unsigned int nchunks)
{
	uint64_t total = inline_len;
	unsigned int i;

	for (i = 0; i < nchunks; i++)
		total += roundup64(chunks[i].length);
	return total;
}

/*
 * RFC 8166 s4.4.5.2: the inline octets before a chunk's position, the
 * chunk's data, its round-up (s4.4.5.1), and so on; the inline octets
 * after the last chunk close the stream.  First pass: check the positions
 * and the room; second pass: copy.
 */
ssize_t
rpcrdma_read_rebuild(void *out, size_t outlen, const void *inline_payload,
		     size_t inline_len, const struct rpcrdma_read_chunk *chunks,
		     unsigned int nchunks, const void *data)
{
	const uint8_t *in = inline_payload, *src = data;
	uint8_t *dst = out;
	uint64_t out_pos = 0, gap, padded, total;
	size_t in_pos = 0;
	unsigned int i;

	for (i = 0; i < nchunks; i++) {
		if (chunks[i].position % XDR_UNIT ||
		    chunks[i].position < out_pos)
			return -EBADMSG;
		gap = chunks[i].position - out_pos;
		if (gap > inline_len - in_pos)
			return -EBADMSG;
		in_pos += (size_t)gap;
		out_pos = chunks[i].position + roundup64(chunks[i].length);
	}
	total = out_pos + (inline_len - in_pos);
	if (total > outlen || total > SSIZE_MAX)
		return -ENOSPC;

	out_pos = 0;
	in_pos = 0;
	for (i = 0; i < nchunks; i++) {
		gap = chunks[i].position - out_pos;
		if (gap) {
			memcpy(dst, in + in_pos, (size_t)gap);
			dst += gap;
			in_pos += (size_t)gap;
		}
		if (chunks[i].length) {
			memcpy(dst, src, (size_t)chunks[i].length);
			dst += chunks[i].length;
			src += chunks[i].length;
		}
		padded = roundup64(chunks[i].length);
		if (padded != chunks[i].length) {
			memset(dst, 0, (size_t)(padded - chunks[i].length));
			dst += padded - chunks[i].length;
		}
		out_pos = chunks[i].position + padded;
	}
	if (inline_len > in_pos)
		memcpy(dst, in + in_pos, inline_len - in_pos);
	return (ssize_t)total;
}
