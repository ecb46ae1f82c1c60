/*
 * RPC-over-RDMA Version One Read chunks: a read list grouped into chunks
 * by position, a call rebuilt from its reduced payload and its chunks, a
 * Long Call that also reduced a data item, and the property that reducing
 * then rebuilding gives the original stream back.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "guardbuf.h"
#include "rnd.h"
#include "rpcrdma_fixture.h"
#include "rpcrdma_xdr.h"
#include "words.h"

static struct guardbuf gb;
static struct rpcrdma_hdr h_in, h_out;

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

/* Whether the rebuild gives exactly want: its length, then its octets. */
static bool
rebuilds_to(const void *inline_payload, size_t inline_len,
	    const struct rpcrdma_read_chunk *c, unsigned int nchunks,
	    const void *data, const void *want, size_t want_len)
{
	static uint8_t out[256];
	ssize_t n;

	n = rpcrdma_read_rebuild(out, sizeof(out), inline_payload, inline_len,
				 c, nchunks, data);
	return n == (ssize_t)want_len && memcmp(out, want, want_len) == 0;
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
	static const struct {
		uint32_t pos0, len0, pos1, len1;
		unsigned int nchunks;
		const char *data, *what;
	} bad_pos[] = {
		{ 6, 4, 20, 6, 1, "abcd", "position 6" },
		{ 20, 4, 20, 6, 1, "abcd", "position beyond the inline data" },
		{ 8, 5, 12, 4, 2, "ABCDEabcd",
		  "position inside the previous chunk" },
		{ 8, 5, 8, 4, 2, "ABCDEabcd",
		  "two chunks at the same position" },
		{ 8, 5, 32, 4, 2, "ABCDEabcd",
		  "second chunk beyond the inline data" },
	};
	struct rpcrdma_read_chunk c[4];
	uint8_t out[256], before[256];
	unsigned int bad = 0, i;
	ssize_t n;
	size_t len;

	/* Single position-zero chunk: a Long Call, all from data. */
	c[0].position = 0;
	c[0].first = 0;
	c[0].nsegs = 1;
	c[0].length = sizeof(call);
	CHECK(rebuilds_to(NULL, 0, c, 1, call, want_call, sizeof(want_call)),
	      "position-zero chunk of 43 octets: the call, rounded up to 44");
	CHECK_EQ_U(rpcrdma_read_rebuild_len(0, c, 1), sizeof(want_call),
		   "rebuild_len of the position-zero chunk");

	/* One data chunk of 5 octets in the middle. */
	c[0].position = 8;
	c[0].length = 5;
	CHECK(rebuilds_to(inline1, sizeof(inline1), c, 1, "ABCDE", want1,
			  sizeof(want1)),
	      "5-octet chunk at 8: inserted with 3 octets of zero padding");
	CHECK_EQ_U(rpcrdma_read_rebuild_len(sizeof(inline1), c, 1),
		   sizeof(want1), "rebuild_len counts the padding");

	/* The same chunk with the requester's own padding. */
	c[0].length = 8;
	CHECK(rebuilds_to(inline1, sizeof(inline1), c, 1, "ABCDE\0\0\0", want1,
			  sizeof(want1)),
	      "chunk with its padding included: no extra padding");

	/* Two chunks; the second position counts the first and its pad. */
	c[0].position = 8;
	c[0].length = 5;
	c[1].position = 20;
	c[1].first = 1;
	c[1].nsegs = 1;
	c[1].length = 6;
	CHECK(rebuilds_to(inline2, sizeof(inline2), c, 2, "ABCDEfghijk", want2,
			  sizeof(want2)),
	      "two chunks at 8 and 20, both padded");

	/* A chunk at the very end of the inline data. */
	c[0].position = 16;
	c[0].length = 3;
	n = rpcrdma_read_rebuild(out, sizeof(out), inline2, sizeof(inline2),
				 c, 1, "xyz");
	CHECK(n == 20 && memcmp(out, inline2, 16) == 0 &&
	      memcmp(out + 16, "xyz", 4) == 0,
	      "chunk at the end of the inline data");

	/* Bad positions in inline2 (16 octets); nchunks 1: c[1] unused. */
	for (i = 0; i < sizeof(bad_pos) / sizeof(bad_pos[0]); i++) {
		c[0].position = bad_pos[i].pos0;
		c[0].length = bad_pos[i].len0;
		c[1].position = bad_pos[i].pos1;
		c[1].length = bad_pos[i].len1;
		CHECK_RC(rpcrdma_read_rebuild(out, sizeof(out), inline2,
					      sizeof(inline2), c,
					      bad_pos[i].nchunks,
					      bad_pos[i].data),
			 -EBADMSG, "%s: -EBADMSG", bad_pos[i].what);
	}

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
	test_read_chunks();
	test_rebuild();
	test_long_call_with_data_chunk();
	test_rebuild_random();
	guardbuf_free(&gb);
	return check_done();
}
