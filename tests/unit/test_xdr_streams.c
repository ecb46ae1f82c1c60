/*
 * Unit tests of the transport's XDR streams: the growable encode stream,
 * its divert hook (RFC 8166 s4.4.6 direct data placement, responder side)
 * and the decode stream that re-inserts a Write chunk (requester side).
 */
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "check.h"
#include "rpcrdma_xdr.h"
#include "xdr_ddp.h"
#include "xdr_grow.h"

/* A result in the shape of an RPC reply body: fields around an opaque. */
struct sample {
	int32_t before;
	char *data;
	u_int data_len;
	char *name;
	int64_t after;
};

static bool_t
xdr_sample(XDR *xdrs, struct sample *s)
{
	return xdr_int32_t(xdrs, &s->before) &&
	       xdr_bytes(xdrs, &s->data, &s->data_len, ~0u) &&
	       xdr_string(xdrs, &s->name, ~0u) &&
	       xdr_int64_t(xdrs, &s->after);
}

static void
sample_fill(struct sample *s, u_int len, unsigned int seed)
{
	u_int i;

	s->before = (int32_t)(0x11223344 ^ seed);
	s->data = malloc(len ? len : 1);
	for (i = 0; i < len; i++)
		s->data[i] = (char)(i * 7 + seed);
	s->data_len = len;
	s->name = "an XDR string after the opaque";
	s->after = (int64_t)0x0102030405060708ll ^ seed;
}

static bool
sample_equal(const struct sample *a, const struct sample *b)
{
	return a->before == b->before && a->data_len == b->data_len &&
	       !memcmp(a->data, b->data, a->data_len) &&
	       !strcmp(a->name, b->name) && a->after == b->after;
}

/* Growth by plain realloc, as the transport does with registered memory. */
static unsigned int grows;

static bool
grow_realloc(struct xdr_grow *g, size_t need)
{
	uint8_t *nb = realloc(g->buf, need);

	if (!nb)
		return false;
	g->buf = nb;
	g->cap = need;
	grows++;
	return true;
}

/* The reference encoding, through libtirpc's own memory stream. */
static u_int
encode_plain(struct sample *s, uint8_t *buf, u_int cap)
{
	XDR x;
	u_int n;

	xdrmem_create(&x, (char *)buf, cap, XDR_ENCODE);
	if (!xdr_sample(&x, s))
		return 0;
	n = XDR_GETPOS(&x);
	XDR_DESTROY(&x);
	return n;
}

static uint8_t divert_store[1 << 20];

static bool
take_copy(struct xdr_divert *d, const void *data, uint32_t len)
{
	memcpy(divert_store, data, len);
	return true;
}

static void
test_grow(void)
{
	static uint8_t plain[1 << 20];
	static const u_int sizes[] = { 0, 1, 3, 4, 5, 1000, 4093, 65536, 100001 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct sample s;
		struct xdr_grow g = { .limit = 1u << 30, .grow = grow_realloc };
		u_int n;
		XDR x;

		sample_fill(&s, sizes[i], i);
		n = encode_plain(&s, plain, sizeof(plain));
		g.buf = malloc(16);
		g.cap = 16;
		grows = 0;
		xdr_grow_create(&x, &g);
		CHECK(xdr_sample(&x, &s), "grow: encode %u octets", sizes[i]);
		CHECK_EQ_U(g.len, n, "grow: %u octets: same length as xdrmem", sizes[i]);
		CHECK(g.len == n && !memcmp(g.buf, plain, n),
		      "grow: %u octets: same octets as xdrmem", sizes[i]);
		CHECK(grows > 0, "grow: %u octets: the buffer grew", sizes[i]);
		free(g.buf);
		free(s.data);
	}

	/* A limit is a hard stop, reported as overflow. */
	{
		struct sample s;
		struct xdr_grow g = { .limit = 512, .grow = grow_realloc };
		XDR x;

		sample_fill(&s, 1000, 1);
		g.buf = malloc(64);
		g.cap = 64;
		xdr_grow_create(&x, &g);
		CHECK(!xdr_sample(&x, &s) && g.overflow,
		      "grow: a message beyond the limit fails with overflow set");
		free(g.buf);
		free(s.data);
	}
}

/*
 * Divert the opaque on encode, re-insert it on decode: the result equals
 * the original, and the reduced stream is the plain one minus the data
 * and its pad (s4.4.6.1).
 */
static void
test_divert_roundtrip(void)
{
	static uint8_t plain[1 << 20];
	static const u_int sizes[] = { 1, 2, 3, 4, 5, 7, 8, 1000, 1001, 1002, 1003,
				       4096, 65537, 262143 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct sample s, out;
		struct xdr_divert d = { .min = 1, .max = 1u << 20, .take = take_copy };
		struct xdr_grow g = { .limit = 1u << 30, .grow = grow_realloc,
				      .divert = &d };
		struct xdr_ddp dd;
		u_int n, pad = rpcrdma_xdr_roundup(sizes[i]) - sizes[i];
		XDR x;

		sample_fill(&s, sizes[i], 100 + i);
		n = encode_plain(&s, plain, sizeof(plain));
		g.buf = malloc(256);
		g.cap = 256;
		xdr_grow_create(&x, &g);
		/* Armed after the first field, as the server arms it for results. */
		CHECK(xdr_int32_t(&x, &s.before), "divert %u: first field", sizes[i]);
		d.armed = true;
		CHECK(xdr_bytes(&x, &s.data, &s.data_len, ~0u) &&
		      xdr_string(&x, &s.name, ~0u) && xdr_int64_t(&x, &s.after),
		      "divert %u: the rest encodes", sizes[i]);
		CHECK(d.used && d.len == sizes[i], "divert %u: the opaque was taken",
		      sizes[i]);
		CHECK_EQ_U(g.len, n - sizes[i] - pad,
			   "divert %u: the reduced stream lost the data and its pad",
			   sizes[i]);
		/* The length word stays, right after the first field. */
		CHECK(!memcmp(g.buf, plain, 8),
		      "divert %u: first field and length word unchanged", sizes[i]);
		CHECK(!memcmp(g.buf + 8, plain + 8 + sizes[i] + pad, g.len - 8),
		      "divert %u: what follows the opaque is unchanged", sizes[i]);

		memset(&out, 0, sizeof(out));
		memset(&dd, 0, sizeof(dd));
		dd.buf = g.buf;
		dd.len = g.len;
		dd.chunk = divert_store;
		dd.chunk_len = d.len;
		xdr_ddp_create(&x, &dd);
		CHECK(xdr_int32_t(&x, &out.before), "ddp %u: first field", sizes[i]);
		dd.armed = true;
		CHECK(xdr_bytes(&x, &out.data, &out.data_len, ~0u) &&
		      xdr_string(&x, &out.name, ~0u) && xdr_int64_t(&x, &out.after),
		      "ddp %u: decodes", sizes[i]);
		CHECK(dd.used && dd.pos == dd.len,
		      "ddp %u: chunk re-inserted, reduced stream consumed", sizes[i]);
		CHECK(sample_equal(&s, &out), "ddp %u: the result is the original",
		      sizes[i]);
		x.x_op = XDR_FREE;
		xdr_bytes(&x, &out.data, &out.data_len, ~0u);
		xdr_string(&x, &out.name, ~0u);
		free(g.buf);
		free(s.data);
	}
}

static void
test_divert_limits(void)
{
	struct sample s;
	struct xdr_divert d = { .min = 100, .max = 200, .take = take_copy,
				.armed = true };
	struct xdr_grow g = { .limit = 1u << 20, .grow = grow_realloc, .divert = &d };
	XDR x;

	/* Too short for min: stays in the stream. */
	sample_fill(&s, 50, 7);
	g.buf = malloc(64);
	g.cap = 64;
	xdr_grow_create(&x, &g);
	CHECK(xdr_sample(&x, &s) && !d.used, "divert: an item below min stays inline");
	free(s.data);

	/* Too long for the chunk: stays in the stream too. */
	sample_fill(&s, 300, 8);
	xdr_grow_create(&x, &g);
	CHECK(xdr_sample(&x, &s) && !d.used, "divert: an item above max stays inline");
	free(s.data);

	/* Not armed: nothing moves. */
	d.armed = false;
	sample_fill(&s, 150, 9);
	xdr_grow_create(&x, &g);
	CHECK(xdr_sample(&x, &s) && !d.used, "divert: nothing moves unless armed");
	free(s.data);

	/* Only the first item moves. */
	d.armed = true;
	sample_fill(&s, 150, 10);
	xdr_grow_create(&x, &g);
	CHECK(xdr_bytes(&x, &s.data, &s.data_len, ~0u) && d.used,
	      "divert: the first item moves");
	CHECK(xdr_bytes(&x, &s.data, &s.data_len, ~0u) && d.len == 150 &&
	      g.len == 4 + 4 + 152, "divert: the second stays inline");
	free(s.data);
	free(g.buf);
}

static void
test_ddp_mismatch(void)
{
	uint8_t reduced[64];
	struct xdr_ddp dd;
	struct sample out;
	XDR x;

	/* A chunk length no item asks for: the decode reads the stream only,
	 * and a short stream fails rather than reads past its end. */
	memset(reduced, 0, sizeof(reduced));
	reduced[7] = 5;		/* opaque length 5, but no data follows */
	memset(&dd, 0, sizeof(dd));
	dd.buf = reduced;
	dd.len = 8;
	dd.chunk = divert_store;
	dd.chunk_len = 6;
	dd.armed = true;
	memset(&out, 0, sizeof(out));
	xdr_ddp_create(&x, &dd);
	CHECK(xdr_int32_t(&x, &out.before) &&
	      !xdr_bytes(&x, &out.data, &out.data_len, ~0u) && !dd.used,
	      "ddp: a chunk that matches no item is not used, the short stream fails");
	x.x_op = XDR_FREE;
	xdr_bytes(&x, &out.data, &out.data_len, ~0u);
}

int
main(void)
{
	test_grow();
	test_divert_roundtrip();
	test_divert_limits();
	test_ddp_mismatch();
	return check_done();
}
