/*
 * rpcrdma-shim: interposition layer.
 *
 * The exported hooks (preload.c) forward to the policy here (route.c, in
 * the preloaded library too: module.h), which either builds an
 * RPC-over-RDMA transport (transport/, the RDMA module) or hands the call
 * to the real libtirpc function, found once with dlsym(RTLD_NEXT).
 */
#ifndef SHIM_SHIM_H
#define SHIM_SHIM_H

#include <rpc/rpc.h>

#include "config/shim_config.h"

struct shim_stub;
struct shim_fd_ops;
struct shim_rdma_ops;

/*
 * The real libtirpc functions, filled once by shim_init() (stub.c): the
 * library does not link libtirpc, so that a program without RPC never
 * loads it.
 */
struct shim_real {
	CLIENT *(*clnt_vc_create)(int fd, const struct netbuf *raddr,
				  rpcprog_t prog, rpcvers_t vers,
				  u_int sendsz, u_int recvsz);
	SVCXPRT *(*svc_vc_create)(int fd, u_int sendsz, u_int recvsz);
	void (*xprt_unregister)(SVCXPRT *xprt);
	/* &rpc_createerr (a macro: the struct's name cannot be written) */
	__typeof__(rpc_createerr) *(*createerr)(void);
};

extern struct shim_real shim_real;

/* Fill shim_real, once; aborts when libtirpc's functions are not found. */
void shim_real_tirpc(void);

/*
 * The preloaded library (stub.c).  The real socket and status calls, for
 * descriptors that are not the shim's: filled on first use, so that a
 * program that never makes an RPC call pays nothing for them.  Status
 * buffers are untyped here: struct stat's name depends on
 * _FILE_OFFSET_BITS.
 */
struct shim_real_fd {
	int (*getsockopt)(int fd, int level, int name, void *val,
			  socklen_t *len);
	int (*setsockopt)(int fd, int level, int name, const void *val,
			  socklen_t len);
	int (*getsockname)(int fd, struct sockaddr *sa, socklen_t *len);
	int (*getpeername)(int fd, struct sockaddr *sa, socklen_t *len);
	int (*fstat)(int fd, void *st);
	int (*fstat64)(int fd, void *st);
	int (*fxstat)(int ver, int fd, void *st);
	int (*fxstat64)(int ver, int fd, void *st);
};

const struct shim_real_fd *shim_real_fd(void);

/* The state handed to the RDMA module, with the directory it is in. */
struct shim_stub *shim_stub(void);

/* The RDMA module's answers for its descriptors; NULL until it is loaded. */
const struct shim_fd_ops *shim_fd_ops(void);

/*
 * The RDMA module (core.c), loaded by the first RDMA attempt; NULL, with
 * the reason logged once, when it cannot be.
 */
const struct shim_rdma_ops *shim_rdma(void);

/*
 * Every hook may be the first call into the library: each calls this.  It
 * fills the table, loads the configuration and opens the log, once.
 */
void shim_init(void);

/* fork() handlers (fork.c), registered once by shim_init(). */
void shim_fork_init(void);

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
