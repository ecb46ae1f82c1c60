/*
 * The statistics file's writer (common/stats.c): slots taken by several
 * threads at once, the first of them making the file while the others
 * find it (under ThreadSanitizer, the file's publication is checked too).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "common/stats.h"

#define THREADS 8
#define PER_THREAD 64

static pthread_barrier_t start;
static struct shim_stats_conn *taken[THREADS][PER_THREAD];
static struct sockaddr_in peer, local;

/* A client's TCP transport to port 2049, as every slot here is. */
static struct shim_stats_conn *
open_one(void)
{
	return shim_stats_open(SHIM_STATS_CLIENT, SHIM_STATS_TCP,
			       (struct sockaddr *)&peer,
			       (struct sockaddr *)&local);
}

static void *
opener(void *arg)
{
	struct shim_stats_conn **mine = arg;
	int i;

	pthread_barrier_wait(&start);
	for (i = 0; i < PER_THREAD; i++) {
		mine[i] = open_one();
		shim_stats_publish(mine[i]);
	}
	return NULL;
}

static int
by_address(const void *a, const void *b)
{
	const struct shim_stats_conn *x = *(struct shim_stats_conn *const *)a;
	const struct shim_stats_conn *y = *(struct shim_stats_conn *const *)b;

	return x < y ? -1 : x > y;
}

static void
test_threads_at_once(void)
{
	struct shim_stats_conn *all[THREADS * PER_THREAD];
	pthread_t t[THREADS];
	unsigned int n = 0, dups = 0, live = 0;
	char path[128];
	int i, j;

	peer.sin_family = local.sin_family = AF_INET;
	peer.sin_port = htons(2049);
	peer.sin_addr.s_addr = local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(!shim_stats_made(), "no file before the first transport");

	pthread_barrier_init(&start, NULL, THREADS);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, opener, taken[i]);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);

	for (i = 0; i < THREADS; i++)
		for (j = 0; j < PER_THREAD; j++)
			if (taken[i][j])
				all[n++] = taken[i][j];
	CHECK_EQ_U(n, THREADS * PER_THREAD, "every thread got every slot it asked for");
	qsort(all, n, sizeof(all[0]), by_address);
	for (i = 1; i < (int)n; i++)
		dups += all[i] == all[i - 1];
	CHECK_EQ_U(dups, 0, "no slot given twice");
	CHECK(n && (char *)all[n - 1] - (char *)all[0] <
			   (long)(SHIM_STATS_SLOTS * sizeof(*all[0])),
	      "all in one file");
	for (i = 0; i < (int)n; i++)
		live += all[i]->state == SHIM_STATS_LIVE &&
			all[i]->role == SHIM_STATS_CLIENT &&
			all[i]->peer.port == 2049;
	CHECK_EQ_U(live, n, "each one live, with its transport's record");
	CHECK(shim_stats_made(), "the file is made");
	snprintf(path, sizeof(path), "/dev/shm/" SHIM_STATS_PREFIX "%u.%d",
		 (unsigned int)getuid(), (int)getpid());
	CHECK(access(path, F_OK) == 0, "as %s", path);

	for (i = 0; i < (int)n; i++)
		shim_stats_close(all[i]);
	for (i = 0; i < SHIM_STATS_SLOTS; i++) {
		all[0] = open_one();
		if (!all[0])
			break;
	}
	CHECK_EQ_U(i, SHIM_STATS_SLOTS, "closed slots are free again: the whole table");
	CHECK(open_one() == NULL, "a full table gives no slot");
}

int
main(void)
{
	test_threads_at_once();
	return check_done();
}
