/*
 * The table of the real libtirpc functions (found in stub.c), and the
 * configuration and the log, set up once.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/stats.h"
#include "shim.h"

struct shim_real shim_real;
__thread int shim_busy;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static struct shim_config config;

static void
init_once_fn(void)
{
	int saved_errno = errno;

	shim_real_tirpc();
	shim_config_load(&config, program_invocation_short_name);
	shim_log_open(&config, program_invocation_short_name);
	shim_log_config_messages(&config);
	shim_stats_describe(program_invocation_short_name, config.source,
			    config.mode, config.bad);
	if (config.bad && config.mode != SHIM_MODE_REQUIRE_RDMA)
		shim_log(SHIM_LOG_WARN,
			 "configuration errors: every transport stays on TCP");
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
