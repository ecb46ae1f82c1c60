/*
 * The endpoint's clocks (ep.h): the monotonic clock in milliseconds and
 * microseconds, and deadlines read from its coarse variant.
 */
#include <time.h>

#include "ep.h"

static int64_t
ms_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000;
}

int64_t
ep_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ms_of(&ts);
}

int64_t
ep_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * The coarse clock is the monotonic one as of its last tick: it lags by
 * less than a tick, and its reading is a load from the vDSO, never a
 * system call.  The fine clock's is one where the clocksource cannot be
 * read from user space (a VM's HPET: about 1 us under emulation).
 */
int64_t
ep_coarse_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts))
		return ep_now_ms();
	return ms_of(&ts);
}

int64_t
ep_deadline_ms(int64_t ms)
{
	static int64_t tick_ms = -1;
	int64_t tick = __atomic_load_n(&tick_ms, __ATOMIC_RELAXED);
	struct timespec ts;

	if (tick < 0) {
		if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts))
			return ep_now_ms() + ms;
		tick = ms_of(&ts) + (ts.tv_nsec % 1000000 != 0);
		__atomic_store_n(&tick_ms, tick, __ATOMIC_RELAXED);
	}
	return ep_coarse_ms() + ms + tick;
}
