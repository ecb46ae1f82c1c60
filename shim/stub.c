/*
 * The preloaded library's own state: the real socket calls, libtirpc's
 * functions we forward to, and the directory the RDMA module is loaded
 * from (module.h).  Each is found on first use: a process that makes no
 * RPC call pays for none of it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "shim.h"

static pthread_once_t fd_once = PTHREAD_ONCE_INIT;
static struct shim_real_fd real_fd;

static pthread_once_t tirpc_once = PTHREAD_ONCE_INIT;

static pthread_once_t dir_once = PTHREAD_ONCE_INIT;
static char module_dir[PATH_MAX];
static struct shim_stub stub;

/* dlsym() returns an object pointer; copy it into the function pointer. */
#define SYM_TO(dst, sym)                                                \
	do {                                                            \
		void *sym_ = (sym);                                     \
		memcpy(&(dst), &sym_, sizeof(sym_));                    \
	} while (0)

static void
fd_once_fn(void)
{
	int saved_errno = errno;

	SYM_TO(real_fd.getsockopt, dlsym(RTLD_NEXT, "getsockopt"));
	SYM_TO(real_fd.setsockopt, dlsym(RTLD_NEXT, "setsockopt"));
	SYM_TO(real_fd.getsockname, dlsym(RTLD_NEXT, "getsockname"));
	SYM_TO(real_fd.getpeername, dlsym(RTLD_NEXT, "getpeername"));
	SYM_TO(real_fd.fstat, dlsym(RTLD_NEXT, "fstat"));
	SYM_TO(real_fd.fstat64, dlsym(RTLD_NEXT, "fstat64"));
	/* Only binaries built before glibc 2.33 call these: optional. */
	SYM_TO(real_fd.fxstat, dlsym(RTLD_NEXT, "__fxstat"));
	SYM_TO(real_fd.fxstat64, dlsym(RTLD_NEXT, "__fxstat64"));
	if (!real_fd.getsockopt || !real_fd.setsockopt ||
	    !real_fd.getsockname || !real_fd.getpeername || !real_fd.fstat ||
	    !real_fd.fstat64) {
		/* Without the real calls nothing can work. */
		fprintf(stderr, "rpcrdma-shim: cannot find the real socket calls: %s\n",
			dlerror());
		abort();
	}
	errno = saved_errno;
}

const struct shim_real_fd *
shim_real_fd(void)
{
	pthread_once(&fd_once, fd_once_fn);
	return &real_fd;
}

const struct shim_fd_ops *
shim_fd_ops(void)
{
	return __atomic_load_n(&stub.fd_ops, __ATOMIC_ACQUIRE);
}

/*
 * libtirpc is not linked in (a program without RPC must not load it): its
 * functions are found when it called us, so it is there.
 */
static void
tirpc_once_fn(void)
{
	int saved_errno = errno;

	SYM_TO(shim_real.clnt_vc_create, dlsym(RTLD_NEXT, "clnt_vc_create"));
	SYM_TO(shim_real.svc_vc_create, dlsym(RTLD_NEXT, "svc_vc_create"));
	SYM_TO(shim_real.xprt_unregister, dlsym(RTLD_NEXT, "xprt_unregister"));
	SYM_TO(shim_real.createerr, dlsym(RTLD_NEXT, "__rpc_createerr"));
	if (!shim_real.clnt_vc_create || !shim_real.svc_vc_create ||
	    !shim_real.xprt_unregister || !shim_real.createerr) {
		/* Without the real functions nothing can work, not even TCP. */
		fprintf(stderr, "rpcrdma-shim: cannot find libtirpc's transports: %s\n",
			dlerror());
		abort();
	}
	errno = saved_errno;
}

void
shim_real_tirpc(void)
{
	pthread_once(&tirpc_once, tirpc_once_fn);
}

/* The directory this library was loaded from, with a final '/'. */
static void
dir_once_fn(void)
{
	Dl_info info;
	const char *slash;
	size_t len;

	if (!dladdr((void *)&stub, &info) || !info.dli_fname)
		return;
	slash = strrchr(info.dli_fname, '/');
	len = slash ? (size_t)(slash - info.dli_fname) + 1 : 0;
	if (len >= sizeof(module_dir))
		return;
	memcpy(module_dir, info.dli_fname, len);
	module_dir[len] = '\0';
	stub.dir = module_dir;
}

struct shim_stub *
shim_stub(void)
{
	pthread_once(&dir_once, dir_once_fn);
	return &stub;
}
