/*
 * RPC-over-RDMA Version Two transport header codec: round trips of every
 * message type (every truncation refused, every too-small buffer refused),
 * the exact octets of each message as draft-cel-nfsv4-rpcrdma-version-two-01
 * s4.2 spells it, the version peek on messages of both versions, the
 * ERR_VERS replies of both versions, and the element encoders.  The bad
 * values are in test_rpcrdma2_bad.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "guardbuf.h"
#include "rpcrdma2_fixture.h"
#include "rpcrdma2_xdr.h"
#include "words.h"

static struct guardbuf gb;
static struct rpcrdma2_hdr h_in, h_out, h_again;
static struct rpcrdma_hdr h1;

static int
decode_at_guard(const void *src, size_t len, struct rpcrdma2_hdr *hdr)
{
	return rpcrdma2_hdr_decode(guardbuf_place(&gb, src, len), len, hdr);
}

/* Every truncation: -EMSGSIZE under the prefix, -EBADMSG past it. */
static unsigned int
truncations_refused(const uint8_t *buf, size_t n, uint32_t xid,
		    const char *what)
{
	unsigned int bad = 0;
	size_t len;
	int rc;

	for (len = 0; len < n; len++) {
		rc = decode_at_guard(buf, len, &h_again);
		if (rc != (len < RPCRDMA2_PREFIX_LEN ? -EMSGSIZE : -EBADMSG)) {
			printf("# %s: truncated to %zu: %d\n", what, len, rc);
			bad++;
		}
		if (len >= RPCRDMA2_PREFIX_LEN && h_again.xid != xid)
			bad++;
	}
	return bad;
}

/*
 * Encode, decode, compare, re-encode; a payload after the header is left
 * alone; every truncation is refused without reading past it; every
 * too-small buffer makes the encoder fail without writing past it; the
 * peek and the Version One decoder see a Version Two message.
 */
static void
roundtrip(struct rpcrdma2_hdr *in, const char *what)
{
	static const uint8_t payload[] = { 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1 };
	static uint8_t buf[8192], again[8192];
	unsigned int bad_nospc = 0;
	uint32_t xid, vers;
	ssize_t n, n2;
	size_t len;
	int rc;

	n = rpcrdma2_hdr_encode(buf, sizeof(buf), in);
	CHECK(n > 0 && (size_t)n == in->hdrlen, "%s: encodes (%zd octets)",
	      what, n);
	if (n <= 0)
		return;
	CHECK(n % 4 == 0, "%s: whole XDR words", what);

	rc = decode_at_guard(buf, (size_t)n, &h_out);
	CHECK_RC(rc, 0, "%s: decodes", what);
	if (rc)
		return;
	CHECK_EQ_U(h_out.hdrlen, n, "%s: hdrlen is the encoded length", what);
	CHECK(hdr2_eq(in, &h_out), "%s: decodes to the same header", what);

	n2 = rpcrdma2_hdr_encode(again, sizeof(again), &h_out);
	CHECK(n2 == n && memcmp(buf, again, (size_t)n) == 0,
	      "%s: re-encodes to the same octets", what);
	/* From here on the guard page's buffer is reused: keep optinfo. */
	rpcrdma2_hdr_decode(again, (size_t)n, &h_out);

	memcpy(buf + n, payload, sizeof(payload));
	rc = decode_at_guard(buf, (size_t)n + sizeof(payload), &h_again);
	CHECK(rc == 0 && h_again.hdrlen == (size_t)n,
	      "%s: with a payload, hdrlen is where it starts", what);

	CHECK(truncations_refused(buf, (size_t)n, in->xid, what) == 0,
	      "%s: all %zd truncations refused", what, n);

	for (len = 0; len < (size_t)n; len++)
		if (rpcrdma2_hdr_encode(guardbuf_tail(&gb, len), len,
					&h_out) != -ENOSPC)
			bad_nospc++;
	CHECK(bad_nospc == 0 &&
	      rpcrdma2_hdr_encode(guardbuf_tail(&gb, (size_t)n), (size_t)n,
				  &h_out) == n,
	      "%s: -ENOSPC for all %zd too-small buffers, fits exactly", what,
	      n);

	CHECK(rpcrdma_peek_version(guardbuf_place(&gb, buf, (size_t)n),
				   (size_t)n, &xid, &vers) == 0 &&
	      xid == in->xid && vers == RPCRDMA2_VERSION,
	      "%s: peek gives its XID and version 2", what);
	rc = rpcrdma_hdr_decode(guardbuf_place(&gb, buf, (size_t)n),
				(size_t)n, &h1);
	CHECK(rc == -EPROTONOSUPPORT && h1.xid == in->xid &&
	      h1.proc == in->proc,
	      "%s: the Version One decoder says -EPROTONOSUPPORT", what);
}

static void
test_roundtrip_chunks(void)
{
	unsigned int i;

	hdr2_init(&h_in, RDMA2_MSG);
	roundtrip(&h_in, "RDMA2_MSG CALL, no chunks");

	hdr2_init(&h_in, RDMA2_MSG);
	h_in.direction = RDMA2_DIR_REPLY;
	roundtrip(&h_in, "RDMA2_MSG REPLY, no chunks");

	hdr2_init(&h_in, RDMA2_MSG);
	hdr2_add_read(&h_in, 8, seg(0x100, 1000, 0x1000));
	hdr2_add_read(&h_in, 8, seg(0x101, 3000, 0x2000));
	hdr2_add_read(&h_in, 28, seg(0x200, 4, 0x3000));
	hdr2_add_read(&h_in, 60, seg(0x300, 5, 0xffffffffffff0000ull));
	roundtrip(&h_in, "RDMA2_MSG, read list of 3 chunks");

	hdr2_init(&h_in, RDMA2_MSG);
	hdr2_add_write(&h_in, 1, 0x1000);
	hdr2_add_write(&h_in, 3, 0x2000);
	roundtrip(&h_in, "RDMA2_MSG, write list of 2 chunks");

	hdr2_init(&h_in, RDMA2_MSG);
	hdr2_set_reply(&h_in, 3);
	roundtrip(&h_in, "RDMA2_MSG, reply chunk");

	hdr2_init(&h_in, RDMA2_MSG);
	h_in.direction = RDMA2_DIR_REPLY;
	hdr2_add_read(&h_in, 4, seg(0x100, 1, 0));
	hdr2_add_read(&h_in, 12, seg(0x102, 3, 0));
	hdr2_add_write(&h_in, 2, 0x2000);
	hdr2_add_write(&h_in, 0, 0x3000);
	hdr2_set_reply(&h_in, 0);
	roundtrip(&h_in, "RDMA2_MSG REPLY, all three lists, empty chunks");

	hdr2_init(&h_in, RDMA2_MSG);
	for (i = 0; i < RPCRDMA1_MAX_READ_SEGS; i++)
		hdr2_add_read(&h_in, 4 * (i / 3), seg(i, 9, 9));
	while (h_in.chunks.nwrites < RPCRDMA1_MAX_WRITE_CHUNKS)
		hdr2_add_write(&h_in, RPCRDMA1_MAX_WRITE_SEGS /
				      RPCRDMA1_MAX_WRITE_CHUNKS,
			       0x100 * h_in.chunks.nwrites);
	hdr2_set_reply(&h_in, RPCRDMA1_MAX_REPLY_SEGS);
	roundtrip(&h_in, "RDMA2_MSG, every list at its limit");

	hdr2_init(&h_in, RDMA2_NOMSG);
	hdr2_add_read(&h_in, 0, seg(0x500, 4096, 0x10000));
	hdr2_add_read(&h_in, 0, seg(0x501, 100, 0x20000));
	roundtrip(&h_in, "RDMA2_NOMSG CALL, position-zero read chunk");

	hdr2_init(&h_in, RDMA2_NOMSG);
	h_in.direction = RDMA2_DIR_REPLY;
	hdr2_set_reply(&h_in, 2);
	roundtrip(&h_in, "RDMA2_NOMSG REPLY, reply chunk");

	hdr2_init(&h_in, RDMA2_NOMSG);
	hdr2_add_read(&h_in, 0, seg(0x500, 4096, 0x10000));
	hdr2_add_read(&h_in, 1024, seg(0x600, 65536, 0x20000));
	hdr2_add_write(&h_in, 2, 0x1000);
	hdr2_set_reply(&h_in, 1);
	roundtrip(&h_in, "RDMA2_NOMSG, long call with a data chunk");
}

static void
test_roundtrip_error_optional(void)
{
	static uint8_t info[RPCRDMA2_MAX_OPTINFO];
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 8, 100, 1021,
					 RPCRDMA2_MAX_OPTINFO - 1,
					 RPCRDMA2_MAX_OPTINFO };
	char what[80];
	unsigned int i;

	hdr2_init(&h_in, RDMA2_ERROR);
	h_in.err = RDMA2_ERR_VERS;
	h_in.vers_low = 1;
	h_in.vers_high = 2;
	roundtrip(&h_in, "RDMA2_ERROR RDMA2_ERR_VERS 1..2");
	h_in.vers_low = h_in.vers_high = 2;
	roundtrip(&h_in, "RDMA2_ERROR RDMA2_ERR_VERS 2..2");
	h_in.vers_low = 0;
	h_in.vers_high = 0xffffffff;
	roundtrip(&h_in, "RDMA2_ERROR RDMA2_ERR_VERS 0..0xffffffff");

	hdr2_init(&h_in, RDMA2_ERROR);
	h_in.err = RDMA2_ERR_BAD_HEADER;
	roundtrip(&h_in, "RDMA2_ERROR RDMA2_ERR_BAD_HEADER");
	CHECK(h_out.direction == RDMA2_DIR_REPLY,
	      "RDMA2_ERROR decodes as a REPLY (s4.2.2)");

	hdr2_init(&h_in, RDMA2_ERROR);
	h_in.err = RDMA2_ERR_INVALID_OPTION;
	h_in.direction = RDMA2_DIR_CALL;	/* not on the wire */
	roundtrip(&h_in, "RDMA2_ERROR RDMA2_ERR_INVALID_OPTION");

	for (i = 0; i < sizeof(info); i++)
		info[i] = (uint8_t)(i * 7 + 1);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		hdr2_init(&h_in, RDMA2_OPTIONAL);
		h_in.direction = i % 2 ? RDMA2_DIR_REPLY : RDMA2_DIR_CALL;
		h_in.opttype = 0x10000 + i;
		h_in.optinfo = info;
		h_in.optlen = lens[i];
		snprintf(what, sizeof(what), "RDMA2_OPTIONAL %s, %u-octet optinfo",
			 rpcrdma2_dir_name(h_in.direction), lens[i]);
		roundtrip(&h_in, what);
	}
	CHECK(h_out.optinfo != info && h_out.optlen == RPCRDMA2_MAX_OPTINFO,
	      "decoded optinfo points into the received buffer");

	hdr2_init(&h_in, RDMA2_OPTIONAL);
	h_in.opttype = 0xffffffff;
	roundtrip(&h_in, "RDMA2_OPTIONAL, opttype 0xffffffff, no optinfo");
}

/* draft s4.2, with hand-written octets. */
static void
test_wire_octets(void)
{
	static const uint8_t msg[] = {
		W(0x01020304), W(2), W(32), W(RDMA2_MSG),
		W(RDMA2_DIR_CALL), W(0), W(0), W(0),
	};
	static const uint8_t nomsg[] = {
		W(0x01020305), W(2), W(32), W(RDMA2_NOMSG),
		W(RDMA2_DIR_REPLY),
		W(0),
		W(1), W(1), HLOO(0xa1, 4096, 0, 0x10000), W(0),
		W(1), W(2), HLOO(0xc1, 1024, 0, 0x4000),
		HLOO(0xc2, 2048, 0x7f, 0x8000),
	};
	static const uint8_t vers[] = {
		W(0x01020306), W(2), W(32), W(RDMA2_ERROR),
		W(RDMA2_ERR_VERS), W(1), W(2),
	};
	static const uint8_t badhdr[] = {
		W(0x01020307), W(2), W(32), W(RDMA2_ERROR),
		W(RDMA2_ERR_BAD_HEADER),
	};
	static const uint8_t badopt[] = {
		W(0x01020308), W(2), W(32), W(RDMA2_ERROR),
		W(RDMA2_ERR_INVALID_OPTION),
	};
	static const uint8_t opt[] = {
		W(0x01020309), W(2), W(32), W(RDMA2_OPTIONAL),
		W(RDMA2_DIR_REPLY), W(0xabcd), W(5),
		'h', 'e', 'l', 'l', 'o', 0, 0, 0,
	};
	uint8_t buf[256];

	hdr2_init(&h_in, RDMA2_MSG);
	h_in.xid = 0x01020304;
	h_in.credits = 32;
	CHECK(rpcrdma2_hdr_encode(buf, sizeof(buf), &h_in) ==
	      (ssize_t)sizeof(msg) && memcmp(buf, msg, sizeof(msg)) == 0,
	      "RDMA2_MSG: prefix, direction, three zero words");
	CHECK_EQ_U(sizeof(msg), RPCRDMA2_HDR_MIN, "RPCRDMA2_HDR_MIN is 32");

	hdr2_init(&h_in, RDMA2_NOMSG);
	h_in.xid = 0x01020305;
	h_in.credits = 32;
	h_in.direction = RDMA2_DIR_REPLY;
	hdr2_set_reply(&h_in, 2);
	h_in.chunks.reply[0] = seg(0xc1, 1024, 0x4000);
	h_in.chunks.reply[1] = seg(0xc2, 2048, 0x7f00008000ull);
	h_in.chunks.writes[0].first = 0;
	h_in.chunks.writes[0].nsegs = 1;
	h_in.chunks.nwrites = 1;
	h_in.chunks.wsegs[0] = seg(0xa1, 4096, 0x10000);
	h_in.chunks.nwsegs = 1;
	CHECK(rpcrdma2_hdr_encode(buf, sizeof(buf), &h_in) ==
	      (ssize_t)sizeof(nomsg) && memcmp(buf, nomsg, sizeof(nomsg)) == 0,
	      "RDMA2_NOMSG: direction, then Version One's lists");
	CHECK(decode_at_guard(nomsg, sizeof(nomsg), &h_out) == 0 &&
	      h_out.direction == RDMA2_DIR_REPLY &&
	      h_out.chunks.nreads == 0 && h_out.chunks.nwrites == 1 &&
	      h_out.chunks.wsegs[0].handle == 0xa1 &&
	      h_out.chunks.has_reply && h_out.chunks.nreply == 2 &&
	      h_out.chunks.reply[1].offset == 0x7f00008000ull &&
	      h_out.hdrlen == sizeof(nomsg),
	      "RDMA2_NOMSG octets decode to the fields they spell");

	CHECK(rpcrdma2_encode_error(buf, sizeof(buf), 0x01020306, 2, 32,
				    RDMA2_ERR_VERS) == (ssize_t)sizeof(vers) &&
	      memcmp(buf, vers, sizeof(vers)) == 0,
	      "RDMA2_ERR_VERS: xid 2 credits 4 1 1 2");
	CHECK(rpcrdma2_encode_error(buf, sizeof(buf), 0x01020307, 2, 32,
				    RDMA2_ERR_BAD_HEADER) ==
	      (ssize_t)sizeof(badhdr) &&
	      memcmp(buf, badhdr, sizeof(badhdr)) == 0,
	      "RDMA2_ERR_BAD_HEADER: xid 2 credits 4 2");
	CHECK(rpcrdma2_encode_error(buf, sizeof(buf), 0x01020308, 2, 32,
				    RDMA2_ERR_INVALID_OPTION) ==
	      (ssize_t)sizeof(badopt) &&
	      memcmp(buf, badopt, sizeof(badopt)) == 0,
	      "RDMA2_ERR_INVALID_OPTION: xid 2 credits 4 3");
	CHECK(decode_at_guard(vers, sizeof(vers), &h_out) == 0 &&
	      h_out.err == RDMA2_ERR_VERS && h_out.vers_low == 1 &&
	      h_out.vers_high == 2 && h_out.direction == RDMA2_DIR_REPLY,
	      "RDMA2_ERR_VERS octets decode: range 1..2, a REPLY");
	CHECK(decode_at_guard(badopt, sizeof(badopt), &h_out) == 0 &&
	      h_out.err == RDMA2_ERR_INVALID_OPTION &&
	      h_out.hdrlen == sizeof(badopt),
	      "RDMA2_ERR_INVALID_OPTION octets decode");

	hdr2_init(&h_in, RDMA2_OPTIONAL);
	h_in.xid = 0x01020309;
	h_in.credits = 32;
	h_in.direction = RDMA2_DIR_REPLY;
	h_in.opttype = 0xabcd;
	h_in.optinfo = (const uint8_t *)"hello";
	h_in.optlen = 5;
	CHECK(rpcrdma2_hdr_encode(buf, sizeof(buf), &h_in) ==
	      (ssize_t)sizeof(opt) && memcmp(buf, opt, sizeof(opt)) == 0,
	      "RDMA2_OPTIONAL: optdir opttype 5 'hello' and 3 zero octets");
	CHECK(decode_at_guard(opt, sizeof(opt), &h_out) == 0 &&
	      h_out.direction == RDMA2_DIR_REPLY && h_out.opttype == 0xabcd &&
	      h_out.optlen == 5 && memcmp(h_out.optinfo, "hello", 5) == 0 &&
	      h_out.hdrlen == sizeof(opt),
	      "RDMA2_OPTIONAL octets decode to the fields they spell");
}

/*
 * Version negotiation (draft s5.2): a responder that speaks only Version
 * One answers a Version Two message with RDMA_ERROR/ERR_VERS, echoing the
 * version (RFC 8166 s5.5); a careless one puts its own version there.
 */
static void
test_negotiation_replies(void)
{
	uint8_t buf[64];
	uint32_t xid, vers;
	ssize_t n;
	int rc;

	n = rpcrdma_encode_error(buf, sizeof(buf), 0x4242, RPCRDMA2_VERSION, 1,
				 RDMA_ERR_VERS);
	rc = decode_at_guard(buf, (size_t)n, &h_out);
	CHECK(rc == 0 && h_out.proc == RDMA2_ERROR &&
	      h_out.err == RDMA2_ERR_VERS && h_out.vers_low == 1 &&
	      h_out.vers_high == 1 && h_out.xid == 0x4242,
	      "a Version One responder's ERR_VERS (version echoed) decodes as "
	      "RDMA2_ERROR/RDMA2_ERR_VERS 1..1");

	n = rpcrdma_encode_error(buf, sizeof(buf), 0x4243, RPCRDMA1_VERSION, 1,
				 RDMA_ERR_VERS);
	CHECK(rpcrdma_peek_version(guardbuf_place(&gb, buf, (size_t)n),
				   (size_t)n, &xid, &vers) == 0 &&
	      xid == 0x4243 && vers == RPCRDMA1_VERSION,
	      "peek of an ERR_VERS carrying version 1");
	CHECK_RC(decode_at_guard(buf, (size_t)n, &h_out), -EPROTONOSUPPORT,
		 "  the Version Two decoder refuses it");
	CHECK(rpcrdma_hdr_decode(buf, (size_t)n, &h1) == 0 &&
	      h1.err == RDMA_ERR_VERS && h1.vers_low == 1 && h1.vers_high == 1,
	      "  the Version One decoder reads ERR_VERS 1..1");

	/* What we answer a Version Three message with, and who reads it. */
	n = rpcrdma2_encode_error(buf, sizeof(buf), 0x4244, 3, 8,
				  RDMA2_ERR_VERS);
	CHECK(n == 28, "RDMA2_ERR_VERS to a version 3 message: 28 octets");
	CHECK(rpcrdma_peek_version(buf, (size_t)n, &xid, &vers) == 0 &&
	      vers == 3 && xid == 0x4244, "  it echoes version 3");
	CHECK(rpcrdma_hdr_decode(buf, (size_t)n, &h1) == -EPROTONOSUPPORT &&
	      h1.proc == RDMA_ERROR,
	      "  an RDMA_ERROR, whose proc says it is not to be answered");
	buf[7] = RPCRDMA1_VERSION;
	CHECK(rpcrdma_hdr_decode(buf, (size_t)n, &h1) == 0 &&
	      h1.vers_low == 1 && h1.vers_high == 2,
	      "  its body is Version One's ERR_VERS, offering 1..2");
}

static void
test_peek(void)
{
	static const uint8_t prefix[] = {
		W(0x89abcdef), W(0xfffffffe), W(0), W(77),
	};
	uint32_t xid = 1, vers = 1;
	unsigned int bad = 0;
	size_t len;

	for (len = 0; len < RPCRDMA2_PREFIX_LEN; len++)
		if (rpcrdma_peek_version(guardbuf_place(&gb, prefix, len), len,
					 &xid, &vers) != -EMSGSIZE)
			bad++;
	CHECK(bad == 0 && xid == 1 && vers == 1,
	      "peek: -EMSGSIZE for 0..15 octets, nothing written");
	CHECK_RC(rpcrdma_peek_version(NULL, 100, &xid, &vers), -EMSGSIZE,
		 "peek: NULL buffer: -EMSGSIZE");
	CHECK(rpcrdma_peek_version(guardbuf_place(&gb, prefix, 16), 16, &xid,
				   &vers) == 0 &&
	      xid == 0x89abcdef && vers == 0xfffffffe,
	      "peek: any version, any procedure, just the prefix");
}

/* rpcrdma_encode_err_vers(): the range, the checks, every short buffer. */
static void
test_err_vers_range(void)
{
	static const uint8_t want[] = {
		W(0x77), W(5), W(9), W(RDMA_ERROR), W(RDMA_ERR_VERS), W(1),
		W(2),
	};
	uint8_t buf[64];
	unsigned int bad = 0;
	size_t len;

	CHECK(rpcrdma_encode_err_vers(buf, sizeof(buf), 0x77, 5, 9, 1, 2) == 28 &&
	      memcmp(buf, want, sizeof(want)) == 0,
	      "ERR_VERS 1..2: xid 5 9 4 1 1 2 (version echoed)");
	CHECK_RC(rpcrdma_encode_err_vers(buf, sizeof(buf), 1, 1, 1, 3, 2),
		 -EINVAL, "ERR_VERS 3..2: -EINVAL");
	CHECK(rpcrdma_encode_err_vers(buf, sizeof(buf), 1, 1, 1, 2, 2) == 28 &&
	      rpcrdma_hdr_decode(buf, 28, &h1) == 0 && h1.vers_low == 2 &&
	      h1.vers_high == 2, "ERR_VERS 2..2 decodes as Version One");
	for (len = 0; len < sizeof(want); len++)
		if (rpcrdma_encode_err_vers(guardbuf_tail(&gb, len), len, 1, 1,
					    1, 1, 2) != -ENOSPC)
			bad++;
	for (len = 0; len < 20; len++)
		if (rpcrdma2_encode_error(guardbuf_tail(&gb, len), len, 1, 2,
					  1, RDMA2_ERR_INVALID_OPTION) != -ENOSPC)
			bad++;
	CHECK(bad == 0, "both error encoders: -ENOSPC for every short buffer");
}

/* The shared list codec on its own: it resets what a decode left. */
static void
test_chunks_alone(void)
{
	uint8_t buf[512], *p;
	const uint8_t *q;

	hdr2_init(&h_in, RDMA2_MSG);
	hdr2_add_read(&h_in, 4, seg(1, 2, 3));
	hdr2_add_write(&h_in, 2, 0x10);
	hdr2_set_reply(&h_in, 1);
	p = rpcrdma_encode_chunks(buf, buf + sizeof(buf), &h_in.chunks);
	CHECK(p && p - buf == 4 + 20 + 4 + 8 + 32 + 4 + 8 + 16,
	      "rpcrdma_encode_chunks: three lists, 96 octets");
	h1.nreads = 7;
	h1.nwrites = 3;
	h1.nwsegs = 9;
	h1.nreply = 5;
	h1.has_reply = false;
	q = p ? rpcrdma_decode_chunks(buf, p, &h1) : NULL;
	CHECK(q == p && lists_eq(&h1, &h_in.chunks),
	      "rpcrdma_decode_chunks: the same lists, stale counts reset");
	CHECK(p && rpcrdma_decode_chunks(buf, p - 4, &h1) == NULL,
	      "rpcrdma_decode_chunks: cut short: NULL");
}

static void
test_element_nospace(void)
{
	static const uint8_t info[6] = { 1, 2, 3, 4, 5, 6 };

	hdr2_init(&h_in, RDMA2_MSG);
	hdr2_add_read(&h_in, 0, seg(1, 2, 3));
	hdr2_set_reply(&h_in, 1);

	CHECK_ELEMENT(&gb, rpcrdma2_encode_direction(p, end, 1), 4,
		      "direction");
	CHECK_ELEMENT(&gb, rpcrdma2_encode_chunk_lists(p, end, 0, &h_in.chunks),
		      4 + 24 + 4 + 4 + 8 + 16, "chunk lists");
	CHECK_ELEMENT(&gb, rpcrdma2_encode_error_body(p, end, RDMA2_ERR_VERS,
						      1, 2),
		      12, "ERR_VERS body");
	CHECK_ELEMENT(&gb, rpcrdma2_encode_error_body(p, end,
						      RDMA2_ERR_INVALID_OPTION,
						      1, 2),
		      4, "INVALID_OPTION body");
	CHECK_ELEMENT(&gb, rpcrdma2_encode_optional(p, end, 1, 9, info, 6),
		      12 + 8, "optional, 6 octets");
	CHECK_ELEMENT(&gb, rpcrdma2_encode_optional(p, end, 0, 9, NULL, 0), 12,
		      "optional, empty");
}

static void
test_names(void)
{
	CHECK(strcmp(rpcrdma2_proc_name(RDMA2_MSG), "RDMA2_MSG") == 0 &&
	      strcmp(rpcrdma2_proc_name(RDMA2_NOMSG), "RDMA2_NOMSG") == 0 &&
	      strcmp(rpcrdma2_proc_name(RDMA2_ERROR), "RDMA2_ERROR") == 0 &&
	      strcmp(rpcrdma2_proc_name(RDMA2_OPTIONAL), "RDMA2_OPTIONAL") == 0 &&
	      strcmp(rpcrdma2_proc_name(2), "unknown") == 0 &&
	      strcmp(rpcrdma2_proc_name(3), "unknown") == 0,
	      "procedure names; Version One's 2 and 3 are unknown");
	CHECK(strcmp(rpcrdma2_err_name(1), "RDMA2_ERR_VERS") == 0 &&
	      strcmp(rpcrdma2_err_name(2), "RDMA2_ERR_BAD_HEADER") == 0 &&
	      strcmp(rpcrdma2_err_name(3), "RDMA2_ERR_INVALID_OPTION") == 0 &&
	      strcmp(rpcrdma2_err_name(0), "unknown") == 0,
	      "error names");
	CHECK(strcmp(rpcrdma2_dir_name(0), "CALL") == 0 &&
	      strcmp(rpcrdma2_dir_name(1), "REPLY") == 0 &&
	      strcmp(rpcrdma2_dir_name(2), "unknown") == 0,
	      "direction names");
}

int
main(void)
{
	guardbuf_init(&gb, 65536);
	test_roundtrip_chunks();
	test_roundtrip_error_optional();
	test_wire_octets();
	test_negotiation_replies();
	test_peek();
	test_err_vers_range();
	test_chunks_alone();
	test_element_nospace();
	test_names();
	guardbuf_free(&gb);
	return check_done();
}
