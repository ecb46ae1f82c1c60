/*
 * XDR_ENCODE stream over a growable buffer (see xdr_grow.h).
 */
#include <arpa/inet.h>
#include <string.h>

#include "rpcrdma_xdr.h"
#include "xdr_grow.h"

static struct xdr_grow *
gstate(XDR *xdrs)
{
	return (struct xdr_grow *)xdrs->x_private;
}

/* Make room for n more octets at the current position. */
static bool
reserve(struct xdr_grow *g, size_t n)
{
	size_t need = g->pos + n;
	size_t want;

	if (need < g->pos || need > g->limit) {
		g->overflow = true;
		return false;
	}
	if (need <= g->cap)
		return true;
	/*
	 * Half as much again each time: encoding stays linear in the
	 * message size, and a buffer of registered memory being replaced
	 * is never much smaller than the one replacing it.
	 */
	want = g->cap ? g->cap : 4096;
	while (want < need)
		want += want / 2;
	if (want > g->limit)
		want = g->limit;
	if (!g->grow || !g->grow(g, want) || g->cap < need)
		return false;
	return true;
}

static void
advance(struct xdr_grow *g, size_t n)
{
	g->pos += n;
	if (g->pos > g->len)
		g->len = g->pos;
}

static bool_t
xg_getlong(XDR *xdrs, long *lp)
{
	return FALSE;
}

static bool_t
xg_putlong(XDR *xdrs, const long *lp)
{
	struct xdr_grow *g = gstate(xdrs);
	uint32_t v = htonl((uint32_t)*lp);

	if (g->divert)
		g->divert->skip_pad = 0;

	if (!reserve(g, sizeof(v)))
		return FALSE;
	memcpy(g->buf + g->pos, &v, sizeof(v));
	advance(g, sizeof(v));
	return TRUE;
}

static bool_t
xg_getbytes(XDR *xdrs, char *addr, u_int len)
{
	return FALSE;
}

/* True when the octets went to the divert hook (or were its pad). */
static bool
divert(struct xdr_grow *g, const char *addr, u_int len)
{
	struct xdr_divert *d = g->divert;

	if (d->skip_pad) {
		uint32_t pad = d->skip_pad;

		d->skip_pad = 0;
		if (len == pad)
			return true;
	}
	if (!d->armed || d->used || len < d->min || len > d->max || len == 0)
		return false;
	if (d->match && (g->pos < d->base ||
			 !d->match(d, g->buf + d->base, g->pos - d->base, len)))
		return false;
	if (!d->take(d, addr, len))
		return false;
	d->used = true;
	d->len = len;
	d->skip_pad = rpcrdma_xdr_roundup(len) - len;
	return true;
}

static bool_t
xg_putbytes(XDR *xdrs, const char *addr, u_int len)
{
	struct xdr_grow *g = gstate(xdrs);

	if (g->divert && divert(g, addr, len))
		return TRUE;
	if (!reserve(g, len))
		return FALSE;
	if (len)
		memcpy(g->buf + g->pos, addr, len);
	advance(g, len);
	return TRUE;
}

static u_int
xg_getpos(XDR *xdrs)
{
	return (u_int)gstate(xdrs)->pos;
}

static bool_t
xg_setpos(XDR *xdrs, u_int pos)
{
	struct xdr_grow *g = gstate(xdrs);

	/* Only back over what was written (libtirpc rewinds on failure). */
	if (pos > g->len)
		return FALSE;
	g->pos = pos;
	return TRUE;
}

static int32_t *
xg_inline(XDR *xdrs, u_int len)
{
	struct xdr_grow *g = gstate(xdrs);
	int32_t *p;

	if (g->divert)
		g->divert->skip_pad = 0;

	/*
	 * Hand out space only inside the current buffer: the pointer must
	 * stay valid while the caller fills it.  NULL makes XDR fall back to
	 * putlong/putbytes, which may grow.
	 */
	if ((g->pos & 3) || len > g->cap - g->pos)
		return NULL;
	p = (int32_t *)(void *)(g->buf + g->pos);
	advance(g, len);
	return p;
}

static void
xg_destroy(XDR *xdrs)
{
}

static bool_t
xg_control(XDR *xdrs, int request, void *info)
{
	return FALSE;
}

static const struct xdr_ops xdr_grow_ops = {
	.x_getlong = xg_getlong,
	.x_putlong = xg_putlong,
	.x_getbytes = xg_getbytes,
	.x_putbytes = xg_putbytes,
	.x_getpostn = xg_getpos,
	.x_setpostn = xg_setpos,
	.x_inline = xg_inline,
	.x_destroy = xg_destroy,
	.x_control = xg_control,
};

void
xdr_grow_create(XDR *xdrs, struct xdr_grow *g)
{
	g->pos = 0;
	g->len = 0;
	g->overflow = false;
	memset(xdrs, 0, sizeof(*xdrs));
	xdrs->x_op = XDR_ENCODE;
	xdrs->x_ops = &xdr_grow_ops;
	xdrs->x_private = (char *)g;
}
