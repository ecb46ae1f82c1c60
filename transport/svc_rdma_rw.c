/*
 * The server's RDMA Reads and Writes (svc_rdma_int.h): a call's Read
 * chunks pulled and re-inserted into the call, and the RDMA Writes that
 * place a reply's data into the client's Write and Reply chunks.  Both
 * split their operations at the device's largest message.
 *
 * Registered memory per call is bounded: Read chunks of up to
 * SC_DIRECT_MAX octets are read straight into a pool buffer when the
 * budget gives one; larger ones (up to max_call), or any when it does
 * not, go through a bounce buffer of SC_BOUNCE octets into ordinary
 * memory, one bounce-full at a time.  Writes from ordinary memory go the
 * same way back (sc_write_bounced).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "svc_rdma_int.h"

/*
 * Post one RDMA Read or signaled Write, waiting for room: send queue
 * entries, and for Reads the client's Read limit (s4.3.1, last paragraph).
 */
static int
sc_post_rw(struct svc_rdma_conn *sc, struct ibv_send_wr *wr, int64_t deadline)
{
	struct ep *ep = sc->ep;
	int ret;

	for (;;) {
		ret = -EAGAIN;
		if (wr->opcode != IBV_WR_RDMA_READ ||
		    sc->rw_inflight < ep_read_depth(ep))
			ret = ep_post_one(ep, wr);
		if (ret != -EAGAIN)
			break;
		if (!sc_sleep(sc, deadline))
			return -ETIMEDOUT;
	}
	if (ret == 0)
		sc->rw_inflight++;
	return ret;
}

struct rdma_pbuf *
sc_bounce(struct svc_rdma_conn *sc)
{
	if (!sc->bounce)
		sc->bounce = sc_pool_get(sc, SC_BOUNCE);
	return sc->bounce;
}

/*
 * Post one RDMA Read now if room allows: send queue entries beyond what
 * the call's reply needs, and the client's Read limit (s4.3.1, last
 * paragraph).  -EAGAIN: wait for a completion.
 */
static int
sc_post_read(struct svc_rdma_conn *sc, struct ibv_send_wr *wr)
{
	int ret;

	if (sc->rw_inflight >= ep_read_depth(sc->ep) ||
	    !ep_sq_room(sc->ep, sc->reply_wrs + 1))
		return -EAGAIN;
	ret = ep_post_one(sc->ep, wr);
	if (ret == 0)
		sc->rw_inflight++;
	return ret;
}

/* The staged Reads are done: copy them out of the bounce buffer. */
static int
sink_flush(struct svc_rdma_conn *sc, struct sc_sink *k)
{
	if (sc->rw_inflight)
		return -EINPROGRESS;
	if (!k->bounced)
		return 0;
	memcpy(k->dst + k->done, k->stage->buf.addr, k->staged);
	k->done += k->staged;
	k->staged = 0;
	return 0;
}

/* RDMA Reads of the current Read segment into the sink, as room allows. */
static int
sc_read_segment(struct svc_rdma_conn *sc, struct sc_pull *p)
{
	const struct rpcrdma_segment *seg = &sc->hdr.reads[p->i].target;
	uint32_t max_msg = ep_max_msg(sc->ep);
	struct sc_sink *k = &p->k;
	uint64_t room;
	uint32_t piece;
	int ret;

	for (; p->seg_done < seg->length; p->seg_done += piece) {
		struct ibv_sge sge;
		struct ibv_send_wr wr;

		room = k->stage->buf.len - k->staged;
		if (!room) {
			ret = sink_flush(sc, k);
			if (ret)
				return ret;
			room = k->stage->buf.len;
		}
		piece = seg->length - p->seg_done;
		if (piece > max_msg)
			piece = max_msg;
		if (piece > room)
			piece = (uint32_t)room;
		memset(&wr, 0, sizeof(wr));
		sge.addr = (uintptr_t)k->stage->buf.addr + k->staged;
		sge.length = piece;
		sge.lkey = k->stage->buf.mr->lkey;
		wr.wr_id = EP_WRID(EP_WR_READ, p->i);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = seg->offset + p->seg_done;
		wr.wr.rdma.rkey = seg->handle;
		ret = sc_post_read(sc, &wr);
		if (ret == -EAGAIN)
			return -EINPROGRESS;
		if (ret)
			return ret;
		k->staged += piece;
	}
	return 0;
}

/*
 * The sink for total octets: a pool buffer when the call is small enough
 * and the budget gives one, else ordinary memory and the bounce buffer.
 * Nothing is registered or allocated before the total is checked.
 */
static int
sc_sink_open(struct svc_rdma_conn *sc, uint64_t total, struct sc_sink *k)
{
	memset(k, 0, sizeof(*k));
	if (total <= SC_DIRECT_MAX) {
		sc->call_pb = sc_pool_get(sc, total ? total : 1);
		if (sc->call_pb) {
			k->stage = sc->call_pb;
			k->dst = sc->call_data = sc->call_pb->buf.addr;
			return 0;
		}
	}
	k->bounced = true;
	k->stage = sc_bounce(sc);
	if (!k->stage)
		return -ENOMEM;
	sc->call_heap = malloc(total ? total : 1);
	if (!sc->call_heap)
		return -ENOMEM;
	k->dst = sc->call_data = sc->call_heap;
	return 0;
}

int
sc_pull_start(struct svc_rdma_conn *sc, uint32_t ridx, uint32_t rlen)
{
	struct sc_pull *p = &sc->pull;
	unsigned int c;
	int nch, ret;

	memset(p, 0, sizeof(*p));
	/* A client that offered no Read resources cannot send Read chunks. */
	if (!ep_read_depth(sc->ep))
		return -EBADMSG;
	nch = rpcrdma_read_chunks(&sc->hdr, p->ch, RPCRDMA1_MAX_READ_SEGS);
	if (nch <= 0)
		return -EBADMSG;
	p->nch = (unsigned int)nch;
	for (c = 0; c < p->nch; c++)
		p->total += p->ch[c].length;
	if (p->total > sc->lst->params.max_call + EP_MSG_HDR_SLACK)
		return -EMSGSIZE;
	ret = sc_sink_open(sc, p->total, &p->k);
	if (ret)
		return ret;
	p->i = p->ch[0].first;
	p->ridx = ridx;
	p->rlen = rlen;
	p->deadline = ep_deadline_ms(SC_RW_TIMEOUT_MS);
	p->active = true;
	return 0;
}

/*
 * Pull the data of Read chunks, chunk after chunk (s4.4.5.2), never more
 * Reads in flight than the client's responder resources allow (s4.3.1),
 * without waiting: svc_run serves the other transports meanwhile, and
 * the Reads' completions make this connection readable again.
 */
int
sc_pull_step(struct svc_rdma_conn *sc)
{
	struct sc_pull *p = &sc->pull;
	int ret = 0;

	if (ep_dead(sc->ep)) {
		ret = -ep_dead(sc->ep);
		goto out_fail;
	}
	while (p->c < p->nch) {
		const struct rpcrdma_read_chunk *ch = &p->ch[p->c];

		if (p->i >= ch->first + ch->nsegs) {
			if (++p->c < p->nch)
				p->i = p->ch[p->c].first;
			p->seg_done = 0;
			continue;
		}
		ret = sc_read_segment(sc, p);
		if (ret)
			break;
		p->i++;
		p->seg_done = 0;
	}
	if (!ret)
		ret = sink_flush(sc, &p->k);
	if (ret == -EINPROGRESS && ep_now_ms() >= p->deadline)
		ret = -ETIMEDOUT;
	if (ret == -EINPROGRESS)
		return ret;
	if (ret)
		goto out_fail;
	/* s4.4.5.2: every Read chunk is pulled whole. */
	SHIM_STATS_ADD(sc->stats, read_chunk_bytes, p->total);
	return 0;

out_fail:
	/* Reads may still target the buffers: the closed connection frees them. */
	sc_fail(sc, -ret, ret == -ETIMEDOUT ?
		"the RDMA Reads of a call's chunks did not finish in time" :
		"RDMA Read of a call's chunks failed");
	return ret;
}

int
sc_pull_call(struct svc_rdma_conn *sc, const uint8_t *inl, size_t inl_len,
	     uint8_t **call, size_t *clen)
{
	const struct rpcrdma_read_chunk *data_ch;
	struct sc_pull *p = &sc->pull;
	unsigned int nch = p->nch;
	const uint8_t *base;
	uint64_t rlen;
	size_t base_len;
	ssize_t n;

	/*
	 * The position-zero chunk holds the call (s4.5.3); other chunks are
	 * data items re-inserted at their positions with XDR round-up
	 * (s4.4.5, s4.4.5.1).
	 */
	if (p->ch[0].position == 0) {
		/* A long call; any later chunks are positioned within it. */
		base = sc->call_data;
		base_len = (size_t)p->ch[0].length;
		data_ch = p->ch + 1;
		nch--;
		if (!nch) {
			*call = sc->call_data;
			*clen = base_len;
			return 0;
		}
	} else {
		base = inl;
		base_len = inl_len;
		data_ch = p->ch;
	}
	rlen = rpcrdma_read_rebuild_len(base_len, data_ch, nch);
	if (rlen > sc->lst->params.max_call + EP_MSG_HDR_SLACK)
		return -EMSGSIZE;
	if (!sc_callbuf_reserve(sc, (size_t)rlen))
		return -ENOMEM;
	n = rpcrdma_read_rebuild(sc->callbuf, sc->callbuf_cap, base, base_len,
				 data_ch, nch,
				 sc->call_data + (base == inl ? 0 : base_len));
	if (n < 0)
		return (int)n;
	*call = sc->callbuf;
	*clen = (size_t)n;
	return 0;
}

int
sc_build_writes(struct svc_rdma_conn *sc, const uint8_t *src, uint32_t lkey,
		uint64_t len, struct rpcrdma_segment *segs, unsigned int nsegs,
		unsigned int nwr)
{
	uint32_t max_msg = ep_max_msg(sc->ep);
	unsigned int i;

	/*
	 * s4.4.6: the responder updates each segment's length to the
	 * octets it wrote there.
	 */
	for (i = 0; i < nsegs; i++) {
		uint32_t take = len < segs[i].length ? (uint32_t)len : segs[i].length;
		uint32_t done, piece;

		for (done = 0; done < take; done += piece) {
			struct ibv_send_wr *wr = &sc->wrs[nwr];
			struct ibv_sge *sge = &sc->sges[nwr];

			if (nwr >= SC_MAX_WRITES)
				return -EMSGSIZE;
			piece = take - done;
			if (piece > max_msg)
				piece = max_msg;
			memset(wr, 0, sizeof(*wr));
			sge->addr = (uintptr_t)src + done;
			sge->length = piece;
			sge->lkey = lkey;
			wr->wr_id = EP_WRID(EP_WR_WRITE, nwr);
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

/* Octets of len that each segment takes; false when they cannot hold it. */
static bool
segs_fill(struct rpcrdma_segment *segs, unsigned int nsegs, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < nsegs; i++) {
		uint32_t take = len < segs[i].length ? (uint32_t)len : segs[i].length;

		/* s4.4.6: the responder returns the octets it wrote there. */
		segs[i].length = take;
		len -= take;
	}
	return len == 0;
}

int
sc_write_bounced(struct svc_rdma_conn *sc, const uint8_t *src, uint64_t len,
		 struct rpcrdma_segment *segs, unsigned int nsegs)
{
	int64_t deadline = ep_deadline_ms(SC_RW_TIMEOUT_MS);
	uint32_t max_msg = ep_max_msg(sc->ep);
	struct rdma_pbuf *b;
	unsigned int i = 0;
	uint32_t seg_off = 0;
	int ret;

	if (!segs_fill(segs, nsegs, len))
		return -EMSGSIZE;
	b = sc_bounce(sc);
	if (!b)
		return -ENOMEM;
	while (len) {
		size_t fill = len < b->buf.len ? (size_t)len : b->buf.len, off = 0;

		memcpy(b->buf.addr, src, fill);
		while (off < fill) {
			struct ibv_send_wr wr;
			struct ibv_sge sge;
			uint32_t piece;

			while (seg_off == segs[i].length) {
				i++;
				seg_off = 0;
			}
			piece = segs[i].length - seg_off;
			if (piece > fill - off)
				piece = (uint32_t)(fill - off);
			if (piece > max_msg)
				piece = max_msg;
			memset(&wr, 0, sizeof(wr));
			sge.addr = (uintptr_t)b->buf.addr + off;
			sge.length = piece;
			sge.lkey = b->buf.mr->lkey;
			wr.wr_id = EP_WRID(EP_WR_WRITE_SIGNALED, i);
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.wr.rdma.remote_addr = segs[i].offset + seg_off;
			wr.wr.rdma.rkey = segs[i].handle;
			ret = sc_post_rw(sc, &wr, deadline);
			if (ret)
				goto out_fail;
			off += piece;
			seg_off += piece;
		}
		/* The bounce buffer is refilled only once its Writes are done. */
		ret = sc_rw_wait(sc, deadline);
		if (ret)
			goto out_fail;
		src += fill;
		len -= fill;
	}
	return 0;

out_fail:
	/*
	 * Writes may still read the bounce buffer: the closed connection
	 * frees it (s5.5.3, a reply that cannot be sent ends the connection).
	 */
	if (!ep_dead(sc->ep))
		sc_fail(sc, -ret, ret == -ETIMEDOUT ?
			"the RDMA Writes of a reply did not finish in time" :
			"RDMA Write of a reply failed");
	return ret;
}
