/*
 * The search for RFC 8797 private data that s5.2 describes, written as
 * plainly as possible: the oracle rpcrdma_cmp_decode() is checked against
 * (tests/unit/test_decode_robust.c, tests/fuzz/fuzz_cmp_decode.c).
 */
#ifndef TESTS_UNIT_CMP_REFERENCE_H
#define TESTS_UNIT_CMP_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pvtdata.h"

static inline bool
cmp_reference(const uint8_t *p, size_t len, struct rpcrdma_cm_pdata *pd)
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

#endif
