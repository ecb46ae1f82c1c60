/*
 * rdma-peer: RPC messages (RFC 5531) as the peer builds and names them.
 */
#include <string.h>

#include "peer.h"

/* An RPC call with AUTH_NONE; returns its octets, or 0 when it does not fit. */
size_t
encode_call(uint8_t *p, size_t room, uint32_t xid, uint32_t prog,
	    uint32_t vers, uint32_t proc, xdrproc_t xargs, void *args)
{
	struct rpc_msg m;
	size_t n = 0;
	XDR x;

	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = prog;
	m.rm_call.cb_vers = vers;
	m.rm_call.cb_proc = proc;
	m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, (char *)p, (u_int)room, XDR_ENCODE);
	if (xdr_callmsg(&x, &m) && (*xargs)(&x, args))
		n = xdr_getpos(&x);
	xdr_destroy(&x);
	return n;
}

const char *
accept_stat_name(enum accept_stat st)
{
	switch (st) {
	case SUCCESS:
		return "SUCCESS";
	case PROG_UNAVAIL:
		return "PROG_UNAVAIL";
	case PROG_MISMATCH:
		return "PROG_MISMATCH";
	case PROC_UNAVAIL:
		return "PROC_UNAVAIL";
	case GARBAGE_ARGS:
		return "GARBAGE_ARGS";
	case SYSTEM_ERR:
		return "SYSTEM_ERR";
	}
	return "unknown";
}
