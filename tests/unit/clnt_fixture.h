/*
 * The clients of the client's unit tests (test_clnt_rdma.c,
 * test_clnt_threads.c): made over the fake endpoint (fake_ep.h), checked
 * when destroyed.  Header-only, as check.h, whose counters it uses.
 */
#ifndef TESTS_UNIT_CLNT_FIXTURE_H
#define TESTS_UNIT_CLNT_FIXTURE_H

#include <rpc/rpc.h>

#include "check.h"
#include "clnt_rdma.h"
#include "clnt_rdma_int.h"
#include "fake_ep.h"
#include "rpcrdma_neg.h"
#include "xdr_grow.h"

/* poll_us and max_reply of the clients made next. */
static unsigned int poll_us;
static uint64_t max_reply = 64 << 10;

/*
 * A client on descriptor fd (-1: none) whose calls offer a Write chunk of
 * write_chunk octets (0: none), set to RPC-over-RDMA versions want
 * (rpcrdma_neg.h).
 */
static inline CLIENT *
make_client_fd(int fd, unsigned int credits, uint32_t send_max,
	       uint64_t write_chunk, unsigned int want)
{
	struct clnt_rdma_params p = {
		.inline_send = 4096,
		.inline_recv = 4096,
		.credits = credits,
		.connect_timeout_ms = 1000,
		.max_reply = max_reply,
		.write_chunk = write_chunk,
		.remote_inv = true,
		.poll_us = poll_us,
		.rpcrdma_want = want,
	};
	struct netbuf nb = {
		.buf = &fake_addr,
		.len = sizeof(fake_addr),
		.maxlen = sizeof(fake_addr),
	};
	struct clnt_rdma_info info;
	enum rdma_fail why;
	CLIENT *cl;
	int err;

	fake_reset(send_max);
	cl = clnt_rdma_create(fd, &nb, (struct sockaddr *)&fake_addr, 0x20000099,
			      1, 0, 0, &p, &info, &why, &err);
	CHECK(cl != NULL, "client created over the fake endpoint (send_max %u)",
	      send_max);
	return cl;
}

static inline CLIENT *
make_client_v(unsigned int credits, uint32_t send_max, uint64_t write_chunk,
	      unsigned int want)
{
	return make_client_fd(-1, credits, send_max, write_chunk, want);
}

static inline CLIENT *
make_client_wc(unsigned int credits, uint32_t send_max, uint64_t write_chunk)
{
	return make_client_v(credits, send_max, write_chunk, RPCRDMA_WANT_V1);
}

static inline CLIENT *
make_client(unsigned int credits, uint32_t send_max)
{
	return make_client_wc(credits, send_max, 0);
}

static inline void
destroy_client(CLIENT *cl)
{
	clnt_destroy(cl);
	CHECK(mws_alive == 0 && pbufs_alive == 0,
	      "destroyed: no window (%d) or pool buffer (%d) left", mws_alive,
	      pbufs_alive);
	CHECK_EQ_U(violations, 0, "the fake saw no violation");
}

static inline struct ct_rdma *
ct_of(CLIENT *cl)
{
	return cl->cl_private;
}

/*
 * Results that decode nothing, through a function the client cannot see
 * into: it offers a Reply chunk, as for any reply of unknown size
 * (xdr_void results offer none, test_clnt_rdma.c test_void_results).
 */
static inline bool_t
xdr_unknown_res(XDR *xdrs, void *res)
{
	(void)xdrs;
	(void)res;
	return TRUE;
}

static inline enum clnt_stat
null_call(CLIENT *cl, int timeout_ms)
{
	struct timeval tv = {
		.tv_sec = timeout_ms / 1000,
		.tv_usec = (timeout_ms % 1000) * 1000,
	};

	return clnt_call(cl, NULLPROC, XDRPROC(xdr_void), NULL,
			 XDRPROC(xdr_unknown_res), NULL, tv);
}

static inline unsigned int
slots_in(const struct ct_rdma *ct, enum slot_state state)
{
	return ct_slots_in(ct, state);
}

#endif
