/*
 * The process's budget of registered memory (budget.h).  Lock-free: the
 * total is set once, the octets in use move with a compare-and-swap.
 */
#include <linux/capability.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "budget.h"
#include "common/stats.h"

static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t total;		/* 0 until budget_setup() */
static uint64_t used, peak, refused;

uint64_t
budget_default(uint64_t limit, bool cap_ipc_lock, uint64_t ram, uint64_t page)
{
	uint64_t b;

	if (!page)
		page = 4096;
	if (limit == UINT64_MAX || cap_ipc_lock)
		b = ram / 4;
	else
		b = limit / 4 * 3;
	b -= b % page;
	return b ? b : page;
}

/* Whether the kernel lets this process pin beyond RLIMIT_MEMLOCK. */
static bool
has_cap_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data) != 0)
		return false;
	return data[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32));
}

static uint64_t
process_default(void)
{
	long page = sysconf(_SC_PAGESIZE), pages = sysconf(_SC_PHYS_PAGES);
	uint64_t limit = UINT64_MAX, ram;
	struct rlimit rl;

	if (page <= 0)
		page = 4096;
	ram = pages > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)1 << 30;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		limit = rl.rlim_cur;
	return budget_default(limit, has_cap_ipc_lock(), ram, (uint64_t)page);
}

static void
publish(void)
{
	shim_stats_pinned(__atomic_load_n(&used, __ATOMIC_RELAXED),
			  __atomic_load_n(&total, __ATOMIC_RELAXED),
			  __atomic_load_n(&peak, __ATOMIC_RELAXED),
			  __atomic_load_n(&refused, __ATOMIC_RELAXED));
}

uint64_t
budget_setup(uint64_t want)
{
	uint64_t t = __atomic_load_n(&total, __ATOMIC_ACQUIRE);

	if (t)
		return t;
	pthread_mutex_lock(&setup_lock);
	t = total;
	if (!t) {
		t = want ? want : process_default();
		__atomic_store_n(&total, t, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&setup_lock);
	publish();
	return t;
}

uint64_t
budget_total(void)
{
	return budget_setup(0);
}

uint64_t
budget_used(void)
{
	return __atomic_load_n(&used, __ATOMIC_RELAXED);
}

uint64_t
budget_refused(void)
{
	return __atomic_load_n(&refused, __ATOMIC_RELAXED);
}

bool
budget_charge(uint64_t len)
{
	uint64_t t = budget_total();
	uint64_t cur = __atomic_load_n(&used, __ATOMIC_RELAXED), p;

	do {
		if (cur + len < cur || cur + len > t) {
			__atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
			publish();
			return false;
		}
	} while (!__atomic_compare_exchange_n(&used, &cur, cur + len, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	p = __atomic_load_n(&peak, __ATOMIC_RELAXED);
	while (cur + len > p &&
	       !__atomic_compare_exchange_n(&peak, &p, cur + len, true,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	publish();
	return true;
}

void
budget_release(uint64_t len)
{
	uint64_t cur = __atomic_load_n(&used, __ATOMIC_RELAXED);

	/* Never below zero, whatever a caller gets wrong. */
	while (!__atomic_compare_exchange_n(&used, &cur, cur >= len ? cur - len : 0,
					    true, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
	publish();
}

unsigned int
budget_credits(uint64_t left, uint64_t keep, uint64_t cost, unsigned int want,
	       unsigned int future)
{
	uint64_t avail, spare, extra;

	if (!cost || !want || left < keep || left - keep < cost)
		return 0;
	avail = left - keep - cost;
	/* One credit's worth stays for every connection still to come. */
	spare = (uint64_t)future * cost;
	spare = avail > spare ? avail - spare : 0;
	extra = spare / (cost * 8);
	return extra >= want - 1 ? want : (unsigned int)(1 + extra);
}

void
budget_reset(void)
{
	__atomic_store_n(&total, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&used, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&peak, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&refused, 0, __ATOMIC_RELAXED);
}

void
budget_fork_lock(void)
{
	pthread_mutex_lock(&setup_lock);
}

void
budget_fork_unlock(void)
{
	pthread_mutex_unlock(&setup_lock);
}

void
budget_fork_child(void)
{
	__atomic_store_n(&used, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&peak, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&refused, 0, __ATOMIC_RELAXED);
}
