/*
 * RPC-over-RDMA Version One transport header codec: round trips, the exact
 * octets of the RFC 8166 s5.7 examples, every malformed form the decoder
 * must refuse, encoders against every too-small buffer, and the Read chunk
 * grouping and call rebuilding helpers.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "guardbuf.h"
#include "rnd.h"
#include "rpcrdma_xdr.h"

#define CHECK_RC(got, want, ...)                                          \
	do {                                                              \
		long long g_ = (long long)(got), w_ = (long long)(want);  \
		CHECK(g_ == w_, __VA_ARGS__);                             \
		if (g_ != w_)                                             \
			printf("#   got %lld, want %lld\n", g_, w_);      \
	} while (0)

/* Big-endian words for hand-written expected octets. */
#define W(x)                                                              \
	(uint8_t)((uint32_t)(x) >> 24), (uint8_t)((uint32_t)(x) >> 16),   \
	(uint8_t)((uint32_t)(x) >> 8), (uint8_t)(uint32_t)(x)
#define HLOO(h, l, hi, lo) W(h), W(l), W(hi), W(lo)

static struct guardbuf gb;
static struct rpcrdma_hdr h_in, h_out, h_again;

/* A header built word by word, for the malformed cases. */
struct words {
	uint8_t b[8192];
	size_t n;
};

static void
put(struct words *w, uint32_t v)
{
	w->b[w->n++] = (uint8_t)(v >> 24);
	w->b[w->n++] = (uint8_t)(v >> 16);
	w->b[w->n++] = (uint8_t)(v >> 8);
	w->b[w->n++] = (uint8_t)v;
}

static void
put_prefix(struct words *w, uint32_t xid, uint32_t vers, uint32_t proc)
{
	w->n = 0;
	put(w, xid);
	put(w, vers);
	put(w, 32);
	put(w, proc);
}

static void
put_seg(struct words *w, uint32_t handle, uint32_t length, uint64_t offset)
{
	put(w, handle);
	put(w, length);
	put(w, (uint32_t)(offset >> 32));
	put(w, (uint32_t)offset);
}

static int
decode_words(const struct words *w, struct rpcrdma_hdr *hdr)
{
	return rpcrdma_hdr_decode(guardbuf_place(&gb, w->b, w->n), w->n, hdr);
}

static struct rpcrdma_segment
seg(uint32_t handle, uint32_t length, uint64_t offset)
{
	struct rpcrdma_segment s = {
		.handle = handle, .length = length, .offset = offset,
	};
	return s;
}

static void
add_read(struct rpcrdma_hdr *hdr, uint32_t position, struct rpcrdma_segment s)
{
	hdr->reads[hdr->nreads].position = position;
	hdr->reads[hdr->nreads].target = s;
	hdr->nreads++;
}

/* Append a Write chunk of n segments to hdr. */
static void
add_write(struct rpcrdma_hdr *hdr, unsigned int n, uint32_t handle)
{
	unsigned int i;

	hdr->writes[hdr->nwrites].first = hdr->nwsegs;
	hdr->writes[hdr->nwrites].nsegs = n;
	hdr->nwrites++;
	for (i = 0; i < n; i++)
		hdr->wsegs[hdr->nwsegs++] =
			seg(handle + i, 4096 * (i + 1),
			    0xfedcba9800000000ull + (uint64_t)i * 4096);
}

static void
set_reply(struct rpcrdma_hdr *hdr, unsigned int n)
{
	unsigned int i;

	hdr->has_reply = true;
	hdr->nreply = n;
	for (i = 0; i < n; i++)
		hdr->reply[i] = seg(0x7000 + i, 8192, 0x100000000ull * (i + 1));
}

static void
hdr_init(struct rpcrdma_hdr *hdr, uint32_t proc)
{
	memset(hdr, 0, sizeof(*hdr));
	hdr->xid = 0xdeadbeef;
	hdr->vers = RPCRDMA1_VERSION;
	hdr->credits = 128;
	hdr->proc = proc;
}

static bool
seg_eq(const struct rpcrdma_segment *a, const struct rpcrdma_segment *b)
{
	return a->handle == b->handle && a->length == b->length &&
	       a->offset == b->offset;
}

static bool
hdr_eq(const struct rpcrdma_hdr *a, const struct rpcrdma_hdr *b)
{
	unsigned int i;

	if (a->xid != b->xid || a->vers != b->vers ||
	    a->credits != b->credits || a->proc != b->proc)
		return false;
	if (a->proc == RDMA_ERROR)
		return a->err == b->err && (a->err != RDMA_ERR_VERS ||
		       (a->vers_low == b->vers_low &&
			a->vers_high == b->vers_high));
	if (a->nreads != b->nreads || a->nwrites != b->nwrites ||
	    a->nwsegs != b->nwsegs || a->has_reply != b->has_reply ||
	    a->nreply != b->nreply)
		return false;
	for (i = 0; i < a->nreads; i++)
		if (a->reads[i].position != b->reads[i].position ||
		    !seg_eq(&a->reads[i].target, &b->reads[i].target))
			return false;
	for (i = 0; i < a->nwrites; i++)
		if (a->writes[i].first != b->writes[i].first ||
		    a->writes[i].nsegs != b->writes[i].nsegs)
			return false;
	for (i = 0; i < a->nwsegs; i++)
		if (!seg_eq(&a->wsegs[i], &b->wsegs[i]))
			return false;
	for (i = 0; i < a->nreply; i++)
		if (!seg_eq(&a->reply[i], &b->reply[i]))
			return false;
	return true;
}

/*
 * Encode, decode, compare, re-encode; then every truncation of the
 * encoded octets must be refused without reading past it, and every
 * too-small buffer must make the encoder fail without writing past it.
 */
static void
roundtrip(struct rpcrdma_hdr *in, const char *what)
{
	static const uint8_t payload[] = { 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0 };
	uint8_t buf[4096], again[4096];
	unsigned int bad_trunc = 0, bad_nospc = 0;
	ssize_t n, n2;
	size_t len;
	int rc;

	n = rpcrdma_hdr_encode(buf, sizeof(buf), in);
	CHECK(n > 0 && (size_t)n == in->hdrlen, "%s: encodes (%zd octets)",
	      what, n);
	if (n <= 0)
		return;
	CHECK(n % 4 == 0, "%s: whole XDR words", what);

	rc = rpcrdma_hdr_decode(guardbuf_place(&gb, buf, (size_t)n),
				(size_t)n, &h_out);
	CHECK_RC(rc, 0, "%s: decodes", what);
	CHECK_EQ_U(h_out.hdrlen, n, "%s: hdrlen is the encoded length", what);
	CHECK(hdr_eq(in, &h_out), "%s: decodes to the same header", what);

	n2 = rpcrdma_hdr_encode(again, sizeof(again), &h_out);
	CHECK(n2 == n && memcmp(buf, again, (size_t)n) == 0,
	      "%s: re-encodes to the same octets", what);

	/* A payload after the header is left alone. */
	memcpy(buf + n, payload, sizeof(payload));
	rc = rpcrdma_hdr_decode(guardbuf_place(&gb, buf, (size_t)n + 8),
				(size_t)n + 8, &h_again);
	CHECK(rc == 0 && h_again.hdrlen == (size_t)n,
	      "%s: with a payload, hdrlen is where it starts", what);

	for (len = 0; len < (size_t)n; len++) {
		rc = rpcrdma_hdr_decode(guardbuf_place(&gb, buf, len), len,
					&h_again);
		if (rc != (len < RPCRDMA1_PREFIX_LEN ? -EMSGSIZE : -EBADMSG)) {
			printf("# %s: truncated to %zu: %d\n", what, len, rc);
			bad_trunc++;
		}
		if (len >= RPCRDMA1_PREFIX_LEN && h_again.xid != in->xid)
			bad_trunc++;
	}
	CHECK(bad_trunc == 0, "%s: all %zd truncations refused", what, n);

	for (len = 0; len < (size_t)n; len++) {
		if (rpcrdma_hdr_encode(guardbuf_tail(&gb, len), len, &h_out) !=
		    -ENOSPC)
			bad_nospc++;
	}
	CHECK(bad_nospc == 0 &&
	      rpcrdma_hdr_encode(guardbuf_tail(&gb, (size_t)n), (size_t)n,
				 &h_out) == n,
	      "%s: -ENOSPC for all %zd too-small buffers, fits exactly", what,
	      n);
}

static void
test_roundtrips(void)
{
	hdr_init(&h_in, RDMA_MSG);
	roundtrip(&h_in, "RDMA_MSG, no chunks");

	hdr_init(&h_in, RDMA_MSG);
	add_read(&h_in, 8, seg(0x100, 1000, 0x1000));
	add_read(&h_in, 8, seg(0x101, 3000, 0x2000));
	add_read(&h_in, 28, seg(0x200, 4, 0x3000));
	add_read(&h_in, 28, seg(0x201, 8, 0x4000));
	add_read(&h_in, 28, seg(0x202, 16, 0x5000));
	add_read(&h_in, 60, seg(0x300, 5, 0xffffffffffff0000ull));
	roundtrip(&h_in, "RDMA_MSG, read list of 3 chunks");

	hdr_init(&h_in, RDMA_MSG);
	add_write(&h_in, 1, 0x1000);
	add_write(&h_in, 3, 0x2000);
	add_write(&h_in, 2, 0x3000);
	roundtrip(&h_in, "RDMA_MSG, write list of 3 chunks");

	hdr_init(&h_in, RDMA_MSG);
	set_reply(&h_in, 3);
	roundtrip(&h_in, "RDMA_MSG, reply chunk");

	hdr_init(&h_in, RDMA_MSG);
	add_read(&h_in, 4, seg(0x100, 1, 0));
	add_read(&h_in, 4, seg(0x101, 2, 0));
	add_read(&h_in, 12, seg(0x102, 3, 0));
	add_write(&h_in, 2, 0x2000);
	add_write(&h_in, 4, 0x3000);
	set_reply(&h_in, 2);
	roundtrip(&h_in, "RDMA_MSG, read list, write list and reply chunk");

	hdr_init(&h_in, RDMA_MSG);
	add_write(&h_in, 0, 0x1000);
	set_reply(&h_in, 0);
	roundtrip(&h_in, "RDMA_MSG, zero-segment write and reply chunks");

	hdr_init(&h_in, RDMA_MSG);
	add_read(&h_in, 0, seg(1, 1, 1));
	roundtrip(&h_in, "RDMA_MSG, position-zero read chunk");

	hdr_init(&h_in, RDMA_NOMSG);
	add_read(&h_in, 0, seg(0x500, 4096, 0x10000));
	add_read(&h_in, 0, seg(0x501, 100, 0x20000));
	roundtrip(&h_in, "RDMA_NOMSG, position-zero read chunk");

	hdr_init(&h_in, RDMA_NOMSG);
	add_read(&h_in, 0, seg(0x500, 4096, 0x10000));
	add_read(&h_in, 1024, seg(0x600, 65536, 0x20000));
	set_reply(&h_in, 1);
	roundtrip(&h_in, "RDMA_NOMSG, long call with a data chunk");

	hdr_init(&h_in, RDMA_NOMSG);
	set_reply(&h_in, 4);
	roundtrip(&h_in, "RDMA_NOMSG, reply chunk");

	hdr_init(&h_in, RDMA_NOMSG);
	add_write(&h_in, 2, 0x1000);
	set_reply(&h_in, 1);
	roundtrip(&h_in, "RDMA_NOMSG, write list and reply chunk");

	hdr_init(&h_in, RDMA_MSG);
	while (h_in.nreads < RPCRDMA1_MAX_READ_SEGS)
		add_read(&h_in, 4 * (h_in.nreads / 3), seg(h_in.nreads, 9, 9));
	while (h_in.nwrites < RPCRDMA1_MAX_WRITE_CHUNKS)
		add_write(&h_in, RPCRDMA1_MAX_WRITE_SEGS /
				 RPCRDMA1_MAX_WRITE_CHUNKS, 0x100 * h_in.nwrites);
	set_reply(&h_in, RPCRDMA1_MAX_REPLY_SEGS);
	roundtrip(&h_in, "RDMA_MSG, every list at its limit");

	hdr_init(&h_in, RDMA_ERROR);
	h_in.err = RDMA_ERR_VERS;
	h_in.vers_low = 1;
	h_in.vers_high = 1;
	roundtrip(&h_in, "RDMA_ERROR ERR_VERS 1..1");

	hdr_init(&h_in, RDMA_ERROR);
	h_in.err = RDMA_ERR_VERS;
	h_in.vers_low = 2;
	h_in.vers_high = 7;
	roundtrip(&h_in, "RDMA_ERROR ERR_VERS 2..7");

	hdr_init(&h_in, RDMA_ERROR);
	h_in.err = RDMA_ERR_BADHEADER;
	roundtrip(&h_in, "RDMA_ERROR BADHEADER");
}

/* RFC 8166 s5.7, with hand-written octets. */
static void
test_s57_examples(void)
{
	static const uint8_t read_list[] = {
		W(1), W(16), HLOO(0x11111111, 100, 0x01020304, 0x05060708),
		W(1), W(16), HLOO(0x22222222, 200, 0x0, 0x1000),
		W(1), W(16), HLOO(0x33333333, 300, 0xffffffff, 0xfffffffc),
		W(0),
	};
	static const uint8_t write_list[] = {
		W(1), W(3),
		HLOO(0xa1, 4096, 0, 0x10000),
		HLOO(0xa2, 4096, 0, 0x20000),
		HLOO(0xa3, 512, 0, 0x30000),
		W(1), W(2),
		HLOO(0xb1, 8192, 0x7f, 0x0),
		HLOO(0xb2, 16, 0x80, 0x8),
		W(0),
	};
	static const uint8_t reply_chunk[] = {
		W(1), W(2),
		HLOO(0xc1, 1024, 0, 0x4000),
		HLOO(0xc2, 2048, 0, 0x8000),
	};
	static const uint8_t no_chunks[] = {
		W(0x01020304), W(1), W(32), W(RDMA_MSG),
		W(0), W(0), W(0),
	};
	static const uint8_t absent_reply[] = { W(0) };
	const struct rpcrdma_read_segment rsegs[] = {
		{ 16, { 0x11111111, 100, 0x0102030405060708ull } },
		{ 16, { 0x22222222, 200, 0x1000 } },
		{ 16, { 0x33333333, 300, 0xfffffffffffffffcull } },
	};
	const struct rpcrdma_segment wsegs[] = {
		{ 0xa1, 4096, 0x10000 }, { 0xa2, 4096, 0x20000 },
		{ 0xa3, 512, 0x30000 },
		{ 0xb1, 8192, 0x7f00000000ull }, { 0xb2, 16, 0x8000000008ull },
	};
	const struct rpcrdma_write_chunk wchunks[] = { { 0, 3 }, { 3, 2 } };
	const struct rpcrdma_segment rchunk[] = {
		{ 0xc1, 1024, 0x4000 }, { 0xc2, 2048, 0x8000 },
	};
	uint8_t buf[512], *p, *end = buf + sizeof(buf);
	struct words w;
	int rc;

	p = rpcrdma_encode_read_list(buf, end, rsegs, 3);
	CHECK(p && (size_t)(p - buf) == sizeof(read_list) &&
	      memcmp(buf, read_list, sizeof(read_list)) == 0,
	      "s5.7 read chunk: 1 PHLOO 1 PHLOO 1 PHLOO 0");

	p = rpcrdma_encode_write_list(buf, end, wchunks, 2, wsegs);
	CHECK(p && (size_t)(p - buf) == sizeof(write_list) &&
	      memcmp(buf, write_list, sizeof(write_list)) == 0,
	      "s5.7 write list: 1 3 HLOO HLOO HLOO 1 2 HLOO HLOO 0");

	p = rpcrdma_encode_write_chunk(buf, end, wsegs, 3);
	CHECK(p && (size_t)(p - buf) == 4 + 3 * 16 &&
	      memcmp(buf, write_list + 4, 4 + 3 * 16) == 0,
	      "s5.7 write chunk: 3 HLOO HLOO HLOO");

	p = rpcrdma_encode_reply_chunk(buf, end, true, rchunk, 2);
	CHECK(p && (size_t)(p - buf) == sizeof(reply_chunk) &&
	      memcmp(buf, reply_chunk, sizeof(reply_chunk)) == 0,
	      "s5.7 reply chunk: 1 2 HLOO HLOO");

	p = rpcrdma_encode_reply_chunk(buf, end, false, NULL, 0);
	CHECK(p && (size_t)(p - buf) == 4 &&
	      memcmp(buf, absent_reply, 4) == 0, "absent reply chunk: 0");

	p = rpcrdma_encode_read_list(buf, end, NULL, 0);
	CHECK(p && (size_t)(p - buf) == 4 && memcmp(buf, absent_reply, 4) == 0,
	      "empty read list: 0");

	hdr_init(&h_in, RDMA_MSG);
	h_in.xid = 0x01020304;
	h_in.credits = 32;
	CHECK(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in) ==
	      (ssize_t)sizeof(no_chunks) &&
	      memcmp(buf, no_chunks, sizeof(no_chunks)) == 0,
	      "s5.7 no chunks: prefix then three zero words");
	CHECK_EQ_U(sizeof(no_chunks), RPCRDMA1_HDR_MIN, "RPCRDMA1_HDR_MIN is 28");

	/* The hand-written octets decode to the fields they spell. */
	put_prefix(&w, 0xcafef00d, 1, RDMA_MSG);
	memcpy(w.b + w.n, read_list, sizeof(read_list));
	w.n += sizeof(read_list);
	memcpy(w.b + w.n, write_list, sizeof(write_list));
	w.n += sizeof(write_list);
	memcpy(w.b + w.n, reply_chunk, sizeof(reply_chunk));
	w.n += sizeof(reply_chunk);
	rc = decode_words(&w, &h_out);
	CHECK_RC(rc, 0, "s5.7 lists together decode");
	CHECK(h_out.xid == 0xcafef00d && h_out.credits == 32 &&
	      h_out.proc == RDMA_MSG && h_out.hdrlen == w.n,
	      "prefix fields and hdrlen");
	CHECK(h_out.nreads == 3 && h_out.reads[0].position == 16 &&
	      h_out.reads[0].target.handle == 0x11111111 &&
	      h_out.reads[0].target.length == 100 &&
	      h_out.reads[0].target.offset == 0x0102030405060708ull &&
	      h_out.reads[2].target.offset == 0xfffffffffffffffcull,
	      "read segments, 64-bit offsets big-endian");
	CHECK(h_out.nwrites == 2 && h_out.nwsegs == 5 &&
	      h_out.writes[0].first == 0 && h_out.writes[0].nsegs == 3 &&
	      h_out.writes[1].first == 3 && h_out.writes[1].nsegs == 2 &&
	      h_out.wsegs[3].offset == 0x7f00000000ull &&
	      h_out.wsegs[4].handle == 0xb2,
	      "write chunks and their segments");
	CHECK(h_out.has_reply && h_out.nreply == 2 &&
	      h_out.reply[1].handle == 0xc2 && h_out.reply[1].length == 2048,
	      "reply chunk");
}

static void
test_prefix_errors(void)
{
	static const uint8_t msg[] = {
		W(0x11223344), W(1), W(8), W(RDMA_MSG), W(0), W(0), W(0),
	};
	struct words w;
	unsigned int bad = 0;
	size_t len;
	int rc;

	for (len = 0; len < RPCRDMA1_PREFIX_LEN; len++)
		if (rpcrdma_hdr_decode(guardbuf_place(&gb, msg, len), len,
				       &h_out) != -EMSGSIZE)
			bad++;
	CHECK(bad == 0, "0..15 octets: -EMSGSIZE");
	CHECK_RC(rpcrdma_hdr_decode(NULL, 0, &h_out), -EMSGSIZE,
		 "NULL buffer: -EMSGSIZE");

	put_prefix(&w, 0x55667788, 0, RDMA_MSG);
	put(&w, 0), put(&w, 0), put(&w, 0);
	rc = decode_words(&w, &h_out);
	CHECK(rc == -EPROTONOSUPPORT && h_out.xid == 0x55667788 &&
	      h_out.vers == 0, "version 0: -EPROTONOSUPPORT, xid kept");

	put_prefix(&w, 0x55667789, 2, RDMA_MSG);
	rc = decode_words(&w, &h_out);
	CHECK(rc == -EPROTONOSUPPORT && h_out.xid == 0x55667789 &&
	      h_out.vers == 2, "version 2: -EPROTONOSUPPORT, xid kept");

	put_prefix(&w, 0x5566778a, 0xffffffff, RDMA_ERROR);
	rc = decode_words(&w, &h_out);
	CHECK(rc == -EPROTONOSUPPORT && h_out.xid == 0x5566778a &&
	      h_out.proc == RDMA_ERROR,
	      "RDMA_ERROR of version 0xffffffff: proc known, not to answer");

	put_prefix(&w, 0x1234, 1, RDMA_MSGP);
	put(&w, 0), put(&w, 0), put(&w, 0), put(&w, 0), put(&w, 0);
	rc = decode_words(&w, &h_out);
	CHECK(rc == -EBADMSG && h_out.xid == 0x1234 && h_out.vers == 1,
	      "RDMA_MSGP: -EBADMSG, xid kept");

	put_prefix(&w, 0x1235, 1, RDMA_DONE);
	rc = decode_words(&w, &h_out);
	CHECK(rc == -EBADMSG && h_out.xid == 0x1235, "RDMA_DONE: -EBADMSG");

	put_prefix(&w, 0x1236, 1, 5);
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG, "procedure 5: -EBADMSG");

	put_prefix(&w, 0x1237, 1, 0xffffffff);
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "procedure 0xffffffff: -EBADMSG");
}

static void
test_list_errors(void)
{
	struct words w;
	unsigned int i;

	/* Read list: one segment over the limit, and exactly at it. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	for (i = 0; i < RPCRDMA1_MAX_READ_SEGS + 1; i++) {
		put(&w, 1);
		put(&w, 8);
		put_seg(&w, i, 4, 0);
	}
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d read segments: -EBADMSG", RPCRDMA1_MAX_READ_SEGS + 1);
	put_prefix(&w, 1, 1, RDMA_MSG);
	for (i = 0; i < RPCRDMA1_MAX_READ_SEGS; i++) {
		put(&w, 1);
		put(&w, 8);
		put_seg(&w, i, 4, 0);
	}
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), 0, "%d read segments: accepted",
		 RPCRDMA1_MAX_READ_SEGS);

	/* Write list: chunks over the limit. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0);
	for (i = 0; i < RPCRDMA1_MAX_WRITE_CHUNKS + 1; i++) {
		put(&w, 1);
		put(&w, 1);
		put_seg(&w, i, 4, 0);
	}
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d write chunks: -EBADMSG", RPCRDMA1_MAX_WRITE_CHUNKS + 1);

	/* Write list: segments over the limit across two chunks. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0);
	put(&w, 1);
	put(&w, RPCRDMA1_MAX_WRITE_SEGS / 2);
	for (i = 0; i < RPCRDMA1_MAX_WRITE_SEGS / 2; i++)
		put_seg(&w, i, 4, 0);
	put(&w, 1);
	put(&w, RPCRDMA1_MAX_WRITE_SEGS / 2 + 1);
	for (i = 0; i < RPCRDMA1_MAX_WRITE_SEGS / 2 + 1; i++)
		put_seg(&w, i, 4, 0);
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d write segments in all: -EBADMSG",
		 RPCRDMA1_MAX_WRITE_SEGS + 1);

	/* Reply chunk over the limit. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0), put(&w, 0), put(&w, 1);
	put(&w, RPCRDMA1_MAX_REPLY_SEGS + 1);
	for (i = 0; i < RPCRDMA1_MAX_REPLY_SEGS + 1; i++)
		put_seg(&w, i, 4, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d reply segments: -EBADMSG", RPCRDMA1_MAX_REPLY_SEGS + 1);

	/* Huge counts. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0), put(&w, 1), put(&w, 0xffffffff);
	put_seg(&w, 1, 1, 1);
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "write chunk count 0xffffffff: -EBADMSG");
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0), put(&w, 0), put(&w, 1), put(&w, 0xffffffff);
	put_seg(&w, 1, 1, 1);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "reply chunk count 0xffffffff: -EBADMSG");
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0), put(&w, 0), put(&w, 1), put(&w, 0x10000001);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "reply chunk count wrapping when multiplied: -EBADMSG");
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0), put(&w, 0), put(&w, 1), put(&w, 3);
	put_seg(&w, 1, 1, 1);
	put_seg(&w, 1, 1, 1);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "reply chunk count 3 with 2 segments present: -EBADMSG");

	/* Discriminators other than 0 and 1. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 2), put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "read list discriminator 2: -EBADMSG");
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0), put(&w, 0xffffffff), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "write list discriminator 0xffffffff: -EBADMSG");
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0), put(&w, 0), put(&w, 2), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "reply chunk discriminator 2: -EBADMSG");

	/* Read positions. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 1), put(&w, 6), put_seg(&w, 1, 1, 1);
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "read position 6 (not a multiple of 4): -EBADMSG");
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 1), put(&w, 8), put_seg(&w, 1, 1, 1);
	put(&w, 1), put(&w, 4), put_seg(&w, 2, 1, 1);
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "decreasing read positions 8, 4: -EBADMSG");
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 1), put(&w, 8), put_seg(&w, 1, 1, 1);
	put(&w, 1), put(&w, 12), put_seg(&w, 2, 1, 1);
	put(&w, 1), put(&w, 8), put_seg(&w, 3, 1, 1);
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "segments of one chunk not adjacent (8, 12, 8): -EBADMSG");

	/* RDMA_NOMSG needs a position-zero read chunk or a reply chunk. */
	put_prefix(&w, 1, 1, RDMA_NOMSG);
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA_NOMSG without chunks: -EBADMSG");
	put_prefix(&w, 1, 1, RDMA_NOMSG);
	put(&w, 0), put(&w, 1), put(&w, 1), put_seg(&w, 1, 1, 1);
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA_NOMSG with only a write list: -EBADMSG");
	put_prefix(&w, 1, 1, RDMA_NOMSG);
	put(&w, 1), put(&w, 8), put_seg(&w, 1, 1, 1);
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA_NOMSG with only a position-8 read chunk: -EBADMSG");

	/* RDMA_ERROR bodies. */
	put_prefix(&w, 9, 1, RDMA_ERROR);
	put(&w, 3);
	CHECK(decode_words(&w, &h_out) == -EBADMSG && h_out.proc == RDMA_ERROR,
	      "RDMA_ERROR code 3: -EBADMSG, proc says to drop it");
	put_prefix(&w, 9, 1, RDMA_ERROR);
	put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA_ERROR code 0: -EBADMSG");
	put_prefix(&w, 9, 1, RDMA_ERROR);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA_ERROR without a code: -EBADMSG");
	put_prefix(&w, 9, 1, RDMA_ERROR);
	put(&w, RDMA_ERR_VERS);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA_ERROR ERR_VERS without range: -EBADMSG");
	put(&w, 1);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA_ERROR ERR_VERS with half a range: -EBADMSG");
	put(&w, 1);
	CHECK(decode_words(&w, &h_out) == 0 && h_out.hdrlen == 28 &&
	      h_out.vers_low == 1 && h_out.vers_high == 1,
	      "RDMA_ERROR ERR_VERS with the range: accepted");
	put_prefix(&w, 9, 1, RDMA_ERROR);
	put(&w, RDMA_ERR_BADHEADER);
	put(&w, 0x77);
	CHECK(decode_words(&w, &h_out) == 0 && h_out.hdrlen == 20 &&
	      h_out.err == RDMA_ERR_BADHEADER,
	      "RDMA_ERROR BADHEADER with trailing octets: hdrlen 20");
}

static void
test_encode_errors(void)
{
	uint8_t buf[1024];
	const uint8_t vers_octets[] = {
		W(0xabcd), W(3), W(0), W(RDMA_ERROR), W(1), W(1), W(1),
	};
	const uint8_t bad_octets[] = {
		W(0xabce), W(1), W(5), W(RDMA_ERROR), W(2),
	};
	unsigned int bad = 0;
	size_t len;

	hdr_init(&h_in, RDMA_MSGP);
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode RDMA_MSGP: -EINVAL");
	hdr_init(&h_in, RDMA_DONE);
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode RDMA_DONE: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	h_in.vers = 2;
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode RDMA_MSG version 2: -EINVAL");
	hdr_init(&h_in, RDMA_NOMSG);
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode RDMA_NOMSG without chunks: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	h_in.nreads = RPCRDMA1_MAX_READ_SEGS + 1;
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode too many read segments: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	add_read(&h_in, 6, seg(1, 1, 1));
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode read position 6: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	add_read(&h_in, 8, seg(1, 1, 1));
	add_read(&h_in, 4, seg(1, 1, 1));
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode decreasing read positions: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	add_write(&h_in, 2, 1);
	add_write(&h_in, 2, 1);
	h_in.writes[1].first = 1;
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode overlapping write chunks: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	add_write(&h_in, 2, 1);
	h_in.nwsegs = 3;
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode write segments outside every chunk: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	add_write(&h_in, 2, 1);
	h_in.writes[0].nsegs = 3;
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode write chunk past nwsegs: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	h_in.nwrites = RPCRDMA1_MAX_WRITE_CHUNKS + 1;
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode too many write chunks: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	h_in.nreply = 1;
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode reply segments without a reply chunk: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	set_reply(&h_in, 1);
	h_in.nreply = RPCRDMA1_MAX_REPLY_SEGS + 1;
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode too many reply segments: -EINVAL");
	hdr_init(&h_in, RDMA_ERROR);
	h_in.err = 3;
	CHECK_RC(rpcrdma_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode RDMA_ERROR code 3: -EINVAL");
	hdr_init(&h_in, RDMA_MSG);
	CHECK_RC(rpcrdma_hdr_encode(NULL, 0, &h_in), -ENOSPC,
		 "encode into NULL: -ENOSPC");

	/* rpcrdma_encode_error() */
	CHECK(rpcrdma_encode_error(buf, sizeof(buf), 0xabcd, 3, 0,
				   RDMA_ERR_VERS) == 28 &&
	      memcmp(buf, vers_octets, 28) == 0,
	      "ERR_VERS octets: xid 3 0 4 1 1 1 (version echoed)");
	CHECK(rpcrdma_encode_error(buf, sizeof(buf), 0xabce, 1, 5,
				   RDMA_ERR_BADHEADER) == 20 &&
	      memcmp(buf, bad_octets, 20) == 0,
	      "BADHEADER octets: xid 1 5 4 2");
	CHECK_RC(rpcrdma_encode_error(buf, sizeof(buf), 1, 1, 1, 7), -EINVAL,
		 "rpcrdma_encode_error code 7: -EINVAL");
	for (len = 0; len < 28; len++)
		if (rpcrdma_encode_error(guardbuf_tail(&gb, len), len, 1, 1, 1,
					 RDMA_ERR_VERS) != -ENOSPC)
			bad++;
	for (len = 0; len < 20; len++)
		if (rpcrdma_encode_error(guardbuf_tail(&gb, len), len, 1, 1, 1,
					 RDMA_ERR_BADHEADER) != -ENOSPC)
			bad++;
	CHECK(bad == 0, "rpcrdma_encode_error: -ENOSPC for every short buffer");
}

/* Each element encoder against every too-small buffer, and NULL chaining. */
static void
test_element_nospace(void)
{
	const struct rpcrdma_segment s[3] = {
		{ 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 },
	};
	const struct rpcrdma_read_segment rs[2] = {
		{ 0, { 1, 2, 3 } }, { 4, { 4, 5, 6 } },
	};
	const struct rpcrdma_write_chunk wc[2] = { { 0, 1 }, { 1, 2 } };
	unsigned int bad = 0;
	uint8_t *p;
	size_t len;

#define ELEMENT(expr, full, name)                                         \
	do {                                                              \
		for (len = 0; len <= (full); len++) {                     \
			p = guardbuf_tail(&gb, len);                      \
			uint8_t *end_ = p + len;                          \
			uint8_t *r_ = (expr);                             \
			if (len < (full) ? r_ != NULL : r_ != end_)       \
				bad++;                                    \
		}                                                         \
		CHECK(bad == 0, "%s: NULL in every buffer under %d octets", \
		      name, (int)(full));                                 \
		bad = 0;                                                  \
		p = NULL;                                                 \
		CHECK((expr) == NULL, "%s: NULL in, NULL out", name);     \
	} while (0)

	ELEMENT(rpcrdma_encode_prefix(p, p ? p + len : NULL, 1, 1, 1, 0), 16,
		"prefix");
	ELEMENT(rpcrdma_encode_segment(p, p ? p + len : NULL, &s[0]), 16,
		"segment");
	ELEMENT(rpcrdma_encode_read_segment(p, p ? p + len : NULL, &rs[0]), 20,
		"read segment");
	ELEMENT(rpcrdma_encode_read_list(p, p ? p + len : NULL, rs, 2), 52,
		"read list");
	ELEMENT(rpcrdma_encode_write_chunk(p, p ? p + len : NULL, s, 3), 52,
		"write chunk");
	ELEMENT(rpcrdma_encode_write_list(p, p ? p + len : NULL, wc, 2, s), 68,
		"write list");
	ELEMENT(rpcrdma_encode_reply_chunk(p, p ? p + len : NULL, true, s, 2),
		40, "reply chunk");
	ELEMENT(rpcrdma_encode_reply_chunk(p, p ? p + len : NULL, false, s, 2),
		4, "absent reply chunk");
#undef ELEMENT
}

static void
test_proc_names(void)
{
	CHECK(strcmp(rpcrdma_proc_name(RDMA_MSG), "RDMA_MSG") == 0 &&
	      strcmp(rpcrdma_proc_name(RDMA_NOMSG), "RDMA_NOMSG") == 0 &&
	      strcmp(rpcrdma_proc_name(RDMA_MSGP), "RDMA_MSGP") == 0 &&
	      strcmp(rpcrdma_proc_name(RDMA_DONE), "RDMA_DONE") == 0 &&
	      strcmp(rpcrdma_proc_name(RDMA_ERROR), "RDMA_ERROR") == 0,
	      "procedure names");
	CHECK(strcmp(rpcrdma_proc_name(5), "unknown") == 0 &&
	      strcmp(rpcrdma_proc_name(0xffffffff), "unknown") == 0,
	      "unknown procedures");
}

static void
test_read_chunks(void)
{
	struct rpcrdma_read_chunk c[RPCRDMA1_MAX_READ_SEGS];
	int n;

	hdr_init(&h_in, RDMA_MSG);
	CHECK_RC(rpcrdma_read_chunks(&h_in, c, 4), 0, "empty read list: 0");

	add_read(&h_in, 8, seg(1, 100, 0));
	add_read(&h_in, 8, seg(2, 28, 0));
	add_read(&h_in, 20, seg(3, 5, 0));
	add_read(&h_in, 40, seg(4, 0xffffffff, 0));
	add_read(&h_in, 40, seg(5, 0xffffffff, 0));
	n = rpcrdma_read_chunks(&h_in, c, 4);
	CHECK_RC(n, 3, "segments at 8, 8, 20, 40, 40: three chunks");
	CHECK(c[0].position == 8 && c[0].first == 0 && c[0].nsegs == 2 &&
	      c[0].length == 128, "chunk 0: position 8, two segments, 128");
	CHECK(c[1].position == 20 && c[1].first == 2 && c[1].nsegs == 1 &&
	      c[1].length == 5, "chunk 1: position 20, one segment, 5");
	CHECK(c[2].position == 40 && c[2].first == 3 && c[2].nsegs == 2 &&
	      c[2].length == 0x1fffffffeull,
	      "chunk 2: length summed in 64 bits");
	CHECK_RC(rpcrdma_read_chunks(&h_in, c, 2), -ENOSPC,
		 "more chunks than max: -ENOSPC");

	hdr_init(&h_in, RDMA_NOMSG);
	add_read(&h_in, 0, seg(1, 4096, 0));
	add_read(&h_in, 0, seg(2, 4096, 0));
	CHECK(rpcrdma_read_chunks(&h_in, c, 4) == 1 && c[0].position == 0 &&
	      c[0].length == 8192, "position-zero chunk of two segments");

	hdr_init(&h_in, RDMA_MSG);
	add_read(&h_in, 6, seg(1, 1, 0));
	CHECK_RC(rpcrdma_read_chunks(&h_in, c, 4), -EBADMSG,
		 "position 6: -EBADMSG");
	hdr_init(&h_in, RDMA_MSG);
	add_read(&h_in, 8, seg(1, 1, 0));
	add_read(&h_in, 12, seg(1, 1, 0));
	add_read(&h_in, 8, seg(1, 1, 0));
	CHECK_RC(rpcrdma_read_chunks(&h_in, c, 4), -EBADMSG,
		 "segments of one chunk not adjacent: -EBADMSG");
	hdr_init(&h_in, RDMA_MSG);
	add_read(&h_in, 12, seg(1, 1, 0));
	add_read(&h_in, 8, seg(1, 1, 0));
	CHECK_RC(rpcrdma_read_chunks(&h_in, c, 4), -EBADMSG,
		 "decreasing positions: -EBADMSG");
	hdr_init(&h_in, RDMA_MSG);
	h_in.nreads = RPCRDMA1_MAX_READ_SEGS + 1;
	CHECK_RC(rpcrdma_read_chunks(&h_in, c, 4), -EBADMSG,
		 "nreads over the limit: -EBADMSG");
}

static void
test_rebuild(void)
{
	/* An RPC call whose opaque<> of 5 octets was reduced at 8. */
	static const uint8_t inline1[] = {
		W(0x11111111), W(5),		/* ... then the opaque count */
		W(0x22222222), W(0x33333333),	/* what follows the opaque */
	};
	static const uint8_t want1[] = {
		W(0x11111111), W(5),
		'A', 'B', 'C', 'D', 'E', 0, 0, 0,
		W(0x22222222), W(0x33333333),
	};
	/* Two reduced items: 5 octets at 8, 6 octets at 20. */
	static const uint8_t inline2[] = {
		W(0x11111111), W(5), W(6), W(0x44444444),
	};
	static const uint8_t want2[] = {
		W(0x11111111), W(5),
		'A', 'B', 'C', 'D', 'E', 0, 0, 0,
		W(6),
		'f', 'g', 'h', 'i', 'j', 'k', 0, 0,
		W(0x44444444),
	};
	static const uint8_t call[] = {
		W(0xaaaa0001), W(0), W(2), W(100003), W(3), W(7),
		W(0), W(0), W(0), W(0), 'x', 'y', 'z',
	};
	static const uint8_t want_call[] = {
		W(0xaaaa0001), W(0), W(2), W(100003), W(3), W(7),
		W(0), W(0), W(0), W(0), 'x', 'y', 'z', 0,
	};
	struct rpcrdma_read_chunk c[4];
	uint8_t out[256], before[256];
	unsigned int bad = 0;
	ssize_t n;
	size_t len;

	/* Single position-zero chunk: a Long Call, all from data. */
	c[0].position = 0;
	c[0].first = 0;
	c[0].nsegs = 1;
	c[0].length = sizeof(call);
	n = rpcrdma_read_rebuild(out, sizeof(out), NULL, 0, c, 1, call);
	CHECK(n == (ssize_t)sizeof(want_call) &&
	      memcmp(out, want_call, sizeof(want_call)) == 0,
	      "position-zero chunk of 43 octets: the call, rounded up to 44");
	CHECK_EQ_U(rpcrdma_read_rebuild_len(0, c, 1), sizeof(want_call),
		   "rebuild_len of the position-zero chunk");

	/* One data chunk of 5 octets in the middle. */
	c[0].position = 8;
	c[0].length = 5;
	n = rpcrdma_read_rebuild(out, sizeof(out), inline1, sizeof(inline1),
				 c, 1, "ABCDE");
	CHECK(n == (ssize_t)sizeof(want1) &&
	      memcmp(out, want1, sizeof(want1)) == 0,
	      "5-octet chunk at 8: inserted with 3 octets of zero padding");
	CHECK_EQ_U(rpcrdma_read_rebuild_len(sizeof(inline1), c, 1),
		   sizeof(want1), "rebuild_len counts the padding");

	/* The same chunk with the requester's own padding. */
	c[0].length = 8;
	n = rpcrdma_read_rebuild(out, sizeof(out), inline1, sizeof(inline1),
				 c, 1, "ABCDE\0\0\0");
	CHECK(n == (ssize_t)sizeof(want1) &&
	      memcmp(out, want1, sizeof(want1)) == 0,
	      "chunk with its padding included: no extra padding");

	/* Two chunks; the second position counts the first and its pad. */
	c[0].position = 8;
	c[0].length = 5;
	c[1].position = 20;
	c[1].first = 1;
	c[1].nsegs = 1;
	c[1].length = 6;
	n = rpcrdma_read_rebuild(out, sizeof(out), inline2, sizeof(inline2),
				 c, 2, "ABCDEfghijk");
	CHECK(n == (ssize_t)sizeof(want2) &&
	      memcmp(out, want2, sizeof(want2)) == 0,
	      "two chunks at 8 and 20, both padded");

	/* A chunk at the very end of the inline data. */
	c[0].position = 16;
	c[0].length = 3;
	n = rpcrdma_read_rebuild(out, sizeof(out), inline2, sizeof(inline2),
				 c, 1, "xyz");
	CHECK(n == 20 && memcmp(out, inline2, 16) == 0 &&
	      memcmp(out + 16, "xyz", 4) == 0,
	      "chunk at the end of the inline data");

	/* Bad positions. */
	c[0].position = 6;
	c[0].length = 4;
	CHECK_RC(rpcrdma_read_rebuild(out, sizeof(out), inline2,
				      sizeof(inline2), c, 1, "abcd"),
		 -EBADMSG, "position 6: -EBADMSG");
	c[0].position = 20;
	CHECK_RC(rpcrdma_read_rebuild(out, sizeof(out), inline2,
				      sizeof(inline2), c, 1, "abcd"),
		 -EBADMSG, "position beyond the inline data: -EBADMSG");
	c[0].position = 8;
	c[0].length = 5;
	c[1].position = 12;
	c[1].length = 4;
	CHECK_RC(rpcrdma_read_rebuild(out, sizeof(out), inline2,
				      sizeof(inline2), c, 2, "ABCDEabcd"),
		 -EBADMSG, "position inside the previous chunk: -EBADMSG");
	c[1].position = 8;
	CHECK_RC(rpcrdma_read_rebuild(out, sizeof(out), inline2,
				      sizeof(inline2), c, 2, "ABCDEabcd"),
		 -EBADMSG, "two chunks at the same position: -EBADMSG");
	c[1].position = 32;
	CHECK_RC(rpcrdma_read_rebuild(out, sizeof(out), inline2,
				      sizeof(inline2), c, 2, "ABCDEabcd"),
		 -EBADMSG, "second chunk beyond the inline data: -EBADMSG");

	/* Too small an output buffer, for every size. */
	c[0].position = 8;
	c[0].length = 5;
	c[1].position = 20;
	c[1].length = 6;
	for (len = 0; len < sizeof(want2); len++) {
		memset(before, 0xa5, sizeof(before));
		memcpy(out, before, sizeof(out));
		if (rpcrdma_read_rebuild(out, len, inline2, sizeof(inline2), c,
					 2, "ABCDEfghijk") != -ENOSPC ||
		    memcmp(out, before, sizeof(out)) != 0)
			bad++;
	}
	CHECK(bad == 0, "-ENOSPC for every output under %zu octets, untouched",
	      sizeof(want2));
	n = rpcrdma_read_rebuild(guardbuf_tail(&gb, sizeof(want2)),
				 sizeof(want2), inline2, sizeof(inline2), c, 2,
				 "ABCDEfghijk");
	CHECK(n == (ssize_t)sizeof(want2), "exactly large enough output fits");

	/* No chunks: the inline payload as is. */
	n = rpcrdma_read_rebuild(out, sizeof(out), inline2, sizeof(inline2),
				 c, 0, NULL);
	CHECK(n == (ssize_t)sizeof(inline2) &&
	      memcmp(out, inline2, sizeof(inline2)) == 0,
	      "no chunks: the inline payload");
}

/*
 * A Long Call that also reduced a data item (s4.5.3): the header, the
 * chunks, then the rebuild of the data chunk into the position-zero data.
 */
static void
test_long_call_with_data_chunk(void)
{
	static const uint8_t reduced_call[] = {
		W(0xbbbb0001), W(0), W(2), W(100003), W(3), W(7), W(9),
	};
	static const uint8_t want[] = {
		W(0xbbbb0001), W(0), W(2), W(100003), W(3), W(7), W(9),
		'd', 'a', 't', 'a', '!', 0, 0, 0,
	};
	struct rpcrdma_read_chunk c[4];
	uint8_t buf[512], out[64];
	ssize_t n;
	int nc;

	hdr_init(&h_in, RDMA_NOMSG);
	add_read(&h_in, 0, seg(1, 20, 0x1000));
	add_read(&h_in, 0, seg(2, 8, 0x2000));
	add_read(&h_in, 28, seg(3, 5, 0x3000));
	n = rpcrdma_hdr_encode(buf, sizeof(buf), &h_in);
	CHECK(n > 0 && rpcrdma_hdr_decode(buf, (size_t)n, &h_out) == 0,
	      "long call with a data chunk: header round trip");
	nc = rpcrdma_read_chunks(&h_out, c, 4);
	CHECK(nc == 2 && c[0].position == 0 && c[0].length == 28 &&
	      c[1].position == 28 && c[1].length == 5,
	      "position-zero chunk first, then the data chunk");
	n = rpcrdma_read_rebuild(out, sizeof(out), reduced_call,
				 (size_t)c[0].length, c + 1, 1, "data!");
	CHECK(n == (ssize_t)sizeof(want) && memcmp(out, want, sizeof(want)) == 0,
	      "data chunk inserted into the position-zero chunk's call");
}

/*
 * Property: take a random unreduced XDR stream, reduce some opaque items
 * out of it the way a requester does (s4.4.5.1: count stays, data and its
 * padding leave; the chunk may or may not carry the padding), and rebuild:
 * the original stream must come back.
 */
static void
test_rebuild_random(void)
{
	static uint8_t full[8192], reduced[8192], data[8192], out[8192];
	struct rpcrdma_read_chunk c[RPCRDMA1_MAX_READ_SEGS];
	unsigned int iter, bad = 0, items, i, nchunks;
	size_t flen, rlen, dlen, k;
	ssize_t n;

	for (iter = 0; iter < 20000; iter++) {
		flen = rlen = dlen = 0;
		nchunks = 0;
		items = 1 + rnd() % 12;
		for (i = 0; i < items; i++) {
			uint32_t olen = rnd() % 40, pad = (4 - olen % 4) % 4;
			bool reduce = nchunks < 8 && rnd() % 2;

			/* a plain word */
			for (k = 0; k < 4; k++)
				full[flen++] = reduced[rlen++] = (uint8_t)rnd();
			/* opaque<>: count, data, zero padding */
			full[flen++] = reduced[rlen++] = 0;
			full[flen++] = reduced[rlen++] = 0;
			full[flen++] = reduced[rlen++] = 0;
			full[flen++] = reduced[rlen++] = (uint8_t)olen;
			if (reduce) {
				c[nchunks].position = (uint32_t)flen;
				c[nchunks].first = nchunks;
				c[nchunks].nsegs = 1;
				c[nchunks].length = olen;
			}
			for (k = 0; k < olen; k++) {
				uint8_t b = (uint8_t)rnd();

				full[flen++] = b;
				if (reduce)
					data[dlen++] = b;
				else
					reduced[rlen++] = b;
			}
			for (k = 0; k < pad; k++) {
				full[flen++] = 0;
				if (!reduce)
					reduced[rlen++] = 0;
			}
			if (reduce && pad && rnd() % 2) {
				/* The requester sent the padding too. */
				for (k = 0; k < pad; k++)
					data[dlen++] = 0;
				c[nchunks].length += pad;
			}
			if (reduce)
				nchunks++;
		}
		n = rpcrdma_read_rebuild(out, sizeof(out), reduced, rlen, c,
					 nchunks, data);
		if (n != (ssize_t)flen || memcmp(out, full, flen) != 0 ||
		    rpcrdma_read_rebuild_len(rlen, c, nchunks) != flen)
			bad++;
	}
	CHECK(bad == 0, "20000 random reduce-then-rebuild round trips");
}

int
main(void)
{
	guardbuf_init(&gb, 65536);
	test_roundtrips();
	test_s57_examples();
	test_prefix_errors();
	test_list_errors();
	test_encode_errors();
	test_element_nospace();
	test_proc_names();
	test_read_chunks();
	test_rebuild();
	test_long_call_with_data_chunk();
	test_rebuild_random();
	guardbuf_free(&gb);
	return check_done();
}
