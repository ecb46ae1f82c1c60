/*
 * libFuzzer harness for rpcrdma2_hdr_decode(), the version peek, and,
 * behind them, the Version One chunk-list codec and Read chunk grouping.
 * Besides crashes and sanitizer reports, it aborts when a result breaks
 * the documented contract: the peek and the prefix fields agree with the
 * input, the two decoders never both accept, an accepted header holds
 * only values its XDR allows, lies inside the input, and re-encodes to
 * exactly the octets it was decoded from.  The receive check both ends
 * run (rpcrdma2_recv_check) is held to its verdicts: only a well-formed
 * message of the receiver's direction is taken, and one taken re-encodes
 * through the Version One view the transport uses to the same octets.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "rpcrdma2_xdr.h"
#include "rpcrdma_neg.h"

static void
check_values(const struct rpcrdma2_hdr *h, const uint8_t *data, size_t size)
{
	struct rpcrdma_read_chunk c[RPCRDMA1_MAX_READ_SEGS];

	switch (h->proc) {
	case RDMA2_MSG:
	case RDMA2_NOMSG:
		if (h->direction > RDMA2_DIR_REPLY ||
		    !rpcrdma_chunks_valid(&h->chunks) ||
		    rpcrdma_read_chunks(&h->chunks, c,
					RPCRDMA1_MAX_READ_SEGS) < 0)
			abort();
		if (h->proc == RDMA2_NOMSG &&
		    !rpcrdma_nomsg_has_payload_chunk(&h->chunks))
			abort();
		break;
	case RDMA2_ERROR:
		if (h->direction != RDMA2_DIR_REPLY ||
		    h->err < RDMA2_ERR_VERS ||
		    h->err > RDMA2_ERR_INVALID_OPTION ||
		    (h->err == RDMA2_ERR_VERS && h->vers_low > h->vers_high))
			abort();
		break;
	case RDMA2_OPTIONAL:
		if (h->direction > RDMA2_DIR_REPLY ||
		    h->optlen > RPCRDMA2_MAX_OPTINFO ||
		    h->optinfo < data + RPCRDMA2_OPTIONAL_HDR_MIN ||
		    h->optinfo + h->optlen > data + size)
			abort();
		break;
	default:
		abort();
	}
}

/* rpcrdma2_recv_check() as a responder or a requester, against rc. */
static void
check_verdict(const uint8_t *data, size_t size, int rc, bool responder)
{
	static struct rpcrdma2_hdr h;
	static struct rpcrdma_hdr v1;
	static uint8_t out[8192];
	uint32_t ours = responder ? RDMA2_DIR_CALL : RDMA2_DIR_REPLY;
	enum rpcrdma2_verdict v = rpcrdma2_recv_check(data, size, responder, &h);
	ssize_t n;

	switch (v) {
	case RV2_TAKE:
		if (rc != 0 || h.proc == RDMA2_OPTIONAL ||
		    (h.proc != RDMA2_ERROR && h.direction != ours))
			abort();
		if (h.proc == RDMA2_ERROR)
			break;
		/* The transport's view, encoded again: the same header. */
		rpcrdma2_to_v1(&h, &v1);
		n = rpcrdma2_encode_v1view(out, sizeof(out), &v1, h.direction);
		if (n != (ssize_t)h.hdrlen || memcmp(out, data, (size_t)n))
			abort();
		break;
	case RV2_INVALID_OPTION:
		if (rc != 0 || h.proc != RDMA2_OPTIONAL ||
		    h.direction != ours)
			abort();
		break;
	case RV2_WRONG_DIR:
		if (rc != 0 || h.proc == RDMA2_ERROR)
			abort();
		break;
	case RV2_MALFORMED:
		if (rc != -EBADMSG && rc != 0)
			abort();
		break;
	case RV2_DROP:
		if (rc == 0)
			abort();
		break;
	default:
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpcrdma2_hdr hdr;
	static struct rpcrdma_hdr hdr1;
	static uint8_t out[8192];
	uint32_t xid, vers;
	int rc, rc1, peek;
	ssize_t n;

	rc = rpcrdma2_hdr_decode(data, size, &hdr);
	peek = rpcrdma_peek_version(data, size, &xid, &vers);
	if (size < RPCRDMA2_PREFIX_LEN) {
		if (rc != -EMSGSIZE || peek != -EMSGSIZE)
			abort();
		return 0;
	}
	if (peek != 0 || xid != word_at(data) || vers != word_at(data + 4))
		abort();
	if (hdr.xid != xid || hdr.vers != vers ||
	    hdr.credits != word_at(data + 8) || hdr.proc != word_at(data + 12))
		abort();

	/* A receive path dispatches on the peeked version. */
	rc1 = rpcrdma_hdr_decode(data, size, &hdr1);
	if (vers != RPCRDMA2_VERSION) {
		if (rc != -EPROTONOSUPPORT)
			abort();
		if (vers != RPCRDMA1_VERSION && rc1 != -EPROTONOSUPPORT)
			abort();
		return 0;
	}
	if (rc1 != -EPROTONOSUPPORT)
		abort();
	check_verdict(data, size, rc, true);
	check_verdict(data, size, rc, false);
	if (rc == -EBADMSG)
		return 0;
	if (rc != 0 || hdr.hdrlen > size || hdr.hdrlen % 4)
		abort();
	check_values(&hdr, data, size);

	n = rpcrdma2_hdr_encode(out, sizeof(out), &hdr);
	if (n < 0 || (size_t)n != hdr.hdrlen || memcmp(out, data, (size_t)n))
		abort();
	return 0;
}
