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

#include "config/log.h"
#include "shim.h"
#include "transport/stats.h"

struct shim_real shim_real;
__thread int shim_busy;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static struct shim_config config;

static void *
real_sym(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (!sym) {
		/* Without the real function nothing can work, not even TCP. */
		fprintf(stderr, "rpcrdma-shim: cannot find %s in libtirpc: %s\n",
			name, dlerror());
		abort();
	}
	return sym;
}

/* dlsym() returns an object pointer; copy it into the function pointer. */
#define REAL_SYM(name)                                                  \
	do {                                                            \
		void *sym_ = real_sym(#name);                           \
		memcpy(&shim_real.name, &sym_, sizeof(sym_));           \
	} while (0)

static void
init_once_fn(void)
{
	int saved_errno = errno;

	REAL_SYM(clnt_vc_create);
	REAL_SYM(svc_vc_create);

	shim_config_load(&config, program_invocation_short_name);
	shim_log_open(&config, program_invocation_short_name);
	shim_log_config_messages(&config);
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
