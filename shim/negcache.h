/*
 * Negative cache: peers whose RDMA attempt failed recently go straight to
 * TCP until the entry expires.  "No RDMA device" holds for every peer and
 * is kept as one wildcard entry.
 *
 * Bounded: adding a peer drops the entries that have expired, and when
 * NEGCACHE_MAX are held, the one that would expire first.
 */
#ifndef SHIM_NEGCACHE_H
#define SHIM_NEGCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <time.h>

#include "common/reason.h"

#define NEGCACHE_MAX 1024

/* Remember that peer failed for why, for ttl_s seconds (0: not at all). */
void negcache_add(const struct sockaddr *peer, enum rdma_fail why,
		  unsigned int ttl_s);

/* True, with the original reason, when peer (or every peer) failed recently. */
bool negcache_lookup(const struct sockaddr *peer, enum rdma_fail *why);

/*
 * The same at a given time (CLOCK_MONOTONIC seconds) instead of the clock's
 * now: the unit test steps time through expiry with these.
 */
void negcache_add_at(const struct sockaddr *peer, enum rdma_fail why,
		     unsigned int ttl_s, time_t now);
bool negcache_lookup_at(const struct sockaddr *peer, enum rdma_fail *why,
			time_t now);

/* fork(): the cache's lock is held across it (shim/fork.c). */
void negcache_fork_lock(void);
void negcache_fork_unlock(void);

/* The entries held, expired or not (for the tests). */
size_t negcache_size(void);

#endif
