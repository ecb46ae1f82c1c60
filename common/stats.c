/*
 * The statistics file of this process (see stats.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/sockaddr.h"
#include "common/stats.h"

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_stats_file *stats;	/* NULL until the first transport */
static bool stats_failed;		/* could not create it: stay off */
static char stats_name[64];
static char desc_prog[64], desc_config[256];
static unsigned int desc_mode;
static bool desc_bad;
/* The files of the parent and its ancestors, newest first (after fork). */
#define SHIM_STATS_INHERITED 8
static struct shim_stats_file *inherited[SHIM_STATS_INHERITED];

/* fork(): held across it, so the child finds the file whole (shim/fork.c). */
void
shim_stats_fork_lock(void)
{
	pthread_mutex_lock(&stats_lock);
}

void
shim_stats_fork_unlock(void)
{
	pthread_mutex_unlock(&stats_lock);
}

static uint64_t
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec;
}

/* The file's form of an address: a peer key, field by field. */
static void
stats_addr_from(struct shim_stats_addr *a, const struct sockaddr *sa)
{
	struct peer_key key;

	_Static_assert(sizeof(a->addr) == sizeof(key.addr), "same address size");
	peer_key_from(&key, sa);
	a->family = key.family;
	a->port = key.port;
	memcpy(a->addr, key.addr, sizeof(a->addr));
}

/* src (NULL: "") into dst, cut to fit: no printf on the start-up path. */
static void
copy_str(char *dst, size_t len, const char *src)
{
	size_t n = src ? strnlen(src, len - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

void
shim_stats_describe(const char *prog, const char *config, unsigned int mode,
		    bool bad_config)
{
	pthread_mutex_lock(&stats_lock);
	copy_str(desc_prog, sizeof(desc_prog), prog);
	copy_str(desc_config, sizeof(desc_config), config);
	desc_mode = mode;
	desc_bad = bad_config;
	pthread_mutex_unlock(&stats_lock);
}

/*
 * A child starts without a file: its transports get one of its own.  The
 * parent's stays mapped (shared) for the slots the child's copies of the
 * parent's transports point to; the child never frees those.
 */
static void
stats_atfork_child(void)
{
	if (stats) {
		memmove(inherited + 1, inherited,
			sizeof(inherited) - sizeof(inherited[0]));
		inherited[0] = stats;
	}
	stats = NULL;
	stats_failed = false;
}

__attribute__((destructor)) static void
stats_remove(void)
{
	if (stats && stats->pid == getpid())
		shm_unlink(stats_name);
}

/* Create and map this process's file.  Caller holds stats_lock. */
static struct shim_stats_file *
stats_create_locked(void)
{
	static bool atfork_done;
	struct shim_stats_file *f;
	int fd, tries;

	if (stats || stats_failed)
		return stats;
	stats_failed = true;
	snprintf(stats_name, sizeof(stats_name), "/" SHIM_STATS_PREFIX "%u.%d",
		 (unsigned int)getuid(), (int)getpid());
	for (tries = 0; tries < 2; tries++) {
		fd = shm_open(stats_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			      0600);
		if (fd >= 0 || errno != EEXIST)
			break;
		/* Left by an earlier process with the same pid. */
		shm_unlink(stats_name);
	}
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, sizeof(*f)) < 0) {
		close(fd);
		shm_unlink(stats_name);
		return NULL;
	}
	f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (f == MAP_FAILED) {
		shm_unlink(stats_name);
		return NULL;
	}
	f->version = SHIM_STATS_VERSION;
	f->size = sizeof(*f);
	f->pid = getpid();
	f->uid = getuid();
	f->started = now_s();
	memcpy(f->prog, desc_prog, sizeof(f->prog));
	memcpy(f->config, desc_config, sizeof(f->config));
	f->mode = desc_mode;
	f->bad_config = desc_bad;
	f->nslots = SHIM_STATS_SLOTS;
	/* Readers trust a file once the magic is there. */
	__atomic_store_n(&f->magic, SHIM_STATS_MAGIC, __ATOMIC_RELEASE);
	if (!atfork_done) {
		pthread_atfork(NULL, NULL, stats_atfork_child);
		atfork_done = true;
	}
	stats_failed = false;
	/* stats_get() reads it without the lock: the file is set up first. */
	__atomic_store_n(&stats, f, __ATOMIC_RELEASE);
	return f;
}

static struct shim_stats_file *
stats_get(void)
{
	struct shim_stats_file *f = __atomic_load_n(&stats, __ATOMIC_ACQUIRE);

	if (f)
		return f;
	pthread_mutex_lock(&stats_lock);
	f = stats_create_locked();
	pthread_mutex_unlock(&stats_lock);
	return f;
}

/* A free slot of the file, claimed (its fields but state as they were). */
static struct shim_stats_conn *
slot_claim(void)
{
	struct shim_stats_file *f = stats_get();
	unsigned int i;

	if (!f)
		return NULL;
	for (i = 0; i < SHIM_STATS_SLOTS; i++) {
		struct shim_stats_conn *s = &f->slots[i];
		uint32_t expect = SHIM_STATS_FREE;

		if (__atomic_compare_exchange_n(&s->state, &expect,
						SHIM_STATS_CLAIMED, false,
						__ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return s;
	}
	return NULL;
}

void
shim_stats_record(struct shim_stats_conn *s, enum shim_stats_role role,
		  enum shim_stats_transport transport,
		  const struct sockaddr *peer, const struct sockaddr *local)
{
	memset((char *)s + sizeof(s->state), 0,
	       sizeof(*s) - sizeof(s->state));
	s->role = role;
	s->transport = transport;
	stats_addr_from(&s->peer, peer);
	stats_addr_from(&s->local, local);
	s->created = now_s();
}

struct shim_stats_conn *
shim_stats_open(enum shim_stats_role role, enum shim_stats_transport transport,
		const struct sockaddr *peer, const struct sockaddr *local)
{
	struct shim_stats_conn *s = slot_claim();

	if (s)
		shim_stats_record(s, role, transport, peer, local);
	return s;
}

bool
shim_stats_made(void)
{
	return __atomic_load_n(&stats, __ATOMIC_ACQUIRE) != NULL;
}

struct shim_stats_conn *
shim_stats_adopt(const struct shim_stats_conn *rec)
{
	struct shim_stats_conn *s = slot_claim();

	if (!s)
		return NULL;
	memcpy((char *)s + sizeof(s->state), (const char *)rec + sizeof(rec->state),
	       sizeof(*s) - sizeof(s->state));
	shim_stats_publish(s);
	return s;
}

void
shim_stats_publish(struct shim_stats_conn *s)
{
	struct shim_stats_file *f = __atomic_load_n(&stats, __ATOMIC_ACQUIRE);

	if (!s)
		return;
	if (f && s->transport == SHIM_STATS_RDMA)
		shim_stats_add(&f->rdma_transports, 1);
	__atomic_store_n(&s->state, SHIM_STATS_LIVE, __ATOMIC_RELEASE);
}

/* Not a slot of a file this process inherited (see stats_atfork_child). */
static bool
slot_is_ours(const struct shim_stats_conn *s)
{
	unsigned int i;

	for (i = 0; i < SHIM_STATS_INHERITED; i++) {
		const struct shim_stats_file *f = inherited[i];

		if (f && s >= f->slots && s < f->slots + SHIM_STATS_SLOTS)
			return false;
	}
	return true;
}

void
shim_stats_close(struct shim_stats_conn *s)
{
	if (s && slot_is_ours(s))
		__atomic_store_n(&s->state, SHIM_STATS_FREE, __ATOMIC_RELEASE);
}

void
shim_stats_fallback(unsigned int reason)
{
	struct shim_stats_file *f = stats_get();

	if (f && reason < SHIM_STATS_REASONS)
		shim_stats_add(&f->fallbacks[reason], 1);
}

void
shim_stats_pinned(uint64_t used, uint64_t total, uint64_t peak,
		  uint64_t refused)
{
	struct shim_stats_file *f = stats_get();

	if (!f)
		return;
	__atomic_store_n(&f->pinned_used, used, __ATOMIC_RELAXED);
	__atomic_store_n(&f->pinned_total, total, __ATOMIC_RELAXED);
	__atomic_store_n(&f->pinned_peak, peak, __ATOMIC_RELAXED);
	__atomic_store_n(&f->pinned_refused, refused, __ATOMIC_RELAXED);
}
