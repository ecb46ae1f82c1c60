/*
 * A call answered after the dispatch holds its client's next call.
 *
 * libtirpc's contract (svc_vc.c): svc_sendreply answers the transport's
 * last call.  A program whose dispatch hands the call to a worker thread,
 * which replies later, relies on its client sending nothing more on the
 * connection until then, as libtirpc's TCP client does.  The shim's RDMA
 * client has several calls in flight when threads share a CLIENT, and the
 * Linux client always may: taking the next call while the last waits for
 * its worker would give the worker's reply to the wrong call.
 *
 * So after a dispatch that left its call unanswered (xp_stat finds it
 * in_call), the connection takes no further call until the reply is sent
 * or defer_wait passes; the calls that arrive meanwhile wait in the ring,
 * within the client's credits.  The reply wakes the connection
 * (sc_late_reply_done).  Nothing can wake svc_run at the deadline but a
 * descriptor of its own: the listener's alarm, a timerfd registered as a
 * transport, kicks the connections whose wait is over.
 *
 * Some programs never answer some calls (batched calls, calls dropped on
 * purpose).  A call of such a procedure costs its connection defer_wait
 * once: the listener then remembers the procedure, whose later calls hold
 * nothing.  A reply later than defer_wait may still meet the next call,
 * as over libtirpc's TCP with a client that does not wait.
 */
#include <errno.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/log.h"
#include "cred.h"
#include "sockfd.h"
#include "svc_rdma_int.h"

static bool
lst_unheld(const struct svc_rdma_listener *lst, const struct svc_rdma_conn *sc)
{
	unsigned int i;

	if (lst->unheld_n > SC_UNHELD_MAX)
		return true;
	for (i = 0; i < lst->unheld_n; i++)
		if (lst->unheld[i].prog == sc->prog &&
		    lst->unheld[i].vers == sc->vers &&
		    lst->unheld[i].proc == sc->proc)
			return true;
	return false;
}

/* Later calls of sc's procedure are not held; past SC_UNHELD_MAX none is. */
static void
lst_unhold(struct svc_rdma_listener *lst, const struct svc_rdma_conn *sc)
{
	if (lst_unheld(lst, sc))
		return;
	if (lst->unheld_n < SC_UNHELD_MAX) {
		lst->unheld[lst->unheld_n].prog = sc->prog;
		lst->unheld[lst->unheld_n].vers = sc->vers;
		lst->unheld[lst->unheld_n].proc = sc->proc;
	}
	lst->unheld_n++;
}

void
sc_hold_begin(struct svc_rdma_conn *sc)
{
	struct svc_rdma_listener *lst = sc->lst;
	bool unheld;

	sc->hold_until = 0;
	if (!sc->in_call || !lst->params.defer_wait_ms)
		return;
	pthread_mutex_lock(&lst->lock);
	unheld = lst_unheld(lst, sc);
	pthread_mutex_unlock(&lst->lock);
	if (!unheld)
		sc->hold_until = ep_now_ms() + lst->params.defer_wait_ms;
}

bool
sc_hold_next(struct svc_rdma_conn *sc)
{
	struct svc_rdma_listener *lst = sc->lst;

	if (!sc->in_call || !sc->hold_until)
		return false;
	if (ep_now_ms() < sc->hold_until)
		return true;
	sc->hold_until = 0;
	pthread_mutex_lock(&lst->lock);
	lst_unhold(lst, sc);
	pthread_mutex_unlock(&lst->lock);
	shim_log(SHIM_LOG_WARN,
		 "server: no reply within defer_wait (%u ms) to the call with xid 0x%08x (program %u version %u procedure %u), answered after the dispatch or not at all: its connection takes the next call, and calls of that procedure no longer wait for each other's replies",
		 lst->params.defer_wait_ms, sc->xid, sc->prog, sc->vers,
		 sc->proc);
	return false;
}

bool
sc_holding(const struct svc_rdma_conn *sc)
{
	return sc->in_call && sc->hold_until && sc->rq_count;
}

/* ------------------------------------------------------------------ */
/* The listener's alarm                                                */
/* ------------------------------------------------------------------ */

static void
alarm_set(struct svc_rdma_listener *lst, int64_t at)
{
	struct itimerspec its;
	int64_t ms = at - ep_now_ms();

	memset(&its, 0, sizeof(its));
	if (at) {
		/* A zero it_value disarms: one that is due fires at once. */
		if (ms < 1)
			ms = 1;
		its.it_value.tv_sec = ms / 1000;
		its.it_value.tv_nsec = (ms % 1000) * 1000000;
	}
	lst->alarm_at = at;
	(void)timerfd_settime(lst->alarm_fd, 0, &its, NULL);
}

/*
 * The alarm fired: connections whose wait is over are made readable
 * (ep_kick), so that svc_run takes their next calls; the alarm is set
 * for the earliest wait left.  A connection busy on another thread is
 * looked at again a millisecond later.
 */
static bool_t
alarm_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_listener *lst = xprt->xp_p1;
	struct svc_rdma_conn *sc;
	int64_t now, next = 0;
	uint64_t fired;

	if (lst->alarm_gen != cred_gen()) {
		/* The parent's: its connections are not this process's. */
		sc_alarm_close(lst);
		return FALSE;
	}
	(void)!read(lst->alarm_fd, &fired, sizeof(fired));
	pthread_mutex_lock(&lst->lock);
	now = ep_now_ms();
	for (sc = lst->conns; sc; sc = sc->next) {
		int64_t at;

		if (pthread_mutex_trylock(&sc->lock)) {
			at = now + 1;
		} else {
			at = sc_holding(sc) ? sc->hold_until : 0;
			if (at && at <= now) {
				(void)ep_kick(sc->ep);
				at = 0;
			}
			pthread_mutex_unlock(&sc->lock);
		}
		if (at && (!next || at < next))
			next = at;
	}
	alarm_set(lst, next);
	pthread_mutex_unlock(&lst->lock);
	return FALSE;
}

/* Only the listener's end takes the alarm away (sc_alarm_close). */
static const struct xp_ops alarm_ops = {
	.xp_recv = alarm_recv,
	.xp_stat = sc_quiet_stat,
	.xp_getargs = sc_quiet_no_call,
	.xp_reply = sc_quiet_no_reply,
	.xp_freeargs = sc_quiet_no_call,
	.xp_destroy = sc_quiet_destroy,
};

/*
 * The alarm is made on first use, in the process that serves the
 * listener; it stands in for a socket as the listener's descriptor does
 * (sockfd.h).
 */
static bool
alarm_open(struct svc_rdma_listener *lst)
{
	int fd;

	if (lst->alarm_fd >= 0 && lst->alarm_gen == cred_gen())
		return true;
	sc_alarm_close(lst);
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		return false;
	if (sockfd_add(fd, (const struct sockaddr *)lst->xprt.xp_ltaddr.buf,
		       NULL)) {
		close(fd);
		return false;
	}
	memset(&lst->alarm, 0, sizeof(lst->alarm));
	memset(lst->alarm_ext, 0, sizeof(lst->alarm_ext));
	sc_quiet_init(&lst->alarm, fd, &alarm_ops, lst, lst->alarm_ext);
	lst->alarm_fd = fd;
	lst->alarm_gen = cred_gen();
	lst->alarm_at = 0;
	xprt_register(&lst->alarm);
	return true;
}

void
sc_hold_wake_at(struct svc_rdma_conn *sc)
{
	struct svc_rdma_listener *lst = sc->lst;

	pthread_mutex_lock(&lst->lock);
	if (!alarm_open(lst)) {
		/* Without it the wait ends with the next completion. */
		shim_log(SHIM_LOG_DEBUG,
			 "server: no timer for calls held behind a late reply: %s",
			 strerror(errno));
	} else if (!lst->alarm_at || sc->hold_until < lst->alarm_at) {
		alarm_set(lst, sc->hold_until);
	}
	pthread_mutex_unlock(&lst->lock);
}

void
sc_alarm_close(struct svc_rdma_listener *lst)
{
	if (lst->alarm_fd < 0)
		return;
	/* After fork() the child's table is a copy of its parent's. */
	xprt_unregister(&lst->alarm);
	sockfd_del(lst->alarm_fd);
	close(lst->alarm_fd);
	lst->alarm_fd = -1;
	lst->alarm_at = 0;
}
