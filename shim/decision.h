/*
 * The transport decision as a pure function: what route.c learnt about a
 * transport being created (configuration, rule, negative cache, the RDMA
 * attempt) in, what to do and why out.  No I/O, no state: route.c gathers
 * the facts, asks, and carries the answer out (log, statistics, create).
 */
#ifndef SHIM_DECISION_H
#define SHIM_DECISION_H

#include <stdbool.h>

#include <rpc/rpc.h>

#include "common/reason.h"
#include "config/shim_config.h"

/* What a create does. */
enum route_action {
	ROUTE_REAL,	/* libtirpc's transport, untouched, not logged */
	ROUTE_TRY,	/* attempt RDMA, then ask again with its result */
	ROUTE_RDMA,	/* the RDMA transport (the attempt succeeded) */
	ROUTE_TCP,	/* libtirpc's TCP transport, logged and counted */
	ROUTE_FAIL,	/* no transport: rpc_createerr says why */
};

/* What decided it (the log line's detail). */
enum route_by {
	ROUTE_BY_NOTHING,	/* not the shim's: disabled, not IP, nested */
	ROUTE_BY_BAD_CONFIG,	/* the configuration has errors */
	ROUTE_BY_MODE,		/* mode = tcp-only */
	ROUTE_BY_RULE,		/* a "rule = tcp ..." matched */
	ROUTE_BY_NEGCACHE,	/* the peer failed recently */
	ROUTE_BY_ATTEMPT,	/* the RDMA attempt (or its success) */
};

struct route_facts {
	bool server;		/* svc_vc_create (a listener), else clnt_vc_create */
	bool applies;		/* enabled, IP, not nested (servers: a listener) */
	bool config_bad;
	enum shim_mode mode;
	enum shim_action rule;	/* the rules' answer (SHIM_ACTION_RDMA: none) */
	bool cached;		/* clients: the negative cache holds the peer */
	enum rdma_fail cached_why;
	bool tried;		/* the RDMA attempt was made ... */
	enum rdma_fail result;	/* ... with this result (NONE: success) */
	int err;		/* ... and this errno (0: none) */
};

struct route_decision {
	enum route_action action;
	enum route_by by;
	/*
	 * ROUTE_TCP: the reason counted; ROUTE_REAL: the reason counted, or
	 * NONE when nothing is; ROUTE_FAIL: the reason logged.
	 */
	enum rdma_fail why;
	int err;		/* ROUTE_FAIL: rpc_createerr's re_errno */
};

struct route_decision route_decide(const struct route_facts *f);

/*
 * ROUTE_FAIL: set ce (the calling thread's rpc_createerr) as the failed
 * create leaves it.
 */
void route_createerr(const struct route_decision *d,
		     __typeof__(rpc_createerr) *ce);

#endif
