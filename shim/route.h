/*
 * What route.c shares with route_upgrade.c: the client's transports, the
 * decision lines and the negative caches.
 */
#ifndef SHIM_ROUTE_H
#define SHIM_ROUTE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rpc/rpc.h>

#include "common/reason.h"
#include "transport/clnt_rdma.h"

/*
 * libtirpc's TCP CLIENT, in the statistics; why: RDMA_FAIL_NONE, or the
 * fallback counted.  lazy_after: nonzero when the process has no
 * statistics file yet and this CLIENT is not to make it before it has made
 * more than lazy_after calls (hooks.h).
 */
CLIENT *client_tcp(int fd, const struct netbuf *raddr, rpcprog_t prog,
		   rpcvers_t vers, u_int sendsz, u_int recvsz,
		   enum rdma_fail why, unsigned int lazy_after);

/* The RDMA CLIENT (the RDMA module loaded first), or NULL with why and err. */
CLIENT *client_rdma(int fd, const struct netbuf *raddr,
		    const struct sockaddr *dst, rpcprog_t prog, rpcvers_t vers,
		    u_int sendsz, u_int recvsz,
		    const struct clnt_rdma_params *params,
		    struct clnt_rdma_info *info, enum rdma_fail *why, int *err);

void log_client_rdma(const struct sockaddr *dst, uint32_t prog, uint32_t vers,
		     const struct clnt_rdma_info *info, unsigned int credits);
void log_client_tcp(const struct sockaddr *dst, uint32_t prog, uint32_t vers,
		    enum rdma_fail why, const char *detail);

/*
 * True when peer failed recently here, or in another process of this user
 * (then remembered here too, and described in detail for the log).
 */
bool negative_lookup(const struct sockaddr *peer, unsigned int ttl_s,
		     enum rdma_fail *why, char *detail, size_t len);

/* Remember that peer failed, here and for the other processes of the user. */
void negative_add(const struct sockaddr *peer, enum rdma_fail why,
		  unsigned int ttl_s);

/*
 * upgrade = background: libtirpc's TCP CLIENT now, wrapped in one that
 * moves to RDMA once it is up (transport/clnt_upgrade.h).  *handled false
 * (out of memory before anything was made): the caller decides as with
 * upgrade = wait; else the answer, NULL when libtirpc's TCP CLIENT failed.
 */
CLIENT *route_upgrade_client(int fd, const struct netbuf *raddr,
			     const struct sockaddr *rdst, rpcprog_t prog,
			     rpcvers_t vers, u_int sendsz, u_int recvsz,
			     const struct clnt_rdma_params *params,
			     unsigned int negative_cache_s, bool *handled);

#endif
