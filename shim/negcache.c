/*
 * Negative cache of peers that failed RDMA (uthash, behind a lock).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>

#include "common/sockaddr.h"
#include "negcache.h"

struct negcache_entry {
	struct peer_key key;
	time_t expires;		/* CLOCK_MONOTONIC seconds */
	enum rdma_fail why;
	UT_hash_handle hh;
};

static pthread_mutex_t negcache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct negcache_entry *negcache;

/* fork(): held across it, so the child finds the table whole (shim/fork.c). */
void
negcache_fork_lock(void)
{
	pthread_mutex_lock(&negcache_lock);
}

void
negcache_fork_unlock(void)
{
	pthread_mutex_unlock(&negcache_lock);
}

static time_t
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/*
 * Failures that say something about the peer (or the host) count, and
 * memory: a process whose budget could not hold one more client's call
 * should not try again for every client it makes.
 */
static bool
cacheable(enum rdma_fail why)
{
	switch (why) {
	case RDMA_FAIL_NO_DEVICE:
	case RDMA_FAIL_NOT_RDMA:
	case RDMA_FAIL_REFUSED:
	case RDMA_FAIL_UNREACHABLE:
	case RDMA_FAIL_TIMEOUT:
	case RDMA_FAIL_MEMLOCK:
		return true;
	default:
		return false;
	}
}

static void
drop_locked(struct negcache_entry *e)
{
	HASH_DEL(negcache, e);
	free(e);
}

/*
 * Make room for one more entry: drop every expired one (a peer never
 * looked up again would otherwise stay for good), and when the table is
 * still full, the one that would expire first.  Entries are added only
 * when an attempt failed, so the walk is not on the way of any call.
 */
static void
make_room_locked(time_t now)
{
	struct negcache_entry *e, *tmp, *first = NULL;

	HASH_ITER(hh, negcache, e, tmp) {
		if (e->expires <= now)
			drop_locked(e);
		else if (!first || e->expires < first->expires)
			first = e;
	}
	if (first && HASH_COUNT(negcache) >= NEGCACHE_MAX)
		drop_locked(first);
}

void
negcache_add(const struct sockaddr *peer, enum rdma_fail why,
	     unsigned int ttl_s)
{
	negcache_add_at(peer, why, ttl_s, now_s());
}

void
negcache_add_at(const struct sockaddr *peer, enum rdma_fail why,
		unsigned int ttl_s, time_t now)
{
	struct negcache_entry *e;
	struct peer_key key;

	if (!ttl_s || !cacheable(why))
		return;
	if (why == RDMA_FAIL_NO_DEVICE)
		memset(&key, 0, sizeof(key));
	else if (!peer_key_from(&key, peer))
		return;

	pthread_mutex_lock(&negcache_lock);
	HASH_FIND(hh, negcache, &key, sizeof(key), e);
	if (!e) {
		make_room_locked(now);
		e = calloc(1, sizeof(*e));
		if (!e)
			goto out;
		e->key = key;
		HASH_ADD(hh, negcache, key, sizeof(e->key), e);
	}
	e->expires = now + (time_t)ttl_s;
	e->why = why;
out:
	pthread_mutex_unlock(&negcache_lock);
}

/* Look key up; drop it when expired.  Caller holds negcache_lock. */
static bool
lookup_locked(const struct peer_key *key, time_t now, enum rdma_fail *why)
{
	struct negcache_entry *e;

	HASH_FIND(hh, negcache, key, sizeof(*key), e);
	if (!e)
		return false;
	if (e->expires <= now) {
		drop_locked(e);
		return false;
	}
	*why = e->why;
	return true;
}

bool
negcache_lookup(const struct sockaddr *peer, enum rdma_fail *why)
{
	return negcache_lookup_at(peer, why, now_s());
}

bool
negcache_lookup_at(const struct sockaddr *peer, enum rdma_fail *why,
		   time_t now)
{
	struct peer_key any, key;
	bool hit;

	memset(&any, 0, sizeof(any));
	pthread_mutex_lock(&negcache_lock);
	hit = lookup_locked(&any, now, why) ||
	      (peer_key_from(&key, peer) && lookup_locked(&key, now, why));
	pthread_mutex_unlock(&negcache_lock);
	return hit;
}

size_t
negcache_size(void)
{
	size_t n;

	pthread_mutex_lock(&negcache_lock);
	n = HASH_COUNT(negcache);
	pthread_mutex_unlock(&negcache_lock);
	return n;
}
