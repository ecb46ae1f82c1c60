/*
 * The RDMA module (module.h), loaded by the first RDMA attempt, and what
 * it is given of ours: the log and the statistics.  A process whose
 * transports all stay on TCP (rules, negative cache, tcp-only) never
 * loads libibverbs or librdmacm.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "module.h"
#include "shim.h"
#include "transport/ulb.h"

static pthread_once_t rdma_once = PTHREAD_ONCE_INIT;
static const struct shim_rdma_ops *rdma;

static const struct shim_core_services services = {
	.vlog = shim_vlog,
	.log_enabled = shim_log_enabled,
	.log_once = log_once,
	.stats_open = shim_stats_open,
	.stats_publish = shim_stats_publish,
	.stats_close = shim_stats_close,
	.stats_pinned = shim_stats_pinned,
};

static void
rdma_once_fn(void)
{
	const struct shim_config *cfg = shim_cfg();
	struct shim_stub *stub = shim_stub();
	struct shim_rdma_setup setup = {
		/*
		 * Registered memory must not be shared copy-on-write with a
		 * child after fork(): before the first registration.
		 */
		.fork_init = true,
		.no_placement = cfg->no_placement,
		.n_no_placement = cfg->n_no_placement,
	};
	char path[PATH_MAX + sizeof(SHIM_RDMA_MODULE)];
	shim_rdma_entry entry;
	void *h, *sym;

	if (!stub->dir) {
		shim_log(SHIM_LOG_WARN,
			 "cannot load the RDMA transport: cannot tell where the library was loaded from");
		return;
	}
	snprintf(path, sizeof(path), "%s%s", stub->dir, SHIM_RDMA_MODULE);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		shim_log(SHIM_LOG_WARN, "cannot load the RDMA transport: %s",
			 dlerror());
		return;
	}
	sym = dlsym(h, SHIM_RDMA_ENTRY);
	if (!sym) {
		shim_log(SHIM_LOG_WARN, "%s has no %s", path, SHIM_RDMA_ENTRY);
		return;
	}
	memcpy(&entry, &sym, sizeof(sym));
	rdma = entry(stub, &services, &setup);
}

const struct shim_rdma_ops *
shim_rdma(void)
{
	pthread_once(&rdma_once, rdma_once_fn);
	return rdma;
}
