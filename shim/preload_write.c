/*
 * The exported write().  librdmacm issues every RDMA-CM command, and rxe
 * rings its send doorbell, with write(); after the process changed its
 * credentials (or in a fork() child) the kernel refuses those writes on
 * descriptors opened before (transport/cred.h).  A refused doorbell of
 * ours is made again through ioctl(); every other write is the real one,
 * and its cost is this forward.  There are such descriptors only once the
 * RDMA module is loaded (shim_fd_ops()).
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "module.h"
#include "shim.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

static ssize_t (*real_write)(int fd, const void *buf, size_t len);

/* Before main(): libraries loaded before us may write in their constructors. */
__attribute__((constructor)) static void
write_init(void)
{
	void *sym = dlsym(RTLD_NEXT, "write");

	memcpy(&real_write, &sym, sizeof(sym));
}

static ssize_t
write_real(int fd, const void *buf, size_t len)
{
	if (__builtin_expect(real_write != NULL, 1))
		return real_write(fd, buf, len);
	return syscall(SYS_write, fd, buf, len);
}

SHIM_EXPORT ssize_t
write(int fd, const void *buf, size_t len)
{
	const struct shim_fd_ops *o = shim_fd_ops();
	ssize_t ret;
	bool done;

	if (__builtin_expect(o == NULL, 1))
		return write_real(fd, buf, len);
	if (__builtin_expect(__atomic_load_n(o->nredirect, __ATOMIC_RELAXED) != 0, 0) &&
	    o->write_redirected(fd)) {
		ret = o->write_redirect(fd, buf, len, &done);
		if (done)
			return ret;
	}
	ret = write_real(fd, buf, len);
	if (__builtin_expect(ret < 0, 0) && errno == EACCES)
		return o->write_refused(fd, buf, len);
	if (__builtin_expect(__atomic_load_n(o->capturing, __ATOMIC_RELAXED) != 0, 0))
		o->write_seen(fd, buf, len, ret);
	return ret;
}
