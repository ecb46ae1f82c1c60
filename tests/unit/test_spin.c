/*
 * Whether a wait's busy poll pays (transport/ep.h, ep_spin_*): polling
 * stops after EP_SPIN_MISSES windows in a row without the message waited
 * for, looks again every EP_SPIN_PROBE-th wait, and starts again at the
 * first message a poll finds.
 */
#include "check.h"
#include "ep.h"

/* How many of the next n waits poll. */
static unsigned int
polls_of(struct ep_spin_hist *h, unsigned int n)
{
	unsigned int i, polled = 0;

	for (i = 0; i < n; i++)
		polled += ep_spin_wanted(h);
	return polled;
}

static void
test_misses(void)
{
	struct ep_spin_hist h = { 0 };
	unsigned int i;

	CHECK_EQ_U(polls_of(&h, 100), 100, "a new waiter polls every time");
	for (i = 0; i + 1 < EP_SPIN_MISSES; i++)
		ep_spin_miss(&h);
	CHECK_EQ_U(polls_of(&h, 10), 10,
		   "one window fewer than EP_SPIN_MISSES in vain: still polls");
	ep_spin_miss(&h);
	CHECK_EQ_U(polls_of(&h, EP_SPIN_PROBE - 1), 0,
		   "EP_SPIN_MISSES in a row: the next waits sleep at once");
	CHECK(ep_spin_wanted(&h), "the EP_SPIN_PROBE-th polls, to look again");
	ep_spin_miss(&h);
	CHECK_EQ_U(polls_of(&h, 10 * EP_SPIN_PROBE), 10,
		   "a probe in vain: one wait in EP_SPIN_PROBE polls");
	CHECK_EQ_U(h.misses, EP_SPIN_MISSES, "misses saturate");
}

static void
test_hit(void)
{
	struct ep_spin_hist h = { 0 };
	unsigned int i;

	for (i = 0; i < 3 * EP_SPIN_MISSES; i++)
		ep_spin_miss(&h);
	CHECK_EQ_U(polls_of(&h, 3), 0, "asleep after many windows in vain");
	ep_spin_hit(&h);
	CHECK_EQ_U(polls_of(&h, 100), 100,
		   "a message found by a poll: every wait polls again");
	for (i = 0; i < EP_SPIN_MISSES; i++) {
		ep_spin_miss(&h);
		if (i == 1)
			ep_spin_hit(&h);
	}
	CHECK_EQ_U(polls_of(&h, 5), 5,
		   "windows in vain only count in a row: a hit between starts again");
}

int
main(void)
{
	test_misses();
	test_hit();
	return check_done();
}
