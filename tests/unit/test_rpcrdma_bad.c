/*
 * RPC-over-RDMA Version One transport header codec, what it must refuse:
 * every malformed prefix, chunk list and RDMA_ERROR body the decoder
 * meets (with the XID kept for the answer), every header the encoder must
 * not write; and the octets of rpcrdma_encode_error() with its short
 * buffers.
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
static struct rpcrdma_hdr h_in, h_out;

static int
decode_words(const struct words *w, struct rpcrdma_hdr *hdr)
{
	return rpcrdma_hdr_decode(guardbuf_place(&gb, w->b, w->n), w->n, hdr);
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
	put_read_segs(&w, RPCRDMA1_MAX_READ_SEGS + 1, 8);
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d read segments: -EBADMSG", RPCRDMA1_MAX_READ_SEGS + 1);
	put_prefix(&w, 1, 1, RDMA_MSG);
	put_read_segs(&w, RPCRDMA1_MAX_READ_SEGS, 8);
	put(&w, 0), put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), 0, "%d read segments: accepted",
		 RPCRDMA1_MAX_READ_SEGS);

	/* Write list: chunks over the limit. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0);
	for (i = 0; i < RPCRDMA1_MAX_WRITE_CHUNKS + 1; i++) {
		put(&w, 1);
		put_write_chunk(&w, 1, i);
	}
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d write chunks: -EBADMSG", RPCRDMA1_MAX_WRITE_CHUNKS + 1);

	/* Write list: segments over the limit across two chunks. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0);
	put(&w, 1);
	put_write_chunk(&w, RPCRDMA1_MAX_WRITE_SEGS / 2, 0);
	put(&w, 1);
	put_write_chunk(&w, RPCRDMA1_MAX_WRITE_SEGS / 2 + 1, 0);
	put(&w, 0), put(&w, 0);
	CHECK_RC(decode_words(&w, &h_out), -EBADMSG,
		 "%d write segments in all: -EBADMSG",
		 RPCRDMA1_MAX_WRITE_SEGS + 1);

	/* Reply chunk over the limit. */
	put_prefix(&w, 1, 1, RDMA_MSG);
	put(&w, 0), put(&w, 0), put(&w, 1);
	put_write_chunk(&w, RPCRDMA1_MAX_REPLY_SEGS + 1, 0);
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

int
main(void)
{
	guardbuf_init(&gb, 65536);
	test_prefix_errors();
	test_list_errors();
	test_encode_errors();
	guardbuf_free(&gb);
	return check_done();
}
