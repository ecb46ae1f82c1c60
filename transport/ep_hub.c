/*
 * The channels client endpoints share (ep_hub.h).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "cred.h"
#include "ep_hub.h"
#include "ep_int.h"

/* Devices one process may run clients on at once. */
#define HUB_DEVS 8

struct hub_comp {
	struct ibv_context *verbs;
	struct ibv_comp_channel *cch;
};

struct ep_hub {
	pthread_mutex_t lock;
	pthread_cond_t done;		/* a poll round ended */
	unsigned int refs;		/* endpoints, and the process's current one */
	unsigned int forks;		/* fork_count when it was made */
	int failed;			/* errno once the CM channel failed */
	bool polling;			/* a thread is in poll() for everyone */
	struct rdma_event_channel *ech;
	int efd;			/* eventfd: ep_hub_interrupt() */
	struct hub_comp comp[HUB_DEVS];
	unsigned int ncomp;
};

static pthread_mutex_t hubs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ep_hub *current;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
/* Forks this process descends through: a hub of an earlier count is a parent's. */
static unsigned int fork_count;

/*
 * A child starts without a hub: the parent's channels are the parent's
 * (their events must not be read here), and a lock another thread held
 * at fork() would never be released.  The parent's hub is left alone.
 */
static void
hub_atfork_child(void)
{
	pthread_mutex_init(&hubs_lock, NULL);
	current = NULL;
	fork_count++;
}

static void
hub_atfork(void)
{
	(void)pthread_atfork(NULL, NULL, hub_atfork_child);
}

static void
hub_free(struct ep_hub *h)
{
	unsigned int i;

	for (i = 0; i < h->ncomp; i++)
		ibv_destroy_comp_channel(h->comp[i].cch);
	if (h->efd >= 0)
		close(h->efd);
	if (h->ech) {
		cm_forget(h->ech);
		rdma_destroy_event_channel(h->ech);
	}
	pthread_cond_destroy(&h->done);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

static struct ep_hub *
hub_new(void)
{
	struct ep_hub *h = calloc(1, sizeof(*h));
	pthread_condattr_t ca;
	int err;

	if (!h)
		return NULL;
	pthread_mutex_init(&h->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->done, &ca);
	pthread_condattr_destroy(&ca);
	h->forks = fork_count;
	h->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	h->ech = rdma_create_event_channel();
	if (h->efd < 0 || !h->ech || ep_set_nonblock(h->ech->fd)) {
		err = errno;
		hub_free(h);
		errno = err;
		return NULL;
	}
	return h;
}

struct ep_hub *
ep_hub_get(void)
{
	struct ep_hub *h, *old = NULL;

	pthread_once(&atfork_once, hub_atfork);
	pthread_mutex_lock(&hubs_lock);
	h = current;
	if (h) {
		pthread_mutex_lock(&h->lock);
		if (h->failed) {
			/* Its endpoints keep it; new ones get a new hub. */
			current = NULL;
			old = h;
		}
		pthread_mutex_unlock(&h->lock);
		if (old)
			h = NULL;
	}
	if (!h) {
		h = hub_new();
		if (h)
			h->refs = 1;	/* the process's reference */
		current = h;
	}
	if (h) {
		pthread_mutex_lock(&h->lock);
		h->refs++;
		pthread_mutex_unlock(&h->lock);
	}
	pthread_mutex_unlock(&hubs_lock);
	if (old)
		ep_hub_put(old);
	return h;
}

void
ep_hub_put(struct ep_hub *h)
{
	bool last;

	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	last = --h->refs == 0;
	pthread_mutex_unlock(&h->lock);
	if (last)
		hub_free(h);
}

struct rdma_event_channel *
ep_hub_cm(struct ep_hub *h)
{
	return h->ech;
}

struct ibv_comp_channel *
ep_hub_comp(struct ep_hub *h, struct ibv_context *verbs)
{
	struct ibv_comp_channel *cch = NULL;
	unsigned int i;

	pthread_mutex_lock(&h->lock);
	for (i = 0; i < h->ncomp; i++)
		if (h->comp[i].verbs == verbs)
			cch = h->comp[i].cch;
	if (!cch && h->ncomp == HUB_DEVS)
		errno = ENOSPC;
	else if (!cch) {
		cch = ibv_create_comp_channel(verbs);
		if (cch && ep_set_nonblock(cch->fd)) {
			ibv_destroy_comp_channel(cch);
			cch = NULL;
		}
		if (cch) {
			h->comp[h->ncomp].verbs = verbs;
			h->comp[h->ncomp++].cch = cch;
		}
	}
	pthread_mutex_unlock(&h->lock);
	return cch;
}

void
ep_hub_lock(struct ep_hub *h)
{
	pthread_mutex_lock(&h->lock);
}

void
ep_hub_unlock(struct ep_hub *h)
{
	pthread_mutex_unlock(&h->lock);
}

void
ep_hub_connected(struct ep *ep)
{
	pthread_mutex_lock(&ep->hub->lock);
	ep->cm_connected = true;
	/* An event after ESTABLISHED, handed out before this: it ends us. */
	if (ep->cm_ev_ready) {
		ep->cm_ev_ready = false;
		__atomic_store_n(&ep->cm_err, ECONNRESET, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&ep->hub->lock);
}

/* ------------------------------------------------------------------ */
/* Handing events out                                                  */
/* ------------------------------------------------------------------ */

/* One RDMA-CM event to its endpoint.  Holds h->lock. */
static void
cm_dispatch_locked(struct rdma_cm_event *ev)
{
	struct ep *ep = ev->id ? ev->id->context : NULL;
	size_t n;

	if (!ep)
		return;
	shim_log(SHIM_LOG_DEBUG, "client: %s (status %d)",
		 rdma_event_str(ev->event), ev->status);
	if (!ep->cm_connected) {
		/* The connect in progress waits for it (ep_hub_cm_wait). */
		ep->cm_ev.event = ev->event;
		ep->cm_ev.status = ev->status;
		n = ev->param.conn.private_data_len;
		if (n > sizeof(ep->cm_ev.pdata))
			n = sizeof(ep->cm_ev.pdata);
		if (ev->event != RDMA_CM_EVENT_ESTABLISHED || !ev->param.conn.private_data)
			n = 0;
		if (n)	/* no source at all without private data */
			memcpy(ep->cm_ev.pdata, ev->param.conn.private_data, n);
		ep->cm_ev.pdata_len = (uint8_t)n;
		ep->cm_ev_ready = true;
		return;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		__atomic_store_n(&ep->cm_err,
				 ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ?
				 ENODEV : ECONNRESET, __ATOMIC_RELEASE);
		break;
	default:
		break;
	}
}

/*
 * Take every event of the channels poll() found readable (pfd[0] the
 * RDMA-CM channel, then the ncomp completion channels in order, then the
 * eventfd), without blocking.  Holds h->lock.
 */
static void
hub_dispatch_locked(struct ep_hub *h, const struct pollfd *pfd,
		    unsigned int ncomp)
{
	struct rdma_cm_event *ev;
	unsigned int i;
	uint64_t v;

	if (pfd[ncomp + 1].revents)
		(void)read(h->efd, &v, sizeof(v));
	for (i = 0; i < ncomp; i++) {
		struct ibv_cq *cq;
		void *ctx;

		if (!pfd[i + 1].revents)
			continue;
		while (ibv_get_cq_event(h->comp[i].cch, &cq, &ctx) == 0) {
			ibv_ack_cq_events(cq, 1);
			__atomic_store_n(&((struct ep *)ctx)->cq_fired, 1,
					 __ATOMIC_RELEASE);
		}
	}
	while (pfd[0].revents && !h->failed) {
		/* cm_get_event: the channel follows credential changes (cred.h). */
		if (cm_get_event(h->ech, &ev)) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				h->failed = errno;
			break;
		}
		cm_dispatch_locked(ev);
		rdma_ack_cm_event(ev);
	}
}

static void
abs_time(int64_t deadline, struct timespec *ts)
{
	ts->tv_sec = deadline / 1000;
	ts->tv_nsec = (long)(deadline % 1000) * 1000000;
}

/*
 * Wait until ready(ep) under the hub's lock, polling for everyone when no
 * other thread does.  0, -ETIMEDOUT, or -errno of a failed hub.
 */
static int
hub_wait(struct ep *ep, int64_t deadline, bool (*ready)(const struct ep *ep))
{
	struct ep_hub *h = ep->hub;
	struct pollfd pfd[2 + HUB_DEVS];
	struct timespec ts;
	unsigned int i, n, ncomp;
	int64_t left;
	int ret = 0;

	/* A child must not read its parent's events. */
	if (h->forks != fork_count)
		return -EIO;
	pthread_mutex_lock(&h->lock);
	while (!ready(ep)) {
		if (h->failed) {
			ret = -h->failed;
			break;
		}
		left = deadline - ep_now_ms();
		if (left <= 0) {
			ret = -ETIMEDOUT;
			break;
		}
		if (h->polling) {
			abs_time(deadline, &ts);
			(void)pthread_cond_timedwait(&h->done, &h->lock, &ts);
			continue;
		}
		h->polling = true;
		pfd[0].fd = h->ech->fd;
		pfd[0].events = POLLIN;
		for (i = 0, n = 1; i < h->ncomp; i++, n++) {
			pfd[n].fd = h->comp[i].cch->fd;
			pfd[n].events = POLLIN;
		}
		ncomp = h->ncomp;
		pfd[n].fd = h->efd;
		pfd[n++].events = POLLIN;
		pthread_mutex_unlock(&h->lock);
		if (poll(pfd, n, (int)(left > 60000 ? 60000 : left)) <= 0)
			for (i = 0; i < n; i++)
				pfd[i].revents = 0;
		pthread_mutex_lock(&h->lock);
		h->polling = false;
		hub_dispatch_locked(h, pfd, ncomp);
		pthread_cond_broadcast(&h->done);
	}
	pthread_mutex_unlock(&h->lock);
	return ret;
}

static bool
cq_ready(const struct ep *ep)
{
	return __atomic_load_n(&ep->cq_fired, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&ep->cm_err, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&ep->kicked, __ATOMIC_ACQUIRE);
}

void
ep_hub_interrupt(struct ep_hub *h)
{
	uint64_t one = 1;

	/*
	 * Whoever is in poll() wakes and hands out; a waiter on h->done
	 * finds its endpoint ready then.  Before poll() the count stays.
	 */
	(void)!write(h->efd, &one, sizeof(one));
}

int
ep_hub_wait(struct ep *ep, int64_t deadline)
{
	return hub_wait(ep, deadline, cq_ready);
}

static bool
cm_ready(const struct ep *ep)
{
	return ep->cm_ev_ready;
}

int
ep_hub_cm_wait(struct ep *ep, int64_t deadline, struct ep_cm_ev *ev)
{
	int ret = hub_wait(ep, deadline, cm_ready);

	if (ret)
		return ret;
	pthread_mutex_lock(&ep->hub->lock);
	*ev = ep->cm_ev;
	ep->cm_ev_ready = false;
	pthread_mutex_unlock(&ep->hub->lock);
	return 0;
}
