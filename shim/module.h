/*
 * The library in two parts, so that a process pays only for what it
 * uses:
 *
 *   librpcrdma_shim.so       preloaded, libc only: the exported names;
 *                            configuration, decision, log, statistics,
 *                            set up by the first transport libtirpc makes
 *   librpcrdma_shim_rdma.so  loaded by the first RDMA attempt: the
 *                            transport, libibverbs and librdmacm
 *
 * The RDMA module is dlopen()ed RTLD_LOCAL from the directory of the
 * preloaded library and exports one name, its entry point; everything else
 * crosses over through the tables below, so that nothing of ours enters
 * the program's namespace.
 */
#ifndef SHIM_MODULE_H
#define SHIM_MODULE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <rpc/rpc.h>

#include "common/log.h"
#include "common/log_once.h"
#include "common/reason.h"
#include "common/stats.h"
#include "transport/clnt_rdma.h"
#include "transport/svc_rdma.h"

#define SHIM_RDMA_MODULE "librpcrdma_shim_rdma.so"
#define SHIM_RDMA_ENTRY "rpcrdma_shim_rdma_init"

/*
 * What the RDMA module answers for its own descriptors: the stand-in
 * sockets of server transports and RDMA clients (transport/sockfd.h) and
 * RDMA descriptors refused to changed credentials (transport/cred.h).
 * Until it is loaded there are none, and every call is the real one.
 */
struct shim_fd_ops {
	bool (*sockfd_owned)(int fd);
	int (*getsockopt)(int fd, int level, int name, void *val,
			  socklen_t *len);
	int (*setsockopt)(int fd, int level, int name, const void *val,
			  socklen_t len);
	int (*getsockname)(int fd, struct sockaddr *sa, socklen_t *len);
	int (*getpeername)(int fd, struct sockaddr *sa, socklen_t *len);
	void (*fix_stat)(void *st);
	/* write(): the slow paths are taken only while these are nonzero. */
	const unsigned int *nredirect;
	const unsigned int *capturing;
	bool (*write_redirected)(int fd);
	ssize_t (*write_redirect)(int fd, const void *buf, size_t len,
				  bool *done);
	ssize_t (*write_refused)(int fd, const void *buf, size_t len);
	void (*write_seen)(int fd, const void *buf, size_t len, ssize_t ret);
};

/* The preloaded library's side, handed to the RDMA module. */
struct shim_stub {
	const char *dir;	/* where the module is, with a final '/' */
	/* Set once by the RDMA module (release), read by the hooks (acquire). */
	const struct shim_fd_ops *fd_ops;
};

/* What the RDMA module uses of the core: the log and the statistics. */
struct shim_core_services {
	void (*vlog)(enum shim_log_level level, const char *fmt, va_list ap);
	bool (*log_enabled)(enum shim_log_level level);
	bool (*log_once)(enum log_once_kind kind, const struct peer_key *peer,
			 uint64_t tag);
	struct shim_stats_conn *(*stats_open)(enum shim_stats_role role,
					      enum shim_stats_transport transport,
					      const struct sockaddr *peer,
					      const struct sockaddr *local);
	void (*stats_publish)(struct shim_stats_conn *s);
	void (*stats_close)(struct shim_stats_conn *s);
	void (*stats_pinned)(uint64_t used, uint64_t total, uint64_t peak,
			     uint64_t refused);
};

/* What the core asks of the RDMA module once it is loaded. */
struct shim_rdma_ops {
	CLIENT *(*clnt_create)(int fd, const struct netbuf *raddr,
			       const struct sockaddr *dst, rpcprog_t prog,
			       rpcvers_t vers, u_int sendsz, u_int recvsz,
			       const struct clnt_rdma_params *params,
			       struct clnt_rdma_info *info,
			       enum rdma_fail *why, int *err);
	int (*svc_listen)(SVCXPRT *tcp_xprt, const struct sockaddr *addr,
			  u_int sendsz, u_int recvsz,
			  const struct svc_rdma_params *params,
			  struct shim_stats_conn *stats, enum rdma_fail *why);
};

/* Settings the RDMA module takes once, when it is loaded. */
struct shim_rdma_setup {
	bool fork_init;			/* ibv_fork_init() before any registration */
	const uint32_t *no_placement;	/* programs without direct placement */
	size_t n_no_placement;
};

typedef const struct shim_rdma_ops *(*shim_rdma_entry)(
	struct shim_stub *stub, const struct shim_core_services *core,
	const struct shim_rdma_setup *setup);
const struct shim_rdma_ops *rpcrdma_shim_rdma_init(
	struct shim_stub *stub, const struct shim_core_services *core,
	const struct shim_rdma_setup *setup);

#endif
