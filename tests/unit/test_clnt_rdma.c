/*
 * Unit tests of the RDMA client's slots, memory windows, credits and
 * statistics counters (threads sharing a CLIENT: test_clnt_threads.c).
 *
 * The client's files (transport/clnt_rdma*.c) are compiled in unchanged
 * and run over the fake endpoint of fake_ep.c, whose scripted server
 * answers as each test sets it to, and which counts violations: an
 * invalidation of a key not bound, a Read of memory not exposed, a
 * message sent without a posted receive.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "check.h"
#include "clnt_fixture.h"
#include "clnt_rdma.h"
#include "clnt_rdma_int.h"
#include "fake_ep.h"
#include "sockfd.h"
#include "xdr_grow.h"

/* An opaque result, for a call whose result may come in a Write chunk. */
struct opaque_res {
	char *buf;
	u_int len;
};

static bool_t
xdr_opaque_res(XDR *xdrs, struct opaque_res *r)
{
	return xdr_bytes(xdrs, &r->buf, &r->len, ~0u);
}

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

static void
test_credits(void)
{
	CLIENT *cl = make_client(4, 4096);
	struct ct_rdma *ct = ct_of(cl);
	unsigned int calls;

	CHECK_EQ_U(ct->ct_granted, 1, "one credit before any reply");
	srv.credits = 3;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call");
	CHECK_EQ_U(ct->ct_granted, 3, "the reply's grant is taken");
	CHECK_EQ_U(nbound, 0, "nothing of the call stays reachable");

	srv.credits = 0;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call answered with 0 credits");
	CHECK_EQ_U(ct->ct_granted, 1, "a grant of zero counts as one");

	srv.credits = 100;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call answered with 100 credits");
	CHECK_EQ_U(ct_credit_window(ct), 4, "calls in flight are bounded by the receives posted");

	/*
	 * One credit, one call in flight that times out: its credit comes
	 * back with the timeout (RFC 8166 s4.3.1 counts requests in flight),
	 * so the next call goes out.
	 */
	srv.credits = 1;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting one credit");
	srv.mode = SRV_HOLD;
	CHECK_EQ_U(null_call(cl, 100), RPC_TIMEDOUT, "a call the server does not answer times out");
	CHECK_EQ_U(ct->ct_outstanding, 0, "its credit came back with the timeout");
	srv.mode = SRV_REPLY;
	calls = srv.calls;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the next call goes out and is answered");
	CHECK_EQ_U(srv.calls, calls + 1, "it was sent");

	/* The late reply fences the orphan and changes no count. */
	srv_answer_held(ct->ct_ep);
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "after the late reply a call goes out");
	CHECK_EQ_U(ct->ct_outstanding, 0, "no call in flight");
	CHECK_EQ_U(slots_in(ct, SLOT_FREE), ct->ct_nslots, "every slot free");
	CHECK_EQ_U(recv_reserved, 0, "every receive given back");
	CHECK_EQ_U(nbound, 0, "nothing reachable");
	destroy_client(cl);
}

/*
 * Results decoded by xdr_void (NULL, pings): the reply is an RPC header
 * alone, inline at any threshold, so the call offers no Reply chunk and
 * binds no window for one (RFC 8166 s5.3.3); so with one xdr_u_int
 * result.  The same call with results the client cannot see into offers
 * one.
 */
static void
test_void_results(void)
{
	CLIENT *cl = make_client(4, 1024);
	struct timeval tv = { .tv_sec = 5 };
	unsigned int c, inv, arg, res = 0;

	srv.credits = 4;
	c = srv.calls;
	inv = nlocal_inv;
	CHECK_EQ_U(clnt_call(cl, NULLPROC, XDRPROC(xdr_void), NULL,
			     XDRPROC(xdr_void), NULL, tv),
		   RPC_SUCCESS, "a NULL call, xdr_void results, 1 KiB inline");
	CHECK_EQ_U(srv.calls, c + 1, "it was sent once");
	CHECK_EQ_U(srv.reply_key[c], 0, "it offered no Reply chunk");
	CHECK_EQ_U(nlocal_inv, inv, "no window to invalidate after it");

	c = srv.calls;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the same call, results of unknown size");
	CHECK(srv.reply_key[c] != 0, "it offered a Reply chunk");
	CHECK_EQ_U(nbound, 0, "nothing reachable after either");

	/* One fixed-size result (a procedure returning int): no chunk either. */
	c = srv.calls;
	inv = nlocal_inv;
	arg = 0x1234;
	CHECK_EQ_U(clnt_call(cl, F_PROC_ECHO, XDRPROC(xdr_u_int), (caddr_t)&arg,
			     XDRPROC(xdr_u_int), (caddr_t)&res, tv),
		   RPC_SUCCESS, "a call with xdr_u_int results");
	CHECK_EQ_U(res, arg, "its result decoded from the inline reply");
	CHECK_EQ_U(srv.reply_key[c], 0, "it offered no Reply chunk");
	CHECK_EQ_U(nlocal_inv, inv, "no window to invalidate after it");
	CHECK_EQ_U(nbound, 0, "nothing reachable after it");
	CHECK_EQ_U(violations, 0, "the fake saw no violation");
	destroy_client(cl);
}

/*
 * Results of unknown size with the default max_reply (1 MiB): the Reply
 * chunk of max_reply and room for the RPC header is one segment (under
 * what Linux svcrdma before 5.11 takes, ulb.h), so the Version One call
 * header is 48 octets and a call of the inline threshold, header
 * included, goes inline; four octets more make it a Long Call (s4.5.3).
 */
static void
test_default_reply_chunk(void)
{
	struct timeval tv = { .tv_sec = 5 };
	/* RPC call header (AUTH_NONE): 40 octets; the opaque's length: 4. */
	struct opaque_res arg = { .len = 4096 - 48 - 40 - 4 };
	CLIENT *cl;
	unsigned int c;

	max_reply = 1 << 20;
	cl = make_client(4, 4096);
	max_reply = 64 << 10;
	arg.buf = calloc(1, arg.len + 4);
	srv.credits = 4;
	c = srv.calls;
	CHECK_EQ_U(clnt_call(cl, NULLPROC, XDRPROC(xdr_opaque_res), (caddr_t)&arg,
			     XDRPROC(xdr_unknown_res), NULL, tv),
		   RPC_SUCCESS, "a call of 4096 octets with its header");
	CHECK_EQ_U(srv.reply_segs[c], 1, "its Reply chunk of 1 MiB + 4 KiB is one segment");
	CHECK_EQ_U(srv.read_key[c], 0, "it went inline");

	arg.len += 4;
	c = srv.calls;
	CHECK_EQ_U(clnt_call(cl, NULLPROC, XDRPROC(xdr_opaque_res), (caddr_t)&arg,
			     XDRPROC(xdr_unknown_res), NULL, tv),
		   RPC_SUCCESS, "a call four octets longer");
	CHECK(srv.read_key[c] != 0, "it went as a Long Call");
	CHECK_EQ_U(nbound, 0, "nothing reachable after either");
	CHECK_EQ_U(violations, 0, "the fake saw no violation");
	free(arg.buf);
	destroy_client(cl);
}

/* Which libtirpc decoders take a known number of octets. */
static void
test_results_len(void)
{
	CHECK_EQ_U(ct_results_len(XDRPROC(xdr_void)), 0, "xdr_void: nothing");
	CHECK_EQ_U(ct_results_len(XDRPROC(xdr_int)), 4, "xdr_int");
	CHECK_EQ_U(ct_results_len(XDRPROC(xdr_bool)), 4, "xdr_bool");
	CHECK_EQ_U(ct_results_len(XDRPROC(xdr_enum)), 4, "xdr_enum");
	CHECK_EQ_U(ct_results_len(XDRPROC(xdr_u_long)), 4, "xdr_u_long: 4 octets on the wire");
	CHECK_EQ_U(ct_results_len(XDRPROC(xdr_u_quad_t)), 8, "xdr_u_quad_t (rpcgen's unsigned hyper)");
	CHECK_EQ_U(ct_results_len(XDRPROC(xdr_double)), 8, "xdr_double");
	CHECK(ct_results_len(XDRPROC(xdr_wrapstring)) < 0, "xdr_wrapstring: not known");
	CHECK(ct_results_len(XDRPROC(xdr_unknown_res)) < 0, "a program's own decoder: not known");
}

/*
 * Calls that never get a reply must not wedge a CLIENT: a fresh one (one
 * credit until a reply says more) whose first call is dropped, and
 * batched calls (no results, zero timeout), which offer no chunk for a
 * reply at all.  Over TCP only the unanswered call is lost.
 */
static void
test_lost_replies(void)
{
	CLIENT *cl = make_client(4, 4096);
	struct ct_rdma *ct = ct_of(cl);
	struct timeval zero = { 0, 0 };
	unsigned int i, c, bad = 0;

	srv.credits = 1;
	srv.mode = SRV_HOLD;
	CHECK_EQ_U(null_call(cl, 100), RPC_TIMEDOUT, "a fresh client's first call is dropped");
	srv.mode = SRV_REPLY;
	CHECK_EQ_U(null_call(cl, 2000), RPC_SUCCESS, "its next call is answered");
	CHECK_EQ_U(null_call(cl, 2000), RPC_SUCCESS, "and the one after");
	destroy_client(cl);

	cl = make_client(4, 4096);
	ct = ct_of(cl);
	srv.credits = 1;
	srv.mode = SRV_HOLD;	/* a batched procedure: no reply */
	c = srv.calls;
	CHECK_EQ_U(clnt_call(cl, NULLPROC, XDRPROC(xdr_void), NULL, NULL, NULL, zero),
		   RPC_SUCCESS, "a batched call on a fresh client succeeds at once");
	CHECK_EQ_U(srv.reply_key[c], 0, "it offers no Reply chunk");
	CHECK_EQ_U(nbound, 0, "and exposes nothing");
	CHECK_EQ_U(recv_reserved, 0, "nor keeps a receive");
	CHECK_EQ_U(slots_in(ct, SLOT_FREE), ct->ct_nslots, "nor a slot");
	for (i = 0; i < 20; i++)
		bad += clnt_call(cl, NULLPROC, XDRPROC(xdr_void), NULL, NULL, NULL,
				 zero) != RPC_SUCCESS;
	CHECK_EQ_U(bad, 0, "twenty more batched calls");
	srv.mode = SRV_REPLY;
	CHECK_EQ_U(null_call(cl, 2000), RPC_SUCCESS, "then a call waiting for its reply");

	/* A server that answers batched calls anyway: replies dropped by XID. */
	for (i = 0; i < 20; i++)
		bad += clnt_call(cl, NULLPROC, XDRPROC(xdr_void), NULL, NULL, NULL,
				 zero) != RPC_SUCCESS;
	CHECK_EQ_U(bad, 0, "twenty batched calls answered anyway");
	CHECK_EQ_U(null_call(cl, 2000), RPC_SUCCESS, "then a call waiting for its reply");
	CHECK_EQ_U(ct->ct_outstanding, 0, "no call in flight");
	CHECK_EQ_U(recv_reserved, 0, "no receive held");
	destroy_client(cl);
}

/* Every slot held by a timed-out call whose Reply chunk stays exposed. */
static void
fill_orphans(CLIENT *cl, uint32_t keys[CT_SLOTS])
{
	unsigned int a = srv.calls, s, bound = 0;

	srv.mode = SRV_HOLD;
	for (s = 0; s < CT_SLOTS; s++)
		CHECK_EQ_U(null_call(cl, 20), RPC_TIMEDOUT, "timed-out call %u", s);
	for (s = 0; s < CT_SLOTS; s++) {
		keys[s] = srv.reply_key[a + s];
		bound += key_bound(keys[s]);
	}
	CHECK_EQ_U(slots_in(ct_of(cl), SLOT_ORPHAN), CT_SLOTS,
		   "each timed-out call leaves an orphan slot");
	CHECK_EQ_U(bound, CT_SLOTS,
		   "their Reply chunks stay exposed (a late reply may still come)");
	srv.mode = SRV_REPLY;
}

static void
test_orphans(void)
{
	CLIENT *cl = make_client(2 * CT_SLOTS, 4096);
	struct ct_rdma *ct = ct_of(cl);
	uint32_t keys[CT_SLOTS];
	struct ep *first;
	unsigned int s, connects, bound = 0;

	srv.credits = 4;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting four credits");
	connects = fake_connects;
	first = ct->ct_ep;
	fill_orphans(cl, keys);

	/* Three late replies: each fences its own orphan, nothing else. */
	srv_answer_held(ct->ct_ep);
	srv_answer_held(ct->ct_ep);
	srv_answer_held(ct->ct_ep);
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call after three late replies");
	CHECK(!key_bound(keys[0]) && was_invalidated_locally(keys[0]) &&
	      !key_bound(keys[2]), "a late reply fences its orphan");
	for (s = 3; s < CT_SLOTS; s++)
		bound += key_bound(keys[s]);
	CHECK_EQ_U(bound, CT_SLOTS - 3, "the orphans without a reply stay exposed");
	CHECK_EQ_U(slots_in(ct, SLOT_ORPHAN), CT_SLOTS - 3, "their slots with them");
	CHECK(ct->ct_ep == first && fake_connects == connects,
	      "the same connection throughout");
	CHECK_EQ_U(ct->ct_outstanding, 0, "no credit held by a call given up on");
	CHECK_EQ_U(recv_reserved, CT_SLOTS - 3,
		   "the orphans keep the receives their replies may take");
	destroy_client(cl);
}

/*
 * Every slot an orphan: no orphan's memory is revoked under its late
 * reply (the server would close the connection when its Write fails);
 * the next call goes on a new connection instead, sent once.
 */
static void
test_orphans_renew(void)
{
	CLIENT *cl = make_client(2 * CT_SLOTS, 4096);
	struct ct_rdma *ct = ct_of(cl);
	uint32_t keys[CT_SLOTS];
	unsigned int s, connects, calls, bound = 0;

	srv.credits = 4;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting four credits");
	fill_orphans(cl, keys);
	connects = fake_connects;
	calls = srv.calls;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call with every slot an orphan");
	CHECK_EQ_U(fake_connects, connects + 1, "made on a new connection");
	CHECK_EQ_U(srv.calls, calls + 1, "sent once");
	for (s = 0; s < CT_SLOTS; s++)
		bound += key_bound(keys[s]) || was_invalidated_locally(keys[s]);
	CHECK_EQ_U(bound, 0,
		   "the old connection's windows went with it, none invalidated");
	CHECK_EQ_U(slots_in(ct, SLOT_FREE), CT_SLOTS, "every slot free");
	CHECK_EQ_U(recv_reserved, 0, "no receive held");
	CHECK_EQ_U(ct->ct_granted, 4, "the new connection's grant");

	/* A connection lost between calls: the next call renews it. */
	srv.nheld = 0;
	ep_set_dead(ct->ct_ep, ECONNRESET);
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call after the connection was lost");
	CHECK_EQ_U(fake_connects, connects + 2, "on a new connection");

	/* The server gone: each call tries once, fails, and nothing leaks. */
	ep_set_dead(ct->ct_ep, ECONNRESET);
	fake_refuse = true;
	CHECK_EQ_U(null_call(cl, 5000), RPC_CANTSEND, "a call while the server refuses");
	CHECK(ct->ct_ep == NULL && mws_alive == 0, "no connection, no window left");
	CHECK_EQ_U(null_call(cl, 5000), RPC_CANTSEND, "and the next");
	fake_refuse = false;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call once the server is back");
	CHECK_EQ_U(fake_connects, connects + 3, "on a new connection");
	destroy_client(cl);
}

/*
 * The socket libtirpc handed over, never connected, answers as the RDMA
 * connection's: getsockname its local address, the new one after the
 * CLIENT connected again, getpeername the server's as given; after
 * clnt_destroy it is a plain socket again.  A connected socket (the
 * background upgrade's) would answer for itself: an unconnected one is
 * what clnt_tli_create hands over.
 */
static void
test_stand_in(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	unsigned int port;
	CLIENT *cl;

	CHECK(fd >= 0, "an unconnected TCP socket");
	cl = make_client_fd(fd, 4, 4096, 0, RPCRDMA_WANT_V1);
	port = 40000 + fake_connects;
	CHECK(sockfd_owned(fd), "the socket stands in for the connection");
	CHECK(sockfd_getsockname(fd, (struct sockaddr *)&a, &len) == 0 &&
	      ntohs(a.sin_port) == port, "getsockname: the connection's port %u", port);
	len = sizeof(a);
	CHECK(sockfd_getpeername(fd, (struct sockaddr *)&a, &len) == 0 &&
	      memcmp(&a, &fake_addr, sizeof(a)) == 0,
	      "getpeername: the server's address as given");
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call");
	ep_set_dead(ct_of(cl)->ct_ep, ECONNRESET);
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call on a new connection");
	len = sizeof(a);
	CHECK(sockfd_getsockname(fd, (struct sockaddr *)&a, &len) == 0 &&
	      ntohs(a.sin_port) == port + 1, "getsockname: the new connection's port");
	destroy_client(cl);
	CHECK(!sockfd_owned(fd), "destroyed: the socket is its own again");
	close(fd);
}

static void
test_remote_invalidation(void)
{
	/* A send_max this small makes every call a Long Call: two windows. */
	CLIENT *cl = make_client(4, 64);
	struct ct_rdma *ct = ct_of(cl);
	unsigned int c, inv0;

	srv.credits = 4;
	srv.inv = INV_REPLY_CHUNK;
	c = srv.calls;
	inv0 = nlocal_inv;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a Long Call answered With Invalidate");
	CHECK(srv.read_key[c] && srv.reply_key[c], "it exposed a Read and a Reply chunk");
	CHECK_EQ_U(nlocal_inv - inv0, 1, "one local invalidation");
	CHECK(was_invalidated_locally(srv.read_key[c]) &&
	      !was_invalidated_locally(srv.reply_key[c]),
	      "of the Read chunk: the key the server invalidated is left alone");
	CHECK_EQ_U(nbound, 0, "nothing reachable");

	srv.inv = INV_FOREIGN;
	c = srv.calls;
	inv0 = nlocal_inv;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a reply invalidating a key not the client's");
	CHECK_EQ_U(nlocal_inv - inv0, 2, "both chunks invalidated locally");
	CHECK(was_invalidated_locally(srv.read_key[c]) &&
	      was_invalidated_locally(srv.reply_key[c]), "the Read and the Reply chunk");
	CHECK_EQ_U(nbound, 0, "nothing reachable");
	CHECK_EQ_U(slots_in(ct, SLOT_FREE), ct->ct_nslots, "every slot free");
	destroy_client(cl);
}

/*
 * A Send With Invalidate may name any key the connection exposes: here
 * the reply to call B invalidates the Reply chunk of call A, which timed
 * out and is still exposed.  A's window must then count as invalidated,
 * so that A's late reply does not make the client invalidate it again
 * (the double invalidation that panics rxe 6.1).
 */
static void
test_remote_inv_other_slot(void)
{
	CLIENT *cl = make_client(4, 4096);
	struct ct_rdma *ct = ct_of(cl);
	unsigned int a, b;

	srv.credits = 4;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting four credits");
	srv.mode = SRV_HOLD;
	a = srv.calls;
	CHECK_EQ_U(null_call(cl, 50), RPC_TIMEDOUT, "call A times out");
	CHECK(key_bound(srv.reply_key[a]), "A's Reply chunk stays exposed");

	srv.mode = SRV_REPLY;
	srv.inv = INV_HELD;
	b = srv.calls;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS,
		   "call B, answered With Invalidate of A's key");
	CHECK(!key_bound(srv.reply_key[a]), "the server invalidated A's window");
	CHECK(was_invalidated_locally(srv.reply_key[b]),
	      "B's own window was invalidated locally");
	srv.inv = INV_NONE;
	srv_answer_held(ct->ct_ep);	/* A's late reply */
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "call C, after A's late reply");
	CHECK(!was_invalidated_locally(srv.reply_key[a]),
	      "A's window was not invalidated a second time");
	CHECK_EQ_U(slots_in(ct, SLOT_FREE), ct->ct_nslots, "every slot free");
	CHECK_EQ_U(nbound, 0, "nothing reachable");
	destroy_client(cl);
}

static void
test_bad_replies(void)
{
	CLIENT *cl = make_client(4, 4096);
	struct ct_rdma *ct = ct_of(cl);
	struct rpc_err e;
	int64_t t0;

	srv.credits = 4;
	srv.mode = SRV_MALFORMED;
	t0 = ep_now_ms();
	CHECK_EQ_U(null_call(cl, 10000), RPC_CANTDECODERES,
		   "a malformed reply with the call's XID ends the call with an error");
	CHECK(ep_now_ms() - t0 < 5000, "at once, not at the timeout");
	clnt_geterr(cl, &e);
	CHECK_EQ_U(e.re_errno, EBADMSG, "re_errno EBADMSG");
	CHECK_EQ_U(nbound, 0, "its memory is fenced");
	CHECK_EQ_U(ct->ct_outstanding, 0, "its credit came back");

	srv.mode = SRV_ERR_VERS;
	CHECK_EQ_U(null_call(cl, 10000), RPC_CANTRECV, "RDMA_ERROR (ERR_VERS) ends the call");
	clnt_geterr(cl, &e);
	CHECK_EQ_U(e.re_errno, EPROTONOSUPPORT, "re_errno EPROTONOSUPPORT");

	/* s5.5: an RDMA_ERROR that cannot be decoded is discarded. */
	srv.mode = SRV_BAD_ERROR;
	CHECK_EQ_U(null_call(cl, 200), RPC_TIMEDOUT,
		   "an undecodable RDMA_ERROR with the call's XID does not end it");
	CHECK_EQ_U(ct->ct_outstanding, 0, "its credit came back with the timeout");

	srv.mode = SRV_REPLY;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the connection serves the next call");

	/* s7.2.1: a backward call's credit value is not a forward grant. */
	srv.backward_call = true;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call followed by a backward-direction call");
	srv.backward_call = false;
	CHECK_EQ_U(ct_reap(ct), 0, "the backward call taken");
	CHECK_EQ_U(ct->ct_granted, 4, "the grant is the reply's, not the backward call's");
	destroy_client(cl);
}

/*
 * The connection fails under an orphan's local invalidation, which is
 * flushed or never completes: the orphan's memory is out of reach with
 * the queue pair, and the next call goes on a new connection instead of
 * waiting for an invalidation that will not come.
 */
static void
test_fence_lost(void)
{
	int how;

	for (how = INV_FAIL_FLUSHED; how <= INV_FAIL_LOST; how++) {
		CLIENT *cl = make_client(4, 4096);
		struct ct_rdma *ct = ct_of(cl);

		srv.credits = 4;
		srv.mode = SRV_HOLD;
		CHECK_EQ_U(null_call(cl, 100), RPC_TIMEDOUT, "a call the server holds times out");
		srv.mode = SRV_REPLY;
		srv.inv_fail = how;
		srv_answer_held(ct->ct_ep);
		(void)ct_reap(ct);
		CHECK(ep_dead(ct->ct_ep), "the connection failed under the late reply's invalidation");
		CHECK_EQ_U(null_call(cl, 2000), RPC_SUCCESS,
			   how == INV_FAIL_FLUSHED ? "after a flushed invalidation, a call on a new connection"
						   : "after a lost invalidation, a call on a new connection");
		CHECK_EQ_U(slots_in(ct, SLOT_FENCING), 0, "no slot left fencing");
		destroy_client(cl);
	}
}

/* A client with one call made: its connection, for a fault set next. */
static struct ep *
served_client(CLIENT **cl)
{
	*cl = make_client(4, 4096);
	srv.credits = 4;
	CHECK_EQ_U(null_call(*cl, 5000), RPC_SUCCESS, "a call");
	return ct_of(*cl)->ct_ep;
}

/*
 * A connection found failed under a call by a local failure, its queue
 * pair still connected: the call fails, and its queue pair is put in the
 * error state before its memory goes back to the pool.
 */
static void
test_lost_under_call(void)
{
	CLIENT *cl;
	struct ep *ep = served_client(&cl);

	srv.kill_on_call = true;
	CHECK_EQ_U(null_call(cl, 5000), RPC_CANTRECV, "a call whose connection fails under it");
	CHECK(fake_disconnected(ep), "its queue pair is disconnected as the call returns");
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the next call, on a new connection");
	destroy_client(cl);
}

/*
 * A bind ahead of a call's Send fails: the Send never ran, so the call goes
 * on a new connection, once, with its XID; failing there too, it fails.
 */
static void
test_bind_failed(void)
{
	CLIENT *cl = make_client(4, 4096);
	unsigned int c, connects;
	uint32_t xid;

	srv.credits = 4;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a first call");
	c = srv.calls;
	xid = srv.xid[c - 1];
	connects = fake_connects;
	srv.bind_fail = 1;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call whose window bind failed");
	CHECK_EQ_U(fake_connects, connects + 1, "it went on a new connection");
	CHECK_EQ_U(srv.calls, c + 1, "the server received it once");
	CHECK_EQ_U(ntohl(srv.xid[c]), ntohl(xid) - 1, "with the XID it was made with");
	CHECK(srv.reply_key[c] != 0, "offering its Reply chunk again");
	CHECK_EQ_U(nbound, 0, "nothing reachable after it");

	srv.bind_fail = 2;
	CHECK_EQ_U(null_call(cl, 5000), RPC_CANTRECV, "a call whose bind fails on the new connection too");
	CHECK_EQ_U(fake_connects, connects + 2, "one new connection for it, not more");
	CHECK_EQ_U(srv.calls, c + 1, "the server received nothing");
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the next call, on a new connection");
	CHECK_EQ_U(srv.calls, c + 2, "received once");
	destroy_client(cl);
}

/* A receive that completes in error: the connection goes, its buffer does not. */
static void
test_recv_error(void)
{
	CLIENT *cl;
	struct ep *ep = served_client(&cl);

	srv.recv_error = true;
	CHECK(null_call(cl, 5000) != RPC_SUCCESS, "a call whose reply's receive failed fails");
	CHECK(ep_dead(ep), "the connection is lost");
	CHECK_EQ_U(fake_recv_missing(ep), 0, "every receive buffer is posted again");
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the next call, on a new connection");
	destroy_client(cl);
}

/* What the shared queue had reserved while the results were decoded. */
static unsigned int reserved_at_decode;

static bool_t
xdr_res_noting_reserved(XDR *xdrs, void *res)
{
	(void)xdrs;
	(void)res;
	reserved_at_decode = recv_reserved;
	return TRUE;
}

/*
 * A reply's receive stays reserved until its buffer is posted again: its
 * results are decoded from that buffer, and a reservation given back
 * before would let another call count on a receive not yet posted.
 */
static void
test_recv_kept_while_decoding(void)
{
	struct timeval tv = { .tv_sec = 5 };
	CLIENT *cl;
	struct ep *ep = served_client(&cl);

	reserved_at_decode = 0;
	CHECK_EQ_U(clnt_call(cl, NULLPROC, XDRPROC(xdr_void), NULL,
			     XDRPROC(xdr_res_noting_reserved), NULL, tv),
		   RPC_SUCCESS, "a call");
	CHECK_EQ_U(reserved_at_decode, 1,
		   "its receive is still reserved while its results are decoded");
	CHECK_EQ_U(recv_reserved, 0, "and given back once its buffer is posted");
	CHECK_EQ_U(fake_recv_missing(ep), 0, "every receive buffer is posted again");
	destroy_client(cl);
}

/*
 * ERR_CHUNK (BADHEADER), as a server refusing the call's segments answers
 * before running it, and as any server answers a reply too large for the
 * Reply chunk after running it (RFC 8166 s5.5.3).  A call whose reply
 * could have outgrown what it offered fails and is not sent again; one
 * whose reply cannot have (xdr_void results, a Long Call cut into
 * segments over 64 KiB) goes again with smaller segments.
 */
static void
test_err_chunk(void)
{
	struct timeval tv = { .tv_sec = 5 };
	struct opaque_res big = { .len = 100 << 10 };
	struct rpc_err e;
	unsigned int c;
	CLIENT *cl;

	ct_peers_forget();
	cl = make_client(4, 1024);
	srv.credits = 4;
	c = srv.calls;
	srv.err_chunks = 1;
	CHECK_EQ_U(null_call(cl, 5000), RPC_CANTRECV,
		   "ERR_CHUNK to a call whose reply's size is unknown ends it");
	clnt_geterr(cl, &e);
	CHECK_EQ_U(e.re_errno, EMSGSIZE, "re_errno EMSGSIZE");
	CHECK_EQ_U(srv.calls, c + 1, "it was not sent again: the server may have run it");
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the next call is served");

	ct_peers_forget();
	big.buf = calloc(1, big.len);
	c = srv.calls;
	srv.err_chunks = 1;
	CHECK_EQ_U(clnt_call(cl, NULLPROC, XDRPROC(xdr_opaque_res), (caddr_t)&big,
			     XDRPROC(xdr_void), NULL, tv),
		   RPC_SUCCESS, "ERR_CHUNK to a Long Call whose reply fits inline");
	CHECK_EQ_U(srv.calls, c + 2, "it was sent again, once");
	CHECK(srv.read_key[c + 1] != 0, "again in a Read chunk");
	CHECK_EQ_U(nbound, 0, "nothing reachable after it");
	CHECK_EQ_U(violations, 0, "the fake saw no violation");
	free(big.buf);
	destroy_client(cl);
	ct_peers_forget();
}

/*
 * draft-cel-nfsv4-rpcrdma-version-two-01 s5.2 against a server of Version
 * One only: the first call goes in Version Two, its ERR_VERS makes the
 * client send the same call (same XID) in Version One, once; with auto
 * the server is remembered, with 2 every connection asks; a lost first
 * call counts as Version One too.
 */
static void
test_version_negotiation(void)
{
	CLIENT *cl;
	uint32_t first;

	rpcrdma_peers_forget();
	cl = make_client_v(4, 4096, 0, RPCRDMA_WANT_AUTO);
	srv.credits = 4;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS,
		   "auto, a Version One server: the call succeeds");
	CHECK_EQ_U(srv.v2_calls, 1, "its Version Two form was refused once");
	CHECK_EQ_U(srv.calls, 1, "and it was served once, in Version One");
	CHECK_EQ_U(srv.xid[0], srv.v2_xid, "with the XID of the refused one");
	CHECK_EQ_U(ct_of(cl)->ct_vstate, CT_V1, "the connection is in Version One");
	first = srv.xid[0];
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the next call");
	CHECK_EQ_U(srv.v2_calls, 1, "... goes in Version One at once");
	/* As clnt_vc: the stored word, in network order, goes down by one. */
	CHECK_EQ_U(srv.xid[1], ntohl(htonl(first) - 1),
		   "... with the next XID of the sequence");
	destroy_client(cl);

	cl = make_client_v(4, 4096, 0, RPCRDMA_WANT_AUTO);
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "auto, a new connection");
	CHECK_EQ_U(srv.v2_calls, 0, "... to the server remembered starts in Version One");
	destroy_client(cl);

	cl = make_client_v(4, 4096, 0, RPCRDMA_WANT_V2);
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "2: the call succeeds");
	CHECK_EQ_U(srv.v2_calls, 1, "... after asking again");
	destroy_client(cl);

	rpcrdma_peers_forget();
	cl = make_client_v(4, 4096, 0, RPCRDMA_WANT_AUTO);
	srv.drop_v2 = true;
	CHECK_EQ_U(null_call(cl, 300), RPC_TIMEDOUT,
		   "a server that drops Version Two: the first call is lost");
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the next goes in Version One");
	CHECK_EQ_U(srv.v2_calls, 1, "only the first was Version Two");
	destroy_client(cl);
	cl = make_client_v(4, 4096, 0, RPCRDMA_WANT_AUTO);
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "auto, then a new connection");
	CHECK_EQ_U(srv.v2_calls, 0, "... starts in Version One (s5.2)");
	destroy_client(cl);
}

/*
 * A late reply taken while the current call's memory is fenced must not
 * change the current reply: its header is copied out first.
 */
static void
test_reply_header_kept(void)
{
	CLIENT *cl = make_client(4, 4096);

	srv.credits = 4;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting four credits");
	srv.mode = SRV_HOLD;
	CHECK_EQ_U(null_call(cl, 50), RPC_TIMEDOUT, "call A times out");
	srv.mode = SRV_REPLY;
	srv.late_error = true;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS,
		   "call B succeeds though A's late RDMA_ERROR came while B was fenced");
	CHECK(!srv.late_error, "the late RDMA_ERROR was sent");
	CHECK_EQ_U(nbound, 0, "nothing reachable");
	destroy_client(cl);
}

static bool
all_octets(const char *buf, size_t len, unsigned char v)
{
	while (len--)
		if ((unsigned char)buf[len] != v)
			return false;
	return true;
}

/*
 * The statistics of how data moved count what the server used: the
 * calls exposed in Read chunks, and the octets it says it wrote into the
 * Write and Reply chunks (RFC 8166 s4.4.6), not the 64K offered for each;
 * and the replies whose Send invalidated a key.
 */
static void
test_chunk_counters(void)
{
	/* send_max 64: every call is a Long Call, in a Read chunk. */
	CLIENT *cl = make_client_wc(4, 64, 64 << 10);
	struct ct_rdma *ct = ct_of(cl);
	struct timeval tv = { .tv_sec = 5 };
	struct opaque_res res = { NULL, 0 };
	struct shim_stats_conn st;

	memset(&st, 0, sizeof(st));
	ct->ct_stats = &st;
	srv.credits = 4;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a Long Call, its reply inline");
	CHECK_EQ_U(st.read_chunk_bytes, 40, "its Read chunk: the whole NULL call (40 octets)");
	CHECK_EQ_U(st.read_chunk_bytes, st.bytes_out, "as many as the calls sent");
	CHECK_EQ_U(st.write_chunk_bytes, 0, "a Write chunk offered, not used: nothing");
	CHECK_EQ_U(st.reply_chunk_bytes, 0, "an inline reply: nothing through the Reply chunk");
	CHECK_EQ_U(st.send_inv, 0, "no key invalidated");

	srv.reply_chunk = true;
	srv.inv = INV_REPLY_CHUNK;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a reply in the Reply chunk, With Invalidate");
	CHECK_EQ_U(st.reply_chunk_bytes, 24, "the 24 octets written, not the 64K offered");
	CHECK_EQ_U(st.send_inv, 1, "one reply invalidated a key");
	CHECK_EQ_U(st.read_chunk_bytes, 80, "two calls' Read chunks");

	srv.reply_chunk = false;
	srv.inv = INV_NONE;
	srv.write_result = 1001;
	CHECK_EQ_U(clnt_call(cl, 1, XDRPROC(xdr_void), NULL,
			     XDRPROC(xdr_opaque_res), (caddr_t)&res, tv),
		   RPC_SUCCESS, "a result placed in the Write chunk");
	CHECK(res.len == 1001 && all_octets(res.buf, res.len, 0xab),
	      "the result is the octets written");
	CHECK_EQ_U(st.write_chunk_bytes, 1001, "the 1001 octets written, not the 64K offered");
	CHECK_EQ_U(st.reply_chunk_bytes, 24, "the reply came inline");
	CHECK_EQ_U(st.send_inv, 1, "no more keys invalidated");
	free(res.buf);

	ct->ct_stats = NULL;	/* not a slot of the statistics file */
	destroy_client(cl);
}

/*
 * Memory: an idle client holds no pool buffer and no receive; a call
 * holds them until it returns, a timed-out one until its late reply; a
 * client whose first call could not have its memory is not made at all.
 */
static void
test_memory(void)
{
	CLIENT *cl = make_client(4, 4096);
	struct ct_rdma *ct = ct_of(cl);
	struct netbuf nb = {
		.buf = &fake_addr,
		.len = sizeof(fake_addr),
		.maxlen = sizeof(fake_addr),
	};
	struct clnt_rdma_params p = {
		.inline_send = 4096,
		.inline_recv = 4096,
		.credits = 4,
		.connect_timeout_ms = 1000,
		.max_reply = 1 << 20,
		.remote_inv = true,
	};
	struct clnt_rdma_info info;
	unsigned int connects;
	enum rdma_fail why;
	int err;

	CHECK_EQ_U(pbufs_alive, 0, "a new client holds no pool buffer");
	CHECK_EQ_U(recv_reserved, 0, "and no receive");
	srv.credits = 4;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call");
	CHECK_EQ_U(pbufs_alive, 0, "after it: its call and Reply chunk buffers went back");
	CHECK_EQ_U(recv_reserved, 0, "its receive too");

	srv.mode = SRV_HOLD;
	CHECK_EQ_U(null_call(cl, 50), RPC_TIMEDOUT, "a call that times out");
	CHECK_EQ_U(pbufs_alive, 2, "its buffers stay, exposed to a late reply");
	CHECK_EQ_U(recv_reserved, 1, "and the receive its reply may still take");
	srv.mode = SRV_REPLY;
	srv_answer_held(ct->ct_ep);
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "the late reply, then a call");
	CHECK_EQ_U(pbufs_alive, 0, "every buffer back in the pool");
	CHECK_EQ_U(recv_reserved, 0, "every receive given back");
	destroy_client(cl);

	/* With a Write chunk, used by the server: the same. */
	cl = make_client_wc(4, 4096, 64 << 10);
	srv.credits = 4;
	srv.write_result = 1001;
	{
		struct timeval tv = { .tv_sec = 5 };
		struct opaque_res res = { NULL, 0 };

		CHECK_EQ_U(clnt_call(cl, 1, XDRPROC(xdr_void), NULL,
				     XDRPROC(xdr_opaque_res), (caddr_t)&res, tv),
			   RPC_SUCCESS, "a result placed in the Write chunk");
		free(res.buf);
	}
	CHECK_EQ_U(pbufs_alive, 0, "after it: its call, Reply and Write chunk buffers went back");
	destroy_client(cl);

	fake_reset(4096);
	connects = fake_connects;
	fake_mem_available = (1 << 20) + (64 << 10);
	CHECK(clnt_rdma_create(-1, &nb, (struct sockaddr *)&fake_addr, 0x20000099,
			       1, 0, 0, &p, &info, &why, &err) == NULL,
	      "a client whose call would not fit the memory left: none");
	CHECK(why == RDMA_FAIL_MEMLOCK && err == ENOMEM, "for memlock, ENOMEM");
	CHECK_EQ_U(fake_connects, connects, "decided before connecting");
	fake_mem_available = UINT64_MAX;
}

/*
 * In a fork() child, a CLIENT of the parent: calls fail at once without
 * its lock or its endpoint; clnt_control answers; destroying it lets go
 * of the endpoint and leaves the windows and buffers (the parent's).
 */
static void
test_parents_client(void)
{
	CLIENT *cl = make_client(8, 4096);
	struct ct_rdma *ct = ct_of(cl);
	struct ct_slot slots[CT_SLOTS_MAX];
	unsigned int nslots;
	struct rpc_err err;
	unsigned int calls, s, w;
	int fd = -2;

	CHECK_EQ_U(null_call(cl, 1000), RPC_SUCCESS, "a call before the fork");
	calls = srv.calls;
	fake_forked = true;
	pthread_mutex_lock(&ct->ct_lock);	/* as a thread of the parent left it */
	CHECK_EQ_U(null_call(cl, 1000), RPC_CANTSEND, "a call in the child fails");
	clnt_geterr(cl, &err);
	CHECK_EQ_U(err.re_errno, ENOTCONN, "errno ENOTCONN");
	CHECK_EQ_U(srv.calls, calls, "nothing was posted");
	CHECK(clnt_control(cl, CLGET_FD, (char *)&fd) && fd == -1,
	      "clnt_control answers without the lock");
	memcpy(slots, ct->ct_slots, sizeof(slots));
	nslots = ct->ct_nslots;
	ct->ct_stats = NULL;
	clnt_destroy(cl);
	CHECK_EQ_U(fake_abandoned, 1, "the endpoint was let go of");
	CHECK(mws_alive > 0, "the parent's windows were not deallocated");
	/* Give back what the parent would, for the next test's counts. */
	for (s = 0; s < nslots; s++) {
		for (w = 0; w < CT_NWIN; w++)
			if (slots[s].win[w].mw)
				ibv_dealloc_mw(slots[s].win[w].mw);
		rdma_pool_put(NULL, slots[s].callbuf);
		rdma_pool_put(NULL, slots[s].replybuf);
		rdma_pool_put(NULL, slots[s].ddpbuf);
	}
	CHECK(mws_alive == 0 && pbufs_alive == 0, "nothing else was held");
	fake_forked = false;
}

struct caller {
	CLIENT *cl;
	enum clnt_stat st;
	bool returned;		/* atomic */
};

static void *
caller_run(void *arg)
{
	struct caller *c = arg;

	c->st = null_call(c->cl, 300);
	__atomic_store_n(&c->returned, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * clnt_destroy while another thread is inside clnt_call waits for that
 * call to end, as libtirpc's clnt_vc_destroy does.
 */
static void
test_destroy_waits(void)
{
	struct caller c = { .cl = make_client(4, 4096) };
	pthread_t t;
	int64_t t0;

	srv.credits = 4;
	srv.mode = SRV_HOLD;
	t0 = ep_now_ms();
	CHECK(pthread_create(&t, NULL, caller_run, &c) == 0, "a caller thread");
	while (fake_read(&srv.calls) == 0)
		(void)poll(NULL, 0, 1);
	clnt_destroy(c.cl);
	/*
	 * A lower bound: the call ends at its deadline, not before (the
	 * caller's own flag may be set only after clnt_destroy returned).
	 */
	CHECK(ep_now_ms() - t0 >= 250,
	      "clnt_destroy returned after the call in progress (it ends after 300 ms)");
	pthread_join(t, NULL);
	CHECK_EQ_U(c.st, RPC_TIMEDOUT, "which timed out as usual");
	CHECK_EQ_U(mws_alive + pbufs_alive, 0, "nothing left");
	CHECK_EQ_U(violations, 0, "the fake saw no violation");
}

int
main(void)
{
	test_memory();
	test_credits();
	test_void_results();
	test_default_reply_chunk();
	test_results_len();
	test_lost_replies();
	test_orphans();
	test_orphans_renew();
	test_stand_in();
	test_remote_inv_other_slot();
	test_remote_invalidation();
	test_bad_replies();
	test_version_negotiation();
	test_err_chunk();
	test_recv_error();
	test_recv_kept_while_decoding();
	test_fence_lost();
	test_lost_under_call();
	test_bind_failed();
	test_reply_header_kept();
	test_chunk_counters();
	test_parents_client();
	test_destroy_waits();
	return check_done();
}
