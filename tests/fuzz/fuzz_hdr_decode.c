/*
 * libFuzzer harness for rpcrdma_hdr_decode() and, behind it, the Read
 * chunk helpers.  Besides crashes and sanitizer reports, it aborts when a
 * result breaks the decoder's documented contract: an accepted header
 * must lie inside the input and re-encode to exactly the octets it was
 * decoded from.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "rpcrdma_xdr.h"

/* Rebuild the call when the chunks are small enough to hold here. */
static void
try_rebuild(const struct rpcrdma_hdr *hdr, const uint8_t *payload,
	    size_t payload_len)
{
	static const uint8_t chunk_data[65536];
	static uint8_t out[65536 + 65536 + 4 * RPCRDMA1_MAX_READ_SEGS];
	struct rpcrdma_read_chunk c[RPCRDMA1_MAX_READ_SEGS];
	uint64_t total = 0, want;
	ssize_t n;
	int i, nc;

	nc = rpcrdma_read_chunks(hdr, c, RPCRDMA1_MAX_READ_SEGS);
	if (nc < 0)
		abort();	/* the decoder accepted this read list */
	for (i = 0; i < nc; i++)
		total += c[i].length;
	if (total > sizeof(chunk_data) || payload_len > 65536)
		return;
	want = rpcrdma_read_rebuild_len(payload_len, c, (unsigned int)nc);
	n = rpcrdma_read_rebuild(out, sizeof(out), payload, payload_len, c,
				 (unsigned int)nc, chunk_data);
	if (n >= 0 && (uint64_t)n != want)
		abort();
	if (n < 0 && n != -EBADMSG)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rpcrdma_hdr hdr;
	static uint8_t out[8192];
	ssize_t n;
	int rc;

	rc = rpcrdma_hdr_decode(data, size, &hdr);
	if (size < RPCRDMA1_PREFIX_LEN) {
		if (rc != -EMSGSIZE)
			abort();
		return 0;
	}
	if (hdr.xid != word_at(data) || hdr.vers != word_at(data + 4) ||
	    hdr.credits != word_at(data + 8) || hdr.proc != word_at(data + 12))
		abort();
	if (hdr.vers != RPCRDMA1_VERSION) {
		if (rc != -EPROTONOSUPPORT)
			abort();
		return 0;
	}
	if (rc == -EBADMSG)
		return 0;
	if (rc != 0 || hdr.hdrlen > size || hdr.hdrlen % 4)
		abort();

	n = rpcrdma_hdr_encode(out, sizeof(out), &hdr);
	if (n < 0 || (size_t)n != hdr.hdrlen || memcmp(out, data, (size_t)n))
		abort();

	if (hdr.proc != RDMA_ERROR)
		try_rebuild(&hdr, data + hdr.hdrlen, size - hdr.hdrlen);
	return 0;
}
