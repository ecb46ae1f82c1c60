/*
 * An XDR_DECODE stream over a reply whose first opaque result was placed
 * in a Write chunk (RFC 8166 s4.4.6): the payload stream arrived reduced,
 * the item's octets (and its XDR pad) removed, its length word kept.
 *
 * The stream serves the reduced octets; while 'armed', the first
 * XDR_GETBYTES asking for exactly the chunk's length that 'match' accepts
 * (any, without one) is served from the chunk instead, and the pad read
 * that follows it from zeros.  It is the inverse of the divert hook of
 * xdr_grow.h: 'match' is the same Upper Layer Binding's decision.
 */
#ifndef TRANSPORT_XDR_DDP_H
#define TRANSPORT_XDR_DDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

struct xdr_ddp {
	const uint8_t *buf;	/* the reduced payload stream */
	size_t len;
	size_t pos;
	const uint8_t *chunk;	/* the Write chunk's data */
	uint32_t chunk_len;	/* octets the responder wrote there */
	bool armed;		/* match only inside the results */
	size_t base;		/* where the results start in buf */
	/* As xdr_divert's: res[0..len) the results so far, item's length last. */
	bool (*match)(struct xdr_ddp *d, const uint8_t *res, size_t len,
		      uint32_t item_len);
	const void *ctx;
	bool used;		/* the chunk has been re-inserted */
	uint32_t pad;		/* pad octets still to serve as zeros */
};

void xdr_ddp_create(XDR *xdrs, struct xdr_ddp *d);

#endif
