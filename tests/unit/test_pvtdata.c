/*
 * RFC 8797 private data: size encoding, exact octets, the search for the
 * format identifier in received private data, and the s4.2 thresholds.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "guardbuf.h"
#include "pvtdata.h"

static struct guardbuf gb;

static void
test_size_every_kib(void)
{
	unsigned int k, bad_enc = 0, bad_dec = 0;

	/* s4.2: (bytes / 1024) - 1, for every size 1 KiB .. 256 KiB. */
	for (k = 1; k <= 256; k++) {
		uint8_t f = rpcrdma_cmp_size_encode(k * 1024);

		CHECK_EQ_U(f, k - 1, "size encode %u KiB", k);
		if (f != k - 1)
			bad_enc++;
		if (rpcrdma_cmp_size_decode((uint8_t)(k - 1)) != k * 1024)
			bad_dec++;
	}
	CHECK(bad_enc == 0, "every size 1..256 KiB encodes as KiB - 1");
	CHECK(bad_dec == 0, "every field 0..255 decodes as (f + 1) KiB");
}

static void
test_size_odd(void)
{
	static const struct {
		uint32_t bytes;
		uint8_t field;
	} cases[] = {
		{ 0, 0 },		/* clamped up to the 1 KiB minimum */
		{ 1, 0 },
		{ 1023, 0 },
		{ 1025, 0 },		/* rounded down */
		{ 2047, 0 },
		{ 2048, 1 },
		{ 4095, 2 },
		{ 4097, 3 },
		{ 262143, 254 },
		{ 262144, 255 },
		{ 262145, 255 },	/* clamped down to 256 KiB */
		{ 1u << 20, 255 },
		{ UINT32_MAX, 255 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQ_U(rpcrdma_cmp_size_encode(cases[i].bytes),
			   cases[i].field, "size encode %u rounds/clamps",
			   cases[i].bytes);
	CHECK_EQ_U(rpcrdma_cmp_size_decode(0), 1024, "field 0 is 1 KiB");
	CHECK_EQ_U(rpcrdma_cmp_size_decode(255), 262144, "field 255 is 256 KiB");
}

static void
test_encode_octets(void)
{
	static const uint8_t want_r[RPCRDMA1_CMP_LEN] = {
		0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x07,
	};
	static const uint8_t want_nor[RPCRDMA1_CMP_LEN] = {
		0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x00, 0xff,
	};
	struct rpcrdma_cm_pdata pd = {
		.remote_inv = true, .send_size = 4096, .recv_size = 8192,
	};
	uint8_t out[RPCRDMA1_CMP_LEN + 2];

	memset(out, 0x5a, sizeof(out));
	rpcrdma_cmp_encode(out, &pd);
	CHECK(memcmp(out, want_r, RPCRDMA1_CMP_LEN) == 0,
	      "R set, 4 KiB / 8 KiB: f6 ab 0e 18 01 01 03 07");
	CHECK(out[8] == 0x5a && out[9] == 0x5a, "encode writes 8 octets only");

	pd.remote_inv = false;
	pd.send_size = 100;		/* clamps to 1 KiB */
	pd.recv_size = 1u << 30;	/* clamps to 256 KiB */
	rpcrdma_cmp_encode(out, &pd);
	CHECK(memcmp(out, want_nor, RPCRDMA1_CMP_LEN) == 0,
	      "R clear, clamped sizes: f6 ab 0e 18 01 00 00 ff");
}

static bool
decode_guarded(const void *src, size_t len, struct rpcrdma_cm_pdata *pd)
{
	return rpcrdma_cmp_decode(guardbuf_place(&gb, src, len), len, pd);
}

static bool
is_defaults(const struct rpcrdma_cm_pdata *pd)
{
	return !pd->remote_inv && pd->send_size == 1024 &&
	       pd->recv_size == 1024;
}

static void
test_decode_fields(void)
{
	uint8_t msg[RPCRDMA1_CMP_LEN] = {
		0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x0f, 0x1f,
	};
	struct rpcrdma_cm_pdata pd;

	CHECK(decode_guarded(msg, sizeof(msg), &pd), "id at offset 0 found");
	CHECK(pd.remote_inv, "R bit set decodes");
	CHECK_EQ_U(pd.send_size, 16384, "send size 0x0f is 16 KiB");
	CHECK_EQ_U(pd.recv_size, 32768, "recv size 0x1f is 32 KiB");

	msg[5] = 0x00;
	CHECK(decode_guarded(msg, sizeof(msg), &pd) && !pd.remote_inv,
	      "R bit clear decodes");
	msg[5] = 0xfe;
	CHECK(decode_guarded(msg, sizeof(msg), &pd) && !pd.remote_inv,
	      "reserved bits ignored (0xfe: R clear)");
	msg[5] = 0xff;
	CHECK(decode_guarded(msg, sizeof(msg), &pd) && pd.remote_inv,
	      "reserved bits ignored (0xff: R set)");
	msg[5] = 0x80;
	CHECK(decode_guarded(msg, sizeof(msg), &pd) && !pd.remote_inv &&
	      pd.send_size == 16384 && pd.recv_size == 32768,
	      "reserved bits do not leak into other fields");

	msg[6] = 0x00;
	msg[7] = 0xff;
	CHECK(decode_guarded(msg, sizeof(msg), &pd) && pd.send_size == 1024 &&
	      pd.recv_size == 262144, "extreme size fields decode");
}

static void
test_decode_search(void)
{
	/* MPA-like bytes first: the id at an odd offset. */
	static const uint8_t odd[] = {
		0x11, 0x22, 0x33,
		0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x07, 0x03,
		0x44,
	};
	/* The id in the last 7 octets: does not fit. */
	static const uint8_t at_end[] = {
		0x00, 0x00, 0x00, 0x00, 0x00,
		0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x07,
	};
	/* A version 2 message first, then a version 1 message. */
	static const uint8_t v2_then_v1[] = {
		0xf6, 0xab, 0x0e, 0x18, 0x02, 0x01, 0xff, 0xff,
		0xf6, 0xab, 0x0e, 0x18, 0x01, 0x00, 0x01, 0x02,
	};
	/* Overlapping: the first id's version octet starts a second id. */
	static const uint8_t overlap[] = {
		0xf6, 0xab, 0x0e, 0x18, 0xf6, 0xab, 0x0e, 0x18,
		0x01, 0x01, 0x02, 0x02,
	};
	/* Version 0 only. */
	static const uint8_t v0[] = {
		0xf6, 0xab, 0x0e, 0x18, 0x00, 0x01, 0x02, 0x02,
	};
	/* The id byte-swapped (a little-endian sender): not ours. */
	static const uint8_t swapped[] = {
		0x18, 0x0e, 0xab, 0xf6, 0x01, 0x01, 0x02, 0x02,
	};
	static const uint8_t full[RPCRDMA1_CMP_LEN] = {
		0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x02, 0x02,
	};
	uint8_t garbage[64];
	struct rpcrdma_cm_pdata pd;
	unsigned int i;
	size_t n;

	CHECK(decode_guarded(odd, sizeof(odd), &pd) && pd.remote_inv &&
	      pd.send_size == 8192 && pd.recv_size == 4096,
	      "id at odd offset 3 found");

	pd.send_size = 7;
	CHECK(!decode_guarded(at_end, sizeof(at_end), &pd) && is_defaults(&pd),
	      "id at the end with 7 octets left: defaults");

	CHECK(decode_guarded(v2_then_v1, sizeof(v2_then_v1), &pd) &&
	      !pd.remote_inv && pd.send_size == 2048 && pd.recv_size == 3072,
	      "first occurrence version 2 skipped, second used");

	CHECK(decode_guarded(overlap, sizeof(overlap), &pd) && pd.remote_inv &&
	      pd.send_size == 3072, "overlapping occurrences: second used");

	CHECK(!decode_guarded(v0, sizeof(v0), &pd) && is_defaults(&pd),
	      "version 0 only: defaults");

	CHECK(!decode_guarded(swapped, sizeof(swapped), &pd) &&
	      is_defaults(&pd), "byte-swapped id: defaults");

	for (i = 0; i < sizeof(garbage); i++)
		garbage[i] = (uint8_t)(i * 37 + 11);
	CHECK(!decode_guarded(garbage, sizeof(garbage), &pd) &&
	      is_defaults(&pd), "garbage: defaults");

	pd.recv_size = 7;
	CHECK(!rpcrdma_cmp_decode(NULL, 0, &pd) && is_defaults(&pd),
	      "NULL buffer: defaults");
	pd.recv_size = 7;
	CHECK(!rpcrdma_cmp_decode(NULL, 8, &pd) && is_defaults(&pd),
	      "NULL buffer with a length: defaults");
	CHECK(!decode_guarded(full, 0, &pd) && is_defaults(&pd),
	      "zero-length buffer: defaults");
	for (n = 1; n < RPCRDMA1_CMP_LEN; n++)
		CHECK(!decode_guarded(full, n, &pd) && is_defaults(&pd),
		      "short buffer of %zu octets: defaults", n);
	CHECK(decode_guarded(full, RPCRDMA1_CMP_LEN, &pd),
	      "exactly 8 octets: found");
}

static void
test_encode_decode(void)
{
	struct rpcrdma_cm_pdata in, out;
	uint8_t msg[RPCRDMA1_CMP_LEN];
	unsigned int k, bad = 0;

	for (k = 1; k <= 256; k++) {
		in.remote_inv = k & 1;
		in.send_size = k * 1024;
		in.recv_size = (257 - k) * 1024;
		rpcrdma_cmp_encode(msg, &in);
		if (!decode_guarded(msg, sizeof(msg), &out) ||
		    out.remote_inv != in.remote_inv ||
		    out.send_size != in.send_size ||
		    out.recv_size != in.recv_size)
			bad++;
	}
	CHECK(bad == 0, "encode then decode round trips for 256 sizes");
}

static void
test_thresholds(void)
{
	const struct rpcrdma_cm_pdata client = {
		.send_size = 4096, .recv_size = 8192,
	};
	const struct rpcrdma_cm_pdata server = {
		.send_size = 16384, .recv_size = 2048,
	};
	struct rpcrdma_cm_pdata v1peer, odd;
	uint32_t c_send, c_recv, s_send, s_recv;

	/* s4.2: client-to-server is min(client send, server receive). */
	rpcrdma_cmp_thresholds(&client, &server, &c_send, &c_recv);
	CHECK_EQ_U(c_send, 2048, "client send = min(own send, server recv)");
	CHECK_EQ_U(c_recv, 8192, "client recv = min(server send, own recv)");

	/* s4.2: server-to-client is min(server send, client receive). */
	rpcrdma_cmp_thresholds(&server, &client, &s_send, &s_recv);
	CHECK_EQ_U(s_send, 8192, "server send = min(own send, client recv)");
	CHECK_EQ_U(s_recv, 2048, "server recv = min(client send, own recv)");
	CHECK(c_send == s_recv && s_send == c_recv,
	      "both ends agree on both directions");

	/* s5.1: a peer without private data counts as 1 KiB / 1 KiB. */
	rpcrdma_cmp_decode(NULL, 0, &v1peer);
	rpcrdma_cmp_thresholds(&client, &v1peer, &c_send, &c_recv);
	CHECK(c_send == 1024 && c_recv == 1024,
	      "Version One peer without private data: 1 KiB both ways");

	/* Local sizes count as advertised: 5000 goes out as 4 KiB. */
	odd.remote_inv = false;
	odd.send_size = 5000;
	odd.recv_size = 300000;
	rpcrdma_cmp_thresholds(&odd, &odd, &c_send, &c_recv);
	CHECK(c_send == 4096 && c_recv == 4096,
	      "local sizes are rounded down as on the wire");
	odd.send_size = 100;
	odd.recv_size = 1u << 20;
	rpcrdma_cmp_thresholds(&odd, &server, &c_send, &c_recv);
	CHECK(c_send == 1024 && c_recv == 16384,
	      "local sizes are clamped as on the wire");
}

int
main(void)
{
	guardbuf_init(&gb, 4096);
	test_size_every_kib();
	test_size_odd();
	test_encode_octets();
	test_decode_fields();
	test_decode_search();
	test_encode_decode();
	test_thresholds();
	guardbuf_free(&gb);
	return check_done();
}
