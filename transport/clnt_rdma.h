/*
 * An RPC-over-RDMA Version One client transport behind libtirpc's CLIENT
 * interface: what clnt_vc_create() returns when the peer speaks RDMA.
 */
#ifndef TRANSPORT_CLNT_RDMA_H
#define TRANSPORT_CLNT_RDMA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "common/reason.h"

struct clnt_rdma_params {
	uint32_t inline_send;
	uint32_t inline_recv;
	unsigned int credits;		/* receives posted, credits requested */
	int connect_timeout_ms;
	uint64_t max_reply;		/* Reply chunk offered, octets */
	uint64_t write_chunk;		/* Write chunk offered, 0: none */
	uint64_t max_pinned;		/* the process's budget, 0: default */
	bool remote_inv;
	unsigned int poll_us;		/* busy polling before a sleep */
	unsigned int rpcrdma_want;	/* enum rpcrdma_want (rpcrdma_neg.h) */
};

/* What a connection negotiated, for the decision log and statistics. */
struct clnt_rdma_info {
	uint32_t send_max;		/* client-to-server inline threshold */
	uint32_t recv_max;		/* server-to-client inline threshold */
	unsigned int credits;		/* last granted (1 before any reply) */
	bool rinv;
	bool peer_pdata;		/* the peer sent RFC 8797 private data */
	uint32_t rpcrdma_vers;		/* 2: Version Two offered, 1: One only */
};

/*
 * Connect to dst over RDMA and return a CLIENT for prog/vers, published in
 * the statistics (rpcrdma-stat) until it is destroyed, with what the
 * connection negotiated in *info.  fd and raddr are what libtirpc passed
 * to clnt_vc_create(): fd is kept (returned by CLGET_FD, closed on destroy
 * after CLSET_FD_CLOSE) but never connected; raddr is what
 * CLGET_SERVER_ADDR/CLGET_SVC_ADDR report.  On failure returns NULL with
 * *why and *err set, and leaves rpc_createerr alone so the caller can fall
 * back to TCP.
 */
CLIENT *clnt_rdma_create(int fd, const struct netbuf *raddr,
			 const struct sockaddr *dst, rpcprog_t prog,
			 rpcvers_t vers, u_int sendsz, u_int recvsz,
			 const struct clnt_rdma_params *params,
			 struct clnt_rdma_info *info,
			 enum rdma_fail *why, int *err);

/* True when cl was made by clnt_rdma_create(). */
bool clnt_is_rdma(const CLIENT *cl);

/*
 * fork(): the lock of what the clients learnt of their peers' segment
 * limits, held across it.  A leaf: nothing is taken under it.
 */
void clnt_rdma_fork_lock(void);
void clnt_rdma_fork_unlock(void);

#endif
