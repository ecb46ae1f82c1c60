/*
 * RPC-over-RDMA Version One server (RFC 8166) behind libtirpc's SVCXPRT.
 *
 * Two transport kinds, each with its own xp_ops:
 *   listener    xp_fd is the RDMA-CM event channel; xp_recv accepts
 *               connections and handles connection events, never a call.
 *   connection  xp_fd is the completion channel of one connection; xp_recv
 *               takes the next received call, xp_reply sends its reply.
 *
 * Everything runs in the program's svc_run() thread, as libtirpc's own
 * transports do.  A received call is copied out of its receive buffer and
 * the buffer is posted again at once, so the credits granted are always
 * backed by posted receives (RFC 8166 s4.3.1).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rpc/rpc.h>
#include <rpc/svc_mt.h>

#include "config/log.h"
#include "rpcrdma_xdr.h"
#include "svc_rdma.h"
#include "xdr_grow.h"

/* libtirpc dereferences xp_p3 (SVCXPRT_EXT); give it zeroed room. */
#define SVC_EXT_SIZE 128
/* Send buffers beyond the credits, for RDMA_ERROR replies. */
#define SC_NSEND_EXTRA 4
/* How long a reply may wait for a free send buffer. */
#define SC_SEND_WAIT_MS 5000
#define LISTEN_BACKLOG 64

struct svc_rdma_conn;

struct svc_rdma_listener {
	/* The TCP rendezvous' ops with xp_destroy hooked (container_of). */
	struct xp_ops tcp_ops;
	const struct xp_ops *tcp_ops_orig;
	SVCXPRT *tcp_xprt;

	SVCXPRT xprt;			/* the listener transport */
	char ext[SVC_EXT_SIZE];
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct svc_rdma_params params;
	struct svc_rdma_conn *conns;
};

struct svc_rdma_conn {
	SVCXPRT xprt;
	char ext[SVC_EXT_SIZE];
	struct svc_rdma_listener *lst;
	struct svc_rdma_conn *next;
	struct rdma_conn *conn;
	struct sockaddr_storage raddr;
	struct sockaddr_storage laddr;

	/* Completed receives not yet served: ring of nrecv entries. */
	uint32_t *rq_idx;
	uint32_t *rq_len;
	unsigned int rq_head;
	unsigned int rq_count;

	/* The call being served. */
	bool in_call;
	uint32_t xid;
	struct rpcrdma_hdr hdr;		/* its transport header */
	uint8_t *callbuf;
	size_t callbuf_cap;
	XDR xdrs;			/* decodes the call from callbuf */
	struct rpcrdma_hdr rhdr;	/* scratch: reply header */
};

static const struct xp_ops listener_ops;
static const struct xp_ops2 listener_ops2;
static const struct xp_ops conn_ops;
static const struct xp_ops2 conn_ops2;

static struct svc_rdma_conn *
sc_of(SVCXPRT *xprt)
{
	return (struct svc_rdma_conn *)xprt->xp_p1;
}

static size_t
sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

static uint16_t
sa_port(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET6 ?
		     ((const struct sockaddr_in6 *)sa)->sin6_port :
		     ((const struct sockaddr_in *)sa)->sin_port);
}

/* Fill the address fields of an SVCXPRT as svc_vc does. */
static bool
set_addrs(SVCXPRT *xprt, const struct sockaddr *local,
	  const struct sockaddr *remote)
{
	size_t llen = sa_len(local);

	xprt->xp_ltaddr.buf = malloc(llen);
	if (!xprt->xp_ltaddr.buf)
		return false;
	memcpy(xprt->xp_ltaddr.buf, local, llen);
	xprt->xp_ltaddr.len = xprt->xp_ltaddr.maxlen = (u_int)llen;
	xprt->xp_port = sa_port(local);
	xprt->xp_netid = strdup(local->sa_family == AF_INET6 ? "rdma6" : "rdma");
	if (!xprt->xp_netid)
		return false;
	if (remote) {
		size_t rlen = sa_len(remote);

		/* svc_getrpccaller() and svc_getcaller() read these. */
		xprt->xp_rtaddr.buf = malloc(rlen);
		if (!xprt->xp_rtaddr.buf)
			return false;
		memcpy(xprt->xp_rtaddr.buf, remote, rlen);
		xprt->xp_rtaddr.len = xprt->xp_rtaddr.maxlen = (u_int)rlen;
		memcpy(&xprt->xp_raddr, remote, rlen);
		xprt->xp_addrlen = (int)rlen;
	}
	return true;
}

static void
free_addrs(SVCXPRT *xprt)
{
	free(xprt->xp_ltaddr.buf);
	free(xprt->xp_rtaddr.buf);
	free(xprt->xp_netid);
}

/* ------------------------------------------------------------------ */
/* Connection: completions                                              */
/* ------------------------------------------------------------------ */

static void
rq_push(struct svc_rdma_conn *sc, uint32_t idx, uint32_t len)
{
	unsigned int n = sc->conn->attr.nrecv;
	unsigned int tail = (sc->rq_head + sc->rq_count) % n;

	sc->rq_idx[tail] = idx;
	sc->rq_len[tail] = len;
	sc->rq_count++;
}

static void
rq_pop(struct svc_rdma_conn *sc, uint32_t *idx, uint32_t *len)
{
	*idx = sc->rq_idx[sc->rq_head];
	*len = sc->rq_len[sc->rq_head];
	sc->rq_head = (sc->rq_head + 1) % sc->conn->attr.nrecv;
	sc->rq_count--;
}

/* Take every completion available: receives are queued, sends reaped. */
static void
sc_drain(struct svc_rdma_conn *sc)
{
	struct rdma_conn *c = sc->conn;
	struct ibv_wc wc[16];
	int n, k;

	do {
		n = rdma_conn_poll(c, wc, 16);
		if (n < 0) {
			rdma_conn_set_dead(c, EIO);
			return;
		}
		for (k = 0; k < n; k++) {
			if (rdma_conn_reap_send(c, &wc[k]))
				continue;
			if (wc[k].status != IBV_WC_SUCCESS) {
				if (wc[k].status != IBV_WC_WR_FLUSH_ERR)
					shim_log(SHIM_LOG_WARN,
						 "server: receive failed: %s",
						 ibv_wc_status_str(wc[k].status));
				rdma_conn_set_dead(c, ECONNRESET);
				continue;
			}
			rq_push(sc, RDMA_WRID_IDX(wc[k].wr_id), wc[k].byte_len);
		}
	} while (n > 0);
}

/* A free send buffer, waiting a bounded time for one; -1 if none. */
static int
sc_get_send(struct svc_rdma_conn *sc)
{
	struct rdma_conn *c = sc->conn;
	int64_t deadline = rdma_now_ms() + SC_SEND_WAIT_MS;
	int idx;

	for (;;) {
		idx = rdma_conn_get_send(c);
		if (idx >= 0 || c->dead)
			return idx;
		sc_drain(sc);
		idx = rdma_conn_get_send(c);
		if (idx >= 0 || c->dead)
			return idx;
		{
			struct pollfd pfd = { .fd = c->cch->fd, .events = POLLIN };
			int64_t left = deadline - rdma_now_ms();

			if (left <= 0) {
				shim_log(SHIM_LOG_WARN,
					 "server: no send buffer freed in %d ms",
					 SC_SEND_WAIT_MS);
				rdma_conn_set_dead(c, ETIMEDOUT);
				rdma_conn_disconnect(c);
				return -1;
			}
			(void)poll(&pfd, 1, (int)left);
		}
	}
}

/* s5.5: answer a request we cannot serve with RDMA_ERROR. */
static void
sc_send_error(struct svc_rdma_conn *sc, uint32_t xid, uint32_t vers,
	      uint32_t err)
{
	struct rdma_conn *c = sc->conn;
	int idx = sc_get_send(sc);
	ssize_t len;

	if (idx < 0)
		return;
	len = rpcrdma_encode_error(rdma_conn_send_buf(c, (uint32_t)idx),
				   c->attr.send_buf_size, xid, vers,
				   sc->lst->params.credits, err);
	if (len < 0 || rdma_conn_post_send(c, (uint32_t)idx, (uint32_t)len,
					   NULL, 0, 0, 0))
		rdma_conn_put_send(c, (uint32_t)idx);
}

/* ------------------------------------------------------------------ */
/* Connection: xp_ops                                                   */
/* ------------------------------------------------------------------ */

/*
 * Take one received message.  Returns 1 with a call ready to decode in
 * sc->callbuf (length in *plen), 0 when the message was consumed
 * otherwise (an error answered, a stray message dropped).
 */
static int
sc_take_message(struct svc_rdma_conn *sc, size_t *plen)
{
	struct rdma_conn *c = sc->conn;
	uint32_t idx, len;
	const uint8_t *buf;
	int ret;

	rq_pop(sc, &idx, &len);
	buf = rdma_conn_recv_buf(c, idx);
	ret = rpcrdma_hdr_decode(buf, len, &sc->hdr);
	switch (ret) {
	case 0:
		break;
	case -EMSGSIZE:
		shim_log(SHIM_LOG_WARN, "server: dropped a %u-octet message", len);
		goto repost;
	case -EPROTONOSUPPORT:
		/* s5.5.1 */
		shim_log(SHIM_LOG_WARN,
			 "server: RPC-over-RDMA version %u from client, answering ERR_VERS",
			 sc->hdr.vers);
		sc_send_error(sc, sc->hdr.xid, sc->hdr.vers, RDMA_ERR_VERS);
		goto repost;
	default:
		/* s5.5.2; s5.6: RDMA_MSGP and RDMA_DONE land here too. */
		if (sc->hdr.proc == RDMA_ERROR)
			goto repost;	/* s5.5: never answer an RDMA_ERROR */
		shim_log(SHIM_LOG_WARN,
			 "server: malformed header (%s) for xid 0x%08x, answering BADHEADER",
			 rpcrdma_proc_name(sc->hdr.proc), sc->hdr.xid);
		sc_send_error(sc, sc->hdr.xid, sc->hdr.vers, RDMA_ERR_BADHEADER);
		goto repost;
	}

	if (sc->hdr.proc == RDMA_ERROR) {
		shim_log(SHIM_LOG_DEBUG, "server: client sent RDMA_ERROR for xid 0x%08x",
			 sc->hdr.xid);
		goto repost;
	}
	if (sc->hdr.proc != RDMA_MSG || sc->hdr.nreads) {
		/* Read chunks (long calls, s4.5.3) are not served yet. */
		shim_log(SHIM_LOG_WARN,
			 "server: %s with %u read segments for xid 0x%08x not supported",
			 rpcrdma_proc_name(sc->hdr.proc), sc->hdr.nreads, sc->hdr.xid);
		sc_send_error(sc, sc->hdr.xid, sc->hdr.vers, RDMA_ERR_BADHEADER);
		goto repost;
	}

	*plen = len - sc->hdr.hdrlen;
	if (*plen > sc->callbuf_cap) {
		uint8_t *nb = realloc(sc->callbuf, *plen);

		if (!nb) {
			sc_send_error(sc, sc->hdr.xid, sc->hdr.vers,
				      RDMA_ERR_BADHEADER);
			goto repost;
		}
		sc->callbuf = nb;
		sc->callbuf_cap = *plen;
	}
	memcpy(sc->callbuf, buf + sc->hdr.hdrlen, *plen);
	(void)rdma_conn_post_recv(c, idx);
	return 1;

repost:
	(void)rdma_conn_post_recv(c, idx);
	return 0;
}

static bool_t
sc_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	size_t plen;

	sc->in_call = false;
	sc_drain(sc);
	while (sc->rq_count && !sc->conn->dead) {
		if (!sc_take_message(sc, &plen))
			continue;
		xdrmem_create(&sc->xdrs, (char *)sc->callbuf, (u_int)plen,
			      XDR_DECODE);
		if (!xdr_callmsg(&sc->xdrs, msg) || msg->rm_xid != sc->hdr.xid) {
			/* s5.5.2: the RPC XID must match the transport's. */
			shim_log(SHIM_LOG_WARN,
				 "server: undecodable call for xid 0x%08x, answering BADHEADER",
				 sc->hdr.xid);
			sc_send_error(sc, sc->hdr.xid, sc->hdr.vers,
				      RDMA_ERR_BADHEADER);
			continue;
		}
		sc->xid = msg->rm_xid;
		sc->in_call = true;
		return TRUE;
	}
	return FALSE;
}

static enum xprt_stat
sc_stat(SVCXPRT *xprt)
{
	struct svc_rdma_conn *sc = sc_of(xprt);

	/* The dispatch of the previous call is over, replied or not. */
	sc->in_call = false;
	if (sc->conn->dead)
		return XPRT_DIED;
	return sc->rq_count ? XPRT_MOREREQS : XPRT_IDLE;
}

static bool_t
sc_getargs(SVCXPRT *xprt, xdrproc_t xdr_args, void *args_ptr)
{
	struct svc_rdma_conn *sc = sc_of(xprt);

	if (!sc->in_call)
		return FALSE;
	return SVCAUTH_UNWRAP(&SVC_XP_AUTH(xprt), &sc->xdrs, xdr_args, args_ptr);
}

static bool_t
sc_freeargs(SVCXPRT *xprt, xdrproc_t xdr_args, void *args_ptr)
{
	XDR xdrs;

	memset(&xdrs, 0, sizeof(xdrs));
	xdrs.x_op = XDR_FREE;
	return (*xdr_args)(&xdrs, args_ptr);
}

/*
 * RFC 8166 s5.3.2, s4.4.6.2: the reply header echoes the call's Write list
 * with every length zero (no Write chunk is used yet), no Read list and no
 * Reply chunk: the reply travels inline (RDMA_MSG).
 */
static void
sc_reply_header(struct svc_rdma_conn *sc, struct rpcrdma_hdr *h)
{
	unsigned int i;

	h->xid = sc->xid;
	h->vers = RPCRDMA_VERSION;
	h->credits = sc->lst->params.credits;
	h->proc = RDMA_MSG;
	h->nreads = 0;
	h->nwrites = sc->hdr.nwrites;
	h->nwsegs = sc->hdr.nwsegs;
	memcpy(h->writes, sc->hdr.writes, sizeof(h->writes[0]) * h->nwrites);
	for (i = 0; i < h->nwsegs; i++) {
		h->wsegs[i] = sc->hdr.wsegs[i];
		h->wsegs[i].length = 0;
	}
	h->has_reply = false;
	h->nreply = 0;
}

static bool_t
sc_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	struct rdma_conn *c = sc->conn;
	struct rpcrdma_hdr *h = &sc->rhdr;
	struct xdr_grow g;
	uint8_t *buf;
	ssize_t hdrlen;
	bool_t ok;
	XDR xdrs;
	int idx;

	if (!sc->in_call || c->dead)
		return FALSE;
	idx = sc_get_send(sc);
	if (idx < 0)
		return FALSE;
	buf = rdma_conn_send_buf(c, (uint32_t)idx);

	sc_reply_header(sc, h);
	hdrlen = rpcrdma_hdr_encode(buf, c->attr.send_buf_size, h);
	if (hdrlen < 0 || (size_t)hdrlen >= c->send_max) {
		rdma_conn_put_send(c, (uint32_t)idx);
		sc_send_error(sc, sc->xid, RPCRDMA_VERSION, RDMA_ERR_BADHEADER);
		sc->in_call = false;
		return FALSE;
	}

	/* Encode the RPC reply right after the header (one Send, no copy). */
	memset(&g, 0, sizeof(g));
	g.buf = buf + hdrlen;
	g.cap = c->send_max - (size_t)hdrlen;
	g.limit = g.cap;
	xdr_grow_create(&xdrs, &g);
	msg->rm_xid = sc->xid;
	if (msg->rm_reply.rp_stat == MSG_ACCEPTED &&
	    msg->rm_reply.rp_acpt.ar_stat == SUCCESS) {
		xdrproc_t xdr_proc = msg->acpted_rply.ar_results.proc;
		void *xdr_where = msg->acpted_rply.ar_results.where;

		msg->acpted_rply.ar_results.proc = XDRPROC(xdr_void);
		msg->acpted_rply.ar_results.where = NULL;
		ok = xdr_replymsg(&xdrs, msg) &&
		     SVCAUTH_WRAP(&SVC_XP_AUTH(xprt), &xdrs, xdr_proc, xdr_where);
	} else {
		ok = xdr_replymsg(&xdrs, msg);
	}
	sc->in_call = false;

	if (!ok) {
		/*
		 * s5.5.3: no RPC-level reply is possible for this XID.  Tell
		 * the client rather than leave it waiting for its timeout.
		 */
		if (g.overflow)
			shim_log(SHIM_LOG_WARN,
				 "server: reply to xid 0x%08x exceeds the inline threshold of %u octets",
				 sc->xid, c->send_max);
		rdma_conn_put_send(c, (uint32_t)idx);
		sc_send_error(sc, sc->xid, RPCRDMA_VERSION, RDMA_ERR_BADHEADER);
		return FALSE;
	}
	if (rdma_conn_post_send(c, (uint32_t)idx, (uint32_t)(hdrlen + g.len),
				NULL, 0, 0, 0)) {
		rdma_conn_put_send(c, (uint32_t)idx);
		return FALSE;
	}
	return TRUE;
}

static void
sc_destroy(SVCXPRT *xprt)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	struct svc_rdma_conn **pp;

	xprt_unregister(xprt);
	for (pp = &sc->lst->conns; *pp; pp = &(*pp)->next) {
		if (*pp == sc) {
			*pp = sc->next;
			break;
		}
	}
	shim_log(SHIM_LOG_DEBUG, "server: connection closed");
	if (sc->conn) {
		rdma_conn_disconnect(sc->conn);
		rdma_conn_destroy(sc->conn);
	}
	free_addrs(xprt);
	free(sc->rq_idx);
	free(sc->rq_len);
	free(sc->callbuf);
	free(sc);
}

static bool_t
sc_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	switch (rq) {
	case SVCGET_VERSQUIET:
		*(int *)in = svc_flags(xprt) & SVC_VERSQUIET;
		return TRUE;
	case SVCSET_VERSQUIET:
		if (*(int *)in)
			svc_flags(xprt) |= SVC_VERSQUIET;
		else
			svc_flags(xprt) &= ~SVC_VERSQUIET;
		return TRUE;
	default:
		return FALSE;
	}
}

static const struct xp_ops conn_ops = {
	.xp_recv = sc_recv,
	.xp_stat = sc_stat,
	.xp_getargs = sc_getargs,
	.xp_reply = sc_reply,
	.xp_freeargs = sc_freeargs,
	.xp_destroy = sc_destroy,
};

static const struct xp_ops2 conn_ops2 = {
	.xp_control = sc_control,
};

/* ------------------------------------------------------------------ */
/* Listener                                                             */
/* ------------------------------------------------------------------ */

static void
conn_attr(const struct svc_rdma_params *p, struct rdma_conn_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->inline_send = p->inline_send;
	a->inline_recv = p->inline_recv;
	a->nrecv = p->credits;
	a->nsend = p->credits + SC_NSEND_EXTRA;
	a->send_buf_size = p->inline_send;
	a->max_send_wr = a->nsend + 8;
	a->remote_inv = false;
}

static void
on_connect_request(struct svc_rdma_listener *lst, struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_attr attr;
	struct svc_rdma_conn *sc;
	struct rdma_conn *c;
	int err;

	conn_attr(&lst->params, &attr);
	c = rdma_conn_accept(id, &ev->param.conn, &attr, &err);
	if (!c) {
		shim_log(SHIM_LOG_WARN, "server: cannot accept an RDMA connection: %s",
			 strerror(err));
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
		return;
	}
	rdma_ack_cm_event(ev);

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		goto out_destroy;
	sc->conn = c;
	sc->lst = lst;
	sc->rq_idx = calloc(attr.nrecv, sizeof(*sc->rq_idx));
	sc->rq_len = calloc(attr.nrecv, sizeof(*sc->rq_len));
	if (!sc->rq_idx || !sc->rq_len)
		goto out_free;
	memcpy(&sc->laddr, rdma_get_local_addr(id), sa_len(rdma_get_local_addr(id)));
	memcpy(&sc->raddr, rdma_get_peer_addr(id), sa_len(rdma_get_peer_addr(id)));

	sc->xprt.xp_fd = c->cch->fd;
	sc->xprt.xp_ops = &conn_ops;
	sc->xprt.xp_ops2 = &conn_ops2;
	sc->xprt.xp_p1 = sc;
	sc->xprt.xp_p3 = sc->ext;
	sc->xprt.xp_verf = _null_auth;
	sc->xprt.xp_type = NC_TPI_COTS_ORD;
	if (!set_addrs(&sc->xprt, (struct sockaddr *)&sc->laddr,
		       (struct sockaddr *)&sc->raddr))
		goto out_free;
	id->context = sc;
	sc->next = lst->conns;
	lst->conns = sc;
	xprt_register(&sc->xprt);

	{
		char peer[INET6_ADDRSTRLEN] = "?";
		const struct sockaddr *ra = (struct sockaddr *)&sc->raddr;

		inet_ntop(ra->sa_family,
			  ra->sa_family == AF_INET6 ?
			  (const void *)&((const struct sockaddr_in6 *)ra)->sin6_addr :
			  (const void *)&((const struct sockaddr_in *)ra)->sin_addr,
			  peer, sizeof(peer));
		shim_log(SHIM_LOG_INFO,
			 "server: RDMA connection from %s port %u: inline %u/%u%s, credits %u, R=%d",
			 peer, sa_port(ra), c->recv_max, c->send_max,
			 c->peer_pd_valid ? "" : " (no RFC 8797 private data)",
			 lst->params.credits, c->rinv);
	}
	return;

out_free:
	free_addrs(&sc->xprt);
	free(sc->rq_idx);
	free(sc->rq_len);
	free(sc);
out_destroy:
	rdma_conn_disconnect(c);
	rdma_conn_destroy(c);
}

static bool_t
lst_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_listener *lst = xprt->xp_p1;
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(lst->ech, &ev) == 0) {
		struct svc_rdma_conn *sc;

		shim_log(SHIM_LOG_DEBUG, "server: %s (status %d)",
			 rdma_event_str(ev->event), ev->status);
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			on_connect_request(lst, ev);	/* acks ev */
			continue;
		}
		sc = ev->id != lst->id ? ev->id->context : NULL;
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_REJECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			/*
			 * Flush the queue pair: the flushed receives wake the
			 * connection's transport, which reports XPRT_DIED and
			 * is destroyed by libtirpc.
			 */
			if (sc && sc->conn) {
				rdma_conn_set_dead(sc->conn, ECONNRESET);
				rdma_conn_disconnect(sc->conn);
			}
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
	return FALSE;
}

static enum xprt_stat
lst_stat(SVCXPRT *xprt)
{
	return XPRT_IDLE;
}

static bool_t
lst_no_call(SVCXPRT *xprt, xdrproc_t proc, void *where)
{
	return FALSE;
}

static bool_t
lst_no_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	return FALSE;
}

static void
lst_free(struct svc_rdma_listener *lst)
{
	while (lst->conns)
		sc_destroy(&lst->conns->xprt);
	if (lst->id)
		rdma_destroy_id(lst->id);
	if (lst->ech)
		rdma_destroy_event_channel(lst->ech);
	free_addrs(&lst->xprt);
	free(lst);
}

static void
lst_destroy(SVCXPRT *xprt)
{
	struct svc_rdma_listener *lst = xprt->xp_p1;

	/* Only the TCP rendezvous' destruction takes the listener away. */
	xprt_unregister(xprt);
	(void)lst;
}

static bool_t
lst_control(SVCXPRT *xprt, const u_int rq, void *in)
{
	return FALSE;
}

static const struct xp_ops listener_ops = {
	.xp_recv = lst_recv,
	.xp_stat = lst_stat,
	.xp_getargs = lst_no_call,
	.xp_reply = lst_no_reply,
	.xp_freeargs = lst_no_call,
	.xp_destroy = lst_destroy,
};

static const struct xp_ops2 listener_ops2 = {
	.xp_control = lst_control,
};

/* The TCP rendezvous is going away: take the RDMA listener with it. */
static void
tcp_destroy_hook(SVCXPRT *tcp_xprt)
{
	struct svc_rdma_listener *lst = (struct svc_rdma_listener *)
		((char *)tcp_xprt->xp_ops - offsetof(struct svc_rdma_listener, tcp_ops));
	void (*orig_destroy)(SVCXPRT *) = lst->tcp_ops_orig->xp_destroy;

	tcp_xprt->xp_ops = lst->tcp_ops_orig;
	xprt_unregister(&lst->xprt);
	lst_free(lst);
	orig_destroy(tcp_xprt);
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

int
svc_rdma_listen(SVCXPRT *tcp_xprt, const struct sockaddr *addr, u_int sendsz,
		u_int recvsz, const struct svc_rdma_params *params,
		enum rdma_fail *why)
{
	struct svc_rdma_listener *lst;
	int fl, err, v6only = 0;
	socklen_t olen = sizeof(v6only);

	*why = RDMA_FAIL_ERROR;
	if (addr->sa_family == AF_INET6 &&
	    getsockopt(tcp_xprt->xp_fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only,
		       &olen) < 0)
		v6only = 0;
	lst = calloc(1, sizeof(*lst));
	if (!lst)
		return -ENOMEM;
	lst->params = *params;

	lst->ech = rdma_create_event_channel();
	if (!lst->ech) {
		err = errno;
		*why = RDMA_FAIL_NO_DEVICE;
		goto out_free;
	}
	if (is_wildcard(addr) && !any_device()) {
		err = ENODEV;
		*why = RDMA_FAIL_NO_DEVICE;
		goto out_free;
	}
	fl = fcntl(lst->ech->fd, F_GETFL);
	if (fl < 0 || fcntl(lst->ech->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		goto out_errno;
	if (rdma_create_id(lst->ech, &lst->id, lst, RDMA_PS_TCP)) {
		lst->id = NULL;
		goto out_errno;
	}
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
		err = errno;
		*why = errno == EADDRINUSE ? RDMA_FAIL_ERROR : RDMA_FAIL_NOT_RDMA;
		goto out_free;
	}
	if (!is_wildcard(addr) && !lst->id->verbs) {
		/* Bound, but no RDMA device serves this address. */
		err = EADDRNOTAVAIL;
		*why = RDMA_FAIL_NOT_RDMA;
		goto out_free;
	}
	if (rdma_listen(lst->id, LISTEN_BACKLOG))
		goto out_errno;

	lst->xprt.xp_fd = lst->ech->fd;
	lst->xprt.xp_ops = &listener_ops;
	lst->xprt.xp_ops2 = &listener_ops2;
	lst->xprt.xp_p1 = lst;
	lst->xprt.xp_p3 = lst->ext;
	lst->xprt.xp_verf = _null_auth;
	lst->xprt.xp_type = NC_TPI_COTS_ORD;
	if (!set_addrs(&lst->xprt, addr, NULL)) {
		err = ENOMEM;
		goto out_free;
	}
	xprt_register(&lst->xprt);

	/* Hook the TCP rendezvous' destroy so both go away together. */
	lst->tcp_xprt = tcp_xprt;
	lst->tcp_ops_orig = tcp_xprt->xp_ops;
	lst->tcp_ops = *tcp_xprt->xp_ops;
	lst->tcp_ops.xp_destroy = tcp_destroy_hook;
	tcp_xprt->xp_ops = &lst->tcp_ops;
	(void)sendsz;
	(void)recvsz;
	*why = RDMA_FAIL_NONE;
	return 0;

out_errno:
	err = errno;
out_free:
	lst_free(lst);
	return -err;
}
