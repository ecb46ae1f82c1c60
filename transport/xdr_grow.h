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

/*
 * Direct data placement of one opaque item (RFC 8166 s4.4.6): while
 * 'armed', the first XDR_PUTBYTES of at least 'min' and at most 'max'
 * octets that 'match' accepts (any, without one) is handed to 'take'
 * instead of the stream, and the XDR pad that follows it is dropped too
 * (s4.4.6.1: the responder removes it).  The length word written before
 * it stays in the stream.
 */
struct xdr_divert {
	bool armed;
	bool used;		/* an item was diverted */
	uint32_t min, max;
	size_t base;		/* where the results start in the stream */
	/*
	 * Whether the item about to be written is the one to place: res
	 * holds the len octets of results written so far (its last four
	 * the item's length word), the Upper Layer Binding decides.
	 */
	bool (*match)(struct xdr_divert *d, const uint8_t *res, size_t len,
		      uint32_t item_len);
	uint32_t len;		/* octets diverted */
	uint32_t skip_pad;	/* pad octets still to drop */
	/* Keep the octets; return false to leave them in the stream. */
	bool (*take)(struct xdr_divert *d, const void *data, uint32_t len);
	void *ctx;
};

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
	struct xdr_divert *divert;	/* optional */
};

/*
 * An xdrproc_t from any XDR routine: through void (*)(void), which the
 * compiler accepts as a generic function type.
 */
#define XDRPROC(f) ((xdrproc_t)(void (*)(void))(f))

/* Start encoding at offset 0 of g->buf. */
void xdr_grow_create(XDR *xdrs, struct xdr_grow *g);

#endif
