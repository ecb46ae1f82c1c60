/*
 * RPC-over-RDMA Version Two transport header codec: every malformed form
 * the decoder must refuse, with the errno that says what to do (drop it,
 * answer ERR_VERS, answer BAD_HEADER, drop an error), and every header
 * the encoder must refuse to write.  Each input ends at a guard page.
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
static struct rpcrdma2_hdr h_in, h_out;

static int
decode_words(const struct words *w, struct rpcrdma2_hdr *hdr)
{
	return rpcrdma2_hdr_decode(guardbuf_place(&gb, w->b, w->n), w->n, hdr);
}

static void
test_prefix(void)
{
	static const uint8_t msg[] = {
		W(0x11223344), W(2), W(8), W(RDMA2_MSG), W(0), W(0), W(0), W(0),
	};
	static const uint32_t versions[] = { 0, 1, 3, 0x100, 0xffffffff };
	struct words w;
	unsigned int bad = 0, i;
	size_t len;
	int rc;

	for (len = 0; len < RPCRDMA2_PREFIX_LEN; len++)
		if (rpcrdma2_hdr_decode(guardbuf_place(&gb, msg, len), len,
					&h_out) != -EMSGSIZE)
			bad++;
	CHECK(bad == 0, "0..15 octets: -EMSGSIZE");
	CHECK_RC(rpcrdma2_hdr_decode(NULL, 0, &h_out), -EMSGSIZE,
		 "NULL buffer: -EMSGSIZE");

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		put_prefix(&w, 0x5566 + i, versions[i], RDMA2_MSG);
		put(&w, RDMA2_DIR_CALL);
		put_no_chunks(&w);
		rc = decode_words(&w, &h_out);
		CHECK(rc == -EPROTONOSUPPORT && h_out.xid == 0x5566 + i &&
		      h_out.vers == versions[i] && h_out.proc == RDMA2_MSG,
		      "version %u: -EPROTONOSUPPORT, prefix kept", versions[i]);
	}

	put_prefix(&w, 0x5577, 3, RDMA2_ERROR);
	put(&w, RDMA2_ERR_VERS), put(&w, 3), put(&w, 3);
	rc = decode_words(&w, &h_out);
	CHECK(rc == -EPROTONOSUPPORT && h_out.proc == RDMA2_ERROR,
	      "RDMA2_ERROR of version 3: proc known, not to answer");
}

static void
test_procedures(void)
{
	static const uint32_t procs[] = { 2, 3, 6, 7, 0x100, 0xffffffff };
	struct words w;
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		put_prefix(&w, 0x1230 + i, 2, procs[i]);
		put(&w, RDMA2_DIR_CALL);
		put_no_chunks(&w);
		put(&w, 0), put(&w, 0);
		rc = decode_words(&w, &h_out);
		CHECK(rc == -EBADMSG && h_out.xid == 0x1230 + i &&
		      h_out.proc == procs[i],
		      "procedure %u: -EBADMSG, xid kept", procs[i]);
	}
}

static void
test_directions(void)
{
	static const uint32_t dirs[] = { 2, 3, 0x80000000, 0xffffffff };
	struct words w;
	unsigned int i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		put_prefix(&w, 1, 2, RDMA2_MSG);
		put(&w, dirs[i]);
		put_no_chunks(&w);
		CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
			 "RDMA2_MSG direction %u: -EBADMSG", dirs[i]);
	}
	put_prefix(&w, 1, 2, RDMA2_NOMSG);
	put(&w, 2);
	put(&w, 0), put(&w, 0), put(&w, 1), put(&w, 1);
	put_seg(&w, 1, 1, 1);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA2_NOMSG direction 2: -EBADMSG");
	put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
	put(&w, 2), put(&w, 7), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA2_OPTIONAL direction 2: -EBADMSG");
	put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
	put(&w, 0xffffffff), put(&w, 7), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA2_OPTIONAL direction 0xffffffff: -EBADMSG");
}

/* An RDMA2_MSG with direction CALL whose lists the test writes. */
static void
msg_start(struct words *w)
{
	put_prefix(w, 1, 2, RDMA2_MSG);
	put(w, RDMA2_DIR_CALL);
}

static void
test_list_limits(void)
{
	struct words w;
	unsigned int i;

	msg_start(&w);
	put_read_segs(&w, RPCRDMA1_MAX_READ_SEGS + 1, 8);
	put_no_chunks(&w);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d read segments: -EBADMSG", RPCRDMA1_MAX_READ_SEGS + 1);
	msg_start(&w);
	put_read_segs(&w, RPCRDMA1_MAX_READ_SEGS, 8);
	put_no_chunks(&w);
	CHECK(decode_words(&w, &h_out) == 0 &&
	      h_out.chunks.nreads == RPCRDMA1_MAX_READ_SEGS,
	      "%d read segments: accepted", RPCRDMA1_MAX_READ_SEGS);

	msg_start(&w);
	put(&w, 0);
	for (i = 0; i < RPCRDMA1_MAX_WRITE_CHUNKS + 1; i++)
		put(&w, 1), put_write_chunk(&w, 1, i);
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d write chunks: -EBADMSG", RPCRDMA1_MAX_WRITE_CHUNKS + 1);

	msg_start(&w);
	put(&w, 0);
	put(&w, 1), put_write_chunk(&w, RPCRDMA1_MAX_WRITE_SEGS / 2, 0);
	put(&w, 1), put_write_chunk(&w, RPCRDMA1_MAX_WRITE_SEGS / 2 + 1, 0);
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d write segments in all: -EBADMSG",
		 RPCRDMA1_MAX_WRITE_SEGS + 1);

	msg_start(&w);
	put(&w, 0), put(&w, 0), put(&w, 1);
	put_write_chunk(&w, RPCRDMA1_MAX_REPLY_SEGS + 1, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d reply segments: -EBADMSG", RPCRDMA1_MAX_REPLY_SEGS + 1);

	msg_start(&w);
	put(&w, 0), put(&w, 1), put(&w, 0xffffffff);
	put_seg(&w, 1, 1, 1);
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "write chunk count 0xffffffff: -EBADMSG");
	msg_start(&w);
	put(&w, 0), put(&w, 0), put(&w, 1), put(&w, 0x10000001);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "reply chunk count wrapping when multiplied: -EBADMSG");
	msg_start(&w);
	put(&w, 0), put(&w, 0), put(&w, 1), put(&w, 3);
	put_seg(&w, 1, 1, 1), put_seg(&w, 2, 2, 2);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "reply chunk count 3 with 2 segments present: -EBADMSG");
}

static void
test_list_forms(void)
{
	struct words w;

	msg_start(&w);
	put(&w, 2), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "read list discriminator 2: -EBADMSG");
	msg_start(&w);
	put(&w, 0), put(&w, 0xffffffff), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "write list discriminator 0xffffffff: -EBADMSG");
	msg_start(&w);
	put(&w, 0), put(&w, 0), put(&w, 2);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "reply chunk discriminator 2: -EBADMSG");
	msg_start(&w);
	put(&w, 1), put(&w, 6), put_seg(&w, 1, 1, 1);
	put_no_chunks(&w);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "read position 6: -EBADMSG");
	msg_start(&w);
	put(&w, 1), put(&w, 8), put_seg(&w, 1, 1, 1);
	put(&w, 1), put(&w, 4), put_seg(&w, 2, 1, 1);
	put_no_chunks(&w);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "decreasing read positions 8, 4: -EBADMSG");

	put_prefix(&w, 1, 2, RDMA2_NOMSG);
	put(&w, RDMA2_DIR_CALL);
	put_no_chunks(&w);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA2_NOMSG without chunks: -EBADMSG");
	put_prefix(&w, 1, 2, RDMA2_NOMSG);
	put(&w, RDMA2_DIR_REPLY);
	put(&w, 0), put(&w, 1), put(&w, 1), put_seg(&w, 1, 1, 1);
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA2_NOMSG with only a write list: -EBADMSG");
	put_prefix(&w, 1, 2, RDMA2_NOMSG);
	put(&w, RDMA2_DIR_CALL);
	put(&w, 1), put(&w, 8), put_seg(&w, 1, 1, 1);
	put_no_chunks(&w);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA2_NOMSG with only a position-8 read chunk: -EBADMSG");

	/* Version One's layout (no direction word) is not Version Two's. */
	put_prefix(&w, 1, 2, RDMA2_NOMSG);
	put(&w, 0), put(&w, 0), put(&w, 1), put(&w, 1), put_seg(&w, 1, 1, 1);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA2_NOMSG laid out as Version One's: -EBADMSG");
}

static void
test_error_bodies(void)
{
	static const uint32_t codes[] = { 0, 4, 5, 0xffffffff };
	struct words w;
	unsigned int i;
	int rc;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		put_prefix(&w, 9, 2, RDMA2_ERROR);
		put(&w, codes[i]), put(&w, 1), put(&w, 2);
		rc = decode_words(&w, &h_out);
		CHECK(rc == -EBADMSG && h_out.proc == RDMA2_ERROR,
		      "RDMA2_ERROR code %u: -EBADMSG, proc says drop it",
		      codes[i]);
	}
	put_prefix(&w, 9, 2, RDMA2_ERROR);
	put(&w, RDMA2_ERR_VERS), put(&w, 3), put(&w, 2);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA2_ERR_VERS range 3..2: -EBADMSG");
	put_prefix(&w, 9, 2, RDMA2_ERROR);
	put(&w, RDMA2_ERR_VERS), put(&w, 0xffffffff), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "RDMA2_ERR_VERS range 0xffffffff..0: -EBADMSG");
	put_prefix(&w, 9, 2, RDMA2_ERROR);
	put(&w, RDMA2_DIR_REPLY), put(&w, RDMA2_ERR_BAD_HEADER);
	rc = decode_words(&w, &h_out);
	CHECK(rc == -EBADMSG && h_out.err == RDMA2_ERR_VERS,
	      "a direction word before the code (s3.2's prose, not the XDR) "
	      "reads as RDMA2_ERR_VERS with its range cut short: -EBADMSG");
}

static void
test_optional_bodies(void)
{
	struct words w;
	unsigned int i, pad;

	put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
	put(&w, 0), put(&w, 7), put(&w, RPCRDMA2_MAX_OPTINFO + 1);
	for (i = 0; i < RPCRDMA2_MAX_OPTINFO / 4; i++)
		put(&w, 0x01010101);
	put(&w, 0x01000000);	/* the last octet, then zero padding */
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "optinfo of %d octets, all present and padded: -EBADMSG",
		 RPCRDMA2_MAX_OPTINFO + 1);
	put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
	put(&w, 0), put(&w, 7), put(&w, RPCRDMA2_MAX_OPTINFO);
	for (i = 0; i < RPCRDMA2_MAX_OPTINFO / 4; i++)
		put(&w, 0x01010101);
	CHECK(decode_words(&w, &h_out) == 0 &&
	      h_out.optlen == RPCRDMA2_MAX_OPTINFO && h_out.hdrlen == 4096,
	      "optinfo of %d octets: accepted, a 4096-octet header",
	      RPCRDMA2_MAX_OPTINFO);

	put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
	put(&w, 0), put(&w, 7), put(&w, 0xffffffff), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "optinfo length 0xffffffff: -EBADMSG");
	put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
	put(&w, 0), put(&w, 7), put(&w, 0xfffffffd);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "optinfo length 0xfffffffd (wraps when rounded up): -EBADMSG");
	put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
	put(&w, 0), put(&w, 7), put(&w, 9), put(&w, 1), put(&w, 2);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "optinfo of 9 octets with 8 present: -EBADMSG");
	put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
	put(&w, 0), put(&w, 7), put(&w, 5), put(&w, 1), w.n += 1;
	w.b[w.n - 1] = 0x55;
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "optinfo of 5 octets without its padding: -EBADMSG");

	for (pad = 0; pad < 3; pad++) {
		put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
		put(&w, 1), put(&w, 7), put(&w, 5);
		put(&w, 0x68656c6c), put(&w, 0x6f000000);
		w.b[w.n - 3 + pad] = 0x80;
		CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
			 "optinfo padding octet %u not zero: -EBADMSG", pad + 1);
	}
	put_prefix(&w, 1, 2, RDMA2_OPTIONAL);
	put(&w, 1), put(&w, 7), put(&w, 5);
	put(&w, 0x68656c6c), put(&w, 0x6f000000);
	CHECK(decode_words(&w, &h_out) == 0 && h_out.hdrlen == 36,
	      "the same with zero padding: accepted");
}

static void
expect_einval(const char *what)
{
	uint8_t buf[8192];

	CHECK_RC(rpcrdma2_hdr_encode(buf, sizeof(buf), &h_in), -EINVAL,
		 "encode %s: -EINVAL", what);
}

static void
test_encode_refused(void)
{
	static const uint8_t info[8];
	uint8_t buf[64];

	hdr2_init(&h_in, RDMA2_MSG);
	h_in.vers = 1;
	expect_einval("RDMA2_MSG of version 1");
	hdr2_init(&h_in, RDMA2_OPTIONAL);
	h_in.vers = 3;
	expect_einval("RDMA2_OPTIONAL of version 3");
	hdr2_init(&h_in, 2);
	expect_einval("procedure 2");
	hdr2_init(&h_in, 3);
	expect_einval("procedure 3");
	hdr2_init(&h_in, 6);
	expect_einval("procedure 6");
	hdr2_init(&h_in, RDMA2_MSG);
	h_in.direction = 2;
	expect_einval("RDMA2_MSG direction 2");
	hdr2_init(&h_in, RDMA2_OPTIONAL);
	h_in.direction = 0xffffffff;
	expect_einval("RDMA2_OPTIONAL direction 0xffffffff");

	hdr2_init(&h_in, RDMA2_MSG);
	h_in.chunks.nreads = RPCRDMA1_MAX_READ_SEGS + 1;
	expect_einval("too many read segments");
	hdr2_init(&h_in, RDMA2_MSG);
	hdr2_add_read(&h_in, 6, seg(1, 1, 1));
	expect_einval("read position 6");
	hdr2_init(&h_in, RDMA2_MSG);
	hdr2_add_write(&h_in, 2, 1);
	h_in.chunks.writes[0].first = 1;
	expect_einval("write chunk not where the previous one ends");
	hdr2_init(&h_in, RDMA2_MSG);
	h_in.chunks.nwrites = RPCRDMA1_MAX_WRITE_CHUNKS + 1;
	expect_einval("too many write chunks");
	hdr2_init(&h_in, RDMA2_MSG);
	h_in.chunks.nreply = 1;
	expect_einval("reply segments without a reply chunk");
	hdr2_init(&h_in, RDMA2_MSG);
	hdr2_set_reply(&h_in, 1);
	h_in.chunks.nreply = RPCRDMA1_MAX_REPLY_SEGS + 1;
	expect_einval("too many reply segments");
	hdr2_init(&h_in, RDMA2_NOMSG);
	hdr2_add_read(&h_in, 8, seg(1, 1, 1));
	expect_einval("RDMA2_NOMSG without a chunk for its message");

	hdr2_init(&h_in, RDMA2_ERROR);
	h_in.err = 0;
	expect_einval("RDMA2_ERROR code 0");
	h_in.err = 4;
	expect_einval("RDMA2_ERROR code 4");
	h_in.err = RDMA2_ERR_VERS;
	h_in.vers_low = 2;
	h_in.vers_high = 1;
	expect_einval("RDMA2_ERR_VERS range 2..1");
	h_in.err = RDMA2_ERR_BAD_HEADER;
	h_in.vers = 1;
	expect_einval("RDMA2_ERR_BAD_HEADER of version 1");
	h_in.err = RDMA2_ERR_INVALID_OPTION;
	h_in.vers = 7;
	expect_einval("RDMA2_ERR_INVALID_OPTION of version 7");
	h_in.err = RDMA2_ERR_VERS;
	h_in.vers_low = h_in.vers_high = 1;
	CHECK(rpcrdma2_hdr_encode(buf, sizeof(buf), &h_in) == 28 &&
	      rpcrdma2_hdr_decode(buf, 28, &h_out) == -EPROTONOSUPPORT,
	      "RDMA2_ERR_VERS echoing version 7 encodes; decoding it says "
	      "-EPROTONOSUPPORT");

	hdr2_init(&h_in, RDMA2_OPTIONAL);
	h_in.optinfo = info;
	h_in.optlen = RPCRDMA2_MAX_OPTINFO + 1;
	expect_einval("optinfo over RPCRDMA2_MAX_OPTINFO");
	h_in.optlen = 0xffffffff;
	expect_einval("optinfo of 0xffffffff octets");
	h_in.optinfo = NULL;
	h_in.optlen = 3;
	expect_einval("optinfo NULL with 3 octets");

	hdr2_init(&h_in, RDMA2_MSG);
	CHECK_RC(rpcrdma2_hdr_encode(NULL, 0, &h_in), -ENOSPC,
		 "encode into NULL: -ENOSPC");

	CHECK_RC(rpcrdma2_encode_error(buf, sizeof(buf), 1, 2, 1, 0), -EINVAL,
		 "rpcrdma2_encode_error code 0: -EINVAL");
	CHECK_RC(rpcrdma2_encode_error(buf, sizeof(buf), 1, 2, 1, 4), -EINVAL,
		 "rpcrdma2_encode_error code 4: -EINVAL");
	CHECK_RC(rpcrdma2_encode_error(buf, sizeof(buf), 1, 1, 1,
				       RDMA2_ERR_BAD_HEADER), -EINVAL,
		 "rpcrdma2_encode_error BAD_HEADER for version 1: -EINVAL");
}

int
main(void)
{
	guardbuf_init(&gb, 65536);
	test_prefix();
	test_procedures();
	test_directions();
	test_list_limits();
	test_list_forms();
	test_error_bodies();
	test_optional_bodies();
	test_encode_refused();
	guardbuf_free(&gb);
	return check_done();
}
