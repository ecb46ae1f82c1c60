/*
 * The call-path timeline's recorder (cp_trace.h).  Each point has an
 * array of stamps, filled by an atomic index so that threads may record
 * together; the arrays are allocated when the first stamp is taken.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "cp_trace.h"

#define CP_ENV "RPCRDMA_CP_TRACE"

enum cp_state { CP_UNKNOWN, CP_OFF, CP_ON };

static pthread_mutex_t cp_lock = PTHREAD_MUTEX_INITIALIZER;
static int cp_state;
static bool cp_atfork;
static uint64_t *cp_stamps[CP_NPOINTS];
static unsigned int cp_count[CP_NPOINTS];
/* The ticks and the monotonic clock when recording began. */
static uint64_t cp_tick0, cp_ns0;

static const char *const cp_names[CP_NPOINTS] = {
	[CP_CALL] = "call",
	[CP_CALL_POST] = "call_post",
	[CP_CALL_POSTED] = "call_posted",
	[CP_REPLY] = "reply",
	[CP_RETURN] = "return",
	[CP_SVC_CALL] = "svc_call",
	[CP_SVC_RECV] = "svc_recv",
	[CP_SVC_REPLY] = "svc_reply",
	[CP_SVC_POST] = "svc_post",
	[CP_SVC_POSTED] = "svc_posted",
};

const char *
cp_point_name(enum cp_point p)
{
	return (unsigned int)p < CP_NPOINTS ? cp_names[p] : "?";
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return mono_ns();
#endif
}

/* A child of fork() starts with none of its parent's stamps. */
static void
cp_forked(void)
{
	unsigned int p;

	for (p = 0; p < CP_NPOINTS; p++)
		cp_count[p] = 0;
}

static int
cp_start(void)
{
	const char *dir = getenv(CP_ENV);
	int state = CP_OFF;
	unsigned int p;

	pthread_mutex_lock(&cp_lock);
	/*
	 * The state goes from unknown to its final value in one store: a
	 * thread that saw it off for a moment would drop its stamp.
	 */
	if (cp_state == CP_UNKNOWN) {
		if (dir && *dir) {
			for (p = 0; p < CP_NPOINTS; p++)
				if (!cp_stamps[p])
					cp_stamps[p] = calloc(CP_TRACE_CAP,
							      sizeof(uint64_t));
			for (p = 0; p < CP_NPOINTS && cp_stamps[p]; p++)
				;
			if (p == CP_NPOINTS) {
				cp_ns0 = mono_ns();
				cp_tick0 = ticks();
				if (!cp_atfork)
					cp_atfork = !pthread_atfork(NULL, NULL,
								    cp_forked);
				state = CP_ON;
			}
		}
		__atomic_store_n(&cp_state, state, __ATOMIC_RELEASE);
	}
	state = cp_state;
	pthread_mutex_unlock(&cp_lock);
	return state;
}

void
cp_record(enum cp_point p)
{
	int state = __atomic_load_n(&cp_state, __ATOMIC_ACQUIRE);
	unsigned int i;

	if (state == CP_UNKNOWN)
		state = cp_start();
	if (state != CP_ON || (unsigned int)p >= CP_NPOINTS)
		return;
	i = __atomic_fetch_add(&cp_count[p], 1, __ATOMIC_RELAXED);
	if (i < CP_TRACE_CAP)
		cp_stamps[p][i] = ticks();
}

/* Ticks per microsecond, from the whole time recorded (1000 without a TSC). */
static double
ticks_per_us(void)
{
	uint64_t ns = mono_ns() - cp_ns0, t = ticks() - cp_tick0;

	return ns ? (double)t * 1000.0 / (double)ns : 1000.0;
}

int
cp_dump(FILE *f)
{
	unsigned int p, i, n;

	if (__atomic_load_n(&cp_state, __ATOMIC_ACQUIRE) != CP_ON)
		return 0;
	if (fprintf(f, "# ticks_per_us %.6f\n", ticks_per_us()) < 0)
		return -EIO;
	for (p = 0; p < CP_NPOINTS; p++) {
		n = __atomic_load_n(&cp_count[p], __ATOMIC_RELAXED);
		if (n > CP_TRACE_CAP)
			n = CP_TRACE_CAP;
		for (i = 0; i < n; i++)
			if (fprintf(f, "%s %" PRIu64 "\n", cp_names[p],
				    cp_stamps[p][i]) < 0)
				return -EIO;
	}
	return 0;
}

void
cp_reset(void)
{
	pthread_mutex_lock(&cp_lock);
	cp_forked();
	__atomic_store_n(&cp_state, CP_UNKNOWN, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&cp_lock);
}

/* At exit: cp.<pid> in the directory named by the environment. */
__attribute__((destructor)) static void
cp_write_out(void)
{
	const char *dir = getenv(CP_ENV);
	char path[PATH_MAX];
	FILE *f;

	if (__atomic_load_n(&cp_state, __ATOMIC_ACQUIRE) != CP_ON || !dir ||
	    !*dir)
		return;
	if (snprintf(path, sizeof(path), "%s/cp.%d", dir, (int)getpid()) >=
	    (int)sizeof(path))
		return;
	f = fopen(path, "w");
	if (!f)
		return;
	(void)cp_dump(f);
	fclose(f);
}
