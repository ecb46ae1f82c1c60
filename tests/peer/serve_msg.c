/*
 * rdma-peer, serving one received message: its transport header checked
 * and reported, the RPC call gathered (inline or from Read chunks), the
 * reply sent inline or through the Reply chunk, a result placed in a
 * Write chunk; rkey-after-reply's late access to a previous call's chunks.
 * The RPC call itself is run by dispatch() (serve_procs.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "serve.h"

/* Octets of the late RDMA Write and Read (rkey-after-reply). */
#define PEER_LATE_LEN 8u

/* RDMA_ERROR for a call we cannot serve (s5.5). */
void
send_error(struct pconn *c, const struct opts *o, uint32_t xid, uint32_t vers,
	   uint32_t err)
{
	ssize_t n = rpcrdma_encode_error(c->send_mem, PEER_SEND_BUF, xid, vers,
					 o->credits, err);

	if (n > 0)
		(void)send_sync(c, (uint32_t)n, bound(DEFAULT_ANSWER_MS));
	out("reply conn=%u xid=0x%08x proc=RDMA_ERROR err=%s", c->number, xid,
	    err == RDMA_ERR_VERS ? "ERR_VERS" : "BADHEADER");
}

/*
 * One late RDMA Read or Write of *n octets (at most PEER_LATE_LEN) of
 * seg, tested and counted; its completion status.
 */
static int
late_try(struct server *s, struct pconn *c, enum wr_kind kind,
	 const struct rpcrdma_segment *seg, uint32_t *n)
{
	int st;

	*n = min_u32(PEER_LATE_LEN, seg->length);
	if (kind == WR_WRITE)
		memset(c->data_mem, 0xee, *n);
	st = rdma_sync(c, kind, c->data_mem, *n, seg->handle, seg->offset,
		       bound(DEFAULT_ANSWER_MS));
	s->late_tested++;
	if (st == IBV_WC_SUCCESS)
		s->late_exposed++;
	return st;
}

/*
 * rkey-after-reply: the previous call has completed on the client (its
 * next call is here), so the memory it offered must be gone.  Touch it.
 */
static void
late_access(struct server *s, struct pconn *c)
{
	struct late *lt = &c->late;
	uint32_t n;
	int st;

	/*
	 * A failed RDMA operation breaks the queue pair, so one access per
	 * call is all there is: the Read chunk when there was one (a Long
	 * Call), else the Reply or Write chunk.
	 */
	lt->pending = false;
	if (lt->have_read) {
		st = late_try(s, c, WR_READ, &lt->rseg, &n);
		out("late_read=%s status=\"%s\" conn=%u of_xid=0x%08x handle=0x%08x offset=0x%" PRIx64 " len=%u",
		    st == IBV_WC_SUCCESS ? "ok" : "failed", wc_status_name(st),
		    c->number, lt->xid, lt->rseg.handle, lt->rseg.offset, n);
		if (st != IBV_WC_SUCCESS) {
			if (lt->have_write)
				out("late_write=untested reason=qp_error conn=%u of_xid=0x%08x",
				    c->number, lt->xid);
			conn_kill(c);
			return;
		}
	}
	if (lt->have_write) {
		st = late_try(s, c, WR_WRITE, &lt->wseg, &n);
		out("late_write=%s status=\"%s\" conn=%u of_xid=0x%08x target=%s handle=0x%08x offset=0x%" PRIx64 " len=%u",
		    st == IBV_WC_SUCCESS ? "ok" : "failed", wc_status_name(st),
		    c->number, lt->xid, lt->write_target, lt->wseg.handle,
		    lt->wseg.offset, n);
		if (st != IBV_WC_SUCCESS)
			conn_kill(c);
	}
}

/* Pull every Read chunk into the read region; returns false on failure. */
static bool
pull_chunks(struct pconn *c, const struct rpcrdma_hdr *h, uint64_t total)
{
	uint64_t off = 0;
	unsigned int i;
	int st;

	if (total > PEER_REGION)
		return false;
	for (i = 0; i < h->nreads; i++) {
		const struct rpcrdma_segment *seg = &h->reads[i].target;

		if (!seg->length)
			continue;
		st = rdma_sync(c, WR_READ, c->data_mem + off, seg->length,
			       seg->handle, seg->offset, bound(DEFAULT_ANSWER_MS));
		if (st != IBV_WC_SUCCESS) {
			out("rdma_read=failed status=\"%s\" conn=%u xid=0x%08x handle=0x%08x len=%u",
			    wc_status_name(st), c->number, h->xid, seg->handle,
			    seg->length);
			return false;
		}
		off += seg->length;
	}
	return true;
}

/*
 * The whole RPC call of a received message, in c->call_mem: inline, or
 * rebuilt from Read chunks (s4.4.5, a Long Call in a position-zero chunk,
 * s4.5.3).  Returns its length, or -1 (the reason printed).
 */
static ssize_t
gather_call(struct pconn *c, const uint8_t *payload, size_t plen)
{
	struct rpcrdma_read_chunk chunks[RPCRDMA1_MAX_READ_SEGS];
	const struct rpcrdma_hdr *h = &c->hdr;
	uint64_t total = 0;
	ssize_t n;
	int nch, i;

	if (!h->nreads) {
		if (h->proc != RDMA_MSG) {
			out("call_error=no_call_body conn=%u xid=0x%08x", c->number, h->xid);
			return -1;
		}
		if (plen > PEER_REGION)
			return -1;
		memcpy(c->call_mem, payload, plen);
		return (ssize_t)plen;
	}
	nch = rpcrdma_read_chunks(h, chunks, RPCRDMA1_MAX_READ_SEGS);
	if (nch <= 0) {
		out("call_error=bad_read_list conn=%u xid=0x%08x", c->number, h->xid);
		return -1;
	}
	for (i = 0; i < nch; i++)
		total += chunks[i].length;
	if (!pull_chunks(c, h, total))
		return -1;
	if (h->proc == RDMA_NOMSG) {
		if (chunks[0].position != 0) {
			out("call_error=nomsg_without_position_zero conn=%u xid=0x%08x",
			    c->number, h->xid);
			return -1;
		}
		n = rpcrdma_read_rebuild(c->call_mem, PEER_REGION, c->data_mem,
					 chunks[0].length, chunks + 1,
					 (unsigned int)nch - 1,
					 c->data_mem + chunks[0].length);
	} else {
		n = rpcrdma_read_rebuild(c->call_mem, PEER_REGION, payload, plen,
					 chunks, (unsigned int)nch, c->data_mem);
	}
	if (n < 0)
		out("call_error=rebuild error=\"%s\" conn=%u xid=0x%08x",
		    strerror((int)-n), c->number, h->xid);
	return n;
}

/* Send len octets of payload (in the reply region) as directed by the call. */
void
send_reply(struct server *s, struct pconn *c, const uint8_t *payload,
	   size_t plen, const char *rpc, const char *note)
{
	const struct rpcrdma_hdr *h = &c->hdr;
	struct rpcrdma_hdr *rh = &c->rhdr;
	uint32_t limit = min_u32(c->own_send, c->peer_pd.recv_size);
	ssize_t hlen;
	unsigned int i;
	int st;

	if (hold_reply(s, c, payload, plen))
		return;
	rh->xid = h->xid;
	rh->vers = RPCRDMA1_VERSION;
	rh->credits = s->o->credits;
	rh->proc = RDMA_MSG;
	rh->nreads = 0;
	rh->has_reply = false;
	rh->nreply = 0;
	/* rh->writes/wsegs were filled by the caller (used or zeroed). */

	hlen = rpcrdma_hdr_encode(c->send_mem, PEER_SEND_BUF, rh);
	if (hlen > 0 && (size_t)hlen + plen <= limit &&
	    !(c->reply_chunk_always && h->has_reply)) {
		memcpy(c->send_mem + hlen, payload, plen);
		st = send_sync(c, (uint32_t)((size_t)hlen + plen), bound(DEFAULT_ANSWER_MS));
		out("reply conn=%u xid=0x%08x proc=RDMA_MSG len=%zu rpc=%s%s%s%s",
		    c->number, h->xid, (size_t)hlen + plen, rpc, note ? " " : "",
		    note ? note : "", st == IBV_WC_SUCCESS ? "" : " send=failed");
		return;
	}

	if (h->has_reply) {
		uint64_t room = 0, off = 0;

		for (i = 0; i < h->nreply; i++)
			room += h->reply[i].length;
		if (room >= plen) {
			/* s4.5.2, s5.3.3: a Long Reply through the Reply chunk. */
			rh->proc = RDMA_NOMSG;
			rh->has_reply = true;
			rh->nreply = h->nreply;
			for (i = 0; i < h->nreply; i++) {
				uint32_t n = (uint32_t)(plen - off < h->reply[i].length ?
							plen - off : h->reply[i].length);

				rh->reply[i] = h->reply[i];
				rh->reply[i].length = n;
				if (!n)
					continue;
				st = rdma_sync(c, WR_WRITE, (uint8_t *)payload + off, n,
					       h->reply[i].handle, h->reply[i].offset,
					       bound(DEFAULT_ANSWER_MS));
				if (st != IBV_WC_SUCCESS) {
					out("reply conn=%u xid=0x%08x rdma_write=failed status=\"%s\"",
					    c->number, h->xid, wc_status_name(st));
					return;
				}
				off += n;
			}
			hlen = rpcrdma_hdr_encode(c->send_mem, PEER_SEND_BUF, rh);
			if (hlen > 0 && (size_t)hlen <= limit) {
				st = send_sync(c, (uint32_t)hlen, bound(DEFAULT_ANSWER_MS));
				out("reply conn=%u xid=0x%08x proc=RDMA_NOMSG len=%zd reply_chunk_used=%zu rpc=%s%s%s%s",
				    c->number, h->xid, hlen, plen, rpc, note ? " " : "",
				    note ? note : "", st == IBV_WC_SUCCESS ? "" : " send=failed");
				return;
			}
		}
	}
	out("reply_error=too_large conn=%u xid=0x%08x len=%zu limit=%u reply_chunk=%s",
	    c->number, h->xid, plen, limit, h->has_reply ? "too_small" : "none");
	send_error(c, s->o, h->xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
}

/* Keep the reply to c's current call in hr; false when it does not fit. */
bool
keep_reply(struct held_reply *hr, const struct pconn *c,
	   const uint8_t *payload, size_t plen)
{
	if (plen > sizeof(hr->rpc))
		return false;
	hr->hdr = c->hdr;
	memcpy(hr->rpc, payload, plen);
	hr->len = plen;
	hr->pending = true;
	out("reply_held conn=%u xid=0x%08x", c->number, c->hdr.xid);
	return true;
}

bool
hold_reply(struct server *s, struct pconn *c, const uint8_t *payload,
	   size_t plen)
{
	struct held_reply *hr = &c->held;

	if (s->sc == SV_LATE_MANY)
		return late_many_hold(s, c, payload, plen);
	if (c->calls != 1 || hr->pending)
		return false;
	switch (s->sc) {
	case SV_DROP_FIRST:
		out("reply_dropped conn=%u xid=0x%08x", c->number, c->hdr.xid);
		return true;
	case SV_LATE_FIRST:
	case SV_INV_FIRST:
		return keep_reply(hr, c, payload, plen);
	default:
		return false;
	}
}

void
send_held(struct server *s, struct pconn *c)
{
	struct rpcrdma_hdr cur = c->hdr;

	c->hdr = c->held.hdr;
	c->held.pending = false;
	c->rhdr.nwrites = 0;
	c->rhdr.nwsegs = 0;
	memcpy(c->data_mem + PEER_REGION, c->held.rpc, c->held.len);
	/* Linux's server uses the Reply chunk whenever one is offered. */
	c->reply_chunk_always = s->sc == SV_LATE_FIRST || s->sc == SV_LATE_MANY;
	send_reply(s, c, c->data_mem + PEER_REGION, c->held.len, "SUCCESS",
		   "late=1");
	c->reply_chunk_always = false;
	c->hdr = cur;
}

void
held_reply_due(struct server *s, struct pconn *c)
{
	const struct rpcrdma_hdr *first = &c->held.hdr;

	if (s->sc == SV_LATE_MANY) {
		late_many_due(s, c);
		return;
	}
	if (!c->held.pending)
		return;
	if (s->sc == SV_INV_FIRST && c->calls == 2) {
		/*
		 * The reply to this call invalidates a key of the first call
		 * (RFC 8797 s4.1 lets a server invalidate one key per reply;
		 * this is the wrong call's, still bound).
		 */
		if (first->has_reply && first->nreply) {
			c->send_inv = first->reply[0].handle;
			out("invalidating conn=%u key=0x%08x of_xid=0x%08x with_xid=0x%08x",
			    c->number, c->send_inv, first->xid, c->hdr.xid);
		}
		return;
	}
	send_held(s, c);
}

/*
 * Place an opaque result in the call's first Write chunk (s4.4.6): the
 * bytes go by RDMA Write, no padding; the length word stays inline.
 * Returns true when the chunk took it.
 */
bool
use_write_chunk(struct pconn *c, const rpctest_data *d)
{
	const struct rpcrdma_hdr *h = &c->hdr;
	struct rpcrdma_hdr *rh = &c->rhdr;
	const struct rpcrdma_write_chunk *wc = &h->writes[0];
	uint64_t room = 0, off = 0;
	unsigned int i;
	int st;

	for (i = 0; i < wc->nsegs; i++)
		room += h->wsegs[wc->first + i].length;
	if (!d->rpctest_data_len || room < d->rpctest_data_len ||
	    d->rpctest_data_len > PEER_REGION)
		return false;
	memcpy(c->data_mem, d->rpctest_data_val, d->rpctest_data_len);
	for (i = 0; i < wc->nsegs; i++) {
		const struct rpcrdma_segment *seg = &h->wsegs[wc->first + i];
		uint32_t n = (uint32_t)(d->rpctest_data_len - off < seg->length ?
					d->rpctest_data_len - off : seg->length);

		rh->wsegs[wc->first + i].length = n;
		if (!n)
			continue;
		st = rdma_sync(c, WR_WRITE, c->data_mem + off, n, seg->handle,
			       seg->offset, bound(DEFAULT_ANSWER_MS));
		if (st != IBV_WC_SUCCESS) {
			out("write_chunk=failed status=\"%s\" conn=%u xid=0x%08x",
			    wc_status_name(st), c->number, h->xid);
			return false;
		}
		off += n;
	}
	return true;
}

/*
 * --old-kernel: what svcrdma before 5.11 refused with ERR_CHUNK before
 * running the call (its xdr_check_read_list, xdr_check_write_list and
 * xdr_check_reply_chunk); NULL when it would take the header.
 */
static const char *
old_kernel_refuses(const struct opts *o, const struct rpcrdma_hdr *h)
{
	unsigned int i;

	for (i = 0; i < h->nreads; i++) {
		if (h->reads[i].position != h->reads[0].position)
			return "read_positions";
		if (h->reads[i].target.length > o->special_seg_max)
			return "read_segment";
	}
	if (h->nwrites > 2)
		return "write_chunks";
	for (i = 0; i < h->nwsegs; i++)
		if (h->wsegs[i].length > o->write_seg_max)
			return "write_segment";
	for (i = 0; h->has_reply && i < h->nreply; i++)
		if (h->reply[i].length > o->special_seg_max)
			return "reply_segment";
	return NULL;
}

/* Serve one received message on c. */
void
serve_message(struct server *s, struct pconn *c, uint32_t idx, uint32_t len)
{
	const uint8_t *buf = c->recv_mem + (size_t)idx * c->recv_size;
	struct rpcrdma_hdr *h = &c->hdr;
	char rc[32] = "none";
	uint64_t rlen = 0;
	ssize_t clen;
	unsigned int i;
	int ret;

	ret = rpcrdma_hdr_decode(buf, len, h);
	if (ret == -EMSGSIZE) {
		out("call conn=%u malformed=runt len=%u", c->number, len);
		s->protocol_errors++;
		goto repost;
	}
	/*
	 * draft-cel-nfsv4-rpcrdma-version-two-01 s5.2: a Version One server
	 * answers a Version Two message with ERR_VERS 1..1 and its requester
	 * sends the call again in Version One.  Negotiation, not a call, nor
	 * a protocol error.  --drop-v2: a server that answers nothing.
	 */
	if (ret == -EPROTONOSUPPORT && h->vers == 2 && h->proc != RDMA_ERROR) {
		s->negotiations++;
		out("negotiation conn=%u xid=0x%08x vers=2 answer=%s len=%u",
		    c->number, h->xid, s->o->drop_v2 ? "none" : "ERR_VERS", len);
		if (!s->o->drop_v2)
			send_error(c, s->o, h->xid, h->vers, RDMA_ERR_VERS);
		goto repost;
	}
	if (h->has_reply) {
		for (i = 0; i < h->nreply; i++)
			rlen += h->reply[i].length;
		snprintf(rc, sizeof(rc), "%u:%" PRIu64, h->nreply, rlen);
	}
	c->calls++;
	s->calls++;
	out("call conn=%u xid=0x%08x proc=%s vers=%u credits=%u reads=%u writes=%u reply_chunk=%s len=%u",
	    c->number, h->xid, rpcrdma_proc_name(h->proc), h->vers, h->credits,
	    ret ? 0 : h->nreads, ret ? 0 : h->nwrites, ret ? "?" : rc, len);
	if (len > c->own_recv) {
		out("violation=call_exceeds_inline conn=%u xid=0x%08x len=%u limit=%u",
		    c->number, h->xid, len, c->own_recv);
		s->violations++;
	}
	if (ret) {
		out("call_error=%s conn=%u xid=0x%08x", ret == -EPROTONOSUPPORT ?
		    "version" : "malformed", c->number, h->xid);
		s->protocol_errors++;
		if (h->proc != RDMA_ERROR)
			send_error(c, s->o, h->xid, h->vers, ret == -EPROTONOSUPPORT ?
				   RDMA_ERR_VERS : RDMA_ERR_BADHEADER);
		goto repost;
	}
	if (h->proc == RDMA_ERROR) {
		out("call_error=client_sent_rdma_error conn=%u xid=0x%08x", c->number,
		    h->xid);
		s->protocol_errors++;
		goto repost;
	}

	if (s->o->old_kernel && old_kernel_refuses(s->o, h)) {
		out("err_chunk=%s conn=%u xid=0x%08x", old_kernel_refuses(s->o, h),
		    c->number, h->xid);
		s->err_chunks++;
		send_error(c, s->o, h->xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
		goto repost;
	}

	if (s->sc == SV_RKEY && c->late.pending) {
		late_access(s, c);
		if (c->dead) {
			out("call_not_served conn=%u xid=0x%08x reason=qp_error",
			    c->number, h->xid);
			return;
		}
	}

	clen = gather_call(c, buf + h->hdrlen, len - h->hdrlen);
	if (clen < 0) {
		s->protocol_errors++;
		if (!c->dead)
			send_error(c, s->o, h->xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
		goto repost;
	}
	/* The call is copied out: the receive can go back now. */
	(void)post_recv(c, idx);

	if (h->nreads || h->has_reply || h->nwrites) {
		s->chunks_offered++;
		if (s->sc == SV_RKEY) {
			struct late *lt = &c->late;

			memset(lt, 0, sizeof(*lt));
			lt->xid = h->xid;
			if (h->has_reply && h->nreply && h->reply[0].length) {
				lt->have_write = true;
				lt->write_target = "reply";
				lt->wseg = h->reply[0];
			} else if (h->nwsegs && h->wsegs[0].length) {
				lt->have_write = true;
				lt->write_target = "write";
				lt->wseg = h->wsegs[0];
			}
			if (h->nreads && h->reads[0].target.length) {
				lt->have_read = true;
				lt->rseg = h->reads[0].target;
			}
			lt->pending = lt->have_write || lt->have_read;
		}
	}
	held_reply_due(s, c);
	if (c->dead)
		return;
	dispatch(s, c, (size_t)clen);
	return;

repost:
	(void)post_recv(c, idx);
}
