/*
 * The negative cache shared by the processes of one user: a small file
 * that says which peers' RDMA paths failed, so that a process started
 * every minute does not find out again each time (negcache.h keeps what
 * one process knows).
 *
 * Where: $XDG_RUNTIME_DIR/rpcrdma-shim/negcache when the variable is set,
 * else /run/user/<uid>/rpcrdma-shim/negcache when that directory exists,
 * else /tmp/rpcrdma-shim-<uid>/negcache.  The directory that holds it and
 * the file itself must be the user's own and closed to everyone else
 * (mode 0700 and 0600 or stricter), reached without following a symbolic
 * link, the file a regular one with one link; anything else is ignored,
 * and the process keeps its own cache only.  The file has a fixed size
 * (NEGSHARE_SLOTS entries); one of another size or layout is garbage: never
 * read, replaced by the next failure.  Entries expire, and none is kept
 * longer than the reader's own negative_cache.
 */
#ifndef SHIM_NEGSHARE_H
#define SHIM_NEGSHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#include "common/reason.h"

#define NEGSHARE_SLOTS 64
#define NEGSHARE_FILE "negcache"

/* What a lookup found: why, until when, and who found it out. */
struct negshare_hit {
	enum rdma_fail why;
	time_t expires;		/* CLOCK_REALTIME seconds */
	pid_t pid;		/* the process that failed */
};

/*
 * The directory for this process (see above), or false.  Nothing is
 * checked or made here.
 */
bool negshare_dir(char *buf, size_t len);

/*
 * True when peer (or every peer: "no RDMA device") failed recently in some
 * process of this user; max_s bounds how long an entry may still hold.
 */
bool negshare_lookup(const char *dir, const struct sockaddr *peer,
		     unsigned int max_s, time_t now, struct negshare_hit *hit);

/* Tell the other processes that peer failed for why, for ttl_s seconds. */
void negshare_add(const char *dir, const struct sockaddr *peer,
		  enum rdma_fail why, unsigned int ttl_s, time_t now);

/* Which failures are shared: those that say something about the peer or the host. */
bool negshare_shareable(enum rdma_fail why);

#endif
