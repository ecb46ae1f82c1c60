/*
 * librpctest_probe.so: a test fixture, not part of the shim.
 *
 * Preloaded after librpcrdma_shim.so, it defines the two interposed names,
 * appends one line per call to the file named by RPCTEST_PROBE_LOG and
 * forwards to the next definition (libtirpc).  Every reference in the
 * process binds to the shim, which comes first; only the shim's own
 * dlsym(RTLD_NEXT) lookup finds this library.  A line in the log therefore
 * shows that a call reached the shim's hook and was passed on.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#define PROBE_EXPORT __attribute__((visibility("default")))

typedef CLIENT *(*clnt_vc_create_fn)(int, const struct netbuf *, rpcprog_t,
				     rpcvers_t, u_int, u_int);
typedef SVCXPRT *(*svc_vc_create_fn)(int, u_int, u_int);

/* The next definition of name into *fn (a function pointer), or abort. */
static void
next_sym(const char *name, void **fn)
{
	*fn = dlsym(RTLD_NEXT, name);
	if (!*fn) {
		fprintf(stderr, "rpctest-probe: no next %s: %s\n", name, dlerror());
		abort();
	}
}

/* The address family of a netbuf holding a sockaddr, as a word. */
static const char *
family_name(const struct netbuf *nb)
{
	if (!nb || !nb->buf || nb->len < sizeof(sa_family_t))
		return "none";
	switch (((const struct sockaddr *)nb->buf)->sa_family) {
	case AF_LOCAL:
		return "local";
	case AF_INET:
		return "inet";
	case AF_INET6:
		return "inet6";
	default:
		return "other";
	}
}

/* Append one line; a single write, so concurrent writers do not interleave. */
static void
probe_log(const char *line, int len)
{
	const char *path = getenv("RPCTEST_PROBE_LOG");
	int fd;

	if (!path || len <= 0)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)len) < 0) {
		/* nothing to do: the test sees the line missing */
	}
	close(fd);
}

PROBE_EXPORT CLIENT *
clnt_vc_create(const int fd, const struct netbuf *raddr, const rpcprog_t prog,
	       const rpcvers_t vers, u_int sendsz, u_int recvsz)
{
	clnt_vc_create_fn next;
	char line[96];

	next_sym("clnt_vc_create", (void **)&next);
	probe_log(line, snprintf(line, sizeof(line), "clnt_vc_create prog=0x%lx vers=%lu af=%s\n",
				 (unsigned long)prog, (unsigned long)vers, family_name(raddr)));
	return next(fd, raddr, prog, vers, sendsz, recvsz);
}

PROBE_EXPORT SVCXPRT *
svc_vc_create(const int fd, u_int sendsz, u_int recvsz)
{
	svc_vc_create_fn next;
	char line[64];

	next_sym("svc_vc_create", (void **)&next);
	probe_log(line, snprintf(line, sizeof(line), "svc_vc_create fd=%d\n", fd));
	return next(fd, sendsz, recvsz);
}
