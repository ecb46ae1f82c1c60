/*
 * Version negotiation (transport/rpcrdma_neg.h): what a responder and a
 * requester do with each Version Two message, the version taken after
 * ERR_VERS, and the table of Version One peers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "check.h"
#include "rpcrdma2_fixture.h"
#include "rpcrdma_neg.h"

static uint8_t buf[4096];

/* An RPC message's first words: xid, msg_type, then some body. */
static size_t
put_rpc(uint8_t *p, uint32_t xid, uint32_t mtype, size_t body)
{
	uint32_t w[2] = { htonl(xid), htonl(mtype) };

	memcpy(p, w, sizeof(w));
	memset(p + sizeof(w), 0, body);
	return sizeof(w) + body;
}

/* A message: header h, then an RPC payload of mtype (UINT32_MAX: none). */
static size_t
msg(struct rpcrdma2_hdr *h, uint32_t mtype)
{
	ssize_t n = rpcrdma2_hdr_encode(buf, sizeof(buf), h);

	if (n < 0)
		return 0;
	if (mtype != UINT32_MAX)
		n += (ssize_t)put_rpc(buf + n, h->xid, mtype, 32);
	return (size_t)n;
}

static enum rpcrdma2_verdict
check(size_t len, bool responder)
{
	struct rpcrdma2_hdr out;

	return rpcrdma2_recv_check(buf, len, responder, &out);
}

static void
test_directions(void)
{
	struct rpcrdma2_hdr h;
	size_t n;

	hdr2_init(&h, RDMA2_MSG);
	n = msg(&h, 0);
	CHECK_EQ_U(check(n, true), RV2_TAKE, "responder: CALL with a call: taken");
	CHECK_EQ_U(check(n, false), RV2_WRONG_DIR,
		   "requester: a backward-direction call is dropped");

	h.direction = RDMA2_DIR_REPLY;
	n = msg(&h, 1);
	CHECK_EQ_U(check(n, false), RV2_TAKE, "requester: REPLY with a reply: taken");
	CHECK_EQ_U(check(n, true), RV2_WRONG_DIR,
		   "responder: a backward-direction reply is dropped");

	/* s4.2.2: the direction word disagrees with the payload's msg_type. */
	h.direction = RDMA2_DIR_CALL;
	n = msg(&h, 1);
	CHECK_EQ_U(check(n, true), RV2_MALFORMED,
		   "responder: CALL carrying a reply: BAD_HEADER");
	h.direction = RDMA2_DIR_REPLY;
	n = msg(&h, 0);
	CHECK_EQ_U(check(n, false), RV2_WRONG_DIR,
		   "requester: REPLY carrying a call is never a reply");
	CHECK_EQ_U(check(n, true), RV2_WRONG_DIR,
		   "responder: REPLY carrying a call: dropped");

	/* Too little payload to say: left to the RPC decoder. */
	h.direction = RDMA2_DIR_CALL;
	n = msg(&h, UINT32_MAX);
	CHECK_EQ_U(check(n + 4, true), RV2_TAKE,
		   "responder: a payload too short for msg_type is taken");

	/* RDMA2_NOMSG: the payload is in a chunk, only the word counts. */
	hdr2_init(&h, RDMA2_NOMSG);
	hdr2_set_reply(&h, 1);
	n = msg(&h, UINT32_MAX);
	CHECK_EQ_U(check(n, true), RV2_TAKE, "responder: NOMSG CALL taken");
	h.direction = RDMA2_DIR_REPLY;
	n = msg(&h, UINT32_MAX);
	CHECK_EQ_U(check(n, true), RV2_WRONG_DIR, "responder: NOMSG REPLY dropped");
	CHECK_EQ_U(check(n, false), RV2_TAKE, "requester: NOMSG REPLY taken");
}

static void
test_optional(void)
{
	static const uint8_t info[5] = { 1, 2, 3, 4, 5 };
	struct rpcrdma2_hdr h;
	size_t n;

	hdr2_init(&h, RDMA2_OPTIONAL);
	h.opttype = 0x1234;
	n = msg(&h, UINT32_MAX);
	CHECK_EQ_U(check(n, true), RV2_INVALID_OPTION,
		   "responder: OPTIONAL without payload: INVALID_OPTION");
	h.optinfo = info;
	h.optlen = sizeof(info);
	n = msg(&h, 0);
	CHECK_EQ_U(check(n, true), RV2_INVALID_OPTION,
		   "responder: OPTIONAL with a call: INVALID_OPTION");
	CHECK_EQ_U(check(n - 34, true), RV2_INVALID_OPTION,
		   "responder: OPTIONAL with part of a payload: INVALID_OPTION");
	n = msg(&h, 1);
	CHECK_EQ_U(check(n, true), RV2_MALFORMED,
		   "responder: OPTIONAL CALL carrying a reply: BAD_HEADER");
	CHECK_EQ_U(check(n, false), RV2_WRONG_DIR,
		   "requester: OPTIONAL CALL: dropped");
	h.direction = RDMA2_DIR_REPLY;
	n = msg(&h, UINT32_MAX);
	CHECK_EQ_U(check(n, true), RV2_WRONG_DIR,
		   "responder: OPTIONAL REPLY: dropped");
	CHECK_EQ_U(check(n, false), RV2_INVALID_OPTION,
		   "requester: OPTIONAL REPLY of an unknown type");
}

static void
test_malformed(void)
{
	struct rpcrdma2_hdr h, out;
	size_t n, cut;
	bool all = true;

	/* Cut at every octet: below the prefix dropped, else BAD_HEADER. */
	hdr2_init(&h, RDMA2_MSG);
	hdr2_add_write(&h, 2, 0x55);
	hdr2_set_reply(&h, 1);
	n = (size_t)rpcrdma2_hdr_encode(buf, sizeof(buf), &h);
	for (cut = 0; cut < n; cut++) {
		enum rpcrdma2_verdict v = rpcrdma2_recv_check(buf, cut, true, &out);

		if (v != (cut < RPCRDMA2_PREFIX_LEN ? RV2_DROP : RV2_MALFORMED)) {
			all = false;
			printf("# cut at %zu: verdict %u\n", cut, v);
		}
	}
	CHECK(all, "a header cut at each of its %zu octets: dropped or BAD_HEADER", n);

	hdr2_init(&h, RDMA2_ERROR);
	h.err = RDMA2_ERR_VERS;
	h.vers_low = 1;
	h.vers_high = 1;
	n = msg(&h, UINT32_MAX);
	CHECK_EQ_U(check(n, false), RV2_TAKE, "requester: ERR_VERS taken");
	CHECK_EQ_U(check(n - 4, false), RV2_DROP,
		   "a cut-short RDMA2_ERROR is dropped, never answered");
	CHECK_EQ_U(check(n - 4, true), RV2_DROP,
		   "... by a responder too");

	/* Version Two has no procedure 2 or 3. */
	hdr2_init(&h, RDMA2_MSG);
	n = msg(&h, 0);
	buf[15] = 3;
	CHECK_EQ_U(check(n, true), RV2_MALFORMED, "procedure 3: BAD_HEADER");
	buf[15] = 0;
	buf[19] = 2;
	CHECK_EQ_U(check(n, true), RV2_MALFORMED, "direction 2: BAD_HEADER");
}

static void
test_to_v1(void)
{
	struct rpcrdma2_hdr h, out;
	struct rpcrdma_hdr v1;
	size_t n;

	hdr2_init(&h, RDMA2_NOMSG);
	h.direction = RDMA2_DIR_REPLY;
	hdr2_add_write(&h, 3, 0x99);
	hdr2_set_reply(&h, 2);
	n = msg(&h, UINT32_MAX);
	CHECK_EQ_U(rpcrdma2_recv_check(buf, n, false, &out), RV2_TAKE,
		   "a Long Reply header taken");
	/* Whatever the view held before. */
	memset(&v1, 0xa5, sizeof(v1));
	rpcrdma2_to_v1(&out, &v1);
	CHECK(v1.xid == h.xid && v1.vers == 2 && v1.credits == h.credits &&
	      v1.proc == RDMA_NOMSG && v1.hdrlen == n &&
	      lists_eq(&v1, &h.chunks),
	      "its Version One view: fixed words, lists, hdrlen");
}

static void
test_pick(void)
{
	CHECK_EQ_U(rpcrdma_vers_pick(1, 1, 2), 1, "1..1 after 2: 1");
	CHECK_EQ_U(rpcrdma_vers_pick(1, 2, 2), 1, "1..2 after 2: 1, not 2 again");
	CHECK_EQ_U(rpcrdma_vers_pick(1, 7, 3), 2, "1..7 after 3: 2");
	CHECK_EQ_U(rpcrdma_vers_pick(2, 2, 2), 0, "2..2 after 2: none");
	CHECK_EQ_U(rpcrdma_vers_pick(3, 9, 2), 0, "3..9: none spoken here");
	CHECK_EQ_U(rpcrdma_vers_pick(0, 0, 2), 0, "0..0: none");
}

static void
test_peers(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(20049) };
	struct sockaddr_in b = a;
	struct sockaddr_in6 m = { .sin6_family = AF_INET6, .sin6_port = htons(20049) };
	unsigned int i;

	rpcrdma_peers_forget();
	inet_pton(AF_INET, "10.77.0.1", &a.sin_addr);
	inet_pton(AF_INET6, "::ffff:10.77.0.1", &m.sin6_addr);
	b.sin_addr = a.sin_addr;
	b.sin_port = htons(20050);
	CHECK(!rpcrdma_peer_v1_only((struct sockaddr *)&a), "unknown peer");
	rpcrdma_peer_set_v1_only((struct sockaddr *)&a);
	CHECK(rpcrdma_peer_v1_only((struct sockaddr *)&a), "remembered");
	CHECK(rpcrdma_peer_v1_only((struct sockaddr *)&m),
	      "the same peer as an IPv4-mapped address");
	CHECK(!rpcrdma_peer_v1_only((struct sockaddr *)&b),
	      "another port of that address is another peer");
	for (i = 0; i < RPCRDMA_PEERS_MAX; i++) {
		b.sin_port = htons((uint16_t)(30000 + i));
		rpcrdma_peer_set_v1_only((struct sockaddr *)&b);
	}
	CHECK(!rpcrdma_peer_v1_only((struct sockaddr *)&a),
	      "the oldest of a full table is replaced");
	CHECK(rpcrdma_peer_v1_only((struct sockaddr *)&b), "the newest is there");
	CHECK(!rpcrdma_peer_v1_only(NULL), "no address: not known");
}

int
main(void)
{
	test_directions();
	test_optional();
	test_malformed();
	test_to_v1();
	test_pick();
	test_peers();
	return check_done();
}
