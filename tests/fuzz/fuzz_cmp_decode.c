/*
 * libFuzzer harness for rpcrdma_cmp_decode(): crashes, sanitizer reports,
 * and any disagreement with the plain search RFC 8797 s5.2 describes.
 */
#include <stdint.h>
#include <stdlib.h>

#include "pvtdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
reference(const uint8_t *p, size_t len, struct rpcrdma_cm_pdata *pd)
{
	size_t off;

	pd->remote_inv = false;
	pd->send_size = 1024;
	pd->recv_size = 1024;
	for (off = 0; off + 8 <= len; off++) {
		if (p[off] == 0xf6 && p[off + 1] == 0xab &&
		    p[off + 2] == 0x0e && p[off + 3] == 0x18 &&
		    p[off + 4] == 1) {
			pd->remote_inv = p[off + 5] & 1;
			pd->send_size = (p[off + 6] + 1u) * 1024;
			pd->recv_size = (p[off + 7] + 1u) * 1024;
			return true;
		}
	}
	return false;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_cm_pdata got, want;
	uint8_t again[RPCRDMA1_CMP_LEN];
	bool found;

	found = rpcrdma_cmp_decode(data, size, &got);
	if (found != reference(data, size, &want) ||
	    got.remote_inv != want.remote_inv ||
	    got.send_size != want.send_size ||
	    got.recv_size != want.recv_size)
		abort();

	/* What was decoded encodes back to a message that decodes the same. */
	rpcrdma_cmp_encode(again, &got);
	if (!rpcrdma_cmp_decode(again, sizeof(again), &want) ||
	    want.remote_inv != got.remote_inv ||
	    want.send_size != got.send_size || want.recv_size != got.recv_size)
		abort();
	return 0;
}
