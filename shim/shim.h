/*
 * rpcrdma-shim: interposition layer.
 *
 * The exported hooks (preload.c) forward to the policy here (route.c),
 * which either builds an RPC-over-RDMA transport (transport/) or hands the
 * call to the real libtirpc function, found once with dlsym(RTLD_NEXT).
 */
#ifndef SHIM_SHIM_H
#define SHIM_SHIM_H

#include <rpc/rpc.h>

#include "config/config.h"

/* The real libtirpc entry points, filled once by shim_init(). */
struct shim_real {
	CLIENT *(*clnt_vc_create)(int fd, const struct netbuf *raddr,
				  rpcprog_t prog, rpcvers_t vers,
				  u_int sendsz, u_int recvsz);
	SVCXPRT *(*svc_vc_create)(int fd, u_int sendsz, u_int recvsz);
};

extern struct shim_real shim_real;

/*
 * Every hook may be the first call into the library: each calls this.  It
 * fills the table, loads the configuration and opens the log, once.
 */
void shim_init(void);

/* The configuration loaded by shim_init(); read-only afterwards. */
const struct shim_config *shim_cfg(void);

/*
 * Recursion guard: true while the shim itself is creating a transport, so
 * that anything libtirpc does underneath goes straight to the real calls.
 */
extern __thread int shim_busy;

CLIENT *shim_clnt_vc_create(int fd, const struct netbuf *raddr,
			    rpcprog_t prog, rpcvers_t vers,
			    u_int sendsz, u_int recvsz);
SVCXPRT *shim_svc_vc_create(int fd, u_int sendsz, u_int recvsz);

#endif
