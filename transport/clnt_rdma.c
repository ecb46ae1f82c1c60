/*
 * RPC-over-RDMA Version One client (RFC 8166) behind libtirpc's CLIENT.
 *
 * One call at a time per CLIENT, as libtirpc's clnt_vc does: callers on
 * several threads are serialized by ct_lock.  A call is encoded once into a
 * registered buffer, sent with the transport header in one RDMA Send
 * (gathering header and payload), and its reply is matched by XID among the
 * receive completions.  Every wait is bounded by the call's timeout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clnt_rdma.h"
#include "config/log.h"
#include "rpcrdma_xdr.h"
#include "xdr_grow.h"

/* Room for the serialized call header: xid, direction, rpcvers, prog, vers. */
#define MCALL_MSG_SIZE 24
/* Header send buffers: transport headers only, never payload. */
#define CT_NSEND 8
#define CT_SEND_BUF 1024
/* Initial size of the buffer calls are encoded into. */
#define CT_CALLBUF_MIN 65536

struct ct_rdma {
	pthread_mutex_t ct_lock;
	struct rdma_conn *ct_conn;
	int ct_fd;			/* the socket libtirpc gave us */
	bool ct_closeit;		/* close ct_fd on destroy */
	struct netbuf ct_addr;		/* server address as given */
	struct rpc_err ct_error;
	struct timeval ct_wait;
	bool ct_waitset;		/* ct_wait set by CLSET_TIMEOUT */
	union {
		char ct_mcallc[MCALL_MSG_SIZE];
		uint32_t ct_mcalli;
	} ct_u;
	u_int ct_mpos;			/* octets of ct_mcallc in use */

	/* RFC 8166 s4.3: credits granted by the server, calls in flight. */
	unsigned int ct_granted;
	unsigned int ct_outstanding;
	unsigned int ct_credits_req;

	struct rdma_buf ct_callbuf;	/* calls are encoded here */
	struct rpcrdma_hdr ct_hdr;	/* scratch: decoded reply header */
	struct rpcrdma_hdr ct_shdr;	/* scratch: call header to encode */
};

static struct clnt_ops *clnt_rdma_ops(void);

static struct ct_rdma *
ct_of(CLIENT *cl)
{
	return (struct ct_rdma *)cl->cl_private;
}

/* The server may send at most this many replies we have not consumed. */
static unsigned int
ct_window(const struct ct_rdma *ct)
{
	unsigned int w = ct->ct_granted;

	if (w > ct->ct_conn->attr.nrecv)
		w = ct->ct_conn->attr.nrecv;
	return w ? w : 1;
}

static int64_t
tv_ms(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000 + tv->tv_usec / 1000;
}

static bool
time_not_ok(const struct timeval *t)
{
	return t->tv_sec < 0 || t->tv_usec < 0 || t->tv_usec > 999999;
}

/* ------------------------------------------------------------------ */
/* Completions                                                         */
/* ------------------------------------------------------------------ */

/* Connection-manager events: only a disconnect matters once connected. */
static void
ct_cm_events(struct ct_rdma *ct)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(ct->ct_conn->ech, &ev) == 0) {
		shim_log(SHIM_LOG_DEBUG, "client: %s", rdma_event_str(ev->event));
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			rdma_conn_set_dead(ct->ct_conn, ECONNRESET);
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

/* A reply-sized buffer came back to us: account for it (s4.3.1). */
static void
ct_reply_arrived(struct ct_rdma *ct, uint32_t credits)
{
	if (ct->ct_outstanding)
		ct->ct_outstanding--;
	/* s4.3.1: a granted value of zero is invalid; never deadlock on it. */
	ct->ct_granted = credits ? credits : 1;
}

/*
 * Handle one completion.  Returns 1 when it is the reply to 'xid' (only
 * when 'match'; its receive buffer index in *idx, length in *len, header
 * in ct->ct_hdr), 0 when it was something else, -1 when the connection
 * failed.
 */
static int
ct_completion(struct ct_rdma *ct, const struct ibv_wc *wc, bool match,
	      uint32_t xid, uint32_t *idx, uint32_t *len)
{
	struct rdma_conn *c = ct->ct_conn;
	uint32_t i;
	int ret;

	if (rdma_conn_reap_send(c, wc))
		return c->dead ? -1 : 0;

	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			shim_log(SHIM_LOG_WARN, "client: receive failed: %s",
				 ibv_wc_status_str(wc->status));
		rdma_conn_set_dead(c, ECONNRESET);
		return -1;
	}

	i = RDMA_WRID_IDX(wc->wr_id);
	ret = rpcrdma_hdr_decode(rdma_conn_recv_buf(c, i), wc->byte_len,
				 &ct->ct_hdr);
	if (ret == -EMSGSIZE) {
		/* Not even an XID: nothing to match it with (s5.5). */
		shim_log(SHIM_LOG_WARN, "client: dropped a %u-octet message",
			 wc->byte_len);
		return rdma_conn_post_recv(c, i) ? -1 : 0;
	}
	if (match && ct->ct_hdr.xid == xid) {
		*idx = i;
		*len = wc->byte_len;
		/* A malformed reply still completes its call, with an error. */
		if (ret < 0)
			ct->ct_hdr.proc = UINT32_MAX;
		return 1;
	}
	/* A reply to a call that timed out earlier: it returns its credit. */
	shim_log(SHIM_LOG_DEBUG, "client: late reply xid 0x%08x dropped",
		 ct->ct_hdr.xid);
	ct_reply_arrived(ct, ret == 0 ? ct->ct_hdr.credits : ct->ct_granted);
	return rdma_conn_post_recv(c, i) ? -1 : 0;
}

/*
 * Process completions, sleeping on the completion and CM channels, until
 * the reply to xid arrives (match) or a credit frees up (!match), the
 * deadline passes or the connection fails.  Returns RPC_SUCCESS,
 * RPC_TIMEDOUT or RPC_CANTRECV.
 *
 * Completions are taken one at a time: the reply found must be the last
 * one consumed, since its header lives in ct->ct_hdr.
 */
static enum clnt_stat
ct_wait(struct ct_rdma *ct, bool match, uint32_t xid, int64_t deadline,
	uint32_t *idx, uint32_t *len)
{
	struct rdma_conn *c = ct->ct_conn;
	struct ibv_wc wc;
	int n, ret;

	for (;;) {
		n = rdma_conn_poll(c, &wc, 1);
		if (n < 0) {
			rdma_conn_set_dead(c, EIO);
			return RPC_CANTRECV;
		}
		if (n > 0) {
			ret = ct_completion(ct, &wc, match, xid, idx, len);
			if (ret < 0)
				return RPC_CANTRECV;
			if (ret > 0)
				return RPC_SUCCESS;
		}
		if (c->dead)
			return RPC_CANTRECV;
		if (!match && ct->ct_outstanding < ct_window(ct) &&
		    c->nsend_free)
			return RPC_SUCCESS;
		if (n > 0)
			continue;

		{
			struct pollfd pfd[2] = {
				{ .fd = c->cch->fd, .events = POLLIN },
				{ .fd = c->ech->fd, .events = POLLIN },
			};
			int64_t left = deadline - rdma_now_ms();

			if (left <= 0)
				return RPC_TIMEDOUT;
			ret = poll(pfd, 2, (int)(left > 60000 ? 60000 : left));
			if (ret < 0 && errno != EINTR) {
				rdma_conn_set_dead(c, errno);
				return RPC_CANTRECV;
			}
			if (ret > 0 && pfd[1].revents)
				ct_cm_events(ct);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Encoding                                                            */
/* ------------------------------------------------------------------ */

/* Replace the call buffer with a bigger registered one, keeping g->len. */
static bool
ct_callbuf_grow(struct xdr_grow *g, size_t need)
{
	struct ct_rdma *ct = g->ctx;
	struct rdma_buf nb;

	if (rdma_buf_alloc(ct->ct_conn->dev, &nb, need, IBV_ACCESS_LOCAL_WRITE))
		return false;
	memcpy(nb.addr, ct->ct_callbuf.addr, g->len);
	rdma_buf_free(&ct->ct_callbuf);
	ct->ct_callbuf = nb;
	g->buf = nb.addr;
	g->cap = nb.len;
	return true;
}

/*
 * RFC 8166 s5.2, s4.5.1: an RDMA_MSG header with no chunks, for an inline
 * call.  Returns its length or a negative errno.
 */
static ssize_t
ct_encode_msg_header(struct ct_rdma *ct, uint8_t *buf, uint32_t xid)
{
	struct rpcrdma_hdr *h = &ct->ct_shdr;

	h->xid = xid;
	h->vers = RPCRDMA_VERSION;
	h->credits = ct->ct_credits_req;
	h->proc = RDMA_MSG;
	h->nreads = 0;
	h->nwrites = 0;
	h->nwsegs = 0;
	h->has_reply = false;
	h->nreply = 0;
	return rpcrdma_hdr_encode(buf, CT_SEND_BUF, h);
}

/* ------------------------------------------------------------------ */
/* clnt_ops                                                            */
/* ------------------------------------------------------------------ */

static enum clnt_stat
ct_fail(struct ct_rdma *ct, enum clnt_stat st, int err)
{
	ct->ct_error.re_status = st;
	ct->ct_error.re_errno = err;
	return st;
}

/*
 * Decode the reply in buf the way clnt_vc does (RFC 5531 reply body).
 * *refresh is set when the credentials were refreshed and the call should
 * be sent again.
 */
static enum clnt_stat
ct_decode_reply(CLIENT *cl, struct ct_rdma *ct, uint32_t xid, uint8_t *buf,
		uint32_t len, xdrproc_t xdr_results, void *results_ptr,
		int *refreshes, bool *refresh)
{
	struct rpc_msg reply_msg;
	XDR xdrs;

	*refresh = false;
	memset(&reply_msg, 0, sizeof(reply_msg));
	reply_msg.acpted_rply.ar_verf = _null_auth;
	reply_msg.acpted_rply.ar_results.where = NULL;
	reply_msg.acpted_rply.ar_results.proc = XDRPROC(xdr_void);

	xdrmem_create(&xdrs, (char *)buf, len, XDR_DECODE);
	if (!xdr_replymsg(&xdrs, &reply_msg) || reply_msg.rm_xid != xid) {
		XDR_DESTROY(&xdrs);
		return ct_fail(ct, RPC_CANTDECODERES, 0);
	}

	_seterr_reply(&reply_msg, &ct->ct_error);
	if (ct->ct_error.re_status == RPC_SUCCESS) {
		if (!AUTH_VALIDATE(cl->cl_auth,
				   &reply_msg.acpted_rply.ar_verf)) {
			ct->ct_error.re_status = RPC_AUTHERROR;
			ct->ct_error.re_why = AUTH_INVALIDRESP;
		} else if (!AUTH_UNWRAP(cl->cl_auth, &xdrs, xdr_results,
					results_ptr)) {
			if (ct->ct_error.re_status == RPC_SUCCESS)
				ct->ct_error.re_status = RPC_CANTDECODERES;
		}
		if (reply_msg.acpted_rply.ar_verf.oa_base != NULL) {
			xdrs.x_op = XDR_FREE;
			(void)xdr_opaque_auth(&xdrs,
					      &reply_msg.acpted_rply.ar_verf);
		}
	} else if ((*refreshes)-- > 0 && AUTH_REFRESH(cl->cl_auth, &reply_msg)) {
		/* Maybe the credentials needed a refresh: send again. */
		*refresh = true;
	}
	XDR_DESTROY(&xdrs);
	return ct->ct_error.re_status;
}

static enum clnt_stat
clnt_rdma_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xdr_args, void *args_ptr,
	       xdrproc_t xdr_results, void *results_ptr, struct timeval timeout)
{
	struct ct_rdma *ct = ct_of(cl);
	struct rdma_conn *c = ct->ct_conn;
	uint32_t *msg_x_id = &ct->ct_u.ct_mcalli;
	int refreshes = 2;
	enum clnt_stat st;
	int64_t deadline;
	uint32_t x_id, ridx = 0, rlen = 0;
	bool refresh;

	pthread_mutex_lock(&ct->ct_lock);
	if (!ct->ct_waitset && !time_not_ok(&timeout))
		ct->ct_wait = timeout;

call_again:
	memset(&ct->ct_error, 0, sizeof(ct->ct_error));
	if (c->dead) {
		st = ct_fail(ct, RPC_CANTSEND, c->dead);
		goto out;
	}
	deadline = rdma_now_ms() + tv_ms(&ct->ct_wait);

	/* s4.3.3, s4.3.1: never more calls in flight than granted. */
	if (ct->ct_outstanding >= ct_window(ct)) {
		st = ct_wait(ct, false, 0, deadline, &ridx, &rlen);
		if (st != RPC_SUCCESS) {
			st = ct_fail(ct, st, st == RPC_TIMEDOUT ? 0 : c->dead);
			goto out;
		}
	}

	/* Same XID sequence as clnt_vc: decrement the stored word. */
	x_id = ntohl(--(*msg_x_id));

	{
		struct xdr_grow g = {
			.buf = ct->ct_callbuf.addr,
			.cap = ct->ct_callbuf.len,
			.limit = (size_t)1 << 30,
			.grow = ct_callbuf_grow,
			.ctx = ct,
		};
		uint32_t proc32 = (uint32_t)proc;
		XDR xdrs;
		ssize_t hdrlen;
		int sidx, ret;

		xdr_grow_create(&xdrs, &g);
		if (!XDR_PUTBYTES(&xdrs, ct->ct_u.ct_mcallc, ct->ct_mpos) ||
		    !XDR_PUTINT32(&xdrs, (int32_t *)&proc32) ||
		    !AUTH_MARSHALL(cl->cl_auth, &xdrs) ||
		    !AUTH_WRAP(cl->cl_auth, &xdrs, xdr_args, args_ptr)) {
			st = ct_fail(ct, RPC_CANTENCODEARGS,
				     g.overflow ? EMSGSIZE : 0);
			goto out;
		}

		sidx = rdma_conn_get_send(c);
		if (sidx < 0) {
			/* Every header buffer in flight: reap some first. */
			st = ct_wait(ct, false, 0, deadline, &ridx, &rlen);
			sidx = st == RPC_SUCCESS ? rdma_conn_get_send(c) : -1;
			if (sidx < 0) {
				st = ct_fail(ct, st == RPC_TIMEDOUT ? st : RPC_CANTSEND,
					     c->dead);
				goto out;
			}
		}
		hdrlen = ct_encode_msg_header(ct, rdma_conn_send_buf(c, (uint32_t)sidx),
					      x_id);
		if (hdrlen < 0 || (size_t)hdrlen + g.len > c->send_max) {
			/* RFC 8166 s4.5.3 long calls are not sent yet. */
			rdma_conn_put_send(c, (uint32_t)sidx);
			shim_log(SHIM_LOG_WARN,
				 "client: call of %zu octets exceeds the inline threshold of %u",
				 g.len, c->send_max);
			st = ct_fail(ct, RPC_CANTSEND, EMSGSIZE);
			goto out;
		}
		ret = rdma_conn_post_send(c, (uint32_t)sidx, (uint32_t)hdrlen,
					  ct->ct_callbuf.addr, (uint32_t)g.len,
					  ct->ct_callbuf.mr->lkey, 0);
		if (ret) {
			rdma_conn_put_send(c, (uint32_t)sidx);
			st = ct_fail(ct, RPC_CANTSEND, -ret);
			goto out;
		}
		ct->ct_outstanding++;
	}

	/* A one-way ("batched") call: libtirpc does not wait either. */
	if (xdr_results == NULL && timeout.tv_sec == 0 && timeout.tv_usec == 0) {
		st = ct_fail(ct, RPC_TIMEDOUT, 0);
		goto out;
	}

	st = ct_wait(ct, true, x_id, deadline, &ridx, &rlen);
	if (st != RPC_SUCCESS) {
		st = ct_fail(ct, st, st == RPC_TIMEDOUT ? 0 : c->dead);
		goto out;
	}

	ct_reply_arrived(ct, ct->ct_hdr.credits);
	switch (ct->ct_hdr.proc) {
	case RDMA_MSG:
		st = ct_decode_reply(cl, ct, x_id,
				     rdma_conn_recv_buf(c, ridx) + ct->ct_hdr.hdrlen,
				     rlen - (uint32_t)ct->ct_hdr.hdrlen,
				     xdr_results, results_ptr, &refreshes,
				     &refresh);
		break;
	case RDMA_ERROR:
		/* s5.5: RDMA_ERROR completes this XID's call. */
		shim_log(SHIM_LOG_WARN,
			 "client: server answered RDMA_ERROR (%s) to xid 0x%08x",
			 ct->ct_hdr.err == RDMA_ERR_VERS ? "ERR_VERS" : "BADHEADER",
			 x_id);
		st = ct_fail(ct, RPC_CANTRECV,
			     ct->ct_hdr.err == RDMA_ERR_VERS ? EPROTONOSUPPORT :
			     EMSGSIZE);
		refresh = false;
		break;
	default:
		/* RDMA_NOMSG needs a Reply chunk, which this call did not offer. */
		shim_log(SHIM_LOG_WARN,
			 "client: malformed or unexpected reply (%s) to xid 0x%08x",
			 rpcrdma_proc_name(ct->ct_hdr.proc), x_id);
		st = ct_fail(ct, RPC_CANTDECODERES, EBADMSG);
		refresh = false;
		break;
	}
	if (rdma_conn_post_recv(c, ridx)) {
		st = ct_fail(ct, RPC_CANTRECV, c->dead);
		goto out;
	}
	if (refresh)
		goto call_again;

out:
	pthread_mutex_unlock(&ct->ct_lock);
	return st;
}

static void
clnt_rdma_geterr(CLIENT *cl, struct rpc_err *errp)
{
	*errp = ct_of(cl)->ct_error;
}

static bool_t
clnt_rdma_freeres(CLIENT *cl, xdrproc_t xdr_res, void *res_ptr)
{
	XDR xdrs;

	memset(&xdrs, 0, sizeof(xdrs));
	xdrs.x_op = XDR_FREE;
	return (*xdr_res)(&xdrs, res_ptr);
}

static void
clnt_rdma_abort(CLIENT *cl)
{
}

static void
put_u32(char *where, const void *info)
{
	uint32_t v = htonl(*(const uint32_t *)info);

	memcpy(where, &v, sizeof(v));
}

static void
get_u32(void *info, const char *where)
{
	uint32_t v;

	memcpy(&v, where, sizeof(v));
	*(uint32_t *)info = ntohl(v);
}

/* The requests, and their answers, of libtirpc's clnt_vc_control(). */
static bool_t
clnt_rdma_control(CLIENT *cl, u_int request, void *info)
{
	struct ct_rdma *ct = ct_of(cl);
	bool_t ret = TRUE;

	pthread_mutex_lock(&ct->ct_lock);
	switch (request) {
	case CLSET_FD_CLOSE:
		ct->ct_closeit = true;
		goto out;
	case CLSET_FD_NCLOSE:
		ct->ct_closeit = false;
		goto out;
	default:
		break;
	}
	if (info == NULL) {
		ret = FALSE;
		goto out;
	}
	switch (request) {
	case CLSET_TIMEOUT:
		if (time_not_ok(info)) {
			ret = FALSE;
			break;
		}
		ct->ct_wait = *(struct timeval *)info;
		ct->ct_waitset = true;
		break;
	case CLGET_TIMEOUT:
		*(struct timeval *)info = ct->ct_wait;
		break;
	case CLGET_SERVER_ADDR:
		memcpy(info, ct->ct_addr.buf, ct->ct_addr.len);
		break;
	case CLGET_FD:
		*(int *)info = ct->ct_fd;
		break;
	case CLGET_SVC_ADDR:
		/* The caller must not free it. */
		*(struct netbuf *)info = ct->ct_addr;
		break;
	case CLSET_SVC_ADDR:
		ret = FALSE;
		break;
	case CLGET_XID:
		/* The XID of the previous call. */
		get_u32(info, ct->ct_u.ct_mcallc);
		break;
	case CLSET_XID:
		/* The XID of the next call: the call decrements it once. */
		{
			uint32_t next = *(uint32_t *)info + 1;

			put_u32(ct->ct_u.ct_mcallc, &next);
		}
		break;
	case CLGET_VERS:
		get_u32(info, ct->ct_u.ct_mcallc + 4 * BYTES_PER_XDR_UNIT);
		break;
	case CLSET_VERS:
		put_u32(ct->ct_u.ct_mcallc + 4 * BYTES_PER_XDR_UNIT, info);
		break;
	case CLGET_PROG:
		get_u32(info, ct->ct_u.ct_mcallc + 3 * BYTES_PER_XDR_UNIT);
		break;
	case CLSET_PROG:
		put_u32(ct->ct_u.ct_mcallc + 3 * BYTES_PER_XDR_UNIT, info);
		break;
	default:
		ret = FALSE;
		break;
	}
out:
	pthread_mutex_unlock(&ct->ct_lock);
	return ret;
}

static void
ct_free(struct ct_rdma *ct)
{
	if (ct->ct_conn) {
		rdma_conn_disconnect(ct->ct_conn);
		/* The call buffer belongs to the connection's protection domain. */
		rdma_buf_free(&ct->ct_callbuf);
		rdma_conn_destroy(ct->ct_conn);
	}
	free(ct->ct_addr.buf);
	pthread_mutex_destroy(&ct->ct_lock);
	free(ct);
}

static void
clnt_rdma_destroy(CLIENT *cl)
{
	struct ct_rdma *ct = ct_of(cl);

	if (ct->ct_closeit && ct->ct_fd != -1)
		close(ct->ct_fd);
	ct_free(ct);
	/* clnt_tli_create() filled these in; clnt_vc_destroy frees them too. */
	if (cl->cl_netid && cl->cl_netid[0])
		free(cl->cl_netid);
	if (cl->cl_tp && cl->cl_tp[0])
		free(cl->cl_tp);
	free(cl);
}

static struct clnt_ops *
clnt_rdma_ops(void)
{
	static struct clnt_ops ops = {
		.cl_call = clnt_rdma_call,
		.cl_abort = clnt_rdma_abort,
		.cl_geterr = clnt_rdma_geterr,
		.cl_freeres = clnt_rdma_freeres,
		.cl_destroy = clnt_rdma_destroy,
		.cl_control = clnt_rdma_control,
	};

	return &ops;
}

bool
clnt_is_rdma(const CLIENT *cl)
{
	return cl && cl->cl_ops == clnt_rdma_ops();
}

void
clnt_rdma_info(CLIENT *cl, struct rdma_conn_info *info)
{
	struct ct_rdma *ct = ct_of(cl);

	pthread_mutex_lock(&ct->ct_lock);
	info->send_max = ct->ct_conn->send_max;
	info->recv_max = ct->ct_conn->recv_max;
	info->credits = ct->ct_granted;
	info->rinv = ct->ct_conn->rinv;
	info->peer_pdata = ct->ct_conn->peer_pd_valid;
	pthread_mutex_unlock(&ct->ct_lock);
}

/* The same XID seed as libtirpc's clnt_vc_create(). */
static uint32_t
initial_xid(void)
{
	struct timeval now;

	gettimeofday(&now, NULL);
	return (uint32_t)getpid() ^ (uint32_t)now.tv_sec ^ (uint32_t)now.tv_usec;
}

CLIENT *
clnt_rdma_create(int fd, const struct netbuf *raddr, const struct sockaddr *dst,
		 rpcprog_t prog, rpcvers_t vers, u_int sendsz, u_int recvsz,
		 const struct clnt_rdma_params *p, enum rdma_fail *why, int *err)
{
	struct rdma_conn_attr attr = {
		.inline_send = p->inline_send,
		.inline_recv = p->inline_recv,
		.nrecv = p->credits,
		.nsend = CT_NSEND,
		.send_buf_size = CT_SEND_BUF,
		.max_send_wr = CT_NSEND + 8,
		.remote_inv = false,
	};
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	const struct sockaddr *src = NULL;
	struct rpc_msg call_msg;
	struct ct_rdma *ct;
	CLIENT *cl;
	XDR xdrs;
	int ret;

	/* Keep a bound local port of the socket (see rdma_conn_connect). */
	if (getsockname(fd, (struct sockaddr *)&local, &llen) == 0 &&
	    local.ss_family == dst->sa_family &&
	    ((local.ss_family == AF_INET &&
	      ((struct sockaddr_in *)&local)->sin_port) ||
	     (local.ss_family == AF_INET6 &&
	      ((struct sockaddr_in6 *)&local)->sin6_port)))
		src = (struct sockaddr *)&local;

	cl = calloc(1, sizeof(*cl));
	ct = calloc(1, sizeof(*ct));
	if (!cl || !ct)
		goto out_nomem;
	pthread_mutex_init(&ct->ct_lock, NULL);
	ct->ct_fd = fd;
	ct->ct_addr.buf = malloc(raddr->len);
	if (!ct->ct_addr.buf)
		goto out_nomem;
	memcpy(ct->ct_addr.buf, raddr->buf, raddr->len);
	ct->ct_addr.len = ct->ct_addr.maxlen = raddr->len;

	ct->ct_conn = rdma_conn_connect(dst, src, p->connect_timeout_ms, &attr,
					why, err);
	if (!ct->ct_conn)
		goto out_free;

	ret = rdma_buf_alloc(ct->ct_conn->dev, &ct->ct_callbuf, CT_CALLBUF_MIN,
			     IBV_ACCESS_LOCAL_WRITE);
	if (ret) {
		*why = RDMA_FAIL_ERROR;
		*err = -ret;
		goto out_free;
	}

	ct->ct_granted = 1;	/* s4.3.3: one credit until a reply says more */
	ct->ct_credits_req = p->credits;

	/* Serialize the constant part of the call header once. */
	memset(&call_msg, 0, sizeof(call_msg));
	call_msg.rm_xid = initial_xid();
	call_msg.rm_direction = CALL;
	call_msg.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	call_msg.rm_call.cb_prog = (uint32_t)prog;
	call_msg.rm_call.cb_vers = (uint32_t)vers;
	xdrmem_create(&xdrs, ct->ct_u.ct_mcallc, MCALL_MSG_SIZE, XDR_ENCODE);
	if (!xdr_callhdr(&xdrs, &call_msg)) {
		*why = RDMA_FAIL_ERROR;
		*err = EINVAL;
		goto out_free;
	}
	ct->ct_mpos = XDR_GETPOS(&xdrs);
	XDR_DESTROY(&xdrs);

	cl->cl_ops = clnt_rdma_ops();
	cl->cl_private = ct;
	cl->cl_auth = authnone_create();
	cl->cl_netid = NULL;
	cl->cl_tp = NULL;
	(void)sendsz;
	(void)recvsz;
	return cl;

out_nomem:
	*why = RDMA_FAIL_ERROR;
	*err = ENOMEM;
out_free:
	if (ct)
		ct_free(ct);
	free(cl);
	return NULL;
}
