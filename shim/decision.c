/*
 * The transport decision (see decision.h), in the order the facts weigh.
 */
#include <errno.h>

#include <rpc/rpc.h>

#include "decision.h"

static struct route_decision
decided(enum route_action action, enum route_by by, enum rdma_fail why, int err)
{
	struct route_decision d = {
		.action = action, .by = by, .why = why, .err = err,
	};

	return d;
}

struct route_decision
route_decide(const struct route_facts *f)
{
	bool required = f->mode == SHIM_MODE_REQUIRE_RDMA;
	/* What a failed create reports when the attempt gave no errno. */
	int none_err = f->server ? ENODEV : ECONNREFUSED;

	if (!f->applies)
		return decided(ROUTE_REAL, ROUTE_BY_NOTHING, RDMA_FAIL_NONE, 0);
	/* Errors: libtirpc untouched (only counted), or no transport at all. */
	if (f->config_bad)
		return required ?
		       decided(ROUTE_FAIL, ROUTE_BY_BAD_CONFIG, RDMA_FAIL_CONFIG, EINVAL) :
		       decided(ROUTE_REAL, ROUTE_BY_BAD_CONFIG, RDMA_FAIL_CONFIG, 0);
	if (f->mode == SHIM_MODE_TCP_ONLY)
		return decided(ROUTE_TCP, ROUTE_BY_MODE, RDMA_FAIL_CONFIG, 0);
	/* Rules come before require-rdma: rpcbind stays on TCP in every mode. */
	if (f->rule == SHIM_ACTION_TCP)
		return decided(ROUTE_TCP, ROUTE_BY_RULE, RDMA_FAIL_CONFIG, 0);
	/* Not tried again; require-rdma names the original reason. */
	if (f->cached)
		return required ?
		       decided(ROUTE_FAIL, ROUTE_BY_NEGCACHE, f->cached_why, none_err) :
		       decided(ROUTE_TCP, ROUTE_BY_NEGCACHE, RDMA_FAIL_NEGCACHE, 0);
	if (!f->tried)
		return decided(ROUTE_TRY, ROUTE_BY_ATTEMPT, RDMA_FAIL_NONE, 0);
	if (f->result == RDMA_FAIL_NONE)
		return decided(ROUTE_RDMA, ROUTE_BY_ATTEMPT, RDMA_FAIL_NONE, 0);
	if (required)
		return decided(ROUTE_FAIL, ROUTE_BY_ATTEMPT, f->result,
			       f->err ? f->err : none_err);
	return decided(ROUTE_TCP, ROUTE_BY_ATTEMPT, f->result, 0);
}

void
route_createerr(const struct route_decision *d, __typeof__(rpc_createerr) *ce)
{
	ce->cf_stat = RPC_SYSTEMERROR;
	ce->cf_error.re_errno = d->err;
}
