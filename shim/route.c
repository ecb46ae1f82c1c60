/*
 * Policy: decide, per transport being created, whether it runs over
 * RPC-over-RDMA or stays the real libtirpc TCP transport.
 */
#include "shim.h"

CLIENT *
shim_clnt_vc_create(int fd, const struct netbuf *raddr, rpcprog_t prog,
		    rpcvers_t vers, u_int sendsz, u_int recvsz)
{
	shim_init();
	return shim_real.clnt_vc_create(fd, raddr, prog, vers, sendsz, recvsz);
}

SVCXPRT *
shim_svc_vc_create(int fd, u_int sendsz, u_int recvsz)
{
	shim_init();
	return shim_real.svc_vc_create(fd, sendsz, recvsz);
}
