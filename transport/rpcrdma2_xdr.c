/*
 * RPC-over-RDMA Version Two transport header codec
 * (draft-cel-nfsv4-rpcrdma-version-two-01 s4.2).
 *
 * What Version Two adds (a direction word, RDMA2_OPTIONAL, a third error
 * code) has its own small encoder and decoder here, written like the
 * Version One ones: a cursor p and the end of the buffer, the bounds
 * checked before anything is touched, the cursor after the element or
 * NULL returned, words read and written octet by octet, big-endian (the
 * word helpers are xdr_word.h, shared with Version One).  The prefix, the
 * chunk lists and the error body's encoder are the Version One codec's.
 */
#include <errno.h>
#include <string.h>

#include "rpcrdma2_xdr.h"
#include "xdr_word.h"

/* RFC 4506 s4.10: opaque<> is padded with zero octets to a whole word. */
static inline size_t
padded_len(uint32_t n)
{
	return ((size_t)n + XDR_UNIT - 1) & ~(size_t)(XDR_UNIT - 1);
}

/*
 * Draft s4.2: struct rpcrdma2_xprt_hdr opens with rdma_xid, rdma_vers,
 * rdma_credit, then rdma_proc as the discriminant of rpcrdma2_body: the
 * octets of Version One's rpcrdma_prefix (RFC 8166 s5.1.2), decoded by
 * Version One's rpcrdma_decode_prefix().
 */
int
rpcrdma_peek_version(const void *buf, size_t len, uint32_t *xid,
		     uint32_t *vers)
{
	const uint8_t *p = buf;
	uint32_t credits, proc;

	if (!p || !rpcrdma_decode_prefix(p, p + len, xid, vers, &credits,
					 &proc))
		return -EMSGSIZE;
	return 0;
}

static bool
dir_valid(uint32_t dir)
{
	return dir == RDMA2_DIR_CALL || dir == RDMA2_DIR_REPLY;
}

/*
 * Draft s4.2: enum msg_type rdma_direction (rdma_optdir).
 *
 *   0 | 1
 *
 * RFC 4506 s4.3: an enum holds only the values it declares, so any other
 * word is malformed.
 */
uint8_t *
rpcrdma2_encode_direction(uint8_t *p, const uint8_t *end, uint32_t dir)
{
	return encode_word(p, end, dir);
}

static const uint8_t *
decode_direction(const uint8_t *p, const uint8_t *end, uint32_t *dir)
{
	p = decode_word(p, end, dir);
	return p && dir_valid(*dir) ? p : NULL;
}

/*
 * Draft s4.2: struct rpcrdma2_chunk_lists, the body of RDMA2_MSG and
 * RDMA2_NOMSG.
 *
 *   D { 1 PHLOO } 0  { 1 N { HLOO }N } 0  ( 0 | 1 N { HLOO }N )
 *
 * draft-cel-nfsv4-rpcrdma-version-two-01 s4.2: the arms of rpcrdma2_body
 * (and s3.2) name a type "rpcrdma2_chunks" that the XDR never defines;
 * the struct it does define for them is rpcrdma2_chunk_lists, and that is
 * what is on the wire here: rdma_direction first, then the three lists,
 * whose XDR (rpcrdma2_read_list, rpcrdma2_write_list, rpcrdma2_write_chunk)
 * is Version One's word for word (RFC 8166 s5.1.3).
 */
uint8_t *
rpcrdma2_encode_chunk_lists(uint8_t *p, const uint8_t *end, uint32_t dir,
			    const struct rpcrdma_hdr *lists)
{
	p = rpcrdma2_encode_direction(p, end, dir);
	return rpcrdma_encode_chunks(p, end, lists);
}

static const uint8_t *
decode_chunk_lists(const uint8_t *p, const uint8_t *end,
		   struct rpcrdma2_hdr *hdr)
{
	p = decode_direction(p, end, &hdr->direction);
	return p ? rpcrdma_decode_chunks(p, end, &hdr->chunks) : NULL;
}

/*
 * draft-cel-nfsv4-rpcrdma-version-two-01 s4.2.1 lists RDMA2_MSG,
 * RDMA2_ERROR and RDMA2_OPTIONAL but says nothing of RDMA2_NOMSG; s4.2.3
 * keeps Version One's error handling, in
 * which an RDMA_NOMSG without a chunk to carry its message is an XDR
 * error (RFC 8166 s5.5.2) and no payload follows it (s5.1.4, Table 1).
 * The same rule holds here.
 */
static const uint8_t *
decode_nomsg(const uint8_t *p, const uint8_t *end, struct rpcrdma2_hdr *hdr)
{
	p = decode_chunk_lists(p, end, hdr);
	return p && rpcrdma_nomsg_has_payload_chunk(&hdr->chunks) ? p : NULL;
}

/*
 * Draft s4.2: union rpcrdma2_error, rpcrdma2_err_vers.
 *
 *   1 vers_low vers_high   (RDMA2_ERR_VERS)
 *   2                      (RDMA2_ERR_BAD_HEADER)
 *   3                      (RDMA2_ERR_INVALID_OPTION)
 *
 * draft-cel-nfsv4-rpcrdma-version-two-01 s3.2 says a direction field was
 * added to the error structure too; the XDR (s4.2) has none, and s4.2.2
 * says an RDMA2_ERROR always travels Responder-to-Requester.  No direction
 * word is written or read; decode reports RDMA2_DIR_REPLY.
 *
 * draft-cel-nfsv4-rpcrdma-version-two-01 s5.2 has a responder without
 * Version Two send RDMA2_ERROR/RDMA2_ERR_VERS, elements it cannot know.
 * What it sends is Version One's RDMA_ERROR/ERR_VERS echoing version 2
 * (RFC 8166 s5.5), the same octets, so this decoder reads it.
 *
 * A range whose low end is above its high end offers no version to
 * choose (s5.2): refused both ways.
 */
uint8_t *
rpcrdma2_encode_error_body(uint8_t *p, const uint8_t *end, uint32_t err,
			   uint32_t vers_low, uint32_t vers_high)
{
	/* RDMA2_ERR_VERS is RDMA_ERR_VERS; the other codes have no body. */
	return rpcrdma_encode_error_body(p, end, err, vers_low, vers_high);
}

static const uint8_t *
decode_error_body(const uint8_t *p, const uint8_t *end,
		  struct rpcrdma2_hdr *hdr)
{
	hdr->direction = RDMA2_DIR_REPLY;
	p = decode_word(p, end, &hdr->err);
	if (!p)
		return NULL;
	switch (hdr->err) {
	case RDMA2_ERR_VERS:
		p = decode_word(p, end, &hdr->vers_low);
		p = decode_word(p, end, &hdr->vers_high);
		return p && hdr->vers_low <= hdr->vers_high ? p : NULL;
	case RDMA2_ERR_BAD_HEADER:
	case RDMA2_ERR_INVALID_OPTION:
		return p;
	default:
		/* No default arm in the union (RFC 4506 s4.15). */
		return NULL;
	}
}

/*
 * Draft s4.2, s3.1: struct rpcrdma2_optional.
 *
 *   D opttype N { octet }N pad
 *
 * rdma_optinfo<> has no bound in the draft; RPCRDMA2_MAX_OPTINFO is this
 * codec's (see rpcrdma2_xdr.h).  The padding must be zero (RFC 4506
 * s4.10), so that what is accepted re-encodes to the same octets.
 */
uint8_t *
rpcrdma2_encode_optional(uint8_t *p, const uint8_t *end, uint32_t optdir,
			 uint32_t opttype, const void *optinfo,
			 uint32_t optlen)
{
	size_t padded = padded_len(optlen);

	p = encode_word(p, end, optdir);
	p = encode_word(p, end, opttype);
	p = encode_word(p, end, optlen);
	if (padded < optlen || !fits(p, end, padded))
		return NULL;	/* the first: a 32-bit size_t wrapped */
	if (optlen)
		memcpy(p, optinfo, optlen);
	memset(p + optlen, 0, padded - optlen);
	return p + padded;
}

static const uint8_t *
decode_optional(const uint8_t *p, const uint8_t *end,
		struct rpcrdma2_hdr *hdr)
{
	size_t padded, i;

	p = decode_direction(p, end, &hdr->direction);
	p = decode_word(p, end, &hdr->opttype);
	p = decode_word(p, end, &hdr->optlen);
	if (!p || hdr->optlen > RPCRDMA2_MAX_OPTINFO)
		return NULL;
	padded = padded_len(hdr->optlen);
	if (!fits(p, end, padded))
		return NULL;
	for (i = hdr->optlen; i < padded; i++)
		if (p[i])
			return NULL;
	hdr->optinfo = p;
	return p + padded;
}

static void
hdr_reset(struct rpcrdma2_hdr *hdr)
{
	hdr->xid = hdr->vers = hdr->credits = hdr->proc = 0;
	hdr->direction = 0;
	hdr->chunks.nreads = hdr->chunks.nwrites = hdr->chunks.nwsegs = 0;
	hdr->chunks.nreply = 0;
	hdr->chunks.has_reply = false;
	hdr->err = hdr->vers_low = hdr->vers_high = 0;
	hdr->opttype = hdr->optlen = 0;
	hdr->optinfo = NULL;
	hdr->hdrlen = 0;
}

/*
 * Draft s4.2: struct rpcrdma2_xprt_hdr, the prefix, then the arm of
 * union rpcrdma2_body that rdma_proc selects.
 *
 * rpcrdma2_proc has no RDMA_MSGP (2) or RDMA_DONE (3), which Version One
 * reserved, and the union has no default arm: any procedure but 0, 1, 4
 * and 5 is malformed (RFC 4506 s4.15).  New features come as
 * RDMA2_OPTIONAL types, not procedures (s3, s3.1).
 */
int
rpcrdma2_hdr_decode(const void *buf, size_t len, struct rpcrdma2_hdr *hdr)
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
	/* RFC 8166 s5.5.1, by draft s4.2.3 */
	if (hdr->vers != RPCRDMA2_VERSION)
		return -EPROTONOSUPPORT;

	switch (hdr->proc) {
	case RDMA2_MSG:
		p = decode_chunk_lists(p, end, hdr);
		break;
	case RDMA2_NOMSG:
		p = decode_nomsg(p, end, hdr);
		break;
	case RDMA2_ERROR:
		p = decode_error_body(p, end, hdr);
		break;
	case RDMA2_OPTIONAL:
		p = decode_optional(p, end, hdr);
		break;
	default:
		p = NULL;
		break;
	}
	if (!p)
		return -EBADMSG;
	hdr->hdrlen = (size_t)(p - start);
	return 0;
}

static bool
error_valid(uint32_t vers, uint32_t err, uint32_t low, uint32_t high)
{
	switch (err) {
	case RDMA2_ERR_VERS:
		return low <= high;
	case RDMA2_ERR_BAD_HEADER:
	case RDMA2_ERR_INVALID_OPTION:
		/* RFC 8166 s5.5.2: the version was understood. */
		return vers == RPCRDMA2_VERSION;
	default:
		return false;
	}
}

static bool
hdr_valid(const struct rpcrdma2_hdr *hdr)
{
	switch (hdr->proc) {
	case RDMA2_MSG:
	case RDMA2_NOMSG:
		if (hdr->vers != RPCRDMA2_VERSION || !dir_valid(hdr->direction) ||
		    !rpcrdma_chunks_valid(&hdr->chunks))
			return false;
		return hdr->proc == RDMA2_MSG ||
		       rpcrdma_nomsg_has_payload_chunk(&hdr->chunks);
	case RDMA2_ERROR:
		return error_valid(hdr->vers, hdr->err, hdr->vers_low,
				   hdr->vers_high);
	case RDMA2_OPTIONAL:
		return hdr->vers == RPCRDMA2_VERSION &&
		       dir_valid(hdr->direction) &&
		       hdr->optlen <= RPCRDMA2_MAX_OPTINFO &&
		       (hdr->optinfo || !hdr->optlen);
	default:
		return false;
	}
}

/*
 * Draft s4.2:
 *
 *   RDMA2_MSG, RDMA2_NOMSG:  xid 2 credits proc  D { 1 PHLOO } 0
 *                            { 1 N { HLOO }N } 0  ( 0 | 1 N { HLOO }N )
 *   RDMA2_ERROR:             xid vers credits 4  err [ vers_low vers_high ]
 *   RDMA2_OPTIONAL:          xid 2 credits 5  D opttype N { octet }N pad
 */
ssize_t
rpcrdma2_hdr_encode(void *buf, size_t len, struct rpcrdma2_hdr *hdr)
{
	uint8_t *start = buf;
	const uint8_t *end = start ? start + len : NULL;
	uint8_t *p;

	if (!hdr_valid(hdr))
		return -EINVAL;
	p = rpcrdma_encode_prefix(start, end, hdr->xid, hdr->vers,
				  hdr->credits, hdr->proc);
	switch (hdr->proc) {
	case RDMA2_MSG:
	case RDMA2_NOMSG:
		p = rpcrdma2_encode_chunk_lists(p, end, hdr->direction,
						&hdr->chunks);
		break;
	case RDMA2_ERROR:
		p = rpcrdma2_encode_error_body(p, end, hdr->err,
					       hdr->vers_low, hdr->vers_high);
		break;
	default:
		p = rpcrdma2_encode_optional(p, end, hdr->direction,
					     hdr->opttype, hdr->optinfo,
					     hdr->optlen);
		break;
	}
	if (!p)
		return -ENOSPC;
	hdr->hdrlen = (size_t)(p - start);
	return (ssize_t)hdr->hdrlen;
}

/*
 * RFC 8166 s5.5 (by draft s4.2.3), draft s3.1:
 *
 *   xid vers credits 4  1 1 2   (RDMA2_ERR_VERS: we speak 1..2)
 *   xid 2 credits 4  2          (RDMA2_ERR_BAD_HEADER)
 *   xid 2 credits 4  3          (RDMA2_ERR_INVALID_OPTION)
 */
ssize_t
rpcrdma2_encode_error(void *buf, size_t len, uint32_t xid, uint32_t vers,
		      uint32_t credits, uint32_t err)
{
	uint8_t *start = buf;
	const uint8_t *end = start ? start + len : NULL;
	uint8_t *p;

	if (err == RDMA2_ERR_VERS)
		return rpcrdma_encode_err_vers(buf, len, xid, vers, credits,
					       RPCRDMA1_VERSION,
					       RPCRDMA2_VERSION);
	if (!error_valid(vers, err, 0, 0))
		return -EINVAL;
	p = rpcrdma_encode_prefix(start, end, xid, vers, credits, RDMA2_ERROR);
	p = rpcrdma2_encode_error_body(p, end, err, 0, 0);
	if (!p)
		return -ENOSPC;
	return p - start;
}

const char *
rpcrdma2_proc_name(uint32_t proc)
{
	switch (proc) {
	case RDMA2_MSG:
		return "RDMA2_MSG";
	case RDMA2_NOMSG:
		return "RDMA2_NOMSG";
	case RDMA2_ERROR:
		return "RDMA2_ERROR";
	case RDMA2_OPTIONAL:
		return "RDMA2_OPTIONAL";
	default:
		return "unknown";
	}
}

const char *
rpcrdma2_err_name(uint32_t err)
{
	switch (err) {
	case RDMA2_ERR_VERS:
		return "RDMA2_ERR_VERS";
	case RDMA2_ERR_BAD_HEADER:
		return "RDMA2_ERR_BAD_HEADER";
	case RDMA2_ERR_INVALID_OPTION:
		return "RDMA2_ERR_INVALID_OPTION";
	default:
		return "unknown";
	}
}

const char *
rpcrdma2_dir_name(uint32_t dir)
{
	switch (dir) {
	case RDMA2_DIR_CALL:
		return "CALL";
	case RDMA2_DIR_REPLY:
		return "REPLY";
	default:
		return "unknown";
	}
}
