/*
 * RPC-over-RDMA Version One transport header codec: round trips (with
 * every truncation refused and every too-small buffer), the exact octets
 * of the RFC 8166 s5.7 examples, each element encoder against every
 * too-small buffer, and the procedure names.  What the codec must refuse
 * is in test_rpcrdma_bad.c; Read chunks and the call rebuild are in
 * test_rpcrdma_rebuild.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "guardbuf.h"
#include "rpcrdma_fixture.h"
#include "rpcrdma_xdr.h"
#include "words.h"

static struct guardbuf gb;
static struct rpcrdma_hdr h_in, h_out, h_again, h_copy;

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

	/* A copy is the same header, whatever its arrays held before. */
	memset(&h_copy, 0xa5, sizeof(h_copy));
	rpcrdma_hdr_copy(&h_copy, &h_out);
	CHECK(hdr_eq(in, &h_copy) && h_copy.hdrlen == (size_t)n &&
	      rpcrdma_hdr_encode(again, sizeof(again), &h_copy) == n &&
	      memcmp(buf, again, (size_t)n) == 0,
	      "%s: a copy encodes to the same octets", what);

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
	rc = rpcrdma_hdr_decode(guardbuf_place(&gb, w.b, w.n), w.n, &h_out);
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

	CHECK_ELEMENT(&gb, rpcrdma_encode_prefix(p, end, 1, 1, 1, 0), 16,
		      "prefix");
	CHECK_ELEMENT(&gb, rpcrdma_encode_segment(p, end, &s[0]), 16,
		      "segment");
	CHECK_ELEMENT(&gb, rpcrdma_encode_read_segment(p, end, &rs[0]), 20,
		      "read segment");
	CHECK_ELEMENT(&gb, rpcrdma_encode_read_list(p, end, rs, 2), 52,
		      "read list");
	CHECK_ELEMENT(&gb, rpcrdma_encode_write_chunk(p, end, s, 3), 52,
		      "write chunk");
	CHECK_ELEMENT(&gb, rpcrdma_encode_write_list(p, end, wc, 2, s), 68,
		      "write list");
	CHECK_ELEMENT(&gb, rpcrdma_encode_reply_chunk(p, end, true, s, 2), 40,
		      "reply chunk");
	CHECK_ELEMENT(&gb, rpcrdma_encode_reply_chunk(p, end, false, s, 2), 4,
		      "absent reply chunk");
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

int
main(void)
{
	guardbuf_init(&gb, 65536);
	test_roundtrips();
	test_s57_examples();
	test_element_nospace();
	test_proc_names();
	guardbuf_free(&gb);
	return check_done();
}
