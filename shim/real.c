/*
 * One table of the real libtirpc functions, filled once.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "shim.h"

struct shim_real shim_real;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

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

static void
init_once_fn(void)
{
	shim_real.clnt_vc_create = real_sym("clnt_vc_create");
	shim_real.svc_vc_create = real_sym("svc_vc_create");
}

void
shim_init(void)
{
	pthread_once(&init_once, init_once_fn);
}
