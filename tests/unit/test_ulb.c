/*
 * Unit tests of the Upper Layer Bindings (transport/ulb.c): the NFS
 * tables read from encoded calls, the chunks a call offers (Reply chunk
 * only when the reply may not fit inline, Write chunk only for an
 * eligible result, segments older Linux servers accept), and the item
 * placed on both sides: an NFSv4.1 READ COMPOUND encoded through the
 * divert hook and decoded through the Write chunk decoder.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>

#include "check.h"
#include "ulb.h"
#include "xdr_ddp.h"
#include "xdr_grow.h"

/* ---- encoded messages ---------------------------------------------- */

struct msg {
	uint8_t b[4096];
	size_t n;
};

static void
put32(struct msg *m, uint32_t v)
{
	v = htonl(v);
	memcpy(m->b + m->n, &v, 4);
	m->n += 4;
}

static void
put_opaque(struct msg *m, uint32_t len, uint8_t fill)
{
	put32(m, len);
	memset(m->b + m->n, fill, (len + 3) & ~3u);
	m->n += (len + 3) & ~3u;
}

/* RPC call header with AUTH_SYS-shaped credential, AUTH_NONE verifier. */
static void
call_hdr(struct msg *m, uint32_t prog, uint32_t vers, uint32_t proc,
	 uint32_t flavor)
{
	m->n = 0;
	put32(m, 0x1234);
	put32(m, 0);		/* CALL */
	put32(m, 2);
	put32(m, prog);
	put32(m, vers);
	put32(m, proc);
	put32(m, flavor);
	put_opaque(m, 20, 0);
	put32(m, 0);
	put32(m, 0);
}

static void
nfs3_read(struct msg *m, uint32_t count)
{
	call_hdr(m, 100003, 3, 6, 1);
	put_opaque(m, 28, 0xfe);	/* fh */
	put32(m, 0);
	put32(m, 4096);			/* offset */
	put32(m, count);
}

/* SEQUENCE, PUTFH, READ(count) */
static void
nfs41_read(struct msg *m, uint32_t count)
{
	call_hdr(m, 100003, 4, 1, 1);
	put_opaque(m, 0, 0);		/* tag */
	put32(m, 1);			/* minorversion */
	put32(m, 3);
	put32(m, 53);			/* SEQUENCE */
	m->n += 16;			/* sessionid */
	put32(m, 1);
	put32(m, 0);
	put32(m, 0);
	put32(m, 0);
	put32(m, 22);			/* PUTFH */
	put_opaque(m, 36, 0xaa);
	put32(m, 25);			/* READ */
	m->n += 16;			/* stateid */
	put32(m, 0);
	put32(m, 0);
	put32(m, count);
}

static const struct ulb_limits lim4k = {
	.max_reply = (1u << 20) + 4096,
	.write_chunk = 0,
	.inline_recv = 4096,
	.seg_max = ULB_SEG_MAX,
};

static void
plan(const struct msg *m, const struct ulb_limits *l, struct ulb_call *c,
     struct ulb_chunks *ch)
{
	CHECK(ulb_parse_call(m->b, m->n, c) == 0, "the call parses");
	ulb_chunks(c, l, ch);
}

/* ---- tables and chunks --------------------------------------------- */

static void
test_small_procs(void)
{
	static const uint32_t procs[] = { 0, 1, 2, 3, 4, 7, 8, 12, 14, 18, 19, 21 };
	struct ulb_limits l1k = lim4k;
	struct ulb_call c;
	struct ulb_chunks ch;
	struct msg m;
	size_t i;

	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		call_hdr(&m, 100003, 3, procs[i], 1);
		put_opaque(&m, 32, 1);
		plan(&m, &lim4k, &c, &ch);
		CHECK(c.known && c.max_reply > 0 && c.max_reply < 1024,
		      "NFSv3 proc %u: known, largest reply %llu", procs[i],
		      (unsigned long long)c.max_reply);
		CHECK(ch.reply_len == 0 && ch.write_len == 0,
		      "NFSv3 proc %u: no chunk at 4 KiB inline", procs[i]);
	}
	call_hdr(&m, 100003, 3, 1, 1);
	put_opaque(&m, 32, 1);
	plan(&m, &lim4k, &c, &ch);
	CHECK_EQ_U(c.max_reply, 24 + 400 + 88, "GETATTR: header, status, fattr3");
	/* The smallest inline threshold RFC 8166 allows still fits GETATTR. */
	l1k.inline_recv = 1024;
	ulb_chunks(&c, &l1k, &ch);
	CHECK(ch.reply_len == 0, "GETATTR: no Reply chunk at 1 KiB inline");
	call_hdr(&m, 100003, 2, 0, 0);
	plan(&m, &l1k, &c, &ch);
	CHECK(c.known && ch.reply_len == 0 && ch.write_len == 0, "NFSv2 NULL: no chunk");
	call_hdr(&m, 100003, 4, 0, 0);
	plan(&m, &l1k, &c, &ch);
	CHECK(c.known && ch.reply_len == 0, "NFSv4 NULL: no chunk");
}

static void
test_read(void)
{
	struct ulb_call c;
	struct ulb_chunks ch;
	struct msg m;

	nfs3_read(&m, 1u << 20);
	plan(&m, &lim4k, &c, &ch);
	CHECK(c.item == ULB_ITEM_READ && c.item_max == 1u << 20,
	      "READ 1 MiB: its data is the eligible item");
	CHECK_EQ_U(ch.write_len, 1u << 20, "READ 1 MiB: a Write chunk of 1 MiB");
	CHECK_EQ_U(ch.reply_len, 0, "READ 1 MiB: the rest fits inline, no Reply chunk");
	CHECK(ulb_seg_size(ch.write_len, ULB_SEG_MAX) >= ch.write_len,
	      "READ 1 MiB: one segment");

	nfs3_read(&m, 1000);
	plan(&m, &lim4k, &c, &ch);
	CHECK(ch.write_len == 0 && ch.reply_len == 0,
	      "READ of 1000 octets: inline, no chunk");

	/* Placement off for NFS: the data comes in the Reply chunk. */
	ulb_set_no_placement((const uint32_t[]){ 100003 }, 1);
	nfs3_read(&m, 1u << 20);
	plan(&m, &lim4k, &c, &ch);
	CHECK(!c.placement && ch.write_len == 0, "no_placement: no Write chunk");
	CHECK(ch.reply_len >= (1u << 20) + 100 && ch.reply_len <= lim4k.max_reply,
	      "no_placement: a Reply chunk for the whole reply (%llu)",
	      (unsigned long long)ch.reply_len);
	ulb_set_no_placement(NULL, 0);
	CHECK(ulb_placement(100003), "placement back on");

	/* READLINK: the path is eligible. */
	call_hdr(&m, 100003, 3, 5, 1);
	put_opaque(&m, 32, 1);
	plan(&m, &lim4k, &c, &ch);
	CHECK(c.item == ULB_ITEM_READLINK && ch.write_len == 4096 &&
	      ch.reply_len == 0, "READLINK: a Write chunk for the path");
}

static void
test_dir_and_others(void)
{
	struct ulb_limits l = lim4k;
	struct ulb_call c;
	struct ulb_chunks ch;
	struct msg m;

	call_hdr(&m, 100003, 3, 16, 1);		/* READDIR */
	put_opaque(&m, 28, 1);
	put32(&m, 0);
	put32(&m, 0);
	put32(&m, 0);
	put32(&m, 0);
	put32(&m, 32768);
	plan(&m, &lim4k, &c, &ch);
	CHECK(c.item == ULB_ITEM_NONE && ch.write_len == 0,
	      "READDIR: nothing eligible, no Write chunk (s5.3.2)");
	CHECK(ch.reply_len > 32768 && ch.reply_len < 40000,
	      "READDIR count 32768: a Reply chunk sized by the count (%llu)",
	      (unsigned long long)ch.reply_len);
	/* Even with the convention's Write chunk configured. */
	l.write_chunk = 1u << 20;
	ulb_chunks(&c, &l, &ch);
	CHECK(ch.write_len == 0, "READDIR: no Write chunk whatever write_chunk says");

	/* Another program: the shim-to-shim convention. */
	call_hdr(&m, 0x20000099, 1, 1, 0);
	plan(&m, &lim4k, &c, &ch);
	CHECK(!c.known && c.item == ULB_ITEM_FIRST_OPAQUE, "other program: unknown");
	CHECK(ch.reply_len == lim4k.max_reply && ch.write_len == 0,
	      "other program: Reply chunk of max_reply, no Write chunk");
	ulb_chunks(&c, &l, &ch);
	CHECK(ch.write_len == 1u << 20, "other program: write_chunk offered");
	CHECK(ulb_is_item(&c, (const uint8_t *)"\0\0\0\1", 4, 1),
	      "other program: the first opaque is placed");

	CHECK(ulb_parse_call((const uint8_t *)"\0\0\0\1\0\0\0\1", 8, &c) != 0,
	      "a reply is not a call");
}

static void
test_segments(void)
{
	struct ulb_limits l = lim4k;
	struct ulb_call c;
	struct ulb_chunks ch;
	struct msg m;

	CHECK_EQ_U(ULB_SEG_MAX, 259u * 4096,
		   "segments up to RPCSVC_MAXPAGES pages: what Linux before 5.11 takes in any chunk");
	CHECK(ulb_seg_size((1u << 20) + 4096, ULB_SEG_MAX) >= (1u << 20) + 4096,
	      "1 MiB + 4 KiB (the default Reply chunk): one segment");
	CHECK_EQ_U(ulb_seg_size(64ull << 20, ULB_SEG_MAX), 4u << 20,
		   "64 MiB: at most 16 segments");
	CHECK(ulb_seg_size((64ull << 20) + 4096, ULB_SEG_MAX) % 4096 == 0 &&
	      ((64ull << 20) + 4096 + ulb_seg_size((64ull << 20) + 4096, ULB_SEG_MAX) - 1) /
	      ulb_seg_size((64ull << 20) + 4096, ULB_SEG_MAX) <= ULB_CHUNK_SEGS,
	      "64 MiB + 4 KiB: multiples of 4 KiB, at most 16");
	CHECK_EQ_U(ulb_seg_size(1u << 20, 256u << 10), 256u << 10,
		   "after ERR_CHUNK: the smaller limit");
	/* Every segment of a 1 MiB + 4 KiB Reply chunk passes the old check. */
	l.max_reply = 64ull << 20;
	call_hdr(&m, 0x20000099, 1, 1, 0);
	plan(&m, &l, &c, &ch);
	CHECK_EQ_U(ch.seg, 4u << 20, "max_reply 64 MiB: 4 MiB segments, 16 of them");
	CHECK_EQ_U(ulb_reply_hdr_len(0), 28, "inline reply header, no Write list");
	CHECK_EQ_U(ulb_reply_hdr_len(1), 28 + 8 + 16, "with a one-segment Write chunk");
}

static void
test_v4_call(void)
{
	struct ulb_call c;
	struct ulb_chunks ch;
	struct msg m;

	nfs41_read(&m, 65536);
	plan(&m, &lim4k, &c, &ch);
	CHECK(c.item == ULB_ITEM_READ && c.item_max == 65536,
	      "NFSv4.1 SEQUENCE PUTFH READ: the READ data is eligible");
	CHECK(c.max_reply > 0 && c.max_reply < 1024,
	      "its reply without the data is small (%llu)",
	      (unsigned long long)c.max_reply);
	CHECK(ch.write_len == 65536 && ch.reply_len == 0,
	      "a Write chunk, no Reply chunk");
}

/* ---- results ------------------------------------------------------- */

static void
test_results(void)
{
	struct ulb_call c;
	struct msg m, r;

	nfs3_read(&m, 8192);
	CHECK(ulb_parse_call(m.b, m.n, &c) == 0, "READ parses");
	r.n = 0;
	put32(&r, 0);			/* NFS3_OK */
	put32(&r, 1);			/* attributes follow */
	r.n += 84;
	put32(&r, 8192);
	put32(&r, 0);
	put32(&r, 8192);		/* the data's length */
	CHECK(ulb_is_item(&c, r.b, r.n, 8192), "v3 READ: the data is the item");
	CHECK(!ulb_is_item(&c, r.b, r.n, 8191), "v3 READ: not with another length");
	CHECK(!ulb_is_item(&c, r.b, r.n - 4, 8192), "v3 READ: not at another place");
	r.n = 4;
	put32(&r, 0);			/* no attributes */
	put32(&r, 100);
	put32(&r, 1);
	put32(&r, 100);
	CHECK(ulb_is_item(&c, r.b, r.n, 100), "v3 READ without attributes");
	r.n = 0;
	put32(&r, 70);			/* NFS3ERR_STALE: no data */
	put32(&r, 0);
	CHECK(!ulb_is_item(&c, r.b, r.n, 0), "v3 READ error: no item");

	m.n = 0;
	put32(&m, 0x1234);
	put32(&m, 1);
	put32(&m, 0);
	put32(&m, 0);
	put32(&m, 0);
	put32(&m, 0);
	CHECK(ulb_results_offset(m.b, m.n) == 24, "accepted reply: results at 24");
	m.b[15] = 6;			/* RPCSEC_GSS verifier */
	CHECK(ulb_results_offset(m.b, m.n) < 0, "RPCSEC_GSS: results wrapped, none");
}

/* ---- both sides of an NFSv4.1 READ COMPOUND ------------------------ */

struct v41_read_res {
	uint8_t sessionid[16];
	char *data;
	u_int len;
};

/* COMPOUND4res: status, tag, SEQUENCE, PUTFH, READ. */
static bool_t
xdr_v41_read_res(XDR *x, struct v41_read_res *r)
{
	uint32_t zero = 0, three = 3, seq = 53, putfh = 22, read = 25, eof = 1;
	uint32_t w = 7;
	char *tag = NULL;
	u_int taglen = 0;

	return xdr_uint32_t(x, &zero) && xdr_bytes(x, &tag, &taglen, 64) &&
	       xdr_uint32_t(x, &three) &&
	       xdr_uint32_t(x, &seq) && xdr_uint32_t(x, &zero) &&
	       xdr_opaque(x, (char *)r->sessionid, 16) &&
	       xdr_uint32_t(x, &w) && xdr_uint32_t(x, &w) &&
	       xdr_uint32_t(x, &w) && xdr_uint32_t(x, &w) &&
	       xdr_uint32_t(x, &w) &&
	       xdr_uint32_t(x, &putfh) && xdr_uint32_t(x, &zero) &&
	       xdr_uint32_t(x, &read) && xdr_uint32_t(x, &zero) &&
	       xdr_uint32_t(x, &eof) &&
	       xdr_bytes(x, &r->data, &r->len, ~0u);
}

static uint8_t placed[65536];
static uint32_t placed_len;

static bool
take(struct xdr_divert *d, const void *data, uint32_t len)
{
	memcpy(placed, data, len);
	placed_len = len;
	return true;
}

static bool
srv_match(struct xdr_divert *d, const uint8_t *res, size_t len, uint32_t n)
{
	return ulb_is_item(d->ctx, res, len, n);
}

static bool
clnt_match(struct xdr_ddp *d, const uint8_t *res, size_t len, uint32_t n)
{
	return ulb_is_item(d->ctx, res, len, n);
}

static void
test_v41_both_sides(void)
{
	static uint8_t out[8192];
	struct v41_read_res in = { .len = 16 }, back = { 0 };
	struct xdr_grow g = { .buf = out, .cap = sizeof(out), .limit = sizeof(out) };
	struct xdr_divert d = { .min = 1, .max = 65536, .take = take,
				.match = srv_match };
	struct xdr_ddp dd;
	struct ulb_call c;
	struct msg m;
	XDR x;

	nfs41_read(&m, 16);
	CHECK(ulb_parse_call(m.b, m.n, &c) == 0, "v4.1 READ parses");
	memset(in.sessionid, 0x5e, 16);
	in.data = "sixteen octets!!";
	d.ctx = &c;
	g.divert = &d;
	xdr_grow_create(&x, &g);
	d.base = g.pos;
	d.armed = true;
	CHECK(xdr_v41_read_res(&x, &in), "COMPOUND encodes");
	/*
	 * The session id is 16 octets too, the first opaque of the chunk's
	 * length: only the READ data may go in the Write chunk.
	 */
	CHECK(d.used && placed_len == 16 && !memcmp(placed, in.data, 16),
	      "server: the READ data was placed, not the session id");
	CHECK(!memcmp(out + 20, in.sessionid, 16),
	      "server: the session id stays in the stream");

	memset(&dd, 0, sizeof(dd));
	dd.buf = out;
	dd.len = g.len;
	dd.chunk = placed;
	dd.chunk_len = placed_len;
	dd.match = clnt_match;
	dd.ctx = &c;
	xdr_ddp_create(&x, &dd);
	dd.armed = true;
	CHECK(xdr_v41_read_res(&x, &back) && dd.used,
	      "client: the reduced COMPOUND decodes with the chunk");
	CHECK(!memcmp(back.sessionid, in.sessionid, 16) && back.len == 16 &&
	      !memcmp(back.data, in.data, 16),
	      "client: session id from the stream, data from the chunk");
	free(back.data);
}

int
main(void)
{
	test_small_procs();
	test_read();
	test_dir_and_others();
	test_segments();
	test_v4_call();
	test_results();
	test_v41_both_sides();
	return check_done();
}
