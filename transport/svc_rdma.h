/*
 * RPC-over-RDMA Version One server transports behind libtirpc's SVCXPRT.
 *
 * Next to a TCP rendezvous made by svc_vc_create(), an RDMA-CM listener is
 * registered with xprt_register(); each accepted connection becomes its own
 * SVCXPRT whose xp_fd is the connection's completion channel.  The
 * program's unmodified svc_run() (or its own poll loop calling
 * svc_getreq_poll()) drives them, and calls are dispatched through
 * libtirpc's normal path to the program's service routines.
 */
#ifndef TRANSPORT_SVC_RDMA_H
#define TRANSPORT_SVC_RDMA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "common/reason.h"
#include "common/stats.h"

struct svc_rdma_params {
	uint32_t inline_send;
	uint32_t inline_recv;
	unsigned int credits;		/* receives posted and credits granted */
	uint64_t max_call;		/* largest call accepted, octets */
	uint64_t max_pinned;		/* the process's budget, 0: default */
	bool remote_inv;
	unsigned int poll_us;		/* busy polling for a connection's next call */
	unsigned int defer_wait_ms;	/* a call answered late holds the next, 0: no */
	unsigned int rpcrdma_want;	/* enum rpcrdma_want (rpcrdma_neg.h) */
};

/*
 * Add an RDMA listener on addr (address and RDMA port) next to the TCP
 * rendezvous tcp_xprt.  The listener listens as long as tcp_xprt lives:
 * destroying tcp_xprt (svc_destroy) stops it listening, and its
 * connections, like the TCP connections libtirpc accepted, are served until
 * they end; the listener goes with the last of them.
 * Accepted connections are counted in stats, the rendezvous' statistics
 * slot (owned by the caller, who closes it when tcp_xprt goes; NULL: not
 * counted).  Returns 0, or a negative errno with *why set.
 */
int svc_rdma_listen(SVCXPRT *tcp_xprt, const struct sockaddr *addr,
		    u_int sendsz, u_int recvsz,
		    const struct svc_rdma_params *params,
		    struct shim_stats_conn *stats, enum rdma_fail *why);

#endif
