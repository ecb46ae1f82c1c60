/*
 * upgrade = background (route.h): the program's calls go over libtirpc's
 * TCP CLIENT from the start, and from its second call an RDMA CLIENT is
 * connected in the background (transport/clnt_upgrade.c), which takes
 * the calls over once it is up.  The attempt's outcome is logged and
 * remembered as a synchronous one would be.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/sockaddr.h"
#include "common/stats.h"
#include "route.h"
#include "shim.h"
#include "transport/clnt_upgrade.h"

/*
 * The attempt starts with the program's second call on the CLIENT: a
 * process that makes one call and exits never pays for RDMA.
 */
#define UPGRADE_AFTER_CALLS 1

/* What the attempt needs, kept until both it and the CLIENT are done. */
struct upgrade_ctx {
	struct sockaddr_storage raddr_buf;	/* the TCP address */
	struct netbuf raddr;
	struct sockaddr_storage rdst;		/* the RDMA address */
	rpcprog_t prog;
	rpcvers_t vers;
	u_int sendsz, recvsz;
	struct clnt_rdma_params params;
	unsigned int negative_cache_s;
};

static CLIENT *
upgrade_connect(void *arg, int fd)
{
	struct upgrade_ctx *u = arg;
	const struct sockaddr *rdst = (struct sockaddr *)&u->rdst;
	struct clnt_rdma_info info;
	enum rdma_fail why = RDMA_FAIL_ERROR;
	int err = 0;
	CLIENT *cl;

	/* A thread of our own: nothing libtirpc does here is the program's. */
	shim_busy++;
	cl = client_rdma(fd, &u->raddr, rdst, u->prog, u->vers, u->sendsz,
			 u->recvsz, &u->params, &info, &why, &err);
	shim_busy--;
	if (cl) {
		/* The descriptor is a duplicate of our own: ours to close. */
		(void)clnt_control(cl, CLSET_FD_CLOSE, NULL);
		log_client_rdma(rdst, (uint32_t)u->prog, (uint32_t)u->vers,
				&info, u->params.credits);
		return cl;
	}
	negative_add(rdst, why, u->negative_cache_s);
	shim_stats_fallback(why);
	log_client_tcp(rdst, (uint32_t)u->prog, (uint32_t)u->vers, why,
		       err ? strerror(err) : NULL);
	return NULL;
}

/*
 * The negative caches, looked into by the call that would start the
 * attempt rather than at the create (route.c): a process that makes one
 * call never reads them.  A hit is logged and counted as at a create, by
 * the program's thread, before it can exit.
 */
static bool
upgrade_skip(void *arg)
{
	struct upgrade_ctx *u = arg;
	const struct sockaddr *rdst = (struct sockaddr *)&u->rdst;
	char shared[PATH_MAX + 128];
	enum rdma_fail cached;

	if (!negative_lookup(rdst, u->negative_cache_s, &cached, shared,
			     sizeof(shared)))
		return false;
	shim_stats_fallback(RDMA_FAIL_NEGCACHE);
	log_client_tcp(rdst, (uint32_t)u->prog, (uint32_t)u->vers,
		       RDMA_FAIL_NEGCACHE,
		       shared[0] ? shared : rdma_fail_str(cached));
	return true;
}

static void
upgrade_release(void *arg)
{
	free(arg);
}

static const struct clnt_upgrade_ops upgrade_ops = {
	.connect = upgrade_connect,
	.skip = upgrade_skip,
	.release = upgrade_release,
};

CLIENT *
route_upgrade_client(int fd, const struct netbuf *raddr,
		     const struct sockaddr *rdst, rpcprog_t prog,
		     rpcvers_t vers, u_int sendsz, u_int recvsz,
		     const struct clnt_rdma_params *params,
		     unsigned int negative_cache_s, bool *handled)
{
	struct upgrade_ctx *u = calloc(1, sizeof(*u));
	CLIENT *tcp, *cl;
	char peer[80];

	*handled = false;
	if (!u || raddr->len > sizeof(u->raddr_buf)) {
		free(u);
		return NULL;
	}
	memcpy(&u->raddr_buf, raddr->buf, raddr->len);
	u->raddr.buf = &u->raddr_buf;
	u->raddr.len = u->raddr.maxlen = raddr->len;
	memcpy(&u->rdst, rdst, sa_len(rdst));
	u->prog = prog;
	u->vers = vers;
	u->sendsz = sendsz;
	u->recvsz = recvsz;
	u->params = *params;
	u->negative_cache_s = negative_cache_s;

	/* From here on the answer is ours, a failed TCP CLIENT included. */
	*handled = true;
	tcp = client_tcp(fd, raddr, prog, vers, sendsz, recvsz, RDMA_FAIL_NONE,
			 UPGRADE_AFTER_CALLS);
	if (!tcp) {
		free(u);
		return NULL;
	}
	cl = clnt_upgrade_create(tcp, UPGRADE_AFTER_CALLS, &upgrade_ops, u);
	if (!cl) {
		/* The TCP CLIENT is the program's then, as with upgrade = wait. */
		free(u);
		return tcp;
	}
	if (shim_log_enabled(SHIM_LOG_DEBUG)) {
		sa_format(rdst, peer, sizeof(peer));
		shim_log(SHIM_LOG_DEBUG,
			 "client program %u version %u to %s: TCP while RDMA is set up, from the second call",
			 (unsigned)prog, (unsigned)vers, peer);
	}
	return cl;
}
