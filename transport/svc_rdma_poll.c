/*
 * A server connection polls for its client's next call (svc_rdma_int.h).
 *
 * An unmodified server sleeps in its own loop (svc_run's poll(), or the
 * program's around svc_getreq_poll), so each call costs it a wakeup on
 * top of the client's.  After a call was answered, xp_stat polls that
 * connection's completion queues for up to poll_us: a call that comes
 * meanwhile is in the ring, and xp_stat says XPRT_MOREREQS, so libtirpc
 * serves it at once without going back to the loop.
 *
 * Bounded, so that nobody waits for it: only within the connection's
 * fair turn (sc_turn_left: SC_ROUND_MS, SC_ROUND_CALLS), after which
 * the program's loop runs and sees everyone; not at all while another of
 * the program's descriptors is readable (a TCP client, another
 * connection, a listener); and not while a call waits for its reply from
 * a worker thread (it would wait for sc->lock).  A connection idle for
 * longer than poll_us costs nothing: its completion channel, armed when
 * the turn ends (sc_turn), wakes the loop for its next call.  Nor does
 * one whose client calls less often than that: after a few windows
 * polled in vain it stops polling, and looks again now and then
 * (ep_spin_wanted()).
 */
#include <errno.h>
#include <poll.h>

#include <rpc/rpc.h>

#include "svc_rdma_int.h"

/* Completions taken per poll. */
#define SC_POLL_BATCH 16
/* Empty polls between two looks at the clock. */
#define SC_SPIN_CLOCK 4

/*
 * Whether a descriptor of the program other than this connection's is
 * readable now (libtirpc's svc_pollfd holds every registered transport,
 * whichever loop the program runs).
 */
bool
sc_others_ready(const struct svc_rdma_conn *sc)
{
	int i, n;

	if (!svc_pollfd || svc_max_pollfd <= 0)
		return false;
	n = poll(svc_pollfd, (nfds_t)svc_max_pollfd, 0);
	if (n <= 0)
		return false;
	for (i = 0; i < svc_max_pollfd; i++)
		if (svc_pollfd[i].revents && svc_pollfd[i].fd != sc->xprt.xp_fd)
			return true;
	return false;
}

bool
sc_poll_next(struct svc_rdma_conn *sc, bool alone)
{
	unsigned int us = sc->lst->params.poll_us;
	struct ibv_wc wc[SC_POLL_BATCH];
	int64_t until;
	unsigned int i;
	int n;

	if (!us)
		return false;
	if (!ep_spin_wanted(&sc->spin)) {
		SHIM_STATS_ADD(sc->stats, poll_skipped, 1);
		return false;
	}
	if (!alone && sc_others_ready(sc))
		return false;
	/* The clock is first read after a few polls: most calls come sooner. */
	until = 0;
	for (i = 1; !ep_dead(sc->ep); i++) {
		n = ep_poll_busy(sc->ep, wc, SC_POLL_BATCH);
		if (n < 0) {
			ep_set_dead(sc->ep, EIO);
			break;
		}
		if (n > 0) {
			/* Sends completing, or the call: the ring says. */
			sc_completions(sc, wc, n);
			if (sc->rq_count) {
				ep_spin_hit(&sc->spin);
				return true;
			}
			continue;
		}
		if (i % SC_SPIN_CLOCK == 0 && ep_spin_over(&until, us)) {
			ep_spin_miss(&sc->spin);
			SHIM_STATS_ADD(sc->stats, poll_missed, 1);
			break;
		}
		ep_relax();
	}
	return false;
}
