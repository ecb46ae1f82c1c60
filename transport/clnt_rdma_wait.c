/*
 * Waiting on a CLIENT whose calls, from several threads, are in flight
 * together (clnt_rdma_int.h).
 *
 * One waiting thread at a time is the poller: it takes the completions
 * of every call of the CLIENT and hands each reply to the call with its
 * XID (clnt_rdma_cq.c).  It polls the completion queue for up to
 * ct_poll_us first, without arming the channel (busy polling: no
 * interrupt, no system call, as the kernel's busy_poll and libvma's
 * receive polling do), then arms it and sleeps on the shared channels
 * (ep_hub.c).  It lets ct_lock go while it polls and sleeps, so that the
 * other threads post their calls meanwhile.  Every other waiter sleeps on
 * a condition variable of its own, signalled when its condition holds or
 * when the poller leaves and one of them must take its place.  What
 * another thread changes (a credit, a slot, memory given back) wakes the
 * waiters it satisfies, the poller through ep_interrupt().
 *
 * A CLIENT nobody calls polls nothing: polling happens only inside a
 * wait, for at most ct_poll_us between two completions.  Nor does one
 * whose replies come later than that (a slow procedure): after a few
 * windows polled in vain its waits sleep at once, polling again now and
 * then to look (ep_spin_wanted()).
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "clnt_rdma_int.h"

/* Longest single sleep: the deadline is checked at least this often. */
#define CT_SLEEP_MAX_MS 60000
/* Completions taken per poll. */
#define CT_POLL_BATCH 16
/* Empty polls between two looks at the clock. */
#define CT_SPIN_CLOCK 4

struct ct_waiter {
	pthread_cond_t *cv;
	const struct ct_cond *cond;
	struct ct_waiter *next;
};

/* The calling thread's condition variable, on the monotonic clock. */
static pthread_cond_t *
thread_cv(void)
{
	static __thread bool ready;
	static __thread pthread_cond_t cv;
	pthread_condattr_t ca;

	if (!ready) {
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&cv, &ca);
		pthread_condattr_destroy(&ca);
		ready = true;
	}
	return &cv;
}

/* The errno that ended the connection; ENOTCONN while there is none. */
static int
ct_dead(const struct ct_rdma *ct)
{
	return ct->ct_ep ? ep_dead(ct->ct_ep) : ENOTCONN;
}

static bool
cond_holds(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return cond->done(ct, cond) || ct_dead(ct);
}

void
ct_wake_waiters(struct ct_rdma *ct)
{
	struct ct_waiter *w;

	for (w = ct->ct_waiters; w; w = w->next)
		if (cond_holds(ct, w->cond))
			pthread_cond_signal(w->cv);
	if (ct->ct_poller_asleep && cond_holds(ct, ct->ct_poller_cond))
		ep_interrupt(ct->ct_ep);
}

/*
 * The poller leaves: the first waiter still waiting takes its place, and
 * those it was in the way of (ct_wait_quiet) go on.
 */
static void
poller_leave(struct ct_rdma *ct)
{
	struct ct_waiter *w;
	bool next = false;

	ct->ct_poller = false;
	ct->ct_poller_cond = NULL;
	for (w = ct->ct_waiters; w; w = w->next) {
		if (cond_holds(ct, w->cond)) {
			pthread_cond_signal(w->cv);
		} else if (!next) {
			pthread_cond_signal(w->cv);
			next = true;
		}
	}
}

/*
 * Busy polling, without ct_lock: up to ct_poll_us (and never past the
 * deadline), until completions come or another thread interrupts; not at
 * all while the last windows ended without any.
 */
static int
spin(struct ct_rdma *ct, struct ibv_wc *wc, int64_t deadline, bool *kicked)
{
	struct ep *ep = ct->ct_ep;
	int64_t until;
	unsigned int i;
	int n;

	if (!ct->ct_poll_us)
		return 0;
	if (!ep_spin_wanted(&ct->ct_spin)) {
		SHIM_STATS_ADD(ct->ct_stats, poll_skipped, 1);
		return 0;
	}
	/* The clock is first read after a few polls: most replies come sooner. */
	until = 0;
	for (i = 1;; i++) {
		n = ep_poll_busy(ep, wc, CT_POLL_BATCH);
		if (n)
			return n;
		if (ep_interrupted(ep)) {
			*kicked = true;
			return 0;
		}
		if (i % CT_SPIN_CLOCK == 0 &&
		    (ep_spin_over(&until, ct->ct_poll_us) ||
		     until > deadline * 1000)) {
			ep_spin_miss(&ct->ct_spin);
			SHIM_STATS_ADD(ct->ct_stats, poll_missed, 1);
			return 0;
		}
		ep_relax();
	}
}

/* Whether a message of the peer is among the completions. */
static bool
has_receive(const struct ibv_wc *wc, int n)
{
	int k;

	for (k = 0; k < n; k++)
		if (wc[k].status == IBV_WC_SUCCESS &&
		    EP_WRID_KIND(wc[k].wr_id) == EP_WR_RECV)
			return true;
	return false;
}

/*
 * Sleep until a completion or a connection event may be there (the
 * endpoint's shared channels), or the deadline.  Returns 0, -ETIMEDOUT,
 * or -errno when the channels failed.
 */
static int
sleep_channels(struct ct_rdma *ct, int64_t deadline)
{
	int64_t cap = ep_now_ms() + CT_SLEEP_MAX_MS;
	int ret = ep_wait(ct->ct_ep, deadline < cap ? deadline : cap);

	/* Only the caller's deadline ends the wait. */
	return ret == -ETIMEDOUT && cap < deadline ? 0 : ret;
}

/*
 * One round of the poller: the completions there, else busy polling,
 * else arming and sleeping, all without ct_lock; then the completions
 * handled under it and the waiters they satisfy woken.  *slept: the
 * wait's round before slept (its completions may have come meanwhile);
 * set to whether this one did.
 */
static int
poll_round(struct ct_rdma *ct, int64_t deadline, bool *slept)
{
	struct ep *ep = ct->ct_ep;
	struct ibv_wc wc[CT_POLL_BATCH];
	int n, k, ret = 0, err;
	bool kicked = false, after_sleep = *slept;

	*slept = false;
	ct->ct_poller_asleep = true;
	pthread_mutex_unlock(&ct->ct_lock);
	n = ep_poll_busy(ep, wc, CT_POLL_BATCH);
	if (n == 0)
		n = spin(ct, wc, deadline, &kicked);
	/* A reply found by polling, not one a sleep waited for: it pays. */
	if (n > 0 && !after_sleep && has_receive(wc, n))
		ep_spin_hit(&ct->ct_spin);
	if (n == 0 && !kicked) {
		/* Arm, then poll once more: nothing can slip in between. */
		n = ep_poll(ep, wc, CT_POLL_BATCH);
		if (n == 0) {
			ret = sleep_channels(ct, deadline);
			*slept = true;
		}
	}
	pthread_mutex_lock(&ct->ct_lock);
	ct->ct_poller_asleep = false;
	if (n < 0) {
		ep_set_dead(ep, EIO);
		return -EIO;
	}
	/* All of them: each gives back what it holds (receives, sends). */
	for (k = 0; k < n; k++) {
		err = ct_completion(ct, &wc[k]);
		if (err && !ret)
			ret = err;
	}
	if (n > 0)
		ct_wake_waiters(ct);
	return ret;
}

/*
 * A waiter that is not the poller sleeps until signalled or its deadline:
 * 0, or -ETIMEDOUT once the deadline has passed.  The coarse clock only
 * chooses the sleep's length (it is behind, never ahead); the condition
 * variable's own clock says when the deadline has passed.
 */
static int
sleep_cv(struct ct_rdma *ct, struct ct_waiter *w, int64_t deadline)
{
	int64_t now = ep_coarse_ms(), until;
	struct ct_waiter **pp;
	struct timespec ts;
	bool last;
	int err;

	if (now >= deadline)
		return -ETIMEDOUT;
	last = deadline - now <= CT_SLEEP_MAX_MS;
	until = last ? deadline : now + CT_SLEEP_MAX_MS;
	ts.tv_sec = until / 1000;
	ts.tv_nsec = (long)(until % 1000) * 1000000;
	w->next = ct->ct_waiters;
	ct->ct_waiters = w;
	err = pthread_cond_timedwait(w->cv, &ct->ct_lock, &ts);
	for (pp = &ct->ct_waiters; *pp; pp = &(*pp)->next) {
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	}
	return err == ETIMEDOUT && last ? -ETIMEDOUT : 0;
}

int
ct_wait(struct ct_rdma *ct, struct ct_cond *cond, int64_t deadline)
{
	struct ct_waiter w = { .cv = thread_cv(), .cond = cond };
	bool poller = false, slept = false;
	int ret = 0;

	for (;;) {
		if (cond->done(ct, cond)) {
			ret = 0;
			break;
		}
		if (ct_dead(ct)) {
			ret = -ct_dead(ct);
			break;
		}
		if (ret)
			break;
		if (!ct->ct_poller) {
			ct->ct_poller = true;
			ct->ct_poller_cond = cond;
			poller = true;
		}
		ret = poller ? poll_round(ct, deadline, &slept) :
			       sleep_cv(ct, &w, deadline);
	}
	if (poller)
		poller_leave(ct);
	return ret;
}

static bool
quiet(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return !ct->ct_poller && !ct_busy_slots(ct);
}

static bool
renewed(const struct ct_rdma *ct, const struct ct_cond *cond)
{
	return !ct->ct_renewing;
}

/* Asleep until cond holds: nothing is polled (the connection may be gone). */
static int
wait_plain(struct ct_rdma *ct, bool (*done)(const struct ct_rdma *,
					    const struct ct_cond *),
	   int64_t deadline)
{
	struct ct_cond cond = { .done = done };
	struct ct_waiter w = { .cv = thread_cv(), .cond = &cond };
	int ret;

	while (!done(ct, &cond)) {
		ret = sleep_cv(ct, &w, deadline);
		if (ret && !done(ct, &cond))
			return ret;
	}
	return 0;
}

int
ct_wait_quiet(struct ct_rdma *ct, int64_t deadline)
{
	return wait_plain(ct, quiet, deadline);
}

int
ct_wait_renewed(struct ct_rdma *ct, int64_t deadline)
{
	return wait_plain(ct, renewed, deadline);
}
