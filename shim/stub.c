/*
 * The preloaded library's own state: the real socket calls, and the core
 * module, loaded by the first transport libtirpc makes (module.h).  A
 * process that makes none loads nothing but this small library.
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

static pthread_once_t core_once = PTHREAD_ONCE_INIT;
static const struct shim_core_ops *core;
static char module_dir[PATH_MAX];
static struct shim_stub stub = { .dir = module_dir };

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

/* The directory this library was loaded from, with a final '/'. */
static bool
find_module_dir(void)
{
	Dl_info info;
	const char *slash;
	size_t len;

	if (!dladdr((void *)&stub, &info) || !info.dli_fname)
		return false;
	slash = strrchr(info.dli_fname, '/');
	len = slash ? (size_t)(slash - info.dli_fname) + 1 : 0;
	if (len >= sizeof(module_dir))
		return false;
	memcpy(module_dir, info.dli_fname, len);
	module_dir[len] = '\0';
	return true;
}

static void
core_once_fn(void)
{
	int saved_errno = errno;
	char path[PATH_MAX + sizeof(SHIM_CORE_MODULE)];
	shim_core_entry entry;
	void *h;

	SYM_TO(stub.real_clnt_vc_create, dlsym(RTLD_NEXT, "clnt_vc_create"));
	SYM_TO(stub.real_svc_vc_create, dlsym(RTLD_NEXT, "svc_vc_create"));
	if (!stub.real_clnt_vc_create || !stub.real_svc_vc_create) {
		/* Without the real functions nothing can work, not even TCP. */
		fprintf(stderr, "rpcrdma-shim: cannot find libtirpc's transports: %s\n",
			dlerror());
		abort();
	}
	if (!find_module_dir()) {
		fprintf(stderr, "rpcrdma-shim: cannot tell where the library was loaded from: every transport stays TCP\n");
		goto out;
	}
	snprintf(path, sizeof(path), "%s%s", module_dir, SHIM_CORE_MODULE);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h) {
		fprintf(stderr, "rpcrdma-shim: cannot load %s: every transport stays TCP\n",
			dlerror());
		goto out;
	}
	SYM_TO(entry, dlsym(h, SHIM_CORE_ENTRY));
	if (entry)
		core = entry(&stub);
	else
		fprintf(stderr, "rpcrdma-shim: %s has no %s: every transport stays TCP\n",
			path, SHIM_CORE_ENTRY);
out:
	errno = saved_errno;
}

const struct shim_core_ops *
shim_core(void)
{
	pthread_once(&core_once, core_once_fn);
	return core;
}

const struct shim_stub *
shim_stub(void)
{
	pthread_once(&core_once, core_once_fn);
	return &stub;
}
