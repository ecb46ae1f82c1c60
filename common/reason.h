/*
 * Why a transport did not run over RDMA: one reason per decision, shared
 * by the log, the statistics file and rpcrdma-stat(1).
 */
#ifndef COMMON_REASON_H
#define COMMON_REASON_H

/* Why an attempt did not give an RDMA connection (for logs and stats). */
enum rdma_fail {
	RDMA_FAIL_NONE = 0,
	RDMA_FAIL_NO_DEVICE,	/* no RDMA device or RDMA-CM on this system */
	RDMA_FAIL_NOT_RDMA,	/* the address is not reached via an RDMA device */
	RDMA_FAIL_REFUSED,	/* the peer has no RDMA listener, or rejected */
	RDMA_FAIL_UNREACHABLE,	/* RDMA-CM could not reach the peer */
	RDMA_FAIL_TIMEOUT,	/* no answer within the connect timeout */
	RDMA_FAIL_ERROR,	/* local failure (resources) */
	RDMA_FAIL_NEGCACHE,	/* the peer failed recently: not tried */
	RDMA_FAIL_CONFIG,	/* the configuration keeps it on TCP */
	RDMA_FAIL_MEMLOCK,	/* memory could not be registered (ulimit -l) */
	RDMA_FAIL_MAX
};

const char *rdma_fail_str(enum rdma_fail why);
/* A short token for machine-readable output ("no-device", ...). */
const char *rdma_fail_token(enum rdma_fail why);

#endif
