/*
 * libFuzzer harness for rpcrdma_cmp_decode(): crashes, sanitizer reports,
 * and any disagreement with the plain search RFC 8797 s5.2 describes.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../unit/cmp_reference.h"
#include "fuzz.h"
#include "pvtdata.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_cm_pdata got, want;
	uint8_t again[RPCRDMA1_CMP_LEN];
	bool found;

	found = rpcrdma_cmp_decode(data, size, &got);
	if (found != cmp_reference(data, size, &want) ||
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
