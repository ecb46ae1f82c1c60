/*
 * The RDMA module's entry (shim/module.h): loaded by the preloaded
 * library on the first RDMA attempt, it brings libibverbs and librdmacm
 * with it.  The log and the statistics stay the preloaded library's (the
 * core's): the names the transport calls are defined here as forwards to
 * the core's table, so that one log sink, one once-per-peer table and one
 * statistics file serve both.
 */
#include <errno.h>
#include <pthread.h>

#include <infiniband/verbs.h>

#include "common/log.h"
#include "common/log_once.h"
#include "common/stats.h"
#include "cred.h"
#include "rdma_dev.h"
#include "rpcrdma_neg.h"
#include "shim/module.h"
#include "sockfd.h"
#include "ulb.h"

#define SHIM_ENTRY __attribute__((visibility("default")))

static const struct shim_core_services *core;

/* ------------------------------------------------------------------ */
/* The core's log and statistics                                       */
/* ------------------------------------------------------------------ */

bool
shim_log_enabled(enum shim_log_level level)
{
	return core->log_enabled(level);
}

void
shim_log(enum shim_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	core->vlog(level, fmt, ap);
	va_end(ap);
}

bool
log_once(enum log_once_kind kind, const struct peer_key *peer, uint64_t tag)
{
	return core->log_once(kind, peer, tag);
}

struct shim_stats_conn *
shim_stats_open(enum shim_stats_role role, enum shim_stats_transport transport,
		const struct sockaddr *peer, const struct sockaddr *local)
{
	return core->stats_open(role, transport, peer, local);
}

void
shim_stats_publish(struct shim_stats_conn *s)
{
	core->stats_publish(s);
}

void
shim_stats_close(struct shim_stats_conn *s)
{
	core->stats_close(s);
}

void
shim_stats_pinned(uint64_t used, uint64_t total, uint64_t peak,
		  uint64_t refused)
{
	core->stats_pinned(used, total, peak, refused);
}

/* ------------------------------------------------------------------ */
/* fork(): this module's locks, taken before the core's                */
/* ------------------------------------------------------------------ */

static void
fork_prepare(void)
{
	cred_fork_prepare();
	sockfd_fork_lock();
	rdma_dev_fork_lock();
	clnt_rdma_fork_lock();
	rpcrdma_peers_fork_lock();
}

static void
fork_parent(void)
{
	rpcrdma_peers_fork_unlock();
	clnt_rdma_fork_unlock();
	rdma_dev_fork_unlock();
	sockfd_fork_unlock();
	cred_fork_parent();
}

static void
fork_child(void)
{
	rpcrdma_peers_fork_unlock();
	clnt_rdma_fork_unlock();
	rdma_dev_fork_child();
	sockfd_fork_unlock();
	cred_fork_child();
}

/* ------------------------------------------------------------------ */
/* The entry                                                           */
/* ------------------------------------------------------------------ */

static void
fix_stat(void *st)
{
	sockfd_fix_stat(st);
}

static const struct shim_fd_ops fd_ops = {
	.sockfd_owned = sockfd_owned,
	.getsockopt = sockfd_getsockopt,
	.setsockopt = sockfd_setsockopt,
	.getsockname = sockfd_getsockname,
	.getpeername = sockfd_getpeername,
	.fix_stat = fix_stat,
	.nredirect = &cred_nredirect,
	.capturing = &cred_capturing,
	.write_redirected = cred_write_redirected_slow,
	.write_redirect = cred_write_redirect,
	.write_refused = cred_write_refused,
	.write_seen = cred_write_seen_slow,
};

static const struct shim_rdma_ops rdma_ops = {
	.clnt_create = clnt_rdma_create,
	.svc_listen = svc_rdma_listen,
};

SHIM_ENTRY const struct shim_rdma_ops *
rpcrdma_shim_rdma_init(struct shim_stub *stub,
		       const struct shim_core_services *services,
		       const struct shim_rdma_setup *setup)
{
	core = services;
	if (setup->fork_init && ibv_fork_init())
		shim_log(SHIM_LOG_DEBUG, "ibv_fork_init failed");
	ulb_set_no_placement(setup->no_placement, setup->n_no_placement);
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		shim_log(SHIM_LOG_WARN,
			 "cannot register fork handlers: a child of a multi-threaded process may block on the shim");
	__atomic_store_n(&stub->fd_ops, &fd_ops, __ATOMIC_RELEASE);
	return &rdma_ops;
}
