/*
 * The transport decision (shim/decision.c): named cases first, each with
 * its expected action, reason and errno; then every combination of mode x
 * rule x configuration x negative cache x RDMA attempt, for clients and
 * servers, held to the rules the README states.
 */
#include <errno.h>
#include <string.h>

#include <rpc/rpc.h>

#include "check.h"
#include "decision.h"

static const char *const action_names[] = {
	[ROUTE_REAL] = "REAL", [ROUTE_TRY] = "TRY", [ROUTE_RDMA] = "RDMA",
	[ROUTE_TCP] = "TCP", [ROUTE_FAIL] = "FAIL",
};

static const char *const by_names[] = {
	[ROUTE_BY_NOTHING] = "nothing", [ROUTE_BY_BAD_CONFIG] = "bad-config",
	[ROUTE_BY_MODE] = "mode", [ROUTE_BY_RULE] = "rule",
	[ROUTE_BY_NEGCACHE] = "negcache", [ROUTE_BY_ATTEMPT] = "attempt",
};

static const char *const mode_names[] = {
	[SHIM_MODE_PREFER_RDMA] = "prefer-rdma",
	[SHIM_MODE_REQUIRE_RDMA] = "require-rdma",
	[SHIM_MODE_TCP_ONLY] = "tcp-only",
};

/* A client of an IP peer, shim enabled, good configuration, prefer-rdma. */
static struct route_facts
client(void)
{
	struct route_facts f = {
		.server = false, .applies = true, .mode = SHIM_MODE_PREFER_RDMA,
		.rule = SHIM_ACTION_RDMA,
	};

	return f;
}

static struct route_facts
tried(struct route_facts f, enum rdma_fail result, int err)
{
	f.tried = true;
	f.result = result;
	f.err = err;
	return f;
}

static struct route_facts
cached(struct route_facts f, enum rdma_fail why)
{
	f.cached = true;
	f.cached_why = why;
	return f;
}

static struct route_facts
mode(struct route_facts f, enum shim_mode m)
{
	f.mode = m;
	return f;
}

static void
expect(const char *name, struct route_facts f, enum route_action action,
       enum route_by by, enum rdma_fail why, int err)
{
	struct route_decision d = route_decide(&f);

	CHECK(d.action == action && d.by == by && d.why == why && d.err == err,
	      "%s: %s by %s, %s, errno %d", name, action_names[action],
	      by_names[by], rdma_fail_token(why), err);
	if (d.action != action || d.by != by || d.why != why || d.err != err)
		printf("#   got %s by %s, %s, errno %d\n", action_names[d.action],
		       by_names[d.by], rdma_fail_token(d.why), d.err);
}

static void
test_named_cases(void)
{
	struct route_facts c = client(), s = client(), f;

	s.server = true;
	f = c;
	f.applies = false;
	expect("not the shim's (AF_LOCAL, enable = no, nested)", f,
	       ROUTE_REAL, ROUTE_BY_NOTHING, RDMA_FAIL_NONE, 0);
	f.mode = SHIM_MODE_REQUIRE_RDMA;
	f.config_bad = true;
	expect("not the shim's, even in require-rdma with errors", f,
	       ROUTE_REAL, ROUTE_BY_NOTHING, RDMA_FAIL_NONE, 0);

	expect("prefer-rdma: RDMA is tried", c, ROUTE_TRY, ROUTE_BY_ATTEMPT,
	       RDMA_FAIL_NONE, 0);
	expect("prefer-rdma, the attempt succeeded", tried(c, RDMA_FAIL_NONE, 0),
	       ROUTE_RDMA, ROUTE_BY_ATTEMPT, RDMA_FAIL_NONE, 0);
	expect("prefer-rdma, refused: TCP for refused", tried(c, RDMA_FAIL_REFUSED, ECONNREFUSED),
	       ROUTE_TCP, ROUTE_BY_ATTEMPT, RDMA_FAIL_REFUSED, 0);
	expect("prefer-rdma, no device: TCP for no-device", tried(c, RDMA_FAIL_NO_DEVICE, ENODEV),
	       ROUTE_TCP, ROUTE_BY_ATTEMPT, RDMA_FAIL_NO_DEVICE, 0);
	expect("prefer-rdma, ulimit -l: TCP for memlock", tried(c, RDMA_FAIL_MEMLOCK, ENOMEM),
	       ROUTE_TCP, ROUTE_BY_ATTEMPT, RDMA_FAIL_MEMLOCK, 0);
	expect("prefer-rdma, in the negative cache: TCP, not tried",
	       cached(c, RDMA_FAIL_TIMEOUT), ROUTE_TCP, ROUTE_BY_NEGCACHE,
	       RDMA_FAIL_NEGCACHE, 0);

	f = mode(c, SHIM_MODE_REQUIRE_RDMA);
	expect("require-rdma: RDMA is tried", f, ROUTE_TRY, ROUTE_BY_ATTEMPT,
	       RDMA_FAIL_NONE, 0);
	expect("require-rdma, the attempt succeeded", tried(f, RDMA_FAIL_NONE, 0),
	       ROUTE_RDMA, ROUTE_BY_ATTEMPT, RDMA_FAIL_NONE, 0);
	expect("require-rdma, refused: the create fails with the attempt's errno",
	       tried(f, RDMA_FAIL_REFUSED, ECONNREFUSED), ROUTE_FAIL,
	       ROUTE_BY_ATTEMPT, RDMA_FAIL_REFUSED, ECONNREFUSED);
	expect("require-rdma, timed out: ETIMEDOUT", tried(f, RDMA_FAIL_TIMEOUT, ETIMEDOUT),
	       ROUTE_FAIL, ROUTE_BY_ATTEMPT, RDMA_FAIL_TIMEOUT, ETIMEDOUT);
	expect("require-rdma, a failure without errno: ECONNREFUSED",
	       tried(f, RDMA_FAIL_NOT_RDMA, 0), ROUTE_FAIL, ROUTE_BY_ATTEMPT,
	       RDMA_FAIL_NOT_RDMA, ECONNREFUSED);
	expect("require-rdma, in the negative cache: fails for the cached reason",
	       cached(f, RDMA_FAIL_UNREACHABLE), ROUTE_FAIL, ROUTE_BY_NEGCACHE,
	       RDMA_FAIL_UNREACHABLE, ECONNREFUSED);
	f.config_bad = true;
	expect("require-rdma, configuration errors: fails with EINVAL", f,
	       ROUTE_FAIL, ROUTE_BY_BAD_CONFIG, RDMA_FAIL_CONFIG, EINVAL);

	f = c;
	f.config_bad = true;
	expect("prefer-rdma, configuration errors: libtirpc untouched, counted as config",
	       f, ROUTE_REAL, ROUTE_BY_BAD_CONFIG, RDMA_FAIL_CONFIG, 0);
	f = mode(c, SHIM_MODE_TCP_ONLY);
	expect("tcp-only: TCP for config", f, ROUTE_TCP, ROUTE_BY_MODE,
	       RDMA_FAIL_CONFIG, 0);
	f.rule = SHIM_ACTION_TCP;
	expect("tcp-only and a TCP rule: the mode is named", f, ROUTE_TCP,
	       ROUTE_BY_MODE, RDMA_FAIL_CONFIG, 0);

	f = c;
	f.rule = SHIM_ACTION_TCP;
	expect("rule = tcp: TCP for config", f, ROUTE_TCP, ROUTE_BY_RULE,
	       RDMA_FAIL_CONFIG, 0);
	expect("rule = tcp wins over require-rdma (rpcbind stays on TCP)",
	       mode(f, SHIM_MODE_REQUIRE_RDMA), ROUTE_TCP, ROUTE_BY_RULE,
	       RDMA_FAIL_CONFIG, 0);
	expect("rule = tcp wins over the negative cache",
	       cached(f, RDMA_FAIL_REFUSED), ROUTE_TCP, ROUTE_BY_RULE,
	       RDMA_FAIL_CONFIG, 0);

	expect("server, prefer-rdma: listen over RDMA is tried", s, ROUTE_TRY,
	       ROUTE_BY_ATTEMPT, RDMA_FAIL_NONE, 0);
	expect("server, no device: TCP only, for no-device", tried(s, RDMA_FAIL_NO_DEVICE, ENODEV),
	       ROUTE_TCP, ROUTE_BY_ATTEMPT, RDMA_FAIL_NO_DEVICE, 0);
	expect("server, require-rdma, listen failed without errno: ENODEV",
	       tried(mode(s, SHIM_MODE_REQUIRE_RDMA), RDMA_FAIL_ERROR, 0),
	       ROUTE_FAIL, ROUTE_BY_ATTEMPT, RDMA_FAIL_ERROR, ENODEV);
	expect("server, require-rdma, listen failed with EADDRINUSE",
	       tried(mode(s, SHIM_MODE_REQUIRE_RDMA), RDMA_FAIL_ERROR, EADDRINUSE),
	       ROUTE_FAIL, ROUTE_BY_ATTEMPT, RDMA_FAIL_ERROR, EADDRINUSE);
}

/* ------------------------------------------------------------------ */
/* Every combination                                                   */
/* ------------------------------------------------------------------ */

static const enum rdma_fail attempt_failures[] = {
	RDMA_FAIL_NO_DEVICE, RDMA_FAIL_NOT_RDMA, RDMA_FAIL_REFUSED,
	RDMA_FAIL_UNREACHABLE, RDMA_FAIL_TIMEOUT, RDMA_FAIL_ERROR,
	RDMA_FAIL_MEMLOCK,
};
#define NFAILURES (sizeof(attempt_failures) / sizeof(attempt_failures[0]))

/* The negative cache holds only what says something about the peer. */
static const enum rdma_fail cached_reasons[] = {
	RDMA_FAIL_NO_DEVICE, RDMA_FAIL_NOT_RDMA, RDMA_FAIL_REFUSED,
	RDMA_FAIL_UNREACHABLE, RDMA_FAIL_TIMEOUT,
};
#define NCACHED (sizeof(cached_reasons) / sizeof(cached_reasons[0]))

/* The rules' answer: no rule and "rule = rdma" both read SHIM_ACTION_RDMA. */
static const struct {
	const char *name;
	enum shim_action action;
} rules[] = {
	{ "no rule", SHIM_ACTION_RDMA },
	{ "rule = rdma", SHIM_ACTION_RDMA },
	{ "rule = tcp", SHIM_ACTION_TCP },
};

/* Why a combination broke a rule; the first one is kept for the report. */
static unsigned int violations;
static char first_violation[512];

static void
violated(const struct route_facts *f, const struct route_decision *d,
	 const char *rule)
{
	if (violations++)
		return;
	snprintf(first_violation, sizeof(first_violation),
		 "%s: server=%d applies=%d bad=%d mode=%s rule=%d cached=%d(%s) "
		 "tried=%d result=%s err=%d -> %s by %s, %s, errno %d",
		 rule, f->server, f->applies, f->config_bad, mode_names[f->mode],
		 f->rule, f->cached, rdma_fail_token(f->cached_why), f->tried,
		 rdma_fail_token(f->result), f->err, action_names[d->action],
		 by_names[d->by], rdma_fail_token(d->why), d->err);
}

/* The rules every decision keeps, whatever the facts. */
static void
check_rules(const struct route_facts *f)
{
	struct route_decision d = route_decide(f), before;
	struct route_facts untried = *f;
	bool required = f->mode == SHIM_MODE_REQUIRE_RDMA;
	bool shim = f->applies && !f->config_bad;
	bool config_tcp = shim && (f->mode == SHIM_MODE_TCP_ONLY ||
				   f->rule == SHIM_ACTION_TCP);
	bool due = shim && !config_tcp && !f->cached;
	int none_err = f->server ? ENODEV : ECONNREFUSED;

	untried.tried = false;
	untried.result = RDMA_FAIL_NONE;
	untried.err = 0;
	before = route_decide(&untried);

	if (!f->applies && (d.action != ROUTE_REAL || d.why != RDMA_FAIL_NONE))
		violated(f, &d, "not the shim's: libtirpc untouched, nothing counted");
	if (f->applies && f->config_bad &&
	    !(required ? d.action == ROUTE_FAIL && d.err == EINVAL :
			 d.action == ROUTE_REAL && d.why == RDMA_FAIL_CONFIG))
		violated(f, &d, "configuration errors: untouched (counted) or EINVAL");
	if ((d.action == ROUTE_TRY) != (due && !f->tried))
		violated(f, &d, "RDMA is tried exactly when nothing forbids it");
	if ((d.action == ROUTE_RDMA) != (due && f->tried && f->result == RDMA_FAIL_NONE))
		violated(f, &d, "RDMA only after a successful attempt");
	if (d.action == ROUTE_FAIL && (!required || d.err == 0 || d.why == RDMA_FAIL_NONE))
		violated(f, &d, "only require-rdma fails a create, with an errno and a reason");
	if (d.action == ROUTE_TCP && (d.why == RDMA_FAIL_NONE || d.err != 0))
		violated(f, &d, "TCP always has a reason");
	if (config_tcp &&
	    (d.action != ROUTE_TCP || d.why != RDMA_FAIL_CONFIG ||
	     d.by != (f->mode == SHIM_MODE_TCP_ONLY ? ROUTE_BY_MODE : ROUTE_BY_RULE)))
		violated(f, &d, "tcp-only, then a TCP rule, keep TCP in every mode");
	if (shim && !config_tcp && f->cached &&
	    !(required ? d.action == ROUTE_FAIL && d.why == f->cached_why &&
			 d.err == none_err :
			 d.action == ROUTE_TCP && d.why == RDMA_FAIL_NEGCACHE))
		violated(f, &d, "a cached peer is not tried: TCP, or the cached reason");
	if (due && f->tried && f->result != RDMA_FAIL_NONE &&
	    !(d.why == f->result &&
	      (required ? d.action == ROUTE_FAIL &&
			  d.err == (f->err ? f->err : none_err) :
			  d.action == ROUTE_TCP)))
		violated(f, &d, "a failed attempt: TCP, or the create fails, for its reason");
	/* What the attempt gave cannot matter before the attempt is due. */
	if (before.action != ROUTE_TRY && memcmp(&before, &d, sizeof(d)) != 0)
		violated(f, &d, "the attempt's result only counts once it is due");
}

static void
test_every_combination(void)
{
	unsigned int server, applies, bad, m, r, c, a, e, n = 0;

	for (server = 0; server < 2; server++)
	for (m = 0; m < 3; m++)
	for (r = 0; r < 3; r++) {
		violations = 0;
		n = 0;
		for (applies = 0; applies < 2; applies++)
		for (bad = 0; bad < 2; bad++)
		/* Servers never consult the negative cache. */
		for (c = 0; c <= (server ? 0 : NCACHED); c++)
		/* 0: not tried; 1: success; then each failure, without and with errno. */
		for (a = 0; a < 2 + NFAILURES; a++)
		for (e = 0; e < (a < 2 ? 1u : 2u); e++) {
			struct route_facts f = {
				.server = server, .applies = applies,
				.config_bad = bad, .mode = (enum shim_mode)m,
				.rule = rules[r].action,
			};

			if (c) {
				f.cached = true;
				f.cached_why = cached_reasons[c - 1];
			}
			if (a == 1)
				f = tried(f, RDMA_FAIL_NONE, 0);
			else if (a >= 2)
				f = tried(f, attempt_failures[a - 2], e ? EHOSTUNREACH : 0);
			check_rules(&f);
			n++;
		}
		CHECK(violations == 0, "%s, %s, %s: %u combinations keep every rule",
		      server ? "server" : "client", mode_names[m], rules[r].name, n);
		if (violations)
			printf("#   %u violations, first: %s\n", violations, first_violation);
	}
}

static void
test_createerr(void)
{
	struct route_facts f = tried(mode(client(), SHIM_MODE_REQUIRE_RDMA),
				     RDMA_FAIL_TIMEOUT, ETIMEDOUT);
	struct route_decision d = route_decide(&f);

	memset(&rpc_createerr, 0, sizeof(rpc_createerr));
	route_createerr(&d, &rpc_createerr);
	CHECK(rpc_createerr.cf_stat == RPC_SYSTEMERROR &&
	      rpc_createerr.cf_error.re_errno == ETIMEDOUT,
	      "a failed create leaves RPC_SYSTEMERROR with the errno in rpc_createerr");
	CHECK(strstr(clnt_spcreateerror("x"), "Remote system error") != NULL,
	      "clnt_spcreateerror says: %s", clnt_spcreateerror("x"));
}

int
main(void)
{
	test_named_cases();
	test_every_combination();
	test_createerr();
	return check_done();
}
