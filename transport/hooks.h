/*
 * Hooks on libtirpc's own transports: a copy of the ops table with one
 * entry replaced, hung off the transport, the original kept for the rest.
 */
#ifndef TRANSPORT_HOOKS_H
#define TRANSPORT_HOOKS_H

#include <rpc/rpc.h>

#include "common/stats.h"

/*
 * Run fn(xprt, arg) when xprt is destroyed (svc_destroy), just before its
 * own xp_destroy.  Hooks stack.  Returns 0 or -ENOMEM.
 */
int svc_hook_destroy(SVCXPRT *xprt, void (*fn)(SVCXPRT *xprt, void *arg),
		     void *arg);

/*
 * Count the calls of a libtirpc CLIENT (calls, errors, timeouts) into s
 * and close s when the CLIENT is destroyed.  Returns 0, -ENOMEM, or
 * -EEXIST when cl already has one (one statistics slot per CLIENT).
 */
int clnt_hook_stats(CLIENT *cl, struct shim_stats_conn *s);

/*
 * The same, the slot made only when the CLIENT has made more than after
 * calls: they are counted into rec (malloc()ed, the hook's from now on,
 * filled with shim_stats_record), which adopt (shim_stats_adopt) then
 * copies into the statistics file; when it cannot, the calls go on being
 * counted in rec.  A process that makes one call and exits then has no
 * statistics file made for it.
 */
int clnt_hook_stats_lazy(CLIENT *cl, struct shim_stats_conn *rec,
			 unsigned int after,
			 struct shim_stats_conn *(*adopt)(const struct shim_stats_conn *rec));

#endif
