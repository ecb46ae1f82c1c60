/*
 * The exported names.  Only the functions below leave the library (see
 * librpcrdma_shim.map); each is a one-line forward into the policy layer.
 *
 * libtirpc reaches these through its own PLT: clnt_create(), clnt_tp_create(),
 * clnt_tli_create() and clnttcp_create() all end in clnt_vc_create();
 * svc_create(), svc_tp_create(), svc_tli_create() and svctcp_create() end in
 * svc_vc_create().  An LD_PRELOAD definition therefore catches them all.
 * The first one loads the core module (stub.c); should that fail, libtirpc's
 * own function runs.
 */
#include "module.h"
#include "shim.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

SHIM_EXPORT CLIENT *
clnt_vc_create(const int fd, const struct netbuf *raddr, const rpcprog_t prog,
	       const rpcvers_t vers, u_int sendsz, u_int recvsz)
{
	const struct shim_core_ops *core = shim_core();

	if (core)
		return core->clnt_vc_create(fd, raddr, prog, vers, sendsz, recvsz);
	return shim_stub()->real_clnt_vc_create(fd, raddr, prog, vers, sendsz,
						recvsz);
}

SHIM_EXPORT SVCXPRT *
svc_vc_create(const int fd, u_int sendsz, u_int recvsz)
{
	const struct shim_core_ops *core = shim_core();

	if (core)
		return core->svc_vc_create(fd, sendsz, recvsz);
	return shim_stub()->real_svc_vc_create(fd, sendsz, recvsz);
}
