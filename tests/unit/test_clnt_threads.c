/*
 * Unit tests of threads sharing one RDMA CLIENT: their calls in flight
 * together up to the credits granted, each reply to its caller by XID,
 * per-call timeouts and errors, clnt_destroy waiting for every caller,
 * and poll_us.  The client's files run over the fake endpoint, whose
 * server can hold calls until a batch is in flight and answer the newest
 * first, echoing each call's argument (F_PROC_ECHO).
 */
#include <poll.h>
#include <pthread.h>
#include <string.h>

#include <rpc/rpc.h>

#include "check.h"
#include "clnt_fixture.h"
#include "clnt_rdma_v2.h"

/*
 * The echoed word, decoded through a function the client cannot see into:
 * its calls offer a Reply chunk, so windows are bound for calls in flight
 * together (an xdr_u_int result needs none: test_clnt_rdma.c).
 */
static bool_t
xdr_echo_res(XDR *xdrs, uint32_t *res)
{
	return xdr_u_int32_t(xdrs, res);
}

static enum clnt_stat
echo_call(CLIENT *cl, uint32_t arg, uint32_t *res, int timeout_ms)
{
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = (timeout_ms % 1000) * 1000,
	};

	return clnt_call(cl, F_PROC_ECHO, XDRPROC(xdr_u_int), (caddr_t)&arg,
			 XDRPROC(xdr_echo_res), (caddr_t)res, tv);
}

/* A thread making calls whose results say whose they are. */
struct echoer {
	CLIENT *cl;
	pthread_t thread;
	uint32_t id;		/* in each argument's high half */
	unsigned int calls;
	uint32_t flags;		/* or'ed into each argument (F_NEVER) */
	int timeout_ms;
	unsigned int ok, wrong;
	enum clnt_stat last;
	struct rpc_err err;	/* clnt_geterr after its last call */
	const struct echoer *other;
	bool other_waiting;	/* other had not returned when we were done */
	bool no_geterr;		/* the CLIENT may be gone after the call */
	bool returned;		/* atomic */
};

static void *
echo_run(void *arg)
{
	struct echoer *e = arg;
	unsigned int i;

	for (i = 0; i < e->calls; i++) {
		uint32_t want = e->id << 16 | i | e->flags, got = ~0u;

		e->last = echo_call(e->cl, want, &got, e->timeout_ms);
		if (e->no_geterr)
			continue;
		clnt_geterr(e->cl, &e->err);
		if (e->last != RPC_SUCCESS)
			printf("# thread %u call %u: %s\n", e->id, i,
			       clnt_sperrno(e->last));
		if (e->last == RPC_SUCCESS && got == want)
			e->ok++;
		else if (e->last == RPC_SUCCESS)
			e->wrong++;
	}
	e->other_waiting = e->other &&
			   !__atomic_load_n(&e->other->returned, __ATOMIC_ACQUIRE);
	__atomic_store_n(&e->returned, true, __ATOMIC_RELEASE);
	return NULL;
}

/* n echoers on cl, each making calls calls of 10 s at most. */
static void
echoers_init(struct echoer *e, unsigned int n, CLIENT *cl, unsigned int calls)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		e[i] = (struct echoer){ .cl = cl, .id = i + 1, .calls = calls,
					.timeout_ms = 10000 };
}

static void
run_echoers(struct echoer *e, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		CHECK(pthread_create(&e[i].thread, NULL, echo_run, &e[i]) == 0,
		      "thread %u started", i);
	for (i = 0; i < n; i++)
		pthread_join(e[i].thread, NULL);
}

/*
 * Run n echoers on cl while the server holds calls for a batch: what it
 * has held for 20 ms (fewer callers left than the batch) this thread has
 * it answer.  Returns the calls answered as asked.
 */
static unsigned int
run_echoers_batched(CLIENT *cl, struct echoer *e, unsigned int n)
{
	unsigned int i, ok = 0, held = 0, done, now;

	for (i = 0; i < n; i++)
		CHECK(pthread_create(&e[i].thread, NULL, echo_run, &e[i]) == 0,
		      "thread %u started", i);
	do {
		(void)poll(NULL, 0, 20);
		for (i = 0, done = 0; i < n; i++)
			done += __atomic_load_n(&e[i].returned, __ATOMIC_ACQUIRE);
		now = fake_read(&srv.nheld);
		if (now && now == held)
			(void)srv_answer_batch_now(ct_of(cl)->ct_ep);
		held = now;
	} while (done < n);
	for (i = 0; i < n; i++) {
		pthread_join(e[i].thread, NULL);
		ok += e[i].ok;
	}
	return ok;
}

/*
 * Eight threads on one CLIENT: their calls are in flight together (the
 * server answers none until it holds eight, then the newest first), and
 * each reply reaches the thread that made its call.
 */
static void
test_concurrent_calls(void)
{
	CLIENT *cl = make_client(8, 4096);
	struct ct_rdma *ct = ct_of(cl);
	struct echoer e[8];
	unsigned int i, ok = 0, wrong = 0;

	srv.credits = 8;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting eight credits");
	srv.batch = 8;
	srv.max_inflight = 0;
	echoers_init(e, 8, cl, 50);
	run_echoers(e, 8);
	for (i = 0; i < 8; i++) {
		ok += e[i].ok;
		wrong += e[i].wrong;
	}
	CHECK_EQ_U(ok, 400, "400 calls of 8 threads, each result its own call's");
	CHECK_EQ_U(wrong, 0, "no thread got another's result");
	CHECK_EQ_U(srv.max_inflight, 8, "eight calls were in flight at once");
	CHECK_EQ_U(ct->ct_outstanding, 0, "no credit held after");
	CHECK_EQ_U(recv_reserved, 0, "no receive held after");
	CHECK_EQ_U(slots_in(ct, SLOT_FREE), ct->ct_nslots, "every slot free after");
	CHECK(ct->ct_nslots >= 8 && ct->ct_nslots <= CT_SLOTS_MAX,
	      "a slot per call in flight (%u)", ct->ct_nslots);
	CHECK_EQ_U(pbufs_alive, 0, "every buffer back in the pool");
	CHECK_EQ_U(nbound, 0, "nothing reachable");
	destroy_client(cl);
}

/*
 * The credits granted bound the calls in flight, however many threads
 * call.  The server answers three at once; when the threads left have
 * fewer calls than that in flight, this thread has it answer those.
 */
static void
test_concurrent_credits(void)
{
	CLIENT *cl = make_client(8, 4096);
	struct echoer e[8];

	srv.credits = 3;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting three credits");
	srv.batch = 3;
	srv.max_inflight = 0;
	echoers_init(e, 8, cl, 30);
	CHECK_EQ_U(run_echoers_batched(cl, e, 8), 240, "240 calls of 8 threads answered");
	CHECK_EQ_U(srv.max_inflight, 3, "never more than the three credits in flight");
	destroy_client(cl);
}

/*
 * Per-call timeouts and errors: a call nobody answers times out on its
 * thread while another thread's calls go through, and clnt_geterr tells
 * each thread about its own call.
 */
static void
test_concurrent_timeout(void)
{
	CLIENT *cl = make_client(8, 4096);
	struct ct_rdma *ct = ct_of(cl);
	struct echoer e[2];

	srv.credits = 8;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting eight credits");
	memset(e, 0, sizeof(e));
	e[0] = (struct echoer){ .cl = cl, .id = 1, .calls = 1, .flags = F_NEVER,
				.timeout_ms = 3000 };
	e[1] = (struct echoer){ .cl = cl, .id = 2, .calls = 100,
				.timeout_ms = 10000, .other = &e[0] };
	run_echoers(e, 2);
	CHECK_EQ_U(e[0].last, RPC_TIMEDOUT, "the unanswered call timed out");
	CHECK_EQ_U(e[0].err.re_status, RPC_TIMEDOUT, "its thread's clnt_geterr says so");
	CHECK_EQ_U(e[1].ok, 100, "the other thread's 100 calls were answered");
	CHECK(e[1].other_waiting, "while the unanswered call still waited");
	CHECK_EQ_U(e[1].err.re_status, RPC_SUCCESS, "its clnt_geterr: its own call's success");
	CHECK_EQ_U(ct->ct_outstanding, 0, "the timed-out call's credit came back");
	CHECK_EQ_U(slots_in(ct, SLOT_ORPHAN), 1, "its memory stays exposed (an orphan)");
	destroy_client(cl);
}

/* clnt_destroy waits for every thread inside clnt_call. */
static void
test_destroy_waits_all(void)
{
	CLIENT *cl = make_client(8, 4096);
	struct echoer e[4];
	unsigned int i, calls;
	int64_t t0;

	srv.credits = 8;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting eight credits");
	calls = srv.calls;
	memset(e, 0, sizeof(e));
	t0 = ep_now_ms();
	for (i = 0; i < 4; i++) {
		e[i] = (struct echoer){ .cl = cl, .id = i + 1, .calls = 1,
					.flags = F_NEVER, .timeout_ms = 300,
					.no_geterr = true };
		CHECK(pthread_create(&e[i].thread, NULL, echo_run, &e[i]) == 0,
		      "caller %u", i);
	}
	while (fake_read(&srv.calls) < calls + 4)
		(void)poll(NULL, 0, 1);
	clnt_destroy(cl);
	/* A lower bound: the callers leave at their deadline, not before. */
	CHECK(ep_now_ms() - t0 >= 250,
	      "clnt_destroy waited for the four callers (their calls end after 300 ms)");
	for (i = 0; i < 4; i++) {
		pthread_join(e[i].thread, NULL);
		CHECK_EQ_U(e[i].last, RPC_TIMEDOUT, "caller %u timed out as usual", i);
	}
	CHECK_EQ_U(mws_alive + pbufs_alive, 0, "nothing left");
	CHECK_EQ_U(violations, 0, "the fake saw no violation");
}

/*
 * A connection lost under calls of several threads: the calls in flight
 * fail on their own threads; the calls after it go on one new
 * connection, made once all the calls on the old one were done.
 */
static void
test_concurrent_renew(void)
{
	CLIENT *cl = make_client(8, 4096);
	struct ct_rdma *ct = ct_of(cl);
	struct echoer a[4], b[4];
	unsigned int i, calls, connects, ok = 0;

	srv.credits = 8;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting eight credits");
	calls = srv.calls;
	connects = fake_connects;
	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	for (i = 0; i < 4; i++) {
		a[i] = (struct echoer){ .cl = cl, .id = i + 1, .calls = 1,
					.flags = F_NEVER, .timeout_ms = 20000 };
		CHECK(pthread_create(&a[i].thread, NULL, echo_run, &a[i]) == 0,
		      "caller %u", i);
	}
	while (fake_read(&srv.calls) < calls + 4)
		(void)poll(NULL, 0, 1);
	fake_kill(ct->ct_ep);
	for (i = 0; i < 4; i++) {
		b[i] = (struct echoer){ .cl = cl, .id = i + 11, .calls = 20,
					.timeout_ms = 10000 };
		CHECK(pthread_create(&b[i].thread, NULL, echo_run, &b[i]) == 0,
		      "caller %u after the loss", i);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(a[i].thread, NULL);
		pthread_join(b[i].thread, NULL);
		ok += b[i].ok;
	}
	for (i = 0; i < 4; i++)
		CHECK(a[i].last == RPC_CANTRECV && a[i].err.re_status == RPC_CANTRECV,
		      "call %u in flight on the lost connection failed (%s), not timed out",
		      i, clnt_sperrno(a[i].last));
	CHECK_EQ_U(ok, 80, "the 80 calls after it were answered");
	CHECK_EQ_U(fake_connects, connects + 1, "on one new connection");
	CHECK_EQ_U(ct->ct_outstanding, 0, "no credit held after");
	destroy_client(cl);
}

/*
 * A connection made again while other threads call: the connect may take
 * up to the connect timeout, and the others' calls keep their own,
 * shorter, timeouts meanwhile; clnt_control() answers at once.
 */
static void
test_renew_others_go_on(void)
{
	CLIENT *cl = make_client(8, 4096);
	struct ct_rdma *ct = ct_of(cl);
	struct timeval tv;
	struct echoer a;
	unsigned int connects;
	int64_t t0, took;

	srv.credits = 8;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting eight credits");
	connects = fake_connects;
	ct->ct_connect_ms = 5000;
	fake_kill(ct->ct_ep);
	fake_connect_ms = 2500;
	a = (struct echoer){ .cl = cl, .id = 1, .calls = 1, .timeout_ms = 20000 };
	CHECK(pthread_create(&a.thread, NULL, echo_run, &a) == 0, "the renewing caller");
	while (!fake_read(&fake_connecting))
		(void)poll(NULL, 0, 1);

	t0 = ep_now_ms();
	CHECK(clnt_control(cl, CLGET_TIMEOUT, (char *)&tv), "clnt_control during the connect");
	took = ep_now_ms() - t0;
	CHECK(took < 1000, "... answered at once (%lld ms)", (long long)took);
	t0 = ep_now_ms();
	CHECK_EQ_U(null_call(cl, 200), RPC_TIMEDOUT,
		   "a call of 200 ms during the connect times out");
	took = ep_now_ms() - t0;
	CHECK(took < 1500, "... within its own timeout, not the connect's (%lld ms)",
	      (long long)took);
	CHECK(fake_read(&fake_connecting), "the connect was still under way");

	pthread_join(a.thread, NULL);
	CHECK_EQ_U(a.ok, 1, "the renewing caller's call was answered");
	CHECK_EQ_U(fake_connects, connects + 1, "on one new connection");
	fake_connect_ms = 0;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "and the next call too");
	CHECK_EQ_U(ct->ct_outstanding, 0, "no credit held after");
	destroy_client(cl);
}

/*
 * poll_us: a wait polls the completion queue that long before it sleeps,
 * and a CLIENT between calls polls nothing.
 */
static void
test_polling(void)
{
	unsigned int polls, sleeps;
	CLIENT *cl;

	poll_us = 0;
	cl = make_client(4, 4096);
	srv.credits = 4;
	srv.mode = SRV_HOLD;
	polls = fake_busy_polls;
	sleeps = fake_sleeps;
	CHECK_EQ_U(null_call(cl, 100), RPC_TIMEDOUT, "poll_us 0: an unanswered call");
	CHECK(fake_busy_polls - polls <= 4, "polled the queue once or so (%u)",
	      fake_busy_polls - polls);
	CHECK(fake_sleeps - sleeps >= 1, "then slept");
	destroy_client(cl);

	poll_us = 30000;
	cl = make_client(4, 4096);
	srv.credits = 4;
	srv.mode = SRV_HOLD;
	polls = fake_busy_polls;
	CHECK_EQ_U(null_call(cl, 100), RPC_TIMEDOUT, "poll_us 30 ms: an unanswered call");
	CHECK(fake_busy_polls - polls >= 100, "polled the queue over and over (%u)",
	      fake_busy_polls - polls);
	srv.mode = SRV_REPLY;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "an answered call");
	polls = fake_busy_polls;
	(void)poll(NULL, 0, 50);
	CHECK_EQ_U(fake_busy_polls - polls, 0, "nothing polled between calls");
	destroy_client(cl);
	poll_us = 0;
}

/*
 * A CLIENT whose replies come later than poll_us stops polling after
 * EP_SPIN_MISSES windows in vain, looks again every EP_SPIN_PROBE-th
 * wait, and polls again once a reply is found by polling.
 */
static void
test_polling_adapts(void)
{
	unsigned int polls, i, polled = 0;
	struct ct_rdma *ct;
	CLIENT *cl;

	poll_us = 2000;
	cl = make_client(4, 4096);
	ct = ct_of(cl);
	srv.credits = 4;
	srv.mode = SRV_HOLD;
	for (i = 0; i < EP_SPIN_MISSES; i++) {
		polls = fake_busy_polls;
		CHECK_EQ_U(null_call(cl, 30), RPC_TIMEDOUT, "an unanswered call (%u)", i);
		CHECK(fake_busy_polls - polls >= 20, "... polled its window (%u polls)",
		      fake_busy_polls - polls);
	}
	CHECK_EQ_U(ct->ct_spin.misses, EP_SPIN_MISSES, "that many windows in vain");
	for (i = 0; i < 2 * EP_SPIN_PROBE; i++) {
		polls = fake_busy_polls;
		CHECK_EQ_U(null_call(cl, 30), RPC_TIMEDOUT, "an unanswered call, asleep");
		polled += fake_busy_polls - polls >= 20;
	}
	CHECK_EQ_U(polled, 2, "then one wait in EP_SPIN_PROBE polled");
	srv.mode = SRV_REPLY;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "an answered call");
	CHECK_EQ_U(ct->ct_spin.misses, 0, "its reply was found by polling");
	srv.mode = SRV_HOLD;
	polls = fake_busy_polls;
	CHECK_EQ_U(null_call(cl, 30), RPC_TIMEDOUT, "an unanswered call");
	CHECK(fake_busy_polls - polls >= 20, "polled its window again (%u polls)",
	      fake_busy_polls - polls);
	destroy_client(cl);
	poll_us = 0;
}

/*
 * Pool memory for one call at a time (a small memory-lock limit): a
 * thread refused buffers while another thread's call holds its own gives
 * back what it got and waits for that call to return, instead of failing
 * with ENOMEM.  A call alone that is refused fails at once.
 */
static void
test_memory_for_one_call(void)
{
	CLIENT *cl = make_client(8, 4096);
	struct ct_rdma *ct = ct_of(cl);
	struct echoer e[4];
	unsigned int ok, refused;
	uint32_t got = 0;

	srv.credits = 8;
	CHECK_EQ_U(null_call(cl, 5000), RPC_SUCCESS, "a call granting eight credits");
	fake_pool_limit = fake_pool_bytes + 1;	/* nothing more */
	CHECK_EQ_U(echo_call(cl, 1, &got, 5000), RPC_CANTSEND,
		   "a call alone without memory fails");
	CHECK_EQ_U(ct->ct_error.re_errno, ENOMEM, "... with ENOMEM");
	CHECK_EQ_U(echo_call(cl, 2, &got, 5000), RPC_CANTSEND, "and again");
	fake_pool_limit = 0;
	fake_pool_peak = 0;
	CHECK_EQ_U(echo_call(cl, 3, &got, 5000), RPC_SUCCESS, "one call's buffers");
	CHECK(got == 3 && fake_pool_bytes == 0,
	      "... came back to the pool after it (%llu octets left)",
	      (unsigned long long)fake_pool_bytes);
	/*
	 * Room for one call's buffers and part of another's.  The server
	 * holds each call until it has two or this thread finds it alone
	 * for 20 ms: the others' calls meanwhile find no memory.
	 */
	fake_pool_limit = 2 * fake_pool_peak - 1;
	refused = fake_pool_refused;
	srv.batch = 2;
	srv.max_inflight = 0;
	echoers_init(e, 4, cl, 10);
	ok = run_echoers_batched(cl, e, 4);
	srv.batch = 0;
	CHECK_EQ_U(ok, 40, "40 calls of 4 threads answered, none failed");
	CHECK(fake_pool_refused > refused, "the pool refused buffers (%u times)",
	      fake_pool_refused - refused);
	CHECK_EQ_U(srv.max_inflight, 1, "one call in flight at a time");
	CHECK_EQ_U(violations, 0, "the fake saw no violation");
	fake_pool_limit = 0;
	destroy_client(cl);
}

/*
 * Version Two asked by several threads at once (clnt_rdma_v2.c): a
 * batched call granted the credits before any waited call settled the
 * version, so eight threads' first calls all go in Version Two to a
 * server of Version One only.  Each refused call goes again, same XID,
 * in Version One: every call is served once, none fails.
 */
static void
test_concurrent_first_calls(void)
{
	struct timeval zero = { 0, 0 };
	struct echoer e[8];
	unsigned int i, ok = 0, wrong = 0, c;
	CLIENT *cl;

	rpcrdma_peers_forget();
	cl = make_client_v(8, 4096, 0, RPCRDMA_WANT_V2);
	srv.credits = 8;
	CHECK_EQ_U(clnt_call(cl, NULLPROC, XDRPROC(xdr_void), NULL, NULL, NULL, zero),
		   RPC_SUCCESS, "a batched call first, in Version One");
	CHECK_EQ_U(srv.v2_calls, 0, "... which asks nothing");
	srv.batch = 8;
	c = srv.calls;
	echoers_init(e, 8, cl, 5);
	run_echoers(e, 8);
	for (i = 0; i < 8; i++) {
		ok += e[i].ok;
		wrong += e[i].wrong;
	}
	CHECK_EQ_U(ok, 40, "40 calls of 8 threads succeed");
	CHECK_EQ_U(wrong, 0, "each with its own result");
	CHECK_EQ_U(srv.calls - c, 40, "each served once, in Version One");
	CHECK(srv.v2_calls > 1 && srv.v2_calls <= 8,
	      "several asked Version Two at once (%u)", srv.v2_calls);
	CHECK_EQ_U(ct_of(cl)->ct_vstate, CT_V1, "the connection is in Version One");
	destroy_client(cl);
	srv.batch = 0;
}

int
main(void)
{
	test_concurrent_calls();
	test_concurrent_credits();
	test_concurrent_timeout();
	test_destroy_waits_all();
	test_concurrent_renew();
	test_renew_others_go_on();
	test_polling();
	test_polling_adapts();
	test_memory_for_one_call();
	test_concurrent_first_calls();
	return check_done();
}
