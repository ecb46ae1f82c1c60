/*
 * The exported names.  Only the functions below leave the library (see
 * librpcrdma_shim.map); each is a one-line forward into the policy layer.
 *
 * libtirpc reaches these through its own PLT: clnt_create(), clnt_tp_create(),
 * clnt_tli_create() and clnttcp_create() all end in clnt_vc_create();
 * svc_create(), svc_tp_create(), svc_tli_create() and svctcp_create() end in
 * svc_vc_create().  An LD_PRELOAD definition therefore catches them all.
 */
#include "shim.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

SHIM_EXPORT CLIENT *
clnt_vc_create(const int fd, const struct netbuf *raddr, const rpcprog_t prog,
	       const rpcvers_t vers, u_int sendsz, u_int recvsz)
{
	return shim_clnt_vc_create(fd, raddr, prog, vers, sendsz, recvsz);
}

SHIM_EXPORT SVCXPRT *
svc_vc_create(const int fd, u_int sendsz, u_int recvsz)
{
	return shim_svc_vc_create(fd, sendsz, recvsz);
}
