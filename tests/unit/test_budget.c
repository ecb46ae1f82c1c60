/*
 * The budget of registered memory (transport/budget.c): its default from
 * the locked-memory limit, charges and releases, and the credits a
 * server grants new connections from what is left.
 */
#include <stdlib.h>

#include "budget.h"
#include "check.h"

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)
#define GiB ((uint64_t)1 << 30)

static void
test_default(void)
{
	CHECK_EQ_U(budget_default(8 * MiB, false, 2 * GiB, 4096), 6 * MiB,
		   "ulimit -l 8192: three quarters, 6 MiB");
	CHECK_EQ_U(budget_default(64 * MiB, false, 2 * GiB, 4096), 48 * MiB,
		   "ulimit -l 65536: 48 MiB");
	CHECK_EQ_U(budget_default(UINT64_MAX, false, 2 * GiB, 4096), 512 * MiB,
		   "unlimited: a quarter of physical memory");
	CHECK_EQ_U(budget_default(8 * MiB, true, 16 * GiB, 4096), 4 * GiB,
		   "CAP_IPC_LOCK (the kernel ignores the limit): a quarter of memory");
	CHECK_EQ_U(budget_default(10000, false, 2 * GiB, 4096), 4096,
		   "a limit below a page's worth: rounded down to whole pages, one at least");
	CHECK_EQ_U(budget_default(100 * KiB + 123, false, GiB, 4096), 72 * KiB,
		   "whole pages");
	CHECK_EQ_U(budget_default(0, false, GiB, 4096), 4096,
		   "ulimit -l 0: one page (every registration beyond fails)");
}

static void
test_charges(void)
{
	budget_reset();
	CHECK_EQ_U(budget_setup(1 * MiB), 1 * MiB, "the first setup sets the total");
	CHECK_EQ_U(budget_setup(5 * MiB), 1 * MiB, "later ones change nothing");
	CHECK(budget_charge(512 * KiB), "half of it fits");
	CHECK(budget_charge(512 * KiB), "the other half fits");
	CHECK_EQ_U(budget_used(), 1 * MiB, "all of it in use");
	CHECK(!budget_charge(1), "one more octet does not fit");
	CHECK(!budget_charge(UINT64_MAX), "nor does a length that would wrap");
	CHECK_EQ_U(budget_refused(), 2, "two refusals counted");
	CHECK_EQ_U(budget_used(), 1 * MiB, "a refusal takes nothing");
	budget_release(256 * KiB);
	CHECK(budget_charge(200 * KiB), "released octets can be taken again");
	budget_release(UINT64_MAX);
	CHECK_EQ_U(budget_used(), 0, "releasing too much stops at zero");
	budget_reset();
	CHECK(budget_total() >= 4096, "without setup, the process default (%llu)",
	      (unsigned long long)budget_total());
	budget_reset();
}

/* A server accepting connections until one is refused; total credits. */
static unsigned int
accept_all(uint64_t budget, uint64_t keep, uint64_t cost, unsigned int want,
	   unsigned int plan, unsigned int *first, unsigned int *last,
	   uint64_t *credits)
{
	uint64_t used = 0;
	unsigned int n = 0, c;

	*credits = 0;
	while (n < 2048) {
		c = budget_credits(budget - used, keep, cost, want,
				   n < plan ? plan - n - 1 : 0);
		if (!c)
			return n;
		if (!n)
			*first = c;
		*last = c;
		*credits += c;
		used += c * cost;
		n++;
	}
	return n;
}

static void
test_credits(void)
{
	unsigned int first = 0, last = 0, n;
	uint64_t total;

	CHECK_EQ_U(budget_credits(100 * MiB, 0, 4 * KiB, 32, 1023), 32,
		   "plenty left: the configured credits");
	CHECK_EQ_U(budget_credits(4 * KiB, 0, 4 * KiB, 32, 1023), 1,
		   "one credit's worth left: one credit");
	CHECK_EQ_U(budget_credits(4 * KiB - 1, 0, 4 * KiB, 32, 0), 0,
		   "less than one credit: refused");
	CHECK_EQ_U(budget_credits(600 * KiB, 512 * KiB, 4 * KiB, 32, 0), 3,
		   "what is kept for calls is not given: 88 KiB left, 1 + 84/32");
	CHECK_EQ_U(budget_credits(500 * KiB, 512 * KiB, 4 * KiB, 32, 0), 0,
		   "less left than kept for calls: refused");
	CHECK_EQ_U(budget_credits(MiB, 0, 4 * KiB, 1, 0), 1,
		   "never more than configured");

	/* ulimit -l 8192: a 6 MiB budget, 512 KiB kept for calls, 4K credits. */
	n = accept_all(6 * MiB, 512 * KiB, 4 * KiB, 32, 1024, &first, &last, &total);
	CHECK(n >= 1000, "6 MiB: %u connections accepted (>= 1000)", n);
	CHECK_EQ_U(first, 32, "the first connection gets the configured 32 credits");
	CHECK_EQ_U(last, 1, "the last ones one each");
	CHECK(total * 4 * KiB <= 6 * MiB - 512 * KiB,
	      "all credits (%llu) fit the budget beyond what calls keep",
	      (unsigned long long)total);
	/* Plenty of memory: everyone gets what is configured. */
	n = accept_all(512 * MiB, 512 * KiB, 4 * KiB, 32, 1024, &first, &last, &total);
	CHECK(n == 2048 && total == 2048 * 32,
	      "512 MiB: 2048 connections, every one with 32 credits");
}

int
main(void)
{
	test_default();
	test_charges();
	test_credits();
	return check_done();
}
