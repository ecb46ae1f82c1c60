/*
 * rdma-peer abuse MODE: clients that hurt a server while keeping to the
 * wire format, for the server's fairness tests (tests/rdma/130-*).  With
 * --connections N, N connections do it at once.
 *
 *   flood        keeps every credit busy with NULL calls: each answered
 *                call is followed at once by the next, until stopped
 *   no-repost    stops posting receives: the replies to its first calls
 *                use them all up, then it sends its credits and 8 more
 *                NULL calls, 2 ms apart, whose replies find no receive
 *                (RNR, retried by the server's adapter; the peer asks
 *                for the longest RNR timer)
 *   vanish-read  sends a NULL call in a position-zero Read chunk of
 *                256 KiB in 16 segments (RDMA_NOMSG) and, once its Send
 *                is acknowledged, moves its queue pair to the error
 *                state: the server's RDMA Reads get no response, as from
 *                a client that lost power
 *
 * Prints "abusing mode=M conns=N" once every connection is at it (flood:
 * 64 calls answered; the others: the last call sent), and
 * on SIGTERM or at the end of --timeout a summary with the calls sent and
 * the replies received.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "call.h"

#define VANISH_SEGS 16u
#define VANISH_SEG_LEN (16u << 10)

struct abuser {
	struct pconn *c;
	unsigned int window;		/* calls the server allows in flight */
	unsigned int out;		/* calls sent and not answered */
	unsigned long sent, replies;
	bool stopped;			/* no-repost: done sending */
	unsigned int burst;		/* no-repost: calls still to send */
	int64_t next_ms;		/* no-repost: when the next goes */
	struct chunk_mem cm;
};

/* A NULL call: RDMA_MSG with the call inline, or RDMA_NOMSG with it in cm. */
static int
send_null(struct abuser *a, const struct opts *o, uint32_t xid, bool chunk)
{
	struct pconn *c = a->c;
	struct rpcrdma_hdr *h = &c->rhdr;
	uint8_t rpc[256];
	size_t rlen;
	ssize_t hlen;
	unsigned int k;

	rlen = encode_call(rpc, sizeof(rpc), xid, o->prog, o->vers, 0,
			   XDRPROC(xdr_void), NULL);
	if (!rlen)
		return -1;
	memset(h, 0, sizeof(*h));
	h->xid = xid;
	h->vers = RPCRDMA1_VERSION;
	h->credits = PEER_NRECV;
	h->proc = chunk ? RDMA_NOMSG : RDMA_MSG;
	if (chunk) {
		/* RFC 8166 s4.5.3: the whole call in a position-zero chunk. */
		memcpy(a->cm.read_area, rpc, rlen);
		h->nreads = VANISH_SEGS;
		for (k = 0; k < VANISH_SEGS; k++)
			h->reads[k].target = chunk_segment(&a->cm,
				a->cm.read_area + k * VANISH_SEG_LEN, VANISH_SEG_LEN);
	}
	hlen = rpcrdma_hdr_encode(c->send_mem, PEER_SEND_BUF, h);
	if (hlen <= 0)
		return -1;
	if (!chunk)
		memcpy(c->send_mem + hlen, rpc, rlen);
	if (send_sync(c, (uint32_t)hlen + (chunk ? 0 : (uint32_t)rlen),
		      bound(o->answer_ms)) != IBV_WC_SUCCESS)
		return -1;
	a->sent++;
	a->out++;
	return 0;
}

/* Take the replies that came; receives are posted again unless no-repost. */
static void
take_replies(struct abuser *a, bool repost)
{
	struct pconn *c = a->c;
	struct ibv_wc wc;
	uint32_t idx, len;

	while (ibv_poll_cq(c->cq, 1, &wc) == 1)
		(void)take_wc(c, &wc, 0);
	while (pend_pop(c, &idx, &len)) {
		if (rpcrdma_hdr_decode(c->recv_mem + (size_t)idx * c->recv_size,
				       len, &c->hdr) == 0) {
			/* RFC 8166 s4.3.3: the grant in each reply. */
			a->window = c->hdr.credits < PEER_NRECV ?
				    c->hdr.credits : PEER_NRECV;
			if (!a->window)
				a->window = 1;
		}
		a->replies++;
		if (a->out)
			a->out--;
		if (repost)
			(void)post_recv(c, idx);
	}
}

/* The longest RNR timer (IBA: 0 is 655.36 ms) for the server's Sends. */
static void
slowest_rnr(struct pconn *c)
{
	struct ibv_qp_attr qa = { .min_rnr_timer = 0 };

	if (ibv_modify_qp(c->qp, &qa, IBV_QP_MIN_RNR_TIMER))
		warnmsg("cannot set the RNR timer; the server retries sooner");
}

/* The abuse is in full swing on this connection. */
static bool
underway(const struct abuser *a, const char *mode)
{
	if (a->c->dead)
		return true;
	return strcmp(mode, "flood") == 0 ? a->replies >= 64 : a->stopped;
}

/* One step of a connection's abuse; false once it has nothing more to do. */
static bool
abuse_step(struct abuser *a, const struct opts *o, const char *mode,
	   uint32_t *xid)
{
	struct pconn *c = a->c;

	if (c->dead)
		return false;
	if (strcmp(mode, "flood") == 0) {
		take_replies(a, true);
		while (a->out < a->window && !c->dead)
			(void)send_null(a, o, (*xid)++, false);
		return true;
	}
	if (strcmp(mode, "no-repost") == 0) {
		take_replies(a, false);
		if (a->stopped)
			return true;
		if (a->replies + a->out < PEER_NRECV) {
			while (a->out < a->window &&
			       a->replies + a->out < PEER_NRECV)
				(void)send_null(a, o, (*xid)++, false);
			return true;
		}
		if (a->replies < PEER_NRECV)
			return true;
		/*
		 * Every receive is used: now the replies find none.  One call
		 * every 2 ms, so that the server takes each before the next
		 * comes (never more waiting than credits), until more replies
		 * are stuck than the server has send buffers.
		 */
		if (!a->burst && !a->next_ms)
			a->burst = a->window + 8;
		if (now_ms() >= a->next_ms && a->burst) {
			(void)send_null(a, o, (*xid)++, false);
			a->burst--;
			a->next_ms = now_ms() + 2;
		}
		a->stopped = !a->burst;
		return true;
	}
	/* vanish-read */
	if (!a->stopped) {
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

		if (send_null(a, o, (*xid)++, true) == 0 &&
		    ibv_modify_qp(c->qp, &qa, IBV_QP_STATE) == 0)
			a->stopped = true;
		else
			c->dead = true;
	}
	return true;
}

/* Each connection with its chunk memory, then the array. */
static void
abusers_free(struct abuser *a, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		chunk_free(&a[i].cm);
		conn_free(a[i].c);
	}
	free(a);
}

int
run_abuse(const struct opts *o)
{
	const char *mode = o->cases[0];
	struct abuser *a;
	unsigned long sent = 0, replies = 0;
	unsigned int n = o->connections, i, live;
	uint32_t xid = (uint32_t)getpid() ^ (uint32_t)time(NULL) ^ 0x20000000u;
	bool said = false;

	if (strcmp(mode, "flood") && strcmp(mode, "no-repost") &&
	    strcmp(mode, "vanish-read"))
		usage_error("abuse takes flood, no-repost or vanish-read", mode);
	a = calloc(n, sizeof(*a));
	if (!a)
		return EX_SETUP;
	for (i = 0; i < n; i++) {
		a[i].c = client_connect(o);
		if (!a[i].c) {
			out("summary mode=%s result=failed why=no_connection", mode);
			abusers_free(a, i);
			return EX_SETUP;
		}
		/* RFC 8166 s4.3.3: one call until a reply grants more. */
		a[i].window = 1;
		if (strcmp(mode, "no-repost") == 0)
			slowest_rnr(a[i].c);
		if (strcmp(mode, "vanish-read") == 0 &&
		    chunk_alloc(a[i].c, &a[i].cm, VANISH_SEGS * VANISH_SEG_LEN, 0, 0)) {
			out("summary mode=%s result=failed why=no_memory", mode);
			abusers_free(a, i + 1);
			return EX_SETUP;
		}
	}
	while (!stop_signal && now_ms() < run_deadline) {
		bool all = true;

		for (i = live = 0; i < n; i++) {
			live += abuse_step(&a[i], o, mode, &xid);
			all = all && underway(&a[i], mode);
		}
		if (!said && all) {
			out("abusing mode=%s conns=%u", mode, n);
			said = true;
		}
		if (!live)
			break;
		if (strcmp(mode, "flood"))
			nap();
	}
	for (i = 0; i < n; i++) {
		sent += a[i].sent;
		replies += a[i].replies;
		out("conn=%u sent=%lu replies=%lu dead=%d", i + 1, a[i].sent,
		    a[i].replies, a[i].c->dead);
	}
	out("summary mode=%s conns=%u sent=%lu replies=%lu result=ok", mode, n,
	    sent, replies);
	abusers_free(a, n);
	return EX_OK;
}
