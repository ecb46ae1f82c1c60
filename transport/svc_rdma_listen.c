/*
 * The server's listener (svc_rdma_int.h): an RDMA-CM listener next to a
 * TCP rendezvous, registered with libtirpc as a transport whose xp_fd is
 * its event channel.  Its xp_recv accepts connections and handles their
 * RDMA-CM events (every connection's id lives on this channel); it never
 * returns a call.  It stops listening when the TCP rendezvous goes away,
 * and goes with the last of its connections.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "common/log.h"
#include "common/log_once.h"
#include "common/sockaddr.h"
#include "cred.h"
#include "hooks.h"
#include "sockfd.h"
#include "svc_rdma_int.h"
#include "svc_rdma_v2.h"

#define LISTEN_BACKLOG 64

/* ------------------------------------------------------------------ */
/* Accept                                                              */
/* ------------------------------------------------------------------ */

static void
conn_attr(const struct svc_rdma_params *p, unsigned int credits,
	  struct ep_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->inline_send = p->inline_send;
	a->inline_recv = p->inline_recv;
	a->nrecv = credits;
	a->nsend = credits + SC_NSEND_EXTRA;
	a->send_buf_size = p->inline_send;
	a->max_send_wr = a->nsend + SC_MAX_WRITES + 8;
	a->remote_inv = p->remote_inv;
}

/* True for the first connection (tag 0) or refusal (1) from this address. */
static bool
first_from(const struct sockaddr *sa, uint64_t tag)
{
	struct peer_key key;

	(void)peer_key_from(&key, sa);
	key.port = 0;
	return log_once(LOG_ONCE_CONNECTION, &key, tag);
}

/*
 * No memory for one more connection's credits: refused at the CM, so
 * that its client uses TCP at once while the calls of the connections
 * there are go on.
 */
static void
log_refused(const struct sockaddr *ra)
{
	char peer[INET6_ADDRSTRLEN];

	sa_format_addr(ra, peer, sizeof(peer));
	shim_log(first_from(ra, 1) ? SHIM_LOG_WARN : SHIM_LOG_DEBUG,
		 "server: refusing an RDMA connection from %s port %u: no registered memory for its credits (%llu of %llu KiB of max_pinned in use; raise max_pinned and ulimit -l)",
		 peer, sa_port(ra), (unsigned long long)(budget_used() >> 10),
		 (unsigned long long)(budget_total() >> 10));
}

static void
log_connection(const struct svc_rdma_listener *lst,
	       const struct svc_rdma_conn *sc)
{
	const struct sockaddr *ra = (const struct sockaddr *)&sc->raddr;
	const struct ep *ep = sc->ep;
	char peer[INET6_ADDRSTRLEN];

	sa_format_addr(ra, peer, sizeof(peer));
	/*
	 * Once per peer address at info: reconnects are routine.  The
	 * thresholds read call/reply, as on the client's line: the same two
	 * numbers on both ends of a connection.
	 */
	shim_log(first_from(ra, 0) ? SHIM_LOG_INFO : SHIM_LOG_DEBUG,
		 "server: RDMA connection from %s port %u: inline %u/%u%s, credits %u, R=%d%s",
		 peer, sa_port(ra), ep_recv_max(ep), ep_send_max(ep),
		 ep_peer_pdata(ep) ? "" : " (peer sent no RFC 8797 private data)",
		 sc->credits, ep_rinv(ep), sc_versions_text(sc));
}

/* As many connections as the descriptors allow: refused at the CM too. */
static void
log_full(const struct sockaddr *ra, unsigned int cap)
{
	char peer[INET6_ADDRSTRLEN];

	sa_format_addr(ra, peer, sizeof(peer));
	shim_log(first_from(ra, 1) ? SHIM_LOG_WARN : SHIM_LOG_DEBUG,
		 "server: refusing an RDMA connection from %s port %u: %u connections already (one descriptor each, %u of RLIMIT_NOFILE left to others; raise ulimit -n)",
		 peer, sa_port(ra), cap, SC_FD_RESERVE);
}

/*
 * A request withdrawn before it was accepted is routine (a client that
 * ended while its RDMA connection was being set up): debug only.
 */
static void
log_not_accepted(const struct sockaddr *ra, int err)
{
	char peer[INET6_ADDRSTRLEN];

	sa_format_addr(ra, peer, sizeof(peer));
	if (err == ECONNABORTED)
		shim_log(SHIM_LOG_DEBUG,
			 "server: %s port %u withdrew its RDMA connection request before it was accepted",
			 peer, sa_port(ra));
	else
		shim_log(SHIM_LOG_WARN,
			 "server: cannot accept an RDMA connection from %s port %u: %s",
			 peer, sa_port(ra), strerror(err));
}

static void
on_connect_request(struct svc_rdma_listener *lst, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	unsigned int full = sc_room();
	unsigned int credits = full ? 0 : sc_grant(lst, id);
	struct svc_rdma_conn *sc;
	struct ep_attr attr;
	struct ep *ep;
	int ret = -ENOMEM;

	/* Asked before the listening id went (the kernel drops the rest). */
	if (lst->closing) {
		(void)rdma_reject(id, NULL, 0);
		rdma_ack_cm_event(ev);
		cm_destroy_id(id);
		return;
	}
	if (credits) {
		conn_attr(&lst->params, credits, &attr);
		ret = ep_accept(id, &ev->param.conn, &attr, &ep);
	} else if (rdma_reject(id, NULL, 0) && cm_refused(id->channel)) {
		(void)rdma_reject(id, NULL, 0);
	}
	rdma_ack_cm_event(ev);
	if (ret) {
		if (full)
			log_full(rdma_get_peer_addr(id), full);
		else if (ret == -ENOMEM)
			log_refused(rdma_get_peer_addr(id));
		else
			log_not_accepted(rdma_get_peer_addr(id), -ret);
		cm_destroy_id(id);
		return;
	}
	if (sc_create(lst, ep, credits, &sc))
		return;
	SHIM_STATS_ADD(lst->stats, connections, 1);
	log_connection(lst, sc);
}

/* ------------------------------------------------------------------ */
/* Connection events, failure                                          */
/* ------------------------------------------------------------------ */

/*
 * Close the listener's channel (this process's copy of the descriptor;
 * librdmacm closes it) and leave its id: destroying the id would be an
 * RDMA-CM command on the closed channel, which the kernel refuses, and
 * closing the channel released it there (or it is another process's).
 */
static void
lst_close_channel(struct svc_rdma_listener *lst)
{
	sockfd_del(lst->ech->fd);
	cm_forget(lst->ech);
	rdma_destroy_event_channel(lst->ech);
	lst->ech = NULL;
	lst->id = NULL;
}

/*
 * The listener cannot take events any more.  The kernel refuses RDMA-CM
 * commands from credentials other than those that opened the channel; the
 * channel is moved to the new ones (cred.h), unless they cannot open the
 * RDMA-CM device: then this ends here.  Stop for good rather than leave a
 * readable descriptor for svc_run to spin on: closing the channel tears
 * the listener down in the kernel, so clients are refused at once and use
 * TCP.
 */
static void
lst_fail(struct svc_rdma_listener *lst, int err)
{
	struct svc_rdma_conn *sc;

	shim_log(SHIM_LOG_WARN,
		 "server: RDMA listener on port %u stops: %s%s", lst->xprt.xp_port,
		 strerror(err), err == EACCES ?
		 " (the process changed its credentials and cannot open the RDMA-CM device under the new ones); RDMA clients now use TCP" :
		 "");
	xprt_unregister(&lst->xprt);
	/*
	 * Flush the connections while their ids' channel still exists: the
	 * flushed request ep_wake posts wakes each one, and libtirpc
	 * destroys it.  Their ids go with the channel.
	 */
	for (sc = lst->conns; sc; sc = sc->next) {
		pthread_mutex_lock(&sc->lock);
		ep_set_dead(sc->ep, err);
		ep_disconnect(sc->ep);
		ep_wake(sc->ep);
		ep_cm_lost(sc->ep);
		pthread_mutex_unlock(&sc->lock);
	}
	lst_close_channel(lst);
}

/* RDMA-CM events of a connection: each ends it. */
static void
on_conn_event(struct rdma_cm_event *ev)
{
	struct svc_rdma_conn *sc = ep_owner(ep_from_id(ev->id));

	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * Flush the queue pair: the flushed request ep_wake posts
		 * wakes the connection's transport, which reports XPRT_DIED
		 * and is destroyed by libtirpc.
		 */
		if (sc) {
			pthread_mutex_lock(&sc->lock);
			ep_set_dead(sc->ep, ECONNRESET);
			ep_disconnect(sc->ep);
			ep_wake(sc->ep);
			pthread_mutex_unlock(&sc->lock);
		}
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------ */
/* fork(): a child serving its parent's listener                       */
/* ------------------------------------------------------------------ */

/* The connections are the parent's: this process only lets go of them. */
static void
lst_drop_conns(struct svc_rdma_listener *lst)
{
	while (lst->conns)
		sc_abandon(lst->conns);
}

/* This process no longer has the listener (another process took it). */
static void
lst_let_go(struct svc_rdma_listener *lst)
{
	xprt_unregister(&lst->xprt);
	sc_alarm_close(lst);
	if (lst->ech)
		lst_close_channel(lst);
}

/*
 * The statistics slot is in the parent's file: this process publishes a
 * copy in its own.
 */
static void
lst_stats_own(struct svc_rdma_listener *lst)
{
	struct shim_stats_conn *old = lst->stats, *s;

	lst->stats = NULL;
	if (!old)
		return;
	s = shim_stats_open(SHIM_STATS_LISTENER, old->transport, NULL, NULL);
	if (!s)
		return;
	memcpy((char *)s + sizeof(s->state), (const char *)old + sizeof(old->state),
	       sizeof(*s) - sizeof(s->state));
	lst->stats = s;
	lst->stats_own = true;
	shim_stats_publish(s);
}

/*
 * A child runs svc_run() on the listener its parent made (a daemon after
 * fork(), a pre-forked worker): the first to read it takes the listening
 * id over into a channel of its own, with the connection requests that
 * wait on it; the others find it gone.  True when this process serves it.
 */
static bool
lst_adopt(struct svc_rdma_listener *lst)
{
	int ret;

	/* A thread of the parent may have held it at fork(): ours is new. */
	pthread_mutex_init(&lst->lock, NULL);
	lst_drop_conns(lst);
	sc_alarm_close(lst);
	if (!lst->id) {
		/* Closed in the parent before the fork: nothing to take. */
		lst_let_go(lst);
		return false;
	}
	ret = cm_adopt(lst->ech, lst->id);
	if (ret) {
		shim_log(SHIM_LOG_INFO,
			 "server: RDMA listener on port %u: %s; this process serves TCP only",
			 lst->xprt.xp_port, ret == -EINVAL || ret == -ENOENT ?
			 "another process took it over after fork()" :
			 strerror(-ret));
		lst_let_go(lst);
		return false;
	}
	lst->gen = cred_gen();
	lst_stats_own(lst);
	shim_log(SHIM_LOG_INFO,
		 "server: RDMA listener on port %u taken over after fork()",
		 lst->xprt.xp_port);
	return true;
}

static bool_t
lst_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_listener *lst = xprt->xp_p1;
	struct rdma_cm_event *ev;

	if (lst->ech && lst->gen != cred_gen() && !lst_adopt(lst))
		return FALSE;
	while (lst->ech) {
		if (cm_get_event(lst->ech, &ev)) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR)
				lst_fail(lst, errno);
			break;
		}

		shim_log(SHIM_LOG_DEBUG, "server: %s (status %d)",
			 rdma_event_str(ev->event), ev->status);
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			on_connect_request(lst, ev);	/* acks ev */
			continue;
		}
		if (ev->id != lst->id)
			on_conn_event(ev);
		rdma_ack_cm_event(ev);
	}
	return FALSE;
}

/* ------------------------------------------------------------------ */
/* The listener transport                                              */
/* ------------------------------------------------------------------ */

enum xprt_stat
sc_quiet_stat(SVCXPRT *xprt)
{
	return XPRT_IDLE;
}

bool_t
sc_quiet_no_call(SVCXPRT *xprt, xdrproc_t proc, void *where)
{
	return FALSE;
}

bool_t
sc_quiet_no_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	return FALSE;
}

static void
lst_free(struct svc_rdma_listener *lst)
{
	if (lst->gen != cred_gen()) {
		/* The parent's, never taken over: let go, destroy nothing. */
		pthread_mutex_init(&lst->lock, NULL);
		lst_drop_conns(lst);
		lst_let_go(lst);
	}
	while (lst->conns)
		sc_destroy(&lst->conns->xprt);
	sc_alarm_close(lst);
	if (lst->ech)
		sockfd_del(lst->ech->fd);
	if (lst->id)
		cm_destroy_id(lst->id);
	if (lst->ech) {
		cm_forget(lst->ech);
		rdma_destroy_event_channel(lst->ech);
	}
	if (lst->stats_own)
		shim_stats_close(lst->stats);
	svc_rdma_free_addrs(&lst->xprt);
	pthread_mutex_destroy(&lst->lock);
	free(lst);
}

void
sc_quiet_destroy(SVCXPRT *xprt)
{
	/* Only their owner's end takes them away (tcp_destroyed). */
	xprt_unregister(xprt);
}

static bool_t
sc_quiet_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	return FALSE;
}

static const struct xp_ops2 sc_quiet_ops2 = {
	.xp_control = sc_quiet_control,
};

void
sc_quiet_init(SVCXPRT *xprt, int fd, const struct xp_ops *ops, void *p1,
	      char *ext)
{
	xprt->xp_fd = fd;
	xprt->xp_ops = ops;
	xprt->xp_ops2 = &sc_quiet_ops2;
	xprt->xp_p1 = p1;
	xprt->xp_p3 = ext;
	xprt->xp_verf = _null_auth;
	xprt->xp_type = NC_TPI_COTS_ORD;
}

static const struct xp_ops listener_ops = {
	.xp_recv = lst_recv,
	.xp_stat = sc_quiet_stat,
	.xp_getargs = sc_quiet_no_call,
	.xp_reply = sc_quiet_no_reply,
	.xp_freeargs = sc_quiet_no_call,
	.xp_destroy = sc_quiet_destroy,
};

/*
 * The TCP rendezvous is going away: the RDMA listener stops listening, and
 * goes at once unless connections of its own remain.
 */
static void
tcp_destroyed(SVCXPRT *tcp_xprt, void *arg)
{
	struct svc_rdma_listener *lst = arg;
	unsigned int n = 0;
	struct svc_rdma_conn *sc;

	/* A parent's listener never taken over: its connections are the parent's. */
	if (lst->gen == cred_gen()) {
		pthread_mutex_lock(&lst->lock);
		for (sc = lst->conns; sc; sc = sc->next)
			n++;
		lst->closing = n > 0;
		pthread_mutex_unlock(&lst->lock);
	}
	if (!n) {
		xprt_unregister(&lst->xprt);
		lst_free(lst);
		return;
	}
	/*
	 * libtirpc leaves the connections a rendezvous accepted alone when
	 * it goes, and so does the listener: only the listening id goes now.
	 * New requests are then refused by the kernel's CM, and their
	 * clients find no TCP rendezvous either.  The channel stays for the
	 * connections' events.  The statistics slot is the rendezvous' own,
	 * closed with it.
	 */
	if (lst->id) {
		cm_destroy_id(lst->id);
		lst->id = NULL;
	}
	if (!lst->stats_own)
		lst->stats = NULL;
	shim_log(SHIM_LOG_INFO,
		 "server: RDMA listener on port %u closed with its TCP rendezvous; the connections it accepted (%u) are served until they end",
		 lst->xprt.xp_port, n);
}

void
lst_last_conn_gone(struct svc_rdma_listener *lst)
{
	shim_log(SHIM_LOG_DEBUG,
		 "server: the last RDMA connection of the closed listener on port %u is gone",
		 lst->xprt.xp_port);
	xprt_unregister(&lst->xprt);
	lst_free(lst);
}

static bool
any_device(void)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);

	if (list)
		ibv_free_device_list(list);
	return n > 0;
}

static bool
is_wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* A bound, listening id on lst's channel; -errno with *why set. */
static int
lst_bind(struct svc_rdma_listener *lst, const struct sockaddr *addr,
	 bool v6only, enum rdma_fail *why)
{
	int fl, ret;

	fl = fcntl(lst->ech->fd, F_GETFL);
	if (fl < 0 || fcntl(lst->ech->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	ret = cm_create_id(lst->ech, &lst->id, lst);
	if (ret)
		return ret;
	/*
	 * An IPv6 listener takes IPv6 only when its TCP socket does
	 * (IPV6_V6ONLY, as libtirpc sets for tcp6), so that the tcp and tcp6
	 * listeners of one service can both exist on one port.
	 */
	if (addr->sa_family == AF_INET6 && v6only) {
		int one = 1;

		(void)rdma_set_option(lst->id, RDMA_OPTION_ID,
				      RDMA_OPTION_ID_AFONLY, &one, sizeof(one));
	}
	if (rdma_bind_addr(lst->id, (struct sockaddr *)addr)) {
		*why = errno == EADDRINUSE ? RDMA_FAIL_ERROR : RDMA_FAIL_NOT_RDMA;
		return -errno;
	}
	if (!is_wildcard(addr) && !lst->id->verbs) {
		/* Bound, but no RDMA device serves this address. */
		*why = RDMA_FAIL_NOT_RDMA;
		return -EADDRNOTAVAIL;
	}
	if (rdma_listen(lst->id, LISTEN_BACKLOG))
		return -errno;
	return 0;
}

int
svc_rdma_listen(SVCXPRT *tcp_xprt, const struct sockaddr *addr, u_int sendsz,
		u_int recvsz, const struct svc_rdma_params *params,
		struct shim_stats_conn *stats, enum rdma_fail *why)
{
	struct svc_rdma_listener *lst;
	int ret, v6only = 0;
	socklen_t olen = sizeof(v6only);

	*why = RDMA_FAIL_ERROR;
	budget_setup(params->max_pinned);
	if (addr->sa_family == AF_INET6 &&
	    getsockopt(tcp_xprt->xp_fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
		       &olen) < 0)
		v6only = 0;
	lst = calloc(1, sizeof(*lst));
	if (!lst)
		return -ENOMEM;
	pthread_mutex_init(&lst->lock, NULL);
	lst->alarm_fd = -1;
	lst->params = *params;
	lst->gen = cred_gen();

	lst->ech = rdma_create_event_channel();
	if (!lst->ech) {
		ret = -errno;
		*why = RDMA_FAIL_NO_DEVICE;
		goto out_free;
	}
	if (is_wildcard(addr) && !any_device()) {
		ret = -ENODEV;
		*why = RDMA_FAIL_NO_DEVICE;
		goto out_free;
	}
	ret = lst_bind(lst, addr, v6only, why);
	if (ret)
		goto out_free;

	sc_quiet_init(&lst->xprt, lst->ech->fd, &listener_ops, lst, lst->ext);
	if (!svc_rdma_set_addrs(&lst->xprt, addr, NULL) ||
	    sockfd_add(lst->xprt.xp_fd, addr, NULL)) {
		ret = -ENOMEM;
		goto out_free;
	}
	xprt_register(&lst->xprt);

	/* The listener goes away with the TCP rendezvous. */
	if (svc_hook_destroy(tcp_xprt, tcp_destroyed, lst)) {
		xprt_unregister(&lst->xprt);
		ret = -ENOMEM;
		goto out_free;
	}
	lst->stats = stats;
	(void)sendsz;
	(void)recvsz;
	*why = RDMA_FAIL_NONE;
	return 0;

out_free:
	lst_free(lst);
	return ret;
}
