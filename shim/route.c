/*
 * Policy: decide, per transport being created, whether it runs over
 * RPC-over-RDMA or stays the real libtirpc TCP transport, and say so once
 * per peer in the log.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/log_once.h"
#include "common/sockaddr.h"
#include "common/stats.h"
#include "negcache.h"
#include "shim.h"
#include "transport/clnt_rdma.h"
#include "transport/hooks.h"
#include "transport/svc_rdma.h"

/* ------------------------------------------------------------------ */
/* Decisions, logged once per peer and outcome                         */
/* ------------------------------------------------------------------ */

/* True the first time this outcome is reached for this peer. */
static bool
first_time(const struct sockaddr *sa, uint32_t prog, bool server, bool rdma,
	   enum rdma_fail why)
{
	struct peer_key key;

	(void)peer_key_from(&key, sa);
	return log_once(LOG_ONCE_DECISION, &key, (uint64_t)prog << 32 |
			(uint64_t)server << 16 | (uint64_t)rdma << 8 |
			(uint8_t)why);
}

static void
prog_format(uint32_t prog, char *buf, size_t len)
{
	struct rpcent ent, *res = NULL;
	char tmp[1024];

	if (getrpcbynumber_r((int)prog, &ent, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "program %u (%s)", prog, res->r_name);
	else
		snprintf(buf, len, "program %u", prog);
}

static void
log_client_rdma(const struct sockaddr *dst, uint32_t prog, uint32_t vers,
		CLIENT *cl, unsigned int credits)
{
	struct clnt_rdma_info info;
	char peer[80], pname[96];

	sa_format(dst, peer, sizeof(peer));
	prog_format(prog, pname, sizeof(pname));
	clnt_rdma_info(cl, &info);
	shim_log(first_time(dst, prog, false, true, RDMA_FAIL_NONE) ?
		 SHIM_LOG_INFO : SHIM_LOG_DEBUG,
		 "client %s version %u to %s: RDMA, inline %u/%u%s, credits %u requested, R=%d",
		 pname, vers, peer, info.send_max, info.recv_max,
		 info.peer_pdata ? "" : " (peer sent no RFC 8797 private data)",
		 credits, info.rinv);
}

static void
log_client_tcp(const struct sockaddr *dst, uint32_t prog, uint32_t vers,
	       enum rdma_fail why, const char *detail)
{
	char peer[80], pname[96];

	sa_format(dst, peer, sizeof(peer));
	prog_format(prog, pname, sizeof(pname));
	shim_log(first_time(dst, prog, false, false, why) ?
		 SHIM_LOG_INFO : SHIM_LOG_DEBUG,
		 "client %s version %u to %s: TCP (%s%s%s)", pname, vers, peer,
		 rdma_fail_str(why), detail ? ": " : "", detail ? detail : "");
}

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

/*
 * The real TCP client, counted as a fallback for why and published in the
 * statistics with its calls.
 */
static CLIENT *
client_tcp(int fd, const struct netbuf *raddr, rpcprog_t prog, rpcvers_t vers,
	   u_int sendsz, u_int recvsz, enum rdma_fail why)
{
	CLIENT *cl = shim_real.clnt_vc_create(fd, raddr, prog, vers, sendsz,
					      recvsz);
	struct shim_stats_conn *s;
	struct sockaddr_storage local;
	socklen_t len = sizeof(local);

	shim_stats_fallback(why);
	if (!cl)
		return NULL;
	if (getsockname(fd, (struct sockaddr *)&local, &len) < 0)
		local.ss_family = AF_UNSPEC;
	s = shim_stats_open(SHIM_STATS_CLIENT, SHIM_STATS_TCP,
			    (const struct sockaddr *)raddr->buf,
			    (struct sockaddr *)&local);
	if (!s)
		return cl;
	s->reason = why;
	s->prog = (uint32_t)prog;
	s->vers = (uint32_t)vers;
	if (clnt_hook_stats(cl, s)) {
		shim_stats_close(s);
		return cl;
	}
	shim_stats_publish(s);
	return cl;
}

static bool
netbuf_is_inet(const struct netbuf *nb)
{
	const struct sockaddr *sa = (const struct sockaddr *)nb->buf;

	if (!nb->buf || nb->len < sizeof(sa_family_t))
		return false;
	return (sa->sa_family == AF_INET && nb->len >= sizeof(struct sockaddr_in)) ||
	       (sa->sa_family == AF_INET6 && nb->len >= sizeof(struct sockaddr_in6));
}


/*
 * require-rdma: the create fails with an RPC error naming the reason;
 * cached when RDMA was not tried again because it failed recently.
 */
static CLIENT *
client_required_fails(const struct sockaddr *dst, enum rdma_fail why, int err,
		      bool cached)
{
	char peer[80];

	sa_format(dst, peer, sizeof(peer));
	shim_log(SHIM_LOG_ERROR, "client to %s: RDMA required, but %s%s",
		 peer, why == RDMA_FAIL_CONFIG ? "the configuration has errors" :
		 rdma_fail_str(why),
		 cached ? " (a moment ago: not tried again within negative_cache)" : "");
	rpc_createerr.cf_stat = RPC_SYSTEMERROR;
	rpc_createerr.cf_error.re_errno = err ? err : ECONNREFUSED;
	return NULL;
}

CLIENT *
shim_clnt_vc_create(int fd, const struct netbuf *raddr, rpcprog_t prog,
		    rpcvers_t vers, u_int sendsz, u_int recvsz)
{
	const struct shim_config *cfg;
	const struct shim_rule *rule;
	struct clnt_rdma_params params;
	struct sockaddr_storage dst;
	enum rdma_fail why;
	CLIENT *cl;
	int err;

	shim_init();
	cfg = shim_cfg();
	/* AF_LOCAL (the local rpcbind) and anything not IP stays as it is. */
	if (shim_busy || !cfg->enable || !raddr || !netbuf_is_inet(raddr))
		goto real;

	memset(&dst, 0, sizeof(dst));
	memcpy(&dst, raddr->buf, raddr->len > sizeof(dst) ? sizeof(dst) : raddr->len);

	if (cfg->bad) {
		if (cfg->mode == SHIM_MODE_REQUIRE_RDMA)
			return client_required_fails((struct sockaddr *)&dst,
						     RDMA_FAIL_CONFIG, EINVAL,
						     false);
		/* Untouched TCP; only counted, so rpcrdma-stat shows it. */
		shim_stats_fallback(RDMA_FAIL_CONFIG);
		goto real;
	}
	if (cfg->mode == SHIM_MODE_TCP_ONLY) {
		log_client_tcp((struct sockaddr *)&dst, (uint32_t)prog,
			       (uint32_t)vers, RDMA_FAIL_CONFIG, "mode tcp-only");
		why = RDMA_FAIL_CONFIG;
		goto tcp;
	}
	if (shim_config_client_action(cfg, (uint32_t)prog, (uint32_t)vers,
				      (struct sockaddr *)&dst, &rule) ==
	    SHIM_ACTION_TCP) {
		char detail[256];

		snprintf(detail, sizeof(detail), "rule \"%s\" (%s)", rule->text,
			 rule->origin);
		log_client_tcp((struct sockaddr *)&dst, (uint32_t)prog,
			       (uint32_t)vers, RDMA_FAIL_CONFIG, detail);
		why = RDMA_FAIL_CONFIG;
		goto tcp;
	}

	sa_set_port((struct sockaddr *)&dst,
		 shim_config_rdma_port(cfg, sa_port((struct sockaddr *)&dst)));
	if (negcache_lookup((struct sockaddr *)&dst, &why)) {
		if (cfg->mode == SHIM_MODE_REQUIRE_RDMA)
			return client_required_fails((struct sockaddr *)&dst, why,
						     0, true);
		log_client_tcp((struct sockaddr *)&dst, (uint32_t)prog,
			       (uint32_t)vers, RDMA_FAIL_NEGCACHE,
			       rdma_fail_str(why));
		why = RDMA_FAIL_NEGCACHE;
		goto tcp;
	}

	params.inline_send = cfg->inline_send;
	params.inline_recv = cfg->inline_recv;
	params.credits = cfg->credits;
	params.connect_timeout_ms = (int)cfg->connect_timeout_ms;
	params.max_reply = cfg->max_reply;
	params.write_chunk = cfg->write_chunk;
	params.remote_inv = cfg->remote_invalidate;

	shim_busy++;
	cl = clnt_rdma_create(fd, raddr, (struct sockaddr *)&dst, prog, vers,
			      sendsz, recvsz, &params, &why, &err);
	shim_busy--;
	if (cl) {
		log_client_rdma((struct sockaddr *)&dst, (uint32_t)prog,
				(uint32_t)vers, cl, params.credits);
		clnt_rdma_publish(cl, prog, vers);
		return cl;
	}
	negcache_add((struct sockaddr *)&dst, why, cfg->negative_cache_s);
	if (cfg->mode == SHIM_MODE_REQUIRE_RDMA)
		return client_required_fails((struct sockaddr *)&dst, why, err,
					     false);
	log_client_tcp((struct sockaddr *)&dst, (uint32_t)prog, (uint32_t)vers,
		       why, err ? strerror(err) : NULL);
tcp:
	return client_tcp(fd, raddr, prog, vers, sendsz, recvsz, why);

real:
	return shim_real.clnt_vc_create(fd, raddr, prog, vers, sendsz, recvsz);
}

/* ------------------------------------------------------------------ */
/* Server                                                              */
/* ------------------------------------------------------------------ */

static void
log_server(const struct sockaddr *local, uint16_t rdma_port, bool rdma,
	   enum rdma_fail why, const char *detail)
{
	char addr[80];
	bool first = first_time(local, 0, true, rdma, why);

	sa_format(local, addr, sizeof(addr));
	if (rdma)
		shim_log(first ? SHIM_LOG_INFO : SHIM_LOG_DEBUG,
			 "server on %s: RDMA listener on port %u", addr, rdma_port);
	else
		shim_log(first ? SHIM_LOG_INFO : SHIM_LOG_DEBUG,
			 "server on %s: TCP only (%s%s%s)", addr,
			 rdma_fail_str(why), detail ? ": " : "",
			 detail ? detail : "");
}

static void
listener_destroyed(SVCXPRT *xprt, void *arg)
{
	shim_stats_close(arg);
}

/*
 * A listener's statistics slot, closed when xprt is destroyed; published
 * by the caller.  rdma_port 0 when it stays TCP only, for why.
 */
static struct shim_stats_conn *
server_stats_open(SVCXPRT *xprt, const struct sockaddr *local,
		  uint16_t rdma_port, enum rdma_fail why)
{
	struct shim_stats_conn *s;

	s = shim_stats_open(SHIM_STATS_LISTENER,
			    rdma_port ? SHIM_STATS_RDMA : SHIM_STATS_TCP, NULL,
			    local);
	if (!s)
		return NULL;
	s->rdma_port = rdma_port;
	s->reason = why;
	if (svc_hook_destroy(xprt, listener_destroyed, s)) {
		shim_stats_close(s);
		return NULL;
	}
	return s;
}

/* Publish a listener; rdma_port 0 when it stays TCP only, for why. */
static void
server_publish(SVCXPRT *xprt, const struct sockaddr *local, uint16_t rdma_port,
	       enum rdma_fail why)
{
	if (!rdma_port)
		shim_stats_fallback(why);
	shim_stats_publish(server_stats_open(xprt, local, rdma_port, why));
}

/*
 * require-rdma: a server that cannot listen over RDMA is not created.
 * Its descriptor is the caller's: svc_tli_create() closes it when it made
 * it, programs when they did.  So the transport goes as in libtirpc's own
 * error path: unregistered while xp_fd still names it, then destroyed
 * with no descriptor to close.
 */
static SVCXPRT *
server_required_fails(SVCXPRT *xprt, int err)
{
	xprt_unregister(xprt);
	xprt->xp_fd = RPC_ANYFD;
	svc_destroy(xprt);
	rpc_createerr.cf_stat = RPC_SYSTEMERROR;
	rpc_createerr.cf_error.re_errno = err ? err : ENODEV;
	return NULL;
}

SVCXPRT *
shim_svc_vc_create(int fd, u_int sendsz, u_int recvsz)
{
	const struct shim_config *cfg;
	const struct shim_rule *rule;
	struct svc_rdma_params params;
	struct sockaddr_storage local, peer;
	socklen_t len;
	enum rdma_fail why;
	uint16_t tcp_port, rdma_port;
	struct shim_stats_conn *s;
	SVCXPRT *xprt;
	int ret;

	shim_init();
	cfg = shim_cfg();
	xprt = shim_real.svc_vc_create(fd, sendsz, recvsz);
	if (!xprt || shim_busy || !cfg->enable)
		return xprt;

	len = sizeof(local);
	if (getsockname(fd, (struct sockaddr *)&local, &len) < 0 ||
	    (local.ss_family != AF_INET && local.ss_family != AF_INET6))
		return xprt;
	/* A connected socket is one client's connection, not a listener. */
	len = sizeof(peer);
	if (getpeername(fd, (struct sockaddr *)&peer, &len) == 0)
		return xprt;

	if (cfg->bad) {
		if (cfg->mode == SHIM_MODE_REQUIRE_RDMA) {
			shim_log(SHIM_LOG_ERROR,
				 "server: RDMA required, but the configuration has errors");
			return server_required_fails(xprt, EINVAL);
		}
		shim_stats_fallback(RDMA_FAIL_CONFIG);
		return xprt;
	}
	if (cfg->mode == SHIM_MODE_TCP_ONLY) {
		log_server((struct sockaddr *)&local, 0, false, RDMA_FAIL_CONFIG,
			   "mode tcp-only");
		server_publish(xprt, (struct sockaddr *)&local, 0, RDMA_FAIL_CONFIG);
		return xprt;
	}
	if (shim_config_server_action(cfg, (struct sockaddr *)&local, &rule) ==
	    SHIM_ACTION_TCP) {
		char detail[256];

		snprintf(detail, sizeof(detail), "rule \"%s\" (%s)", rule->text,
			 rule->origin);
		log_server((struct sockaddr *)&local, 0, false, RDMA_FAIL_CONFIG,
			   detail);
		server_publish(xprt, (struct sockaddr *)&local, 0, RDMA_FAIL_CONFIG);
		return xprt;
	}

	tcp_port = sa_port((struct sockaddr *)&local);
	rdma_port = shim_config_rdma_port(cfg, tcp_port);
	/* First: the listener counts its connections there. */
	s = server_stats_open(xprt, (struct sockaddr *)&local, rdma_port,
			      RDMA_FAIL_NONE);
	sa_set_port((struct sockaddr *)&local, rdma_port);
	params.inline_send = cfg->inline_send;
	params.inline_recv = cfg->inline_recv;
	params.credits = cfg->credits;
	params.max_call = cfg->max_call;
	params.remote_inv = cfg->remote_invalidate;

	shim_busy++;
	ret = svc_rdma_listen(xprt, (struct sockaddr *)&local, sendsz, recvsz,
			      &params, s, &why);
	shim_busy--;
	/* Logs show the TCP side's address and port. */
	sa_set_port((struct sockaddr *)&local, tcp_port);
	if (ret < 0) {
		log_server((struct sockaddr *)&local, rdma_port, false, why,
			   strerror(-ret));
		if (cfg->mode == SHIM_MODE_REQUIRE_RDMA)
			return server_required_fails(xprt, -ret);
		/* The slot stays, as the TCP-only listener's. */
		shim_stats_fallback(why);
		if (s) {
			s->transport = SHIM_STATS_TCP;
			s->rdma_port = 0;
			s->reason = why;
		}
		shim_stats_publish(s);
		return xprt;
	}
	log_server((struct sockaddr *)&local, rdma_port, true, RDMA_FAIL_NONE, NULL);
	shim_stats_publish(s);
	return xprt;
}
