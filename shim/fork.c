/*
 * fork(): no lock of the shim is held across it.  The prepare handler
 * takes every global lock, always in this order (none of them is taken
 * while another is held, but for the log, which is taken last), so that
 * no other thread is half-way through a table when the process is copied;
 * the parent and the child release them.  These are the preloaded
 * library's, registered by the first transport (shim_init());
 * the RDMA module registers its own when it is loaded (transport/module.c),
 * so that its handlers take their locks first and the log's stays last.
 * There the child counts a new generation, which makes every transport of
 * the parent the parent's (transport/cred.h), and forgets the parent's
 * devices.
 *
 * A CLIENT's own lock is not taken: a call holds it while it waits for
 * its reply, and fork() must not wait for that.  A child never takes the
 * lock of a CLIENT it inherited.  system() and popen() spawn without
 * these handlers; every descriptor of the shim is close-on-exec.
 */
#include <pthread.h>

#include "common/log.h"
#include "common/log_once.h"
#include "common/stats.h"
#include "negcache.h"
#include "shim.h"

static void
fork_prepare(void)
{
	negcache_fork_lock();
	shim_stats_fork_lock();
	log_once_fork_lock();
	shim_log_fork_lock();
}

static void
fork_parent(void)
{
	shim_log_fork_unlock();
	log_once_fork_unlock();
	shim_stats_fork_unlock();
	negcache_fork_unlock();
}

static void
fork_child(void)
{
	shim_log_fork_unlock();
	log_once_fork_unlock();
	shim_stats_fork_unlock();
	negcache_fork_unlock();
}

void
shim_fork_init(void)
{
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		shim_log(SHIM_LOG_WARN,
			 "cannot register fork handlers: a child of a multi-threaded process may block on the shim");
}
