/*
 * RPC-over-RDMA Version One transport header codec (RFC 8166 s5).
 *
 * Pure functions over caller-owned buffers: no device, no allocation, no
 * global state.  Every decoder checks the bounds before it reads; every
 * encoder checks the space before it writes.
 *
 * Wire grammar (RFC 8166 s5.7 notation: P position, H handle, L length,
 * OO 64-bit offset, 1/0 optional-data discriminators, N counts):
 *
 *   prefix:       xid vers credits proc
 *   read list:    { 1 PHLOO } 0
 *   write list:   { 1 N { HLOO }N } 0
 *   reply chunk:  0 | 1 N { HLOO }N
 *   RDMA_MSG:     prefix read-list write-list reply-chunk payload...
 *   RDMA_NOMSG:   prefix read-list write-list reply-chunk
 *   RDMA_ERROR:   prefix err [ vers_low vers_high ]     (when err == ERR_VERS)
 */
#ifndef TRANSPORT_HDR_CODEC_H
#define TRANSPORT_HDR_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RPCRDMA1_VERSION 1

/* RFC 8166 s5.1.2, s5.1.3: header types ("procedures"). */
enum rpcrdma_proc {
	RDMA_MSG = 0,
	RDMA_NOMSG = 1,
	RDMA_MSGP = 2,		/* reserved, s5.6.1 */
	RDMA_DONE = 3,		/* reserved, s5.6.2 */
	RDMA_ERROR = 4,
};

/* RFC 8166 s5.1.3: rpcrdma1_errcode. */
enum rpcrdma_errcode {
	RDMA_ERR_VERS = 1,
	RDMA_ERR_BADHEADER = 2,	/* "ERR_CHUNK" in RFC 5666 */
};

/* Octets in the four fixed fields (s5.2). */
#define RPCRDMA1_PREFIX_LEN 16
/* Smallest RDMA_MSG/RDMA_NOMSG header: prefix plus three empty lists. */
#define RPCRDMA1_HDR_MIN (RPCRDMA1_PREFIX_LEN + 12)
/* Octets of an encoded plain segment (HLOO) and read segment (PHLOO). */
#define RPCRDMA1_SEGMENT_LEN 16
#define RPCRDMA1_READ_SEGMENT_LEN 20

/*
 * Decoding limits.  A header that carries more than these is answered with
 * RDMA_ERROR/BADHEADER rather than truncated.  They are far above what any
 * known peer sends (Linux xprtrdma uses at most 16 segments per header).
 */
#define RPCRDMA1_MAX_READ_SEGS 64
#define RPCRDMA1_MAX_WRITE_CHUNKS 8
#define RPCRDMA1_MAX_WRITE_SEGS 64	/* over all Write chunks together */
#define RPCRDMA1_MAX_REPLY_SEGS 64

/* RFC 8166 s4.4.3: rpcrdma1_segment. */
struct rpcrdma_segment {
	uint32_t handle;
	uint32_t length;
	uint64_t offset;
};

/* RFC 8166 s4.4.5: rpcrdma1_read_segment. */
struct rpcrdma_read_segment {
	uint32_t position;
	struct rpcrdma_segment target;
};

/* One Write chunk (s4.4.6): nsegs entries of hdr->wsegs from first. */
struct rpcrdma_write_chunk {
	unsigned int first;
	unsigned int nsegs;
};

/* A transport header, decoded or to be encoded. */
struct rpcrdma_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credits;
	uint32_t proc;

	/* RDMA_MSG and RDMA_NOMSG */
	unsigned int nreads;
	struct rpcrdma_read_segment reads[RPCRDMA1_MAX_READ_SEGS];
	unsigned int nwrites;
	struct rpcrdma_write_chunk writes[RPCRDMA1_MAX_WRITE_CHUNKS];
	unsigned int nwsegs;
	struct rpcrdma_segment wsegs[RPCRDMA1_MAX_WRITE_SEGS];
	bool has_reply;
	unsigned int nreply;
	struct rpcrdma_segment reply[RPCRDMA1_MAX_REPLY_SEGS];

	/* RDMA_ERROR */
	uint32_t err;
	uint32_t vers_low;
	uint32_t vers_high;

	/* Set by decode and encode: octets of transport header. */
	size_t hdrlen;
};

/* XDR round-up (RFC 4506 s3; RFC 8166 s3.1.4.2). */
static inline uint32_t
rpcrdma_xdr_roundup(uint32_t n)
{
	return (n + 3u) & ~3u;
}

/*
 * Decode a received transport header.
 *
 * Returns 0 when the header is well formed; then hdr->hdrlen is where the
 * payload starts (RDMA_MSG).  Otherwise a negative errno says what to do:
 *   -EMSGSIZE        fewer than RPCRDMA1_PREFIX_LEN octets: nothing is
 *                    known, not even the XID; drop the message.
 *   -EPROTONOSUPPORT rdma_vers is not 1: answer RDMA_ERROR/ERR_VERS
 *                    (s5.5.1), unless hdr->proc is RDMA_ERROR: an error
 *                    is never answered with an error (s5.5: a receiver
 *                    discards an RDMA_ERROR it cannot decode).
 *   -EBADMSG         anything else malformed: an unknown or reserved
 *                    procedure (RDMA_MSGP, RDMA_DONE), a truncated list,
 *                    an optional-data discriminator other than 0 or 1
 *                    (an XDR bool, RFC 4506 s4.4), more segments than the
 *                    limits above, a read position that is not a multiple
 *                    of four or that decreases, an RDMA_NOMSG with neither
 *                    a position-zero Read chunk nor a Reply chunk, an
 *                    RDMA_ERROR with an unknown code: answer
 *                    RDMA_ERROR/BADHEADER (s5.5.2), except that a
 *                    malformed RDMA_ERROR is silently dropped (s5.5).
 * Whenever len >= RPCRDMA1_PREFIX_LEN, the four prefix fields (hdr->xid,
 * vers, credits, proc) are valid, whatever the result.
 *
 * Never reads past buf + len.  The payload is not examined: that an
 * RDMA_MSG carries one and that its XID matches rdma_xid (s5.5.2) is for
 * the caller to check, as is the credit value (a granted value of zero is
 * not allowed, s4.3.1, but only the caller knows whether this is a call
 * or a reply).  Octets after the header of an RDMA_NOMSG or RDMA_ERROR
 * are ignored.  Counted Write and Reply chunks with zero segments are
 * accepted.  A header that is accepted re-encodes to the same octets.
 */
int rpcrdma_hdr_decode(const void *buf, size_t len, struct rpcrdma_hdr *hdr);

/*
 * Encode a whole header (prefix, then the lists or the error body chosen
 * by hdr->proc).  Returns the number of octets written, or -ENOSPC when
 * len is too small, or -EINVAL when hdr does not describe a valid header.
 * Sets hdr->hdrlen.
 *
 * Valid means what rpcrdma_hdr_decode() accepts, plus the layout it
 * produces: RDMA_MSG/RDMA_NOMSG with vers 1, counts within the limits,
 * read positions multiples of four and non-decreasing, hdr->writes[]
 * covering hdr->wsegs[0..nwsegs) in order (chunk i starts where chunk
 * i - 1 ends), nreply == 0 when !has_reply, and for RDMA_NOMSG a
 * position-zero Read chunk or a Reply chunk; or RDMA_ERROR (any vers: an
 * error echoes the version of the failing message, s5.5) with err
 * RDMA_ERR_VERS (vers_low..vers_high) or RDMA_ERR_BADHEADER.
 */
ssize_t rpcrdma_hdr_encode(void *buf, size_t len, struct rpcrdma_hdr *hdr);

/*
 * Copy a header: its fixed words and the list entries its counts say are
 * in use.  The arrays hold every list the limits allow (3.7 KiB); a
 * header rarely uses more than a few entries, and a structure copy would
 * move all of them on every message.
 */
void rpcrdma_hdr_copy(struct rpcrdma_hdr *dst, const struct rpcrdma_hdr *src);

/*
 * Element encoders, one per XDR item.  Each writes at p, never past end,
 * and returns the position after what it wrote, or NULL when it does not
 * fit.  A NULL p (an earlier step did not fit) gives NULL again, so calls
 * chain and one test at the end suffices.  They do not validate the
 * values (rpcrdma_hdr_encode() does).  They compose: rpcrdma_hdr_encode()
 * is built from them.
 */
uint8_t *rpcrdma_encode_prefix(uint8_t *p, const uint8_t *end, uint32_t xid,
			       uint32_t vers, uint32_t credits, uint32_t proc);
uint8_t *rpcrdma_encode_segment(uint8_t *p, const uint8_t *end,
				const struct rpcrdma_segment *seg);
uint8_t *rpcrdma_encode_read_segment(uint8_t *p, const uint8_t *end,
				     const struct rpcrdma_read_segment *rseg);
uint8_t *rpcrdma_encode_read_list(uint8_t *p, const uint8_t *end,
				  const struct rpcrdma_read_segment *segs,
				  unsigned int nsegs);
uint8_t *rpcrdma_encode_write_chunk(uint8_t *p, const uint8_t *end,
				    const struct rpcrdma_segment *segs,
				    unsigned int nsegs);
/* A Write list of nchunks chunks whose segments are taken from segs. */
uint8_t *rpcrdma_encode_write_list(uint8_t *p, const uint8_t *end,
				   const struct rpcrdma_write_chunk *chunks,
				   unsigned int nchunks,
				   const struct rpcrdma_segment *segs);
/* present == false encodes the absent discriminator (a single zero). */
uint8_t *rpcrdma_encode_reply_chunk(uint8_t *p, const uint8_t *end,
				    bool present,
				    const struct rpcrdma_segment *segs,
				    unsigned int nsegs);

/*
 * An RDMA_ERROR's body: err, then vers_low and vers_high when err is
 * RDMA_ERR_VERS (1), nothing more for any other code.  Version Two's error
 * union has the same arms plus one more without a body, so it is encoded
 * by this too (rpcrdma2_encode_error_body()).
 */
uint8_t *rpcrdma_encode_error_body(uint8_t *p, const uint8_t *end,
				   uint32_t err, uint32_t vers_low,
				   uint32_t vers_high);

/*
 * The prefix's decoder, the same in every version (s5.1.2, s9.1): the four
 * words into *xid, *vers, *credits and *proc.  Returns the position after
 * them, or NULL (nothing written) when they do not fit or p is NULL.
 */
const uint8_t *rpcrdma_decode_prefix(const uint8_t *p, const uint8_t *end,
				     uint32_t *xid, uint32_t *vers,
				     uint32_t *credits, uint32_t *proc);

/*
 * The chunk lists (s5.1.3, struct rpcrdma1_chunks: read list, write list,
 * reply chunk) on their own, from and to the list fields of hdr (nreads,
 * reads, nwrites, writes, nwsegs, wsegs, has_reply, nreply, reply; the
 * other fields are not used).  RPC-over-RDMA Version Two carries the same
 * XDR after a direction word (rpcrdma2_xdr.h), so both codecs use these.
 *
 * rpcrdma_encode_chunks() chains like the element encoders and does not
 * validate; rpcrdma_chunks_valid() says whether the list fields describe
 * lists rpcrdma_hdr_encode() would encode (limits, positions, the write
 * chunk layout, nreply == 0 without a Reply chunk).
 * rpcrdma_decode_chunks() resets the list fields, decodes at p with the
 * checks and limits of rpcrdma_hdr_decode(), and returns the position
 * after the Reply chunk, or NULL when the lists are malformed or do not
 * fit before end.
 * rpcrdma_nomsg_has_payload_chunk(): whether the lists can carry an
 * RDMA_NOMSG's message (a position-zero Read chunk or a Reply chunk).
 */
uint8_t *rpcrdma_encode_chunks(uint8_t *p, const uint8_t *end,
			       const struct rpcrdma_hdr *hdr);
bool rpcrdma_chunks_valid(const struct rpcrdma_hdr *hdr);
const uint8_t *rpcrdma_decode_chunks(const uint8_t *p, const uint8_t *end,
				     struct rpcrdma_hdr *hdr);
bool rpcrdma_nomsg_has_payload_chunk(const struct rpcrdma_hdr *hdr);

/*
 * An RDMA_ERROR for a failed request (s5.5): same XID and version as the
 * request, ERR_VERS carrying the supported range 1..1, or BADHEADER.
 * Returns octets written, -ENOSPC, or -EINVAL for an unknown err.
 */
ssize_t rpcrdma_encode_error(void *buf, size_t len, uint32_t xid,
			     uint32_t vers, uint32_t credits, uint32_t err);

/*
 * An RDMA_ERROR/ERR_VERS offering the versions low..high (s5.5.1), for a
 * receiver that speaks more than Version One.  Its octets are the same in
 * every version (s5.1.2, s9.1), so vers echoes the failing message's
 * version whatever it is.  Returns octets written (28), -ENOSPC, or
 * -EINVAL when low > high.
 */
ssize_t rpcrdma_encode_err_vers(void *buf, size_t len, uint32_t xid,
				uint32_t vers, uint32_t credits, uint32_t low,
				uint32_t high);

/* The name of a procedure, for logs ("RDMA_MSG", ..., "unknown"). */
const char *rpcrdma_proc_name(uint32_t proc);

/*
 * Read chunks of a call (RFC 8166 s4.4.5): the segments of hdr->reads
 * grouped by position.  The chunk's data is the concatenation, in list
 * order, of its nsegs segments starting at hdr->reads[first]; length is
 * the sum of their lengths (up to 64 x 4 GiB, hence 64 bits).
 */
struct rpcrdma_read_chunk {
	uint32_t position;
	unsigned int first;
	unsigned int nsegs;
	uint64_t length;
};

/*
 * Group the Read list into chunks, in list order (s4.4.5, s5.3.1).
 * Returns the number of chunks (0 for an empty list), -EBADMSG when the
 * list is not a valid sequence of chunks (more than RPCRDMA1_MAX_READ_SEGS
 * segments, a position that is not a multiple of four, segments of one
 * chunk not adjacent in the list, positions not increasing from chunk to
 * chunk), or -ENOSPC when there are more than max chunks.  A header that
 * rpcrdma_hdr_decode() accepted never gives -EBADMSG.
 *
 * A position-zero chunk, if any, is chunks[0]: it carries the whole call
 * (a Long Call, s4.5.3).  Any further chunks then hold data items reduced
 * out of that call, and their positions count octets of the call carried
 * in chunks[0], not of the inline payload (there is none in RDMA_NOMSG).
 */
int rpcrdma_read_chunks(const struct rpcrdma_hdr *hdr,
			struct rpcrdma_read_chunk *chunks, unsigned int max);

/*
 * Octets of the rebuilt Payload stream: inline_len plus each chunk's
 * length rounded up to a multiple of four (s4.4.5.1).  The result of
 * rpcrdma_read_rebuild() when that succeeds.
 */
uint64_t rpcrdma_read_rebuild_len(size_t inline_len,
				  const struct rpcrdma_read_chunk *chunks,
				  unsigned int nchunks);

/*
 * Rebuild a call's Payload stream (s4.4.5, s4.4.5.1, s4.4.5.2): copy the
 * reduced inline payload to out, inserting each chunk's data at its
 * position.  'data' holds the chunks' data contiguously, chunk after
 * chunk, each exactly chunks[i].length octets (what the RDMA Reads
 * fetched; NULL is fine when every length is zero).
 *
 * A chunk whose length is not a multiple of four is followed by zero
 * octets up to the next multiple (XDR round-up): the requester may omit
 * that padding (s4.4.5.1), and it is not in the inline payload either
 * (the requester removed it with the data item).  A chunk whose length
 * already includes its padding gets none.
 *
 * Positions count octets of the rebuilt stream, which is the original,
 * unreduced Payload stream (s4.4.5: "computed from the beginning of the
 * Payload stream"): the position of a later chunk already includes the
 * earlier chunks and their padding.  Positions must be multiples of four.
 *
 * Returns the rebuilt length (rpcrdma_read_rebuild_len()), -EBADMSG when a
 * position does not fit (not a multiple of four, before the end of the
 * previous chunk, or beyond the inline data that is left), or -ENOSPC
 * when outlen is too small.  Checks everything before it writes: on
 * error out is untouched.
 *
 * A position-zero chunk (a Long Call, s4.5.3) is the degenerate case:
 * everything comes from data.  When such a chunk is followed by further
 * chunks, call this with chunks[0]'s data as inline_payload and the
 * remaining chunks (see rpcrdma_read_chunks()).
 */
ssize_t rpcrdma_read_rebuild(void *out, size_t outlen,
			     const void *inline_payload, size_t inline_len,
			     const struct rpcrdma_read_chunk *chunks,
			     unsigned int nchunks, const void *data);

#endif
