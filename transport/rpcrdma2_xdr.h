/*
 * RPC-over-RDMA Version Two transport header codec
 * (draft-cel-nfsv4-rpcrdma-version-two-01, "the draft" below; its XDR is
 * in s4.2).
 *
 * Pure functions over caller-owned buffers, like the Version One codec
 * (rpcrdma_xdr.h): no device, no allocation, no global state; every
 * decoder checks the bounds before it reads, every encoder the space
 * before it writes.  The read list, write list and reply chunk are
 * Version One's XDR under new names (rpcrdma2_read_list, ...), so they
 * are decoded and encoded by the Version One list codecs, with the same
 * limits (RPCRDMA1_MAX_*).
 *
 * Wire grammar (RFC 8166 s5.7 notation; D a direction, 0 CALL or 1
 * REPLY, RFC 5531 s9 msg_type; N a count; pad zero octets up to a
 * multiple of four, RFC 4506 s4.10):
 *
 *   prefix:          xid 2 credits proc
 *   chunk lists:     D { 1 PHLOO } 0  { 1 N { HLOO }N } 0  ( 0 | 1 N { HLOO }N )
 *   RDMA2_MSG:       prefix chunk-lists payload...
 *   RDMA2_NOMSG:     prefix chunk-lists
 *   RDMA2_ERROR:     prefix err [ vers_low vers_high ]  (err == RDMA2_ERR_VERS)
 *   RDMA2_OPTIONAL:  prefix D opttype N { octet }N pad [ payload... ]
 *
 * Where the draft's prose and its XDR disagree, the XDR is followed; each
 * such choice is written beside the code it shapes, and DEVELOPERS.md
 * lists them.
 */
#ifndef TRANSPORT_RPCRDMA2_XDR_H
#define TRANSPORT_RPCRDMA2_XDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rpcrdma_xdr.h"

#define RPCRDMA2_VERSION 2

/* Draft s2.3: the inline threshold every Version Two receiver takes. */
#define RPCRDMA2_INLINE_DEFAULT 4096
/*
 * draft-cel-nfsv4-rpcrdma-version-two-01 s2.3 has senders assume 4096
 * octets, s5 keeps the first message on a connection, sent before the
 * peer's version is known, within Version One's default: this until the
 * version is agreed (s5.1, s5.2), RPCRDMA2_INLINE_DEFAULT after.
 */
#define RPCRDMA2_NEGOTIATE_INLINE 1024

/* Draft s4.2: enum rpcrdma2_proc. */
enum rpcrdma2_proc {
	RDMA2_MSG = 0,
	RDMA2_NOMSG = 1,
	RDMA2_ERROR = 4,
	RDMA2_OPTIONAL = 5,
};

/* Draft s4.2: enum rpcrdma2_errcode. */
enum rpcrdma2_errcode {
	RDMA2_ERR_VERS = 1,
	RDMA2_ERR_BAD_HEADER = 2,
	RDMA2_ERR_INVALID_OPTION = 3,
};

/*
 * Draft s4.2: rdma_direction and rdma_optdir are an enum msg_type, whose
 * values are RFC 5531 s9's CALL and REPLY (named apart from libtirpc's
 * own enum msg_type).
 */
enum rpcrdma2_dir {
	RDMA2_DIR_CALL = 0,
	RDMA2_DIR_REPLY = 1,
};

/* Octets in the four fixed fields, the same in every version. */
#define RPCRDMA2_PREFIX_LEN 16
/* Smallest RDMA2_MSG/RDMA2_NOMSG: prefix, direction, three empty lists. */
#define RPCRDMA2_HDR_MIN (RPCRDMA2_PREFIX_LEN + 16)
/* Smallest RDMA2_OPTIONAL: prefix, optdir, opttype, empty optinfo. */
#define RPCRDMA2_OPTIONAL_HDR_MIN (RPCRDMA2_PREFIX_LEN + 12)
/*
 * Draft s4.2 leaves rdma_optinfo<> unbounded.  Nothing larger than this
 * fits, with its header, in the one Send size every receiver takes
 * (s2.3), and s2.1 gives no way to learn a larger one: decode refuses a
 * longer rdma_optinfo, encode will not write one.
 */
#define RPCRDMA2_MAX_OPTINFO \
	(RPCRDMA2_INLINE_DEFAULT - RPCRDMA2_OPTIONAL_HDR_MIN)

/* A Version Two transport header, decoded or to be encoded. */
struct rpcrdma2_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credits;
	uint32_t proc;

	/*
	 * RDMA2_MSG, RDMA2_NOMSG: rdma_direction; RDMA2_OPTIONAL:
	 * rdma_optdir.  RDMA2_ERROR has none on the wire: decode sets
	 * RDMA2_DIR_REPLY (s4.2.2), encode ignores it.
	 */
	uint32_t direction;

	/*
	 * RDMA2_MSG, RDMA2_NOMSG: the read list, write list and reply chunk
	 * in the list fields of a Version One header (nreads, reads,
	 * nwrites, writes, nwsegs, wsegs, has_reply, nreply, reply); its
	 * other fields are not used.  rpcrdma_read_chunks() and the rest of
	 * the Version One chunk helpers take it as it is.
	 */
	struct rpcrdma_hdr chunks;

	/* RDMA2_ERROR */
	uint32_t err;
	uint32_t vers_low;
	uint32_t vers_high;

	/*
	 * RDMA2_OPTIONAL.  Decode points optinfo into the buffer it was
	 * given (valid as long as that is); encode copies optlen octets
	 * from it.
	 */
	uint32_t opttype;
	uint32_t optlen;
	const uint8_t *optinfo;

	/* Set by decode and encode: octets of transport header. */
	size_t hdrlen;
};

/*
 * The XID and version of any received message, Version One or Two,
 * reading nothing else: for a receive path that picks the decoder by
 * version.  Both versions put them first (RFC 8166 s5.2, s9.1; draft
 * s4.2, rpcrdma2_xprt_hdr).  Returns 0, or -EMSGSIZE when len is under
 * the four-word prefix that every version's messages start with (then
 * nothing is known and the message is dropped, as the decoders do).
 *
 * To decide whether to answer an unsupported version with ERR_VERS
 * (never answer an RDMA_ERROR, RFC 8166 s5.5): either decoder returns
 * -EPROTONOSUPPORT with the prefix, proc included, filled in.
 */
int rpcrdma_peek_version(const void *buf, size_t len, uint32_t *xid,
			 uint32_t *vers);

/*
 * Decode a received Version Two transport header.
 *
 * Returns 0 when the header is well formed; then hdr->hdrlen is where the
 * RPC payload starts (RDMA2_MSG, and RDMA2_OPTIONAL when it carries one,
 * s4.2.1).  Otherwise a negative errno says what to do:
 *   -EMSGSIZE        fewer than RPCRDMA2_PREFIX_LEN octets: nothing is
 *                    known, not even the XID; drop the message.
 *   -EPROTONOSUPPORT rdma_vers is not 2: decode it as another version,
 *                    or answer ERR_VERS (rpcrdma2_encode_error()),
 *                    unless hdr->proc is RDMA2_ERROR.
 *   -EBADMSG         anything else malformed: a procedure not in the
 *                    draft (Version One's RDMA_MSGP and RDMA_DONE
 *                    included), a direction other than CALL or REPLY,
 *                    an error code not in the draft, an ERR_VERS range
 *                    whose low end is above its high end, an
 *                    rdma_optinfo longer than RPCRDMA2_MAX_OPTINFO or
 *                    with non-zero padding, a chunk list Version One
 *                    refuses (rpcrdma_hdr_decode()), an RDMA2_NOMSG
 *                    with neither a position-zero Read chunk nor a
 *                    Reply chunk, anything cut short: answer
 *                    RDMA2_ERROR/RDMA2_ERR_BAD_HEADER, except that a
 *                    malformed RDMA2_ERROR is dropped (RFC 8166 s5.5,
 *                    draft s4.2.3).
 * Whenever len >= RPCRDMA2_PREFIX_LEN the four prefix fields are valid,
 * whatever the result.
 *
 * Never reads past buf + len.  Not checked here: that rdma_direction
 * (rdma_optdir) matches the msg_type of the RPC message that follows and
 * that its XID matches rdma_xid (s4.2.2), the credit value, and whether
 * rdma_opttype names a feature this end supports (s3.1: the caller
 * answers RDMA2_ERR_INVALID_OPTION).  A header that is accepted
 * re-encodes to the same octets.
 */
int rpcrdma2_hdr_decode(const void *buf, size_t len, struct rpcrdma2_hdr *hdr);

/*
 * Encode a whole header.  Returns the number of octets written, -ENOSPC
 * when len is too small, or -EINVAL when hdr does not describe a header
 * rpcrdma2_hdr_decode() accepts: vers 2, a known proc, a valid direction
 * (RDMA2_MSG, RDMA2_NOMSG, RDMA2_OPTIONAL), lists that
 * rpcrdma_chunks_valid() accepts and for RDMA2_NOMSG a position-zero
 * Read chunk or a Reply chunk, optlen <= RPCRDMA2_MAX_OPTINFO (optinfo
 * not NULL when optlen > 0), a known error code with vers_low <=
 * vers_high.  An RDMA2_ERROR/RDMA2_ERR_VERS may carry any vers: it echoes
 * the failing message's (RFC 8166 s5.5), which was not Version Two.  Sets
 * hdr->hdrlen.
 */
ssize_t rpcrdma2_hdr_encode(void *buf, size_t len, struct rpcrdma2_hdr *hdr);

/*
 * Element encoders for what Version Two adds; they chain like the Version
 * One ones (NULL in, NULL out; NULL when the element does not fit) and do
 * not validate.  The prefix is rpcrdma_encode_prefix().
 */
uint8_t *rpcrdma2_encode_direction(uint8_t *p, const uint8_t *end,
				   uint32_t dir);
/* Direction, then lists->reads, writes and reply (rpcrdma_encode_chunks). */
uint8_t *rpcrdma2_encode_chunk_lists(uint8_t *p, const uint8_t *end,
				     uint32_t dir,
				     const struct rpcrdma_hdr *lists);
uint8_t *rpcrdma2_encode_error_body(uint8_t *p, const uint8_t *end,
				    uint32_t err, uint32_t vers_low,
				    uint32_t vers_high);
uint8_t *rpcrdma2_encode_optional(uint8_t *p, const uint8_t *end,
				  uint32_t optdir, uint32_t opttype,
				  const void *optinfo, uint32_t optlen);

/*
 * An RDMA2_ERROR answering a failed message (RFC 8166 s5.5 by draft
 * s4.2.3): its XID and version echoed; RDMA2_ERR_VERS offering 1..2 (the
 * versions this codec speaks), RDMA2_ERR_BAD_HEADER or
 * RDMA2_ERR_INVALID_OPTION (s3.1).  Returns octets written, -ENOSPC, or
 * -EINVAL for an unknown err, or for the last two when vers is not 2
 * (they answer a message whose version was understood).
 */
ssize_t rpcrdma2_encode_error(void *buf, size_t len, uint32_t xid,
			      uint32_t vers, uint32_t credits, uint32_t err);

/* Names for logs ("RDMA2_MSG", "RDMA2_ERR_VERS", "CALL", ..., "unknown"). */
const char *rpcrdma2_proc_name(uint32_t proc);
const char *rpcrdma2_err_name(uint32_t err);
const char *rpcrdma2_dir_name(uint32_t dir);

#endif
