/*
 * The statistics file of this process: the writer (the layout is in
 * common/stats_file.h).  Slots are taken and counters added with atomics,
 * so the call path takes no lock.
 */
#ifndef COMMON_STATS_H
#define COMMON_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/stats_file.h"

/*
 * A slot for a new transport, or NULL (statistics off or table full):
 * every function below accepts NULL and then does nothing.
 */
struct shim_stats_conn *shim_stats_open(enum shim_stats_role role,
					enum shim_stats_transport transport,
					const struct sockaddr *peer,
					const struct sockaddr *local);
/*
 * A transport's record kept outside the file until it is worth one (its
 * state is left alone): filled as shim_stats_open() fills a slot.  Then
 * shim_stats_adopt() copies it into a slot of the file, made now if it
 * was not, and publishes it; NULL when there is none.
 */
void shim_stats_record(struct shim_stats_conn *s, enum shim_stats_role role,
		       enum shim_stats_transport transport,
		       const struct sockaddr *peer,
		       const struct sockaddr *local);
struct shim_stats_conn *shim_stats_adopt(const struct shim_stats_conn *rec);

/* Whether this process has made its file already. */
bool shim_stats_made(void);

/*
 * Make the slot visible (after its fields are set; an RDMA transport is
 * counted then) or free it.
 */
void shim_stats_publish(struct shim_stats_conn *s);
void shim_stats_close(struct shim_stats_conn *s);

/* Count one transport kept on TCP for reason. */
void shim_stats_fallback(unsigned int reason);

/* Relaxed atomic add: cheap enough for every call. */
static inline void
shim_stats_add(uint64_t *counter, uint64_t n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

#define SHIM_STATS_ADD(s, field, n)                                     \
	do {                                                            \
		if (s)                                                  \
			shim_stats_add(&(s)->field, (n));               \
	} while (0)

/* The process's registered memory (transport/budget.h), as it moves. */
void shim_stats_pinned(uint64_t used, uint64_t total, uint64_t peak,
		       uint64_t refused);

/* Describe the process (program name, configuration). */
void shim_stats_describe(const char *prog, const char *config,
			 unsigned int mode, bool bad_config);

/* fork(): the file's lock is held across it (shim/fork.c). */
void shim_stats_fork_lock(void);
void shim_stats_fork_unlock(void);

#endif
