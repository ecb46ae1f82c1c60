/*
 * The "log once per peer" table (see log_once.h).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>

#include "common/log_once.h"

struct once_key {
	struct peer_key peer;
	uint32_t kind;
	uint64_t tag;
};

struct once_entry {
	struct once_key key;
	uint64_t seen;		/* last time, CLOCK_MONOTONIC seconds */
	UT_hash_handle hh;
};

/*
 * uthash keeps insertion order, and an entry seen again is added anew:
 * the front of the table is always the entry seen longest ago.
 */
static pthread_mutex_t once_lock = PTHREAD_MUTEX_INITIALIZER;
static struct once_entry *once_table;

/* fork(): held across it, so the child finds the table whole (shim/fork.c). */
void
log_once_fork_lock(void)
{
	pthread_mutex_lock(&once_lock);
}

void
log_once_fork_unlock(void)
{
	pthread_mutex_unlock(&once_lock);
}

static void
drop_locked(struct once_entry *e)
{
	HASH_DEL(once_table, e);
	free(e);
}

static void
expire_locked(uint64_t now)
{
	while (once_table && once_table->seen + LOG_ONCE_TTL_S <= now)
		drop_locked(once_table);
}

bool
log_once_at(enum log_once_kind kind, const struct peer_key *peer,
	    uint64_t tag, uint64_t now_s)
{
	struct once_entry *e;
	struct once_key key;
	bool first;

	memset(&key, 0, sizeof(key));
	key.peer = *peer;
	key.kind = (uint32_t)kind;
	key.tag = tag;

	pthread_mutex_lock(&once_lock);
	expire_locked(now_s);
	HASH_FIND(hh, once_table, &key, sizeof(key), e);
	first = !e;
	if (e) {
		HASH_DEL(once_table, e);
	} else {
		if (HASH_COUNT(once_table) >= LOG_ONCE_MAX)
			drop_locked(once_table);
		e = calloc(1, sizeof(*e));
	}
	if (e) {
		e->key = key;
		e->seen = now_s;
		HASH_ADD(hh, once_table, key, sizeof(e->key), e);
	}
	pthread_mutex_unlock(&once_lock);
	return first;
}

bool
log_once(enum log_once_kind kind, const struct peer_key *peer, uint64_t tag)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return log_once_at(kind, peer, tag, (uint64_t)ts.tv_sec);
}
