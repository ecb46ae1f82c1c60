/*
 * The connection under a CLIENT's calls (clnt_rdma_int.h): before each
 * call, one that works and a slot on it; a lost one, or one whose slots
 * all hold timed-out calls, is replaced by a new one, once per call, by
 * one thread while the others wait, each until its own deadline.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "clnt_rdma_int.h"
#include "common/log.h"
#include "sockfd.h"

/*
 * A new connection for this CLIENT, as the kernel's client reconnects: the
 * old one was lost (its late reply's Write failed on the server, the
 * server went away) or is given up because every slot holds a timed-out
 * call's memory.  What the old one exposed goes with it, its calls' late
 * replies with them (over TCP they would be dropped by XID).  The old
 * connection goes first: its RDMA-CM id holds the source port to keep.
 * Credits start again from one (RFC 8166 s4.3.3).
 */
static int
ct_renew(struct ct_rdma *ct, int64_t deadline, const char *why_lost)
{
	int64_t left = deadline - ep_now_ms();
	int ms = ct->ct_connect_ms;
	enum rdma_fail why;
	struct ep *ep;
	int ret;

	if (ct->ct_ep) {
		shim_log(SHIM_LOG_INFO, "client: %s%s, connecting again",
			 why_lost ? why_lost : "connection lost: ",
			 why_lost ? "" : strerror(ep_dead(ct->ct_ep)));
		ep_disconnect(ct->ct_ep);
		ct_slots_release(ct);
		ep_destroy(ct->ct_ep);
		ct->ct_ep = NULL;
	}
	memset(ct->ct_slots, 0, sizeof(ct->ct_slots));
	ct->ct_nslots = CT_SLOTS;
	ct->ct_mw = false;
	ct->ct_outstanding = 0;
	ct->ct_granted = 1;
	if (left <= 0)
		return -ETIMEDOUT;
	if (left < ms)
		ms = (int)left;
	/*
	 * The connect waits on the network, up to the connect timeout: the
	 * lock goes meanwhile, so that the other threads' calls keep their
	 * own timeouts (ct_renewing holds them in ct_ready) and
	 * clnt_control() answers.  Nothing of the connection is left to
	 * touch: no endpoint, no slot, no poller.
	 */
	pthread_mutex_unlock(&ct->ct_lock);
	ret = ep_connect((struct sockaddr *)&ct->ct_dst,
			 ct->ct_has_src ? (struct sockaddr *)&ct->ct_src : NULL,
			 ms, &ct->ct_attr, &ep, &why);
	pthread_mutex_lock(&ct->ct_lock);
	if (ret)
		return ret;
	ct->ct_ep = ep;
	/* Without a bound port the new connection has a port of its own. */
	if (ct->ct_stand_in)
		sockfd_set_local(ct->ct_fd, ep_local_addr(ep));
	if (ep_dev(ep)->mw_type2 && ct_windows_alloc(ct) &&
	    ep_rinv_offered(ep)) {
		ep_set_dead(ep, ENOMEM);
		return -ENOMEM;
	}
	shim_log(SHIM_LOG_INFO, "client: connected again");
	return 0;
}

/*
 * Before a call: a connection that works, and a slot.  Each attempt may
 * renew the connection once; the call has not left yet, so it is sent
 * once, on the connection it finds (RFC 8166 s4.3: nothing of the old
 * one carries over).  Calls of other threads on the old connection end
 * first (ct_wait_quiet), one thread renews it while the others wait.
 * Returns the slot, or a negative errno.
 */
int
ct_ready(struct ct_rdma *ct, int64_t deadline, bool *renewed,
	 const char *why_lost)
{
	int s, ret;

	for (;;) {
		if (ct->ct_renewing) {
			ret = ct_wait_renewed(ct, deadline);
			if (ret)
				return ret;
			continue;
		}
		if (!ct->ct_ep || ep_dead(ct->ct_ep)) {
			if (*renewed)
				return ct->ct_ep ? -ep_dead(ct->ct_ep) : -ENOTCONN;
			*renewed = true;
			ct->ct_renewing = true;
			/* Waiters on the lost connection give it up. */
			ct_wake_waiters(ct);
			if (ct->ct_ep)
				ct_fencing_lost(ct);
			ret = ct_wait_quiet(ct, deadline);
			if (!ret)
				ret = ct_renew(ct, deadline, why_lost);
			ct->ct_renewing = false;
			ct_wake_waiters(ct);
			if (ret)
				return ret;
		}
		s = ct_get_slot(ct, deadline);
		if (s >= 0 && ct->ct_ep && !ep_dead(ct->ct_ep))
			return s;
		if (s >= 0) {
			/* Lost while waiting for it. */
			ct_slot_unclaim(ct, (unsigned int)s);
			s = -ECONNRESET;
		}
		if (s == -ENOSPC && !*renewed) {
			why_lost = "every call slot holds a timed-out call's memory";
			ep_set_dead(ct->ct_ep, ENOSPC);
			continue;
		}
		/* Lost while waiting: a new connection, if not done yet. */
		if ((ct->ct_ep && !ep_dead(ct->ct_ep)) || *renewed)
			return ct->ct_ep && ep_dead(ct->ct_ep) ?
			       -ep_dead(ct->ct_ep) : s;
		why_lost = NULL;
	}
}
