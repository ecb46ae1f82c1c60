/*
 * XDR_DECODE stream re-inserting a Write chunk (see xdr_ddp.h).
 */
#include <arpa/inet.h>
#include <string.h>

#include "rpcrdma_xdr.h"
#include "xdr_ddp.h"

static struct xdr_ddp *
dstate(XDR *xdrs)
{
	return (struct xdr_ddp *)xdrs->x_private;
}

static bool_t
xd_getlong(XDR *xdrs, long *lp)
{
	struct xdr_ddp *d = dstate(xdrs);
	uint32_t v;

	d->pad = 0;
	if (d->len - d->pos < sizeof(v))
		return FALSE;
	memcpy(&v, d->buf + d->pos, sizeof(v));
	d->pos += sizeof(v);
	*lp = (long)(int32_t)ntohl(v);
	return TRUE;
}

static bool_t
xd_putlong(XDR *xdrs, const long *lp)
{
	return FALSE;
}

static bool_t
xd_getbytes(XDR *xdrs, char *addr, u_int len)
{
	struct xdr_ddp *d = dstate(xdrs);

	if (d->pad) {
		uint32_t pad = d->pad;

		d->pad = 0;
		if (len == pad) {
			memset(addr, 0, len);
			return TRUE;
		}
	}
	if (d->armed && !d->used && d->chunk_len && len == d->chunk_len &&
	    (!d->match || (d->pos >= d->base &&
			   d->match(d, d->buf + d->base, d->pos - d->base, len)))) {
		memcpy(addr, d->chunk, len);
		d->used = true;
		d->pad = rpcrdma_xdr_roundup(len) - len;
		return TRUE;
	}
	if (d->len - d->pos < len)
		return FALSE;
	if (len)
		memcpy(addr, d->buf + d->pos, len);
	d->pos += len;
	return TRUE;
}

static bool_t
xd_putbytes(XDR *xdrs, const char *addr, u_int len)
{
	return FALSE;
}

static u_int
xd_getpos(XDR *xdrs)
{
	return (u_int)dstate(xdrs)->pos;
}

static bool_t
xd_setpos(XDR *xdrs, u_int pos)
{
	struct xdr_ddp *d = dstate(xdrs);

	if (pos > d->len)
		return FALSE;
	d->pos = pos;
	return TRUE;
}

static int32_t *
xd_inline(XDR *xdrs, u_int len)
{
	struct xdr_ddp *d = dstate(xdrs);
	int32_t *p;

	/* Only within the reduced stream, aligned: the chunk is never inline. */
	d->pad = 0;
	if ((d->pos & 3) || d->len - d->pos < len ||
	    ((uintptr_t)(d->buf + d->pos) & 3))
		return NULL;
	p = (int32_t *)(void *)(d->buf + d->pos);
	d->pos += len;
	return p;
}

static void
xd_destroy(XDR *xdrs)
{
}

static bool_t
xd_control(XDR *xdrs, int request, void *info)
{
	return FALSE;
}

static const struct xdr_ops xdr_ddp_ops = {
	.x_getlong = xd_getlong,
	.x_putlong = xd_putlong,
	.x_getbytes = xd_getbytes,
	.x_putbytes = xd_putbytes,
	.x_getpostn = xd_getpos,
	.x_setpostn = xd_setpos,
	.x_inline = xd_inline,
	.x_destroy = xd_destroy,
	.x_control = xd_control,
};

void
xdr_ddp_create(XDR *xdrs, struct xdr_ddp *d)
{
	d->pos = 0;
	d->used = false;
	d->pad = 0;
	memset(xdrs, 0, sizeof(*xdrs));
	xdrs->x_op = XDR_DECODE;
	xdrs->x_ops = &xdr_ddp_ops;
	xdrs->x_private = (char *)d;
}
