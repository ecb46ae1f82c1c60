/*
 * Policy: decide, per transport being created, whether it runs over
 * RPC-over-RDMA or stays the real libtirpc TCP transport, and say so once
 * per peer in the log.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/log_once.h"
#include "common/sockaddr.h"
#include "common/stats.h"
#include "decision.h"
#include "module.h"
#include "negcache.h"
#include "negshare.h"
#include "route.h"
#include "shim.h"
#include "transport/hooks.h"
#include "transport/rpcrdma_neg.h"

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

/* The transport's name for the setting (rpcrdma_neg.h). */
static unsigned int
rpcrdma_want_of(enum shim_rpcrdma_version v)
{
	switch (v) {
	case SHIM_RPCRDMA_V1:
		return RPCRDMA_WANT_V1;
	case SHIM_RPCRDMA_V2:
		return RPCRDMA_WANT_V2;
	default:
		return RPCRDMA_WANT_AUTO;
	}
}

void
log_client_rdma(const struct sockaddr *dst, uint32_t prog, uint32_t vers,
		const struct clnt_rdma_info *info, unsigned int credits)
{
	enum shim_log_level level = first_time(dst, prog, false, true,
					       RDMA_FAIL_NONE) ?
				    SHIM_LOG_INFO : SHIM_LOG_DEBUG;
	char peer[80], pname[96];

	/* Naming the program reads /etc/rpc: only for a line written. */
	if (!shim_log_enabled(level))
		return;
	sa_format(dst, peer, sizeof(peer));
	prog_format(prog, pname, sizeof(pname));
	shim_log(level,
		 "client %s version %u to %s: RDMA, inline %u/%u%s, credits %u requested, R=%d, RPC-over-RDMA version %s",
		 pname, vers, peer, info->send_max, info->recv_max,
		 info->peer_pdata ? "" : " (peer sent no RFC 8797 private data)",
		 credits, info->rinv,
		 info->rpcrdma_vers == 2 ? "2 offered" : "1");
}

void
log_client_tcp(const struct sockaddr *dst, uint32_t prog, uint32_t vers,
	       enum rdma_fail why, const char *detail)
{
	enum shim_log_level level = first_time(dst, prog, false, false, why) ?
				    SHIM_LOG_INFO : SHIM_LOG_DEBUG;
	char peer[80], pname[96];

	if (!shim_log_enabled(level))
		return;
	sa_format(dst, peer, sizeof(peer));
	prog_format(prog, pname, sizeof(pname));
	shim_log(level,
		 "client %s version %u to %s: TCP (%s%s%s)", pname, vers, peer,
		 rdma_fail_str(why), detail ? ": " : "", detail ? detail : "");
}

/* ------------------------------------------------------------------ */
/* The negative cache, this process's and the one shared with others   */
/* ------------------------------------------------------------------ */

static pthread_once_t share_once = PTHREAD_ONCE_INIT;
static char share_dir[PATH_MAX];

static void
share_once_fn(void)
{
	if (!negshare_dir(share_dir, sizeof(share_dir)))
		share_dir[0] = '\0';
}

/* The shared cache's directory, or NULL. */
static const char *
shared_dir(void)
{
	pthread_once(&share_once, share_once_fn);
	return share_dir[0] ? share_dir : NULL;
}

bool
negative_lookup(const struct sockaddr *peer, unsigned int ttl_s,
		enum rdma_fail *why, char *detail, size_t len)
{
	struct negshare_hit hit;
	time_t now = time(NULL);
	const char *dir;

	detail[0] = '\0';
	if (negcache_lookup(peer, why))
		return true;
	dir = shared_dir();
	if (!ttl_s || !dir || !negshare_lookup(dir, peer, ttl_s, now, &hit))
		return false;
	*why = hit.why;
	negcache_add(peer, hit.why, (unsigned int)(hit.expires - now));
	snprintf(detail, len, "%s, found by process %d, for %lld s more (%s/%s)",
		 rdma_fail_str(hit.why), (int)hit.pid,
		 (long long)(hit.expires - now), dir, NEGSHARE_FILE);
	return true;
}

void
negative_add(const struct sockaddr *peer, enum rdma_fail why,
	     unsigned int ttl_s)
{
	const char *dir = shared_dir();

	negcache_add(peer, why, ttl_s);
	if (dir)
		negshare_add(dir, peer, why, ttl_s, time(NULL));
}

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

/*
 * The real TCP client, counted as a fallback for why and published in the
 * statistics with its calls.
 */
CLIENT *
client_tcp(int fd, const struct netbuf *raddr, rpcprog_t prog, rpcvers_t vers,
	   u_int sendsz, u_int recvsz, enum rdma_fail why,
	   unsigned int lazy_after)
{
	CLIENT *cl = shim_real.clnt_vc_create(fd, raddr, prog, vers, sendsz,
					      recvsz);
	struct shim_stats_conn *s;
	struct sockaddr_storage local;
	socklen_t len = sizeof(local);
	bool lazy;

	if (why != RDMA_FAIL_NONE)
		shim_stats_fallback(why);
	if (!cl)
		return NULL;
	if (getsockname(fd, (struct sockaddr *)&local, &len) < 0)
		local.ss_family = AF_UNSPEC;
	/* Making the file is most of what statistics cost a first call. */
	lazy = lazy_after && !shim_stats_made();
	s = lazy ? malloc(sizeof(*s)) :
	    shim_stats_open(SHIM_STATS_CLIENT, SHIM_STATS_TCP,
			    (const struct sockaddr *)raddr->buf,
			    (struct sockaddr *)&local);
	if (!s)
		return cl;
	if (lazy)
		shim_stats_record(s, SHIM_STATS_CLIENT, SHIM_STATS_TCP,
				  (const struct sockaddr *)raddr->buf,
				  (struct sockaddr *)&local);
	s->reason = why;
	s->prog = (uint32_t)prog;
	s->vers = (uint32_t)vers;
	if (lazy) {
		if (clnt_hook_stats_lazy(cl, s, lazy_after, shim_stats_adopt))
			free(s);
		return cl;
	}
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


/* The RDMA client, once the RDMA module is loaded (core.c). */
CLIENT *
client_rdma(int fd, const struct netbuf *raddr, const struct sockaddr *dst,
	    rpcprog_t prog, rpcvers_t vers, u_int sendsz, u_int recvsz,
	    const struct clnt_rdma_params *params, struct clnt_rdma_info *info,
	    enum rdma_fail *why, int *err)
{
	const struct shim_rdma_ops *rdma = shim_rdma();

	if (!rdma) {
		*why = RDMA_FAIL_NO_DEVICE;
		*err = ELIBACC;
		return NULL;
	}
	return rdma->clnt_create(fd, raddr, dst, prog, vers, sendsz, recvsz,
				 params, info, why, err);
}

/*
 * require-rdma: the create fails with an RPC error naming the reason;
 * cached when RDMA was not tried again because it failed recently.
 */
static CLIENT *
client_required_fails(const struct sockaddr *dst,
		      const struct route_decision *d)
{
	char peer[80];

	sa_format(dst, peer, sizeof(peer));
	shim_log(SHIM_LOG_ERROR, "client to %s: RDMA required, but %s%s",
		 peer, d->why == RDMA_FAIL_CONFIG ? "the configuration has errors" :
		 rdma_fail_str(d->why),
		 d->by == ROUTE_BY_NEGCACHE ?
		 " (a moment ago: not tried again within negative_cache)" : "");
	route_createerr(d, shim_real.createerr());
	return NULL;
}

/* The rule that matched, for the log: rule "<text>" (<origin>). */
static const char *
rule_detail(const struct shim_rule *rule, char *buf, size_t len)
{
	snprintf(buf, len, "rule \"%s\" (%s)", rule->text, rule->origin);
	return buf;
}

/* What the log adds to a TCP decision's reason, or NULL. */
static const char *
tcp_detail(const struct route_decision *d, const struct route_facts *f,
	   const struct shim_rule *rule, char *buf, size_t len)
{
	switch (d->by) {
	case ROUTE_BY_MODE:
		return "mode tcp-only";
	case ROUTE_BY_RULE:
		return rule_detail(rule, buf, len);
	case ROUTE_BY_NEGCACHE:
		return rdma_fail_str(f->cached_why);
	default:
		return f->err ? strerror(f->err) : NULL;
	}
}

/* Whether a client's first calls go over TCP while RDMA is set up. */
static bool
upgrades(const struct shim_config *cfg, enum shim_mode mode)
{
	return cfg->upgrade == SHIM_UPGRADE_BACKGROUND &&
	       mode == SHIM_MODE_PREFER_RDMA;
}

CLIENT *
shim_clnt_vc_create(int fd, const struct netbuf *raddr, rpcprog_t prog,
		    rpcvers_t vers, u_int sendsz, u_int recvsz)
{
	const struct shim_config *cfg;
	const struct shim_rule *rule = NULL;
	struct route_facts f = { .server = false };
	struct route_decision d;
	struct clnt_rdma_params params;
	struct clnt_rdma_info info;
	/* dst: the TCP address; rdst: with the RDMA port (port_map). */
	struct sockaddr_storage dst, rdst;
	const struct sockaddr *shown;
	char detail[256], shared[PATH_MAX + 128] = "";
	bool handled;
	CLIENT *cl = NULL;

	shim_init();
	cfg = shim_cfg();
	/* AF_LOCAL (the local rpcbind) and anything not IP stays as it is. */
	f.applies = !shim_busy && cfg->enable && raddr && netbuf_is_inet(raddr);
	if (f.applies) {
		memset(&dst, 0, sizeof(dst));
		memcpy(&dst, raddr->buf,
		       raddr->len > sizeof(dst) ? sizeof(dst) : raddr->len);
		f.config_bad = cfg->bad;
		f.mode = cfg->mode;
	}
	if (f.applies && !f.config_bad && f.mode != SHIM_MODE_TCP_ONLY) {
		f.rule = shim_config_client_action(cfg, (uint32_t)prog,
						   (uint32_t)vers,
						   (struct sockaddr *)&dst, &rule);
		rdst = dst;
		sa_set_port((struct sockaddr *)&rdst,
			    shim_config_rdma_port(cfg,
						  sa_port((struct sockaddr *)&dst)));
		/*
		 * upgrade = background: the first call goes over TCP whatever
		 * the cache says; the second call looks into it before the
		 * attempt (route_upgrade.c), so that a process making one call
		 * never reads it.
		 */
		if (f.rule != SHIM_ACTION_TCP && !upgrades(cfg, f.mode))
			f.cached = negative_lookup((struct sockaddr *)&rdst,
						   cfg->negative_cache_s,
						   &f.cached_why, shared,
						   sizeof(shared));
	}

	d = route_decide(&f);
	if (d.action == ROUTE_TRY) {
		params.inline_send = cfg->inline_send;
		params.inline_recv = cfg->inline_recv;
		params.credits = cfg->credits;
		params.connect_timeout_ms = (int)cfg->connect_timeout_ms;
		params.max_reply = cfg->max_reply;
		params.write_chunk = cfg->write_chunk;
		params.max_pinned = cfg->max_pinned;
		params.remote_inv = cfg->remote_invalidate;
		params.poll_us = cfg->poll_us;
		params.rpcrdma_want = rpcrdma_want_of(cfg->rpcrdma_version);

		/* Calls go over TCP while RDMA is set up (route_upgrade.c). */
		if (upgrades(cfg, f.mode)) {
			cl = route_upgrade_client(fd, raddr,
						  (struct sockaddr *)&rdst,
						  prog, vers, sendsz, recvsz,
						  &params, cfg->negative_cache_s,
						  &handled);
			if (handled)
				return cl;
		}
		shim_busy++;
		cl = client_rdma(fd, raddr, (struct sockaddr *)&rdst, prog,
				 vers, sendsz, recvsz, &params, &info,
				 &f.result, &f.err);
		shim_busy--;
		f.tried = true;
		if (cl)
			f.result = RDMA_FAIL_NONE;
		else
			negative_add((struct sockaddr *)&rdst, f.result,
				     cfg->negative_cache_s);
		d = route_decide(&f);
	}

	/* Configuration decisions name the TCP port, the others the RDMA one. */
	shown = (struct sockaddr *)(d.by == ROUTE_BY_NEGCACHE ||
				    d.by == ROUTE_BY_ATTEMPT ? &rdst : &dst);
	switch (d.action) {
	case ROUTE_RDMA:
		log_client_rdma(shown, (uint32_t)prog, (uint32_t)vers, &info,
				params.credits);
		return cl;
	case ROUTE_FAIL:
		return client_required_fails(shown, &d);
	case ROUTE_TCP:
		log_client_tcp(shown, (uint32_t)prog, (uint32_t)vers, d.why,
			       d.by == ROUTE_BY_NEGCACHE && shared[0] ? shared :
			       tcp_detail(&d, &f, rule, detail, sizeof(detail)));
		return client_tcp(fd, raddr, prog, vers, sendsz, recvsz, d.why,
				  0);
	default:
		/* Untouched; a configuration with errors is only counted. */
		if (d.why != RDMA_FAIL_NONE)
			shim_stats_fallback(d.why);
		return shim_real.clnt_vc_create(fd, raddr, prog, vers, sendsz,
						recvsz);
	}
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

/* The RDMA listener, once the RDMA module is loaded (core.c). */
static int
server_rdma(SVCXPRT *xprt, const struct sockaddr *local, u_int sendsz,
	    u_int recvsz, const struct svc_rdma_params *params,
	    struct shim_stats_conn *s, enum rdma_fail *why)
{
	const struct shim_rdma_ops *rdma = shim_rdma();

	if (!rdma) {
		*why = RDMA_FAIL_NO_DEVICE;
		return -ELIBACC;
	}
	return rdma->svc_listen(xprt, local, sendsz, recvsz, params, s, why);
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
server_required_fails(SVCXPRT *xprt, const struct route_decision *d)
{
	if (d->by == ROUTE_BY_BAD_CONFIG)
		shim_log(SHIM_LOG_ERROR,
			 "server: RDMA required, but the configuration has errors");
	shim_real.xprt_unregister(xprt);
	xprt->xp_fd = RPC_ANYFD;
	svc_destroy(xprt);
	route_createerr(d, shim_real.createerr());
	return NULL;
}

SVCXPRT *
shim_svc_vc_create(int fd, u_int sendsz, u_int recvsz)
{
	const struct shim_config *cfg;
	const struct shim_rule *rule = NULL;
	struct route_facts f = { .server = true };
	struct route_decision d;
	struct svc_rdma_params params;
	struct sockaddr_storage local, peer;
	socklen_t len;
	uint16_t tcp_port, rdma_port = 0;
	struct shim_stats_conn *s = NULL;
	char detail[256];
	SVCXPRT *xprt;
	int ret;

	shim_init();
	cfg = shim_cfg();
	xprt = shim_real.svc_vc_create(fd, sendsz, recvsz);
	if (!xprt)
		return xprt;

	f.applies = !shim_busy && cfg->enable;
	len = sizeof(local);
	if (f.applies &&
	    (getsockname(fd, (struct sockaddr *)&local, &len) < 0 ||
	     (local.ss_family != AF_INET && local.ss_family != AF_INET6)))
		f.applies = false;
	/* A connected socket is one client's connection, not a listener. */
	len = sizeof(peer);
	if (f.applies && getpeername(fd, (struct sockaddr *)&peer, &len) == 0)
		f.applies = false;
	if (f.applies) {
		f.config_bad = cfg->bad;
		f.mode = cfg->mode;
	}
	if (f.applies && !f.config_bad && f.mode != SHIM_MODE_TCP_ONLY)
		f.rule = shim_config_server_action(cfg, (struct sockaddr *)&local,
						   &rule);

	d = route_decide(&f);
	if (d.action == ROUTE_TRY) {
		tcp_port = sa_port((struct sockaddr *)&local);
		rdma_port = shim_config_rdma_port(cfg, tcp_port);
		/* First: the listener counts its connections there. */
		s = server_stats_open(xprt, (struct sockaddr *)&local,
				      rdma_port, RDMA_FAIL_NONE);
		sa_set_port((struct sockaddr *)&local, rdma_port);
		params.inline_send = cfg->inline_send;
		params.inline_recv = cfg->inline_recv;
		params.credits = cfg->credits;
		params.max_call = cfg->max_call;
		params.max_pinned = cfg->max_pinned;
		params.remote_inv = cfg->remote_invalidate;
		params.poll_us = cfg->poll_us;
		params.defer_wait_ms = cfg->defer_wait_ms;
		params.rpcrdma_want = rpcrdma_want_of(cfg->rpcrdma_version);

		shim_busy++;
		ret = server_rdma(xprt, (struct sockaddr *)&local, sendsz,
				  recvsz, &params, s, &f.result);
		shim_busy--;
		/* Logs show the TCP side's address and port. */
		sa_set_port((struct sockaddr *)&local, tcp_port);
		f.tried = true;
		f.err = ret < 0 ? -ret : 0;
		if (ret >= 0)
			f.result = RDMA_FAIL_NONE;
		else
			log_server((struct sockaddr *)&local, rdma_port, false,
				   f.result, strerror(f.err));
		d = route_decide(&f);
	}

	switch (d.action) {
	case ROUTE_RDMA:
		log_server((struct sockaddr *)&local, rdma_port, true,
			   RDMA_FAIL_NONE, NULL);
		shim_stats_publish(s);
		return xprt;
	case ROUTE_FAIL:
		return server_required_fails(xprt, &d);
	case ROUTE_TCP:
		/* A failed attempt was logged above, before any failure. */
		if (d.by != ROUTE_BY_ATTEMPT)
			log_server((struct sockaddr *)&local, 0, false, d.why,
				   tcp_detail(&d, &f, rule, detail,
					      sizeof(detail)));
		if (s) {
			/* The slot stays, as the TCP-only listener's. */
			shim_stats_fallback(d.why);
			s->transport = SHIM_STATS_TCP;
			s->rdma_port = 0;
			s->reason = d.why;
			shim_stats_publish(s);
		} else {
			server_publish(xprt, (struct sockaddr *)&local, 0,
				       d.why);
		}
		return xprt;
	default:
		if (d.why != RDMA_FAIL_NONE)
			shim_stats_fallback(d.why);
		return xprt;
	}
}
