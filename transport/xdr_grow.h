/*
 * An XDR_ENCODE stream over a buffer that grows on demand.
 *
 * RPC messages over RDMA must sit in registered memory, but their size is
 * known only once they are encoded (the credential may be a GSS token, the
 * arguments anything).  This stream encodes into the caller's buffer and
 * asks the caller for a bigger one when it runs out, so a message is
 * encoded exactly once, whatever its size.
 */
#ifndef TRANSPORT_XDR_GROW_H
#define TRANSPORT_XDR_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

struct xdr_grow {
	uint8_t *buf;		/* current buffer */
	size_t cap;		/* its size */
	size_t pos;		/* next octet to write */
	size_t len;		/* octets written so far (high-water mark) */
	size_t limit;		/* never grow beyond this many octets */
	bool overflow;		/* a write needed more than limit */
	/*
	 * Make g->buf at least 'need' octets, keeping the first g->len
	 * octets; update g->buf and g->cap.  Return false on failure.
	 */
	bool (*grow)(struct xdr_grow *g, size_t need);
	void *ctx;		/* for the grow callback */
};

/*
 * An xdrproc_t from any XDR routine: through void (*)(void), which the
 * compiler accepts as a generic function type.
 */
#define XDRPROC(f) ((xdrproc_t)(void (*)(void))(f))

/* Start encoding at offset 0 of g->buf. */
void xdr_grow_create(XDR *xdrs, struct xdr_grow *g);

#endif
