/*
 * Log once per peer: whether an outcome is new for a peer, so that its
 * line goes out at info the first time and at debug afterwards.
 *
 * One table for the whole process, behind a lock, and bounded: an entry
 * not seen for LOG_ONCE_TTL_S seconds is dropped (the peer is new again),
 * and when LOG_ONCE_MAX entries are held the one seen longest ago goes.
 */
#ifndef COMMON_LOG_ONCE_H
#define COMMON_LOG_ONCE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/sockaddr.h"

#define LOG_ONCE_MAX 1024
#define LOG_ONCE_TTL_S 3600

/* Who asks; each keeps its own entries. */
enum log_once_kind {
	LOG_ONCE_DECISION = 1,	/* a transport's decision (shim/route.c) */
	LOG_ONCE_CONNECTION,	/* an RDMA connection accepted (transport/svc_rdma.c) */
};

/*
 * True the first time (kind, peer, tag) is seen, or when it was last seen
 * LOG_ONCE_TTL_S or more ago.  tag tells apart the outcomes of one peer;
 * a caller that keys by address alone zeroes peer->port.
 */
bool log_once(enum log_once_kind kind, const struct peer_key *peer,
	      uint64_t tag);

/* The same at a given time (CLOCK_MONOTONIC seconds), for the tests. */
bool log_once_at(enum log_once_kind kind, const struct peer_key *peer,
		 uint64_t tag, uint64_t now_s);

/* fork(): the table's lock is held across it (shim/fork.c). */
void log_once_fork_lock(void);
void log_once_fork_unlock(void);

#endif
