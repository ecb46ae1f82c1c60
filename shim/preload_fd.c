/*
 * The exported socket and status calls.  A server transport's xp_fd is not
 * a socket (transport/sockfd.h); for those descriptors these answer as a
 * TCP socket would, every other descriptor gets the real call.
 *
 * Built without large-file renaming: fstat and fstat64 (and the __fxstat
 * pair that binaries built before glibc 2.33 call) are each defined under
 * their own name; on 64-bit Linux both structures are the same.
 */
#undef _FILE_OFFSET_BITS
#include <sys/socket.h>
#include <sys/stat.h>

#include "module.h"
#include "shim.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

int __fxstat(int ver, int fd, struct stat *st);
int __fxstat64(int ver, int fd, struct stat64 *st);

SHIM_EXPORT int
getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	const struct shim_fd_ops *o = shim_fd_ops();

	if (o && o->sockfd_owned(fd))
		return o->getsockopt(fd, level, name, val, len);
	return shim_real_fd()->getsockopt(fd, level, name, val, len);
}

SHIM_EXPORT int
setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	const struct shim_fd_ops *o = shim_fd_ops();

	if (o && o->sockfd_owned(fd))
		return o->setsockopt(fd, level, name, val, len);
	return shim_real_fd()->setsockopt(fd, level, name, val, len);
}

/* glibc declares the address argument as a transparent union. */
SHIM_EXPORT int
getsockname(int fd, __SOCKADDR_ARG sa, socklen_t *len)
{
	const struct shim_fd_ops *o = shim_fd_ops();

	if (o && o->sockfd_owned(fd))
		return o->getsockname(fd, sa.__sockaddr__, len);
	return shim_real_fd()->getsockname(fd, sa.__sockaddr__, len);
}

SHIM_EXPORT int
getpeername(int fd, __SOCKADDR_ARG sa, socklen_t *len)
{
	const struct shim_fd_ops *o = shim_fd_ops();

	if (o && o->sockfd_owned(fd))
		return o->getpeername(fd, sa.__sockaddr__, len);
	return shim_real_fd()->getpeername(fd, sa.__sockaddr__, len);
}

/* The real status, made a socket's when fd is a stand-in. */
static int
fix(int fd, int ret, struct stat *st)
{
	const struct shim_fd_ops *o = shim_fd_ops();

	if (ret == 0 && o && o->sockfd_owned(fd))
		o->fix_stat(st);
	return ret;
}

SHIM_EXPORT int
fstat(int fd, struct stat *st)
{
	return fix(fd, shim_real_fd()->fstat(fd, st), st);
}

SHIM_EXPORT int
fstat64(int fd, struct stat64 *st)
{
	return fix(fd, shim_real_fd()->fstat64(fd, st), (struct stat *)st);
}

SHIM_EXPORT int
__fxstat(int ver, int fd, struct stat *st)
{
	const struct shim_real_fd *r = shim_real_fd();
	int ret = r->fxstat ? r->fxstat(ver, fd, st) : r->fstat(fd, st);

	return fix(fd, ret, st);
}

SHIM_EXPORT int
__fxstat64(int ver, int fd, struct stat64 *st)
{
	const struct shim_real_fd *r = shim_real_fd();
	int ret = r->fxstat64 ? r->fxstat64(ver, fd, st) : r->fstat64(fd, st);

	return fix(fd, ret, (struct stat *)st);
}
