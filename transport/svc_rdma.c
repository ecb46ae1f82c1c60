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
#include <unistd.h>

#include <rpc/rpc.h>
#include <rpc/svc_mt.h>

#include "common/log.h"
#include "common/log_once.h"
#include "common/sockaddr.h"
#include "hooks.h"
#include "rpcrdma_xdr.h"
#include "sockfd.h"
#include "svc_rdma.h"
#include "xdr_grow.h"

/* libtirpc dereferences xp_p3 (SVCXPRT_EXT); give it zeroed room. */
#define SVC_EXT_SIZE 128
/* Send buffers beyond the credits, for RDMA_ERROR replies. */
#define SC_NSEND_EXTRA 4
/* How long a reply may wait for a free send buffer or queue room. */
#define SC_SEND_WAIT_MS 5000
/* Bound on pulling a call's Read chunks. */
#define SC_RW_TIMEOUT_MS 60000
/* RDMA Writes one reply may need (Write chunk and Reply chunk). */
#define SC_MAX_WRITES 256
#define LISTEN_BACKLOG 64

struct svc_rdma_conn;

struct svc_rdma_listener {
	SVCXPRT *tcp_xprt;
	struct svc_rdma_listener *next;	/* all listeners, by TCP rendezvous */
	struct shim_stats_conn *stats;	/* the rendezvous' slot, not ours */

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
	uint8_t *callbuf;		/* an inline or rebuilt call */
	size_t callbuf_cap;
	struct rdma_pbuf *call_pb;	/* its Read chunks' data */
	unsigned int reads_inflight;
	XDR xdrs;			/* decodes the call */

	/* The reply being built. */
	struct rpcrdma_hdr rhdr;
	struct rdma_pbuf *reply_pb;	/* a reply beyond the send buffer */
	struct rdma_pbuf *ddp_pb;	/* the result placed in a Write chunk */
	struct shim_stats_conn *stats;
	struct ibv_send_wr wrs[SC_MAX_WRITES];
	struct ibv_sge sges[SC_MAX_WRITES];
};

/* Listeners of this process (svc_run is single-threaded, as libtirpc). */
static struct svc_rdma_listener *listeners;

static const struct xp_ops listener_ops;
static const struct xp_ops2 listener_ops2;
static const struct xp_ops conn_ops;
static const struct xp_ops2 conn_ops2;

static struct svc_rdma_conn *
sc_of(SVCXPRT *xprt)
{
	return (struct svc_rdma_conn *)xprt->xp_p1;
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
			if (RDMA_WRID_KIND(wc[k].wr_id) == RDMA_WR_READ &&
			    sc->reads_inflight)
				sc->reads_inflight--;
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

/* Sleep until the next completion or the deadline; false when past it. */
static bool
sc_sleep(struct svc_rdma_conn *sc, int64_t deadline)
{
	struct pollfd pfd = { .fd = sc->conn->cch->fd, .events = POLLIN };
	int64_t left = deadline - rdma_now_ms();

	if (left <= 0)
		return false;
	(void)poll(&pfd, 1, (int)(left > 60000 ? 60000 : left));
	sc_drain(sc);
	return true;
}

/* The connection cannot go on (s5.5.4): flush it, libtirpc destroys it. */
static void
sc_fail(struct svc_rdma_conn *sc, int err, const char *why)
{
	shim_log(SHIM_LOG_WARN, "server: closing an RDMA connection: %s", why);
	rdma_conn_set_dead(sc->conn, err);
	rdma_conn_disconnect(sc->conn);
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
		if (!sc_sleep(sc, deadline)) {
			sc_fail(sc, ETIMEDOUT, "no send buffer came free in time");
			return -1;
		}
	}
}

/*
 * Post a Send (with npre work requests before it), waiting a bounded time
 * for send queue room.  On failure idx goes back and attach is released.
 */
static int
sc_post_send(struct svc_rdma_conn *sc, uint32_t idx, struct ibv_send_wr *pre,
	     unsigned int npre, struct ibv_sge *sge, int nsge,
	     uint32_t inv_rkey, struct rdma_pbuf *attach)
{
	struct rdma_conn *c = sc->conn;
	int64_t deadline = rdma_now_ms() + SC_SEND_WAIT_MS;
	int ret;

	for (;;) {
		ret = rdma_conn_post_send(c, idx, pre, npre, sge, nsge,
					  inv_rkey, attach);
		if (ret != -EAGAIN)
			break;
		sc_drain(sc);
		if (!sc_sleep(sc, deadline)) {
			ret = -ETIMEDOUT;
			break;
		}
	}
	if (ret) {
		rdma_conn_put_send(c, idx);
		rdma_conn_release(c, attach);
	}
	return ret;
}

/* s5.5: answer a request we cannot serve with RDMA_ERROR. */
static void
sc_send_error(struct svc_rdma_conn *sc, uint32_t xid, uint32_t vers,
	      uint32_t err)
{
	struct rdma_conn *c = sc->conn;
	int idx = sc_get_send(sc);
	struct ibv_sge sge;
	ssize_t len;

	if (idx < 0)
		return;
	SHIM_STATS_ADD(sc->stats, rdma_errors, 1);
	len = rpcrdma_encode_error(rdma_conn_send_buf(c, (uint32_t)idx),
				   c->attr.send_buf_size, xid, vers,
				   sc->lst->params.credits, err);
	if (len < 0) {
		rdma_conn_put_send(c, (uint32_t)idx);
		return;
	}
	sge = rdma_conn_hdr_sge(c, (uint32_t)idx, (uint32_t)len);
	(void)sc_post_send(sc, (uint32_t)idx, NULL, 0, &sge, 1, 0, NULL);
}

/* ------------------------------------------------------------------ */
/* Connection: chunks                                                   */
/* ------------------------------------------------------------------ */

/*
 * Pull the data of Read chunks into one pool buffer, chunk after chunk
 * (s4.4.5.2).  RDMA Reads are split at the device's largest message and
 * never more are in flight than the client's responder resources allow
 * (s4.3.1, last paragraph).  Returns 0 or -errno; -EMSGSIZE beyond
 * max_call.
 */
static int
sc_read_chunks(struct svc_rdma_conn *sc, const struct rpcrdma_read_chunk *ch,
	       unsigned int nch, struct rdma_pbuf **out)
{
	struct rdma_conn *c = sc->conn;
	int64_t deadline = rdma_now_ms() + SC_RW_TIMEOUT_MS;
	struct rdma_pbuf *pb;
	uint64_t total = 0, off = 0;
	unsigned int k, i;
	int ret;

	/* A client that offered no Read resources cannot send Read chunks. */
	if (!c->initiator_depth)
		return -EBADMSG;
	for (k = 0; k < nch; k++)
		total += ch[k].length;
	if (total > sc->lst->params.max_call + RDMA_MSG_HDR_SLACK)
		return -EMSGSIZE;
	pb = rdma_pool_get(c->dev, total ? total : 1);
	if (!pb)
		return -ENOMEM;

	for (k = 0; k < nch; k++) {
		for (i = ch[k].first; i < ch[k].first + ch[k].nsegs; i++) {
			const struct rpcrdma_segment *seg = &sc->hdr.reads[i].target;
			uint32_t done, piece;

			for (done = 0; done < seg->length; done += piece) {
				struct ibv_sge sge;
				struct ibv_send_wr wr;

				piece = seg->length - done;
				if (piece > c->max_msg)
					piece = c->max_msg;
				memset(&wr, 0, sizeof(wr));
				sge.addr = (uintptr_t)pb->buf.addr + off;
				sge.length = piece;
				sge.lkey = pb->buf.mr->lkey;
				wr.wr_id = RDMA_WRID(RDMA_WR_READ, i);
				wr.sg_list = &sge;
				wr.num_sge = 1;
				wr.opcode = IBV_WR_RDMA_READ;
				wr.wr.rdma.remote_addr = seg->offset + done;
				wr.wr.rdma.rkey = seg->handle;
				for (;;) {
					ret = -EAGAIN;
					if (sc->reads_inflight < c->initiator_depth)
						ret = rdma_conn_post_one(c, &wr);
					if (ret != -EAGAIN)
						break;
					if (!sc_sleep(sc, deadline)) {
						ret = -ETIMEDOUT;
						break;
					}
				}
				if (ret)
					goto out_fail;
				sc->reads_inflight++;
				off += piece;
			}
		}
	}
	while (sc->reads_inflight && !c->dead) {
		sc_drain(sc);
		if (sc->reads_inflight && !sc_sleep(sc, deadline)) {
			ret = -ETIMEDOUT;
			goto out_fail;
		}
	}
	if (c->dead) {
		ret = -c->dead;
		goto out_fail;
	}
	*out = pb;
	return 0;

out_fail:
	/* Reads may still target pb: only the closed connection frees it. */
	sc_fail(sc, -ret, "RDMA Read of a call's chunks failed");
	sc->call_pb = pb;
	return ret;
}

/* Room for the rebuilt call in sc->callbuf. */
static bool
sc_callbuf_reserve(struct svc_rdma_conn *sc, size_t len)
{
	uint8_t *nb;

	if (len <= sc->callbuf_cap)
		return true;
	nb = realloc(sc->callbuf, len);
	if (!nb)
		return false;
	sc->callbuf = nb;
	sc->callbuf_cap = len;
	return true;
}

/*
 * The call of a message with Read chunks: the position-zero chunk holds
 * the call (s4.5.3), other chunks are data items re-inserted at their
 * positions with XDR round-up (s4.4.5, s4.4.5.1).  Fills *call, *clen.
 * Returns 0, -EBADMSG for chunks that do not fit the call, -EMSGSIZE over
 * max_call, or another -errno (the connection is then closed).
 */
static int
sc_gather_call(struct svc_rdma_conn *sc, const uint8_t *inl, size_t inl_len,
	       uint8_t **call, size_t *clen)
{
	struct rpcrdma_read_chunk ch[RPCRDMA1_MAX_READ_SEGS];
	const struct rpcrdma_read_chunk *data_ch;
	const uint8_t *base;
	uint64_t rlen;
	size_t base_len;
	ssize_t n;
	int nch, ret;

	nch = rpcrdma_read_chunks(&sc->hdr, ch, RPCRDMA1_MAX_READ_SEGS);
	if (nch <= 0)
		return -EBADMSG;
	ret = sc_read_chunks(sc, ch, (unsigned int)nch, &sc->call_pb);
	if (ret)
		return ret;

	if (ch[0].position == 0) {
		/* A long call; any later chunks are positioned within it. */
		base = sc->call_pb->buf.addr;
		base_len = (size_t)ch[0].length;
		data_ch = ch + 1;
		nch--;
		if (!nch) {
			*call = sc->call_pb->buf.addr;
			*clen = base_len;
			return 0;
		}
	} else {
		base = inl;
		base_len = inl_len;
		data_ch = ch;
	}
	rlen = rpcrdma_read_rebuild_len(base_len, data_ch, (unsigned int)nch);
	if (rlen > sc->lst->params.max_call + RDMA_MSG_HDR_SLACK)
		return -EMSGSIZE;
	if (!sc_callbuf_reserve(sc, (size_t)rlen))
		return -ENOMEM;
	n = rpcrdma_read_rebuild(sc->callbuf, sc->callbuf_cap, base, base_len,
				 data_ch, (unsigned int)nch,
				 (const uint8_t *)sc->call_pb->buf.addr +
				 (base == inl ? 0 : base_len));
	if (n < 0)
		return (int)n;
	*call = sc->callbuf;
	*clen = (size_t)n;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Connection: xp_ops                                                   */
/* ------------------------------------------------------------------ */

/* Everything the previous call held goes back. */
static void
sc_call_done(struct svc_rdma_conn *sc)
{
	sc->in_call = false;
	if (sc->call_pb && !sc->conn->dead) {
		rdma_pool_put(sc->conn->dev, sc->call_pb);
		sc->call_pb = NULL;
	}
}

/*
 * Take one received message.  Returns 1 with a call ready to decode at
 * *call (*clen octets), 0 when the message was consumed otherwise (an
 * error answered, a stray message dropped).
 */
static int
sc_take_message(struct svc_rdma_conn *sc, uint8_t **call, size_t *clen)
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
		if (sc->hdr.proc == RDMA_ERROR)
			goto repost;	/* s5.5: never answer an RDMA_ERROR */
		/* s5.5.1 */
		shim_log(SHIM_LOG_WARN,
			 "server: RPC-over-RDMA version %u from client, answering ERR_VERS",
			 sc->hdr.vers);
		sc_send_error(sc, sc->hdr.xid, sc->hdr.vers, RDMA_ERR_VERS);
		goto repost;
	default:
		/* s5.5.2; s5.6: RDMA_MSGP and RDMA_DONE land here too. */
		if (sc->hdr.proc == RDMA_ERROR)
			goto repost;
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
	if (sc->hdr.proc == RDMA_NOMSG &&
	    (!sc->hdr.nreads || sc->hdr.reads[0].position != 0)) {
		/* s5.2.4: a call without a payload stream must carry it. */
		shim_log(SHIM_LOG_WARN,
			 "server: RDMA_NOMSG without a position-zero Read chunk for xid 0x%08x",
			 sc->hdr.xid);
		sc_send_error(sc, sc->hdr.xid, sc->hdr.vers, RDMA_ERR_BADHEADER);
		goto repost;
	}

	if (sc->hdr.nreads) {
		ret = sc_gather_call(sc, buf + sc->hdr.hdrlen,
				     len - sc->hdr.hdrlen, call, clen);
		if (ret == 0)
			goto repost_ok;
		if (c->dead)
			goto repost;
		if (ret == -EMSGSIZE)
			shim_log(SHIM_LOG_WARN,
				 "server: call for xid 0x%08x exceeds max_call (%llu octets)",
				 sc->hdr.xid,
				 (unsigned long long)sc->lst->params.max_call);
		else
			shim_log(SHIM_LOG_WARN,
				 "server: Read chunks of xid 0x%08x do not fit the call",
				 sc->hdr.xid);
		sc_call_done(sc);
		sc_send_error(sc, sc->hdr.xid, sc->hdr.vers, RDMA_ERR_BADHEADER);
		goto repost;
	}

	*clen = len - sc->hdr.hdrlen;
	if (!sc_callbuf_reserve(sc, *clen)) {
		sc_send_error(sc, sc->hdr.xid, sc->hdr.vers, RDMA_ERR_BADHEADER);
		goto repost;
	}
	memcpy(sc->callbuf, buf + sc->hdr.hdrlen, *clen);
	*call = sc->callbuf;
repost_ok:
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
	uint8_t *call;
	size_t clen;

	sc_call_done(sc);
	sc_drain(sc);
	while (sc->rq_count && !sc->conn->dead) {
		if (!sc_take_message(sc, &call, &clen))
			continue;
		xdrmem_create(&sc->xdrs, (char *)call, (u_int)clen, XDR_DECODE);
		if (!xdr_callmsg(&sc->xdrs, msg) || msg->rm_xid != sc->hdr.xid) {
			/* s5.5.2: the RPC XID must match the transport's. */
			shim_log(SHIM_LOG_WARN,
				 "server: undecodable call for xid 0x%08x, answering BADHEADER",
				 sc->hdr.xid);
			sc_call_done(sc);
			sc_send_error(sc, sc->hdr.xid, sc->hdr.vers,
				      RDMA_ERR_BADHEADER);
			continue;
		}
		sc->xid = msg->rm_xid;
		sc->in_call = true;
		SHIM_STATS_ADD(sc->stats, calls, 1);
		SHIM_STATS_ADD(sc->stats, bytes_in, clen);
		if (sc->hdr.nreads)
			SHIM_STATS_ADD(sc->stats, long_in, 1);
		return TRUE;
	}
	return FALSE;
}

static enum xprt_stat
sc_stat(SVCXPRT *xprt)
{
	struct svc_rdma_conn *sc = sc_of(xprt);

	/* The dispatch of the previous call is over, replied or not. */
	sc_call_done(sc);
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
	xdr_free(xdr_args, args_ptr);
	return TRUE;
}

/* ------------------------------------------------------------------ */
/* Connection: replies                                                  */
/* ------------------------------------------------------------------ */

/* Octets of a reply header echoing the call's Write list (s5.7 grammar). */
static size_t
sc_reply_hdr_len(const struct rpcrdma_hdr *rq, bool with_reply)
{
	size_t len = RPCRDMA1_PREFIX_LEN + 4 + 4 + 4;	/* read list, ends */
	unsigned int k;

	for (k = 0; k < rq->nwrites; k++)
		len += 4 + 4 + RPCRDMA1_SEGMENT_LEN * rq->writes[k].nsegs;
	if (with_reply)
		len += 4 + RPCRDMA1_SEGMENT_LEN * rq->nreply;
	return len;
}

static uint64_t
segs_len(const struct rpcrdma_segment *segs, unsigned int n)
{
	uint64_t total = 0;

	while (n--)
		total += segs[n].length;
	return total;
}

/*
 * RDMA Writes placing len octets from src into the segments (s4.4.6),
 * each split at the device's largest message; the segments' lengths
 * become the octets written (s4.4.6: the responder updates them).
 * Returns the number of work requests, or -EMSGSIZE.
 */
static int
sc_build_writes(struct svc_rdma_conn *sc, const uint8_t *src, uint32_t lkey,
		uint64_t len, struct rpcrdma_segment *segs, unsigned int nsegs,
		unsigned int nwr)
{
	struct rdma_conn *c = sc->conn;
	unsigned int i;

	for (i = 0; i < nsegs; i++) {
		uint32_t take = len < segs[i].length ? (uint32_t)len : segs[i].length;
		uint32_t done, piece;

		for (done = 0; done < take; done += piece) {
			struct ibv_send_wr *wr = &sc->wrs[nwr];
			struct ibv_sge *sge = &sc->sges[nwr];

			if (nwr >= SC_MAX_WRITES)
				return -EMSGSIZE;
			piece = take - done;
			if (piece > c->max_msg)
				piece = c->max_msg;
			memset(wr, 0, sizeof(*wr));
			sge->addr = (uintptr_t)src + done;
			sge->length = piece;
			sge->lkey = lkey;
			wr->wr_id = RDMA_WRID(RDMA_WR_WRITE, nwr);
			wr->sg_list = sge;
			wr->num_sge = 1;
			wr->opcode = IBV_WR_RDMA_WRITE;
			wr->wr.rdma.remote_addr = segs[i].offset + done;
			wr->wr.rdma.rkey = segs[i].handle;
			nwr++;
		}
		segs[i].length = take;
		src += take;
		len -= take;
	}
	return len ? -EMSGSIZE : (int)nwr;
}

/* RFC 8797 s4.1: one key of this call's chunks to invalidate with the Send. */
static uint32_t
sc_inv_rkey(const struct svc_rdma_conn *sc)
{
	const struct rpcrdma_hdr *rq = &sc->hdr;

	if (!sc->conn->rinv)
		return 0;
	if (rq->has_reply && rq->nreply)
		return rq->reply[0].handle;
	if (rq->nwsegs)
		return rq->wsegs[0].handle;
	if (rq->nreads)
		return rq->reads[0].target.handle;
	return 0;
}

/* The reply encode stream outgrew the send buffer: move to the pool. */
static bool
sc_replybuf_grow(struct xdr_grow *g, size_t need)
{
	struct svc_rdma_conn *sc = g->ctx;
	struct rdma_pbuf *nb = rdma_pool_get(sc->conn->dev, need);

	if (!nb)
		return false;
	memcpy(nb->buf.addr, g->buf, g->len);
	if (sc->reply_pb)
		rdma_pool_put(sc->conn->dev, sc->reply_pb);
	sc->reply_pb = nb;
	g->buf = nb->buf.addr;
	g->cap = nb->buf.len;
	return true;
}

/* The first opaque result, for the call's first Write chunk. */
static bool
sc_divert_take(struct xdr_divert *d, const void *data, uint32_t len)
{
	struct svc_rdma_conn *sc = d->ctx;

	sc->ddp_pb = rdma_pool_get(sc->conn->dev, len);
	if (!sc->ddp_pb)
		return false;
	memcpy(sc->ddp_pb->buf.addr, data, len);
	return true;
}

static bool_t
sc_reply(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_conn *sc = sc_of(xprt);
	struct rdma_conn *c = sc->conn;
	const struct rpcrdma_hdr *rq = &sc->hdr;
	struct rpcrdma_hdr *h = &sc->rhdr;
	size_t room, hlen_msg, hlen;
	uint64_t reply_cap, inline_cap;
	struct xdr_divert d;
	struct xdr_grow g;
	struct ibv_sge sge[2];
	struct rdma_pbuf *attach;
	uint8_t *sbuf, *payload;
	const char *why = NULL;
	uint32_t lkey;
	int nwr = 0, nsge, idx, ret;
	bool_t ok;
	XDR xdrs;

	if (!sc->in_call || c->dead)
		return FALSE;
	sc->in_call = false;
	idx = sc_get_send(sc);
	if (idx < 0)
		return FALSE;
	sbuf = rdma_conn_send_buf(c, (uint32_t)idx);

	/* Header room before the payload; the header is written last. */
	hlen_msg = sc_reply_hdr_len(rq, false);
	room = sc_reply_hdr_len(rq, rq->has_reply);
	reply_cap = rq->has_reply ? segs_len(rq->reply, rq->nreply) : 0;
	inline_cap = c->send_max > hlen_msg ? c->send_max - hlen_msg : 0;
	if (room >= c->attr.send_buf_size) {
		why = "the call's chunk lists leave no room for a reply";
		goto out_error;
	}

	memset(&g, 0, sizeof(g));
	g.buf = sbuf + room;
	g.cap = c->attr.send_buf_size - room;
	g.limit = inline_cap > reply_cap ? inline_cap : reply_cap;
	g.grow = sc_replybuf_grow;
	g.ctx = sc;
	memset(&d, 0, sizeof(d));
	if (rq->nwrites && rq->writes[0].nsegs) {
		/* s4.4.6: the first opaque result goes in the first Write chunk. */
		d.min = 1;
		d.max = (uint32_t)segs_len(&rq->wsegs[rq->writes[0].first],
					   rq->writes[0].nsegs);
		d.take = sc_divert_take;
		d.ctx = sc;
		g.divert = &d;
	}
	xdr_grow_create(&xdrs, &g);
	msg->rm_xid = sc->xid;
	if (msg->rm_reply.rp_stat == MSG_ACCEPTED &&
	    msg->rm_reply.rp_acpt.ar_stat == SUCCESS) {
		xdrproc_t xdr_proc = msg->acpted_rply.ar_results.proc;
		void *xdr_where = msg->acpted_rply.ar_results.where;

		msg->acpted_rply.ar_results.proc = XDRPROC(xdr_void);
		msg->acpted_rply.ar_results.where = NULL;
		ok = xdr_replymsg(&xdrs, msg);
		d.armed = true;
		ok = ok && SVCAUTH_WRAP(&SVC_XP_AUTH(xprt), &xdrs, xdr_proc,
					xdr_where);
		d.armed = false;
	} else {
		ok = xdr_replymsg(&xdrs, msg);
	}
	if (!ok) {
		if (g.overflow)
			shim_log(SHIM_LOG_WARN,
				 "server: reply to xid 0x%08x exceeds %s (%llu octets)",
				 sc->xid, rq->has_reply ? "the client's Reply chunk" :
				 "the inline threshold, and no Reply chunk was offered",
				 (unsigned long long)g.limit);
		else
			why = "the reply cannot be encoded";
		goto out_error;
	}
	payload = g.buf;
	lkey = sc->reply_pb ? sc->reply_pb->buf.mr->lkey : c->send.mr->lkey;

	/* The reply header: Write list echoed, lengths as written. */
	h->xid = sc->xid;
	h->vers = RPCRDMA1_VERSION;
	h->credits = sc->lst->params.credits;
	h->nreads = 0;
	h->nwrites = rq->nwrites;
	h->nwsegs = rq->nwsegs;
	memcpy(h->writes, rq->writes, sizeof(h->writes[0]) * rq->nwrites);
	memcpy(h->wsegs, rq->wsegs, sizeof(h->wsegs[0]) * rq->nwsegs);
	/* s4.4.6.2: unused chunks go back with zero lengths; a used one
	 * gets the octets written (sc_build_writes, from its capacities). */
	for (ret = 0; ret < (int)h->nwsegs; ret++)
		if (!d.used || (unsigned int)ret < h->writes[0].first ||
		    (unsigned int)ret >= h->writes[0].first + h->writes[0].nsegs)
			h->wsegs[ret].length = 0;
	if (d.used) {
		ret = sc_build_writes(sc, sc->ddp_pb->buf.addr,
				      sc->ddp_pb->buf.mr->lkey, d.len,
				      &h->wsegs[h->writes[0].first],
				      h->writes[0].nsegs, 0);
		if (ret < 0) {
			why = "the result does not fit the Write chunk";
			goto out_error;
		}
		nwr = ret;
	}

	if (g.len <= inline_cap) {
		/* s4.5.1: a short reply, inline after the header. */
		h->proc = RDMA_MSG;
		h->has_reply = false;
		h->nreply = 0;
		hlen = hlen_msg;
	} else if (g.len <= reply_cap) {
		/* s4.5.3: a long reply, written into the Reply chunk. */
		h->proc = RDMA_NOMSG;
		h->has_reply = true;
		h->nreply = rq->nreply;
		memcpy(h->reply, rq->reply, sizeof(h->reply[0]) * rq->nreply);
		ret = sc_build_writes(sc, payload, lkey, g.len, h->reply,
				      h->nreply, (unsigned int)nwr);
		if (ret < 0) {
			why = "the reply needs too many RDMA Writes";
			goto out_error;
		}
		nwr = ret;
		hlen = room;
	} else {
		shim_log(SHIM_LOG_WARN,
			 "server: reply of %zu octets to xid 0x%08x exceeds the inline threshold (%u) and %s",
			 g.len, sc->xid, c->send_max,
			 rq->has_reply ? "the client's Reply chunk" : "no Reply chunk was offered");
		goto out_error;
	}
	ret = (int)rpcrdma_hdr_encode(sbuf + room - hlen, hlen, h);
	if (ret != (int)hlen) {
		shim_log(SHIM_LOG_ERROR,
			 "server: reply header for xid 0x%08x: %d octets, %zu expected",
			 sc->xid, ret, hlen);
		goto out_error;
	}

	nsge = 1;
	sge[0].addr = (uintptr_t)(sbuf + room - hlen);
	sge[0].lkey = c->send.mr->lkey;
	sge[0].length = (uint32_t)hlen;
	if (h->proc == RDMA_MSG) {
		if (payload == sbuf + room) {
			sge[0].length += (uint32_t)g.len;	/* contiguous */
		} else {
			sge[1].addr = (uintptr_t)payload;
			sge[1].length = (uint32_t)g.len;
			sge[1].lkey = lkey;
			nsge = 2;
		}
	}
	/* The buffers stay until this Send completes (it retires the writes). */
	attach = sc->reply_pb;
	if (sc->ddp_pb) {
		sc->ddp_pb->next = attach;
		attach = sc->ddp_pb;
	}
	sc->reply_pb = NULL;
	sc->ddp_pb = NULL;
	ret = sc_post_send(sc, (uint32_t)idx, nwr ? sc->wrs : NULL,
			   (unsigned int)nwr, sge, nsge, sc_inv_rkey(sc), attach);
	if (ret) {
		sc_fail(sc, -ret, "cannot post a reply");
		return FALSE;
	}
	SHIM_STATS_ADD(sc->stats, bytes_out, g.len);
	if (h->proc == RDMA_NOMSG)
		SHIM_STATS_ADD(sc->stats, long_out, 1);
	return TRUE;

out_error:
	/*
	 * s5.5.3: no RPC-level reply is possible for this XID.  Tell the
	 * client rather than leave it waiting for its timeout.
	 */
	if (why)
		shim_log(SHIM_LOG_WARN, "server: no reply to xid 0x%08x: %s",
			 sc->xid, why);
	SHIM_STATS_ADD(sc->stats, errors, 1);
	rdma_conn_put_send(c, (uint32_t)idx);
	rdma_pool_put(c->dev, sc->reply_pb);
	rdma_pool_put(c->dev, sc->ddp_pb);
	sc->reply_pb = NULL;
	sc->ddp_pb = NULL;
	sc_send_error(sc, sc->xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
	return FALSE;
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
	shim_stats_close(sc->stats);
	sockfd_del(xprt->xp_fd);
	if (sc->conn) {
		rdma_conn_disconnect(sc->conn);
		/* Read targets are released once the queue pair is gone. */
		rdma_conn_hold(sc->conn, sc->call_pb);
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
	a->max_send_wr = a->nsend + SC_MAX_WRITES + 8;
	a->remote_inv = p->remote_inv;
}

/* True for the first connection from this peer address (any port). */
static bool
first_from(const struct sockaddr *sa)
{
	struct peer_key key;

	(void)peer_key_from(&key, sa);
	key.port = 0;
	return log_once(LOG_ONCE_CONNECTION, &key, 0);
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
	/* Programs see xp_fd as the TCP socket of this peer would be. */
	if (sockfd_add(sc->xprt.xp_fd, (struct sockaddr *)&sc->laddr,
		       (struct sockaddr *)&sc->raddr))
		goto out_free;
	id->context = sc;
	sc->next = lst->conns;
	lst->conns = sc;
	xprt_register(&sc->xprt);

	SHIM_STATS_ADD(lst->stats, connections, 1);
	sc->stats = shim_stats_open(SHIM_STATS_SERVER, SHIM_STATS_RDMA,
				    (struct sockaddr *)&sc->raddr,
				    (struct sockaddr *)&sc->laddr);
	if (sc->stats) {
		sc->stats->inline_send = c->send_max;
		sc->stats->inline_recv = c->recv_max;
		sc->stats->credits = lst->params.credits;
		sc->stats->rinv = c->rinv;
		sc->stats->peer_pdata = c->peer_pd_valid;
		shim_stats_publish(sc->stats);
	}

	{
		char peer[INET6_ADDRSTRLEN];
		const struct sockaddr *ra = (struct sockaddr *)&sc->raddr;

		sa_format_addr(ra, peer, sizeof(peer));
		/*
		 * Once per peer address at info: reconnects are routine.  The
		 * thresholds read call/reply, as on the client's line: the
		 * same two numbers on both ends of a connection.
		 */
		shim_log(first_from(ra) ? SHIM_LOG_INFO : SHIM_LOG_DEBUG,
			 "server: RDMA connection from %s port %u: inline %u/%u%s, credits %u, R=%d",
			 peer, sa_port(ra), c->recv_max, c->send_max,
			 c->peer_pd_valid ? "" : " (peer sent no RFC 8797 private data)",
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

/*
 * The listener cannot take events any more.  The kernel refuses RDMA-CM
 * commands from credentials other than those that opened the channel: a
 * daemon that changes user after creating its transports (rpcbind does)
 * ends here.  Stop for good rather than leave a readable descriptor for
 * svc_run to spin on: closing the channel tears the listener down in the
 * kernel, so clients are refused at once and use TCP.
 */
static void
lst_fail(struct svc_rdma_listener *lst, int err)
{
	struct svc_rdma_conn *sc;

	shim_log(SHIM_LOG_WARN,
		 "server: RDMA listener on port %u stops: %s%s", lst->xprt.xp_port,
		 strerror(err), err == EACCES ?
		 " (the process changed its credentials after creating it); RDMA clients now use TCP" :
		 "");
	xprt_unregister(&lst->xprt);
	for (sc = lst->conns; sc; sc = sc->next)
		if (sc->conn)
			rdma_conn_set_dead(sc->conn, err);
	sockfd_del(lst->ech->fd);
	close(lst->ech->fd);
	lst->ech->fd = -1;
}

static bool_t
lst_recv(SVCXPRT *xprt, struct rpc_msg *msg)
{
	struct svc_rdma_listener *lst = xprt->xp_p1;
	struct rdma_cm_event *ev;

	for (;;) {
		struct svc_rdma_conn *sc;

		if (rdma_get_cm_event(lst->ech, &ev)) {
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
	if (lst->ech)
		sockfd_del(lst->ech->fd);
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
tcp_destroyed(SVCXPRT *tcp_xprt, void *arg)
{
	struct svc_rdma_listener *lst = arg, **pp;

	for (pp = &listeners; *pp; pp = &(*pp)->next) {
		if (*pp == lst) {
			*pp = lst->next;
			break;
		}
	}
	xprt_unregister(&lst->xprt);
	lst_free(lst);
}

void
svc_rdma_set_stats(SVCXPRT *tcp_xprt, struct shim_stats_conn *s)
{
	struct svc_rdma_listener *lst;

	for (lst = listeners; lst; lst = lst->next)
		if (lst->tcp_xprt == tcp_xprt)
			lst->stats = s;
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
	if (!set_addrs(&lst->xprt, addr, NULL) ||
	    sockfd_add(lst->xprt.xp_fd, addr, NULL)) {
		err = ENOMEM;
		goto out_free;
	}
	xprt_register(&lst->xprt);

	/* The listener goes away with the TCP rendezvous. */
	if (svc_hook_destroy(tcp_xprt, tcp_destroyed, lst)) {
		xprt_unregister(&lst->xprt);
		err = ENOMEM;
		goto out_free;
	}
	lst->tcp_xprt = tcp_xprt;
	lst->next = listeners;
	listeners = lst;
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
