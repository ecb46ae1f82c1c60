/*
 * One table of the real libtirpc functions, filled once, together with the
 * configuration and the log.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "common/log.h"
#include "common/stats.h"
#include "shim.h"
#include "transport/ulb.h"

struct shim_real shim_real;
__thread int shim_busy;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static pthread_once_t fd_once = PTHREAD_ONCE_INIT;
static struct shim_real_fd real_fd;
static struct shim_config config;

static void *
real_sym(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (!sym) {
		/* Without the real function nothing can work, not even TCP. */
		fprintf(stderr, "rpcrdma-shim: cannot find the real %s: %s\n",
			name, dlerror());
		abort();
	}
	return sym;
}

/* dlsym() returns an object pointer; copy it into the function pointer. */
#define REAL_SYM_TO(table, field, name)                                 \
	do {                                                            \
		void *sym_ = real_sym(name);                            \
		memcpy(&(table).field, &sym_, sizeof(sym_));            \
	} while (0)
#define REAL_SYM(name) REAL_SYM_TO(shim_real, name, #name)

static void
fd_once_fn(void)
{
	int saved_errno = errno;

	REAL_SYM_TO(real_fd, getsockopt, "getsockopt");
	REAL_SYM_TO(real_fd, setsockopt, "setsockopt");
	REAL_SYM_TO(real_fd, getsockname, "getsockname");
	REAL_SYM_TO(real_fd, getpeername, "getpeername");
	REAL_SYM_TO(real_fd, fstat, "fstat");
	REAL_SYM_TO(real_fd, fstat64, "fstat64");
	/* Only binaries built before glibc 2.33 call these: optional. */
	{
		void *fx = dlsym(RTLD_NEXT, "__fxstat");
		void *fx64 = dlsym(RTLD_NEXT, "__fxstat64");

		memcpy(&real_fd.fxstat, &fx, sizeof(fx));
		memcpy(&real_fd.fxstat64, &fx64, sizeof(fx64));
	}
	errno = saved_errno;
}

const struct shim_real_fd *
shim_real_fd(void)
{
	pthread_once(&fd_once, fd_once_fn);
	return &real_fd;
}

static void
init_once_fn(void)
{
	int saved_errno = errno;

	REAL_SYM(clnt_vc_create);
	REAL_SYM(svc_vc_create);

	shim_config_load(&config, program_invocation_short_name);
	shim_log_open(&config, program_invocation_short_name);
	shim_log_config_messages(&config);
	ulb_set_no_placement(config.no_placement, config.n_no_placement);
	shim_stats_describe(program_invocation_short_name, config.source,
			    config.mode, config.bad);
	if (config.bad && config.mode != SHIM_MODE_REQUIRE_RDMA)
		shim_log(SHIM_LOG_WARN,
			 "configuration errors: every transport stays on TCP");

	/*
	 * Registered memory must not be shared copy-on-write with a child
	 * after fork(); this has to happen before the first registration.
	 */
	if (config.enable && !config.bad && config.mode != SHIM_MODE_TCP_ONLY &&
	    ibv_fork_init())
		shim_log(SHIM_LOG_DEBUG, "ibv_fork_init failed");
	shim_fork_init();
	errno = saved_errno;
}

void
shim_init(void)
{
	pthread_once(&init_once, init_once_fn);
}

const struct shim_config *
shim_cfg(void)
{
	return &config;
}
