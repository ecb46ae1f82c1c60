/*
 * The server's RDMA Reads and Writes (svc_rdma_int.h): a call's Read
 * chunks pulled into a pool buffer and re-inserted into the call, and the
 * RDMA Writes that place a reply's data into the client's Write and Reply
 * chunks.  Both split their operations at the device's largest message.
 */
#include <errno.h>
#include <string.h>

#include "svc_rdma_int.h"

/* Post one RDMA Read, waiting for room under the client's Read limit. */
static int
sc_post_read(struct svc_rdma_conn *sc, struct ibv_send_wr *wr,
	     int64_t deadline)
{
	struct ep *ep = sc->ep;
	int ret;

	for (;;) {
		ret = -EAGAIN;
		if (sc->reads_inflight < ep_read_depth(ep))
			ret = ep_post_one(ep, wr);
		if (ret != -EAGAIN)
			break;
		if (!sc_sleep(sc, deadline))
			return -ETIMEDOUT;
	}
	if (ret == 0)
		sc->reads_inflight++;
	return ret;
}

/* RDMA Reads of one Read segment into pb at *off, advancing *off. */
static int
sc_read_segment(struct svc_rdma_conn *sc, unsigned int i, struct rdma_pbuf *pb,
		uint64_t *off, int64_t deadline)
{
	const struct rpcrdma_segment *seg = &sc->hdr.reads[i].target;
	uint32_t max_msg = ep_max_msg(sc->ep);
	uint32_t done, piece;
	int ret;

	for (done = 0; done < seg->length; done += piece) {
		struct ibv_sge sge;
		struct ibv_send_wr wr;

		piece = seg->length - done;
		if (piece > max_msg)
			piece = max_msg;
		memset(&wr, 0, sizeof(wr));
		sge.addr = (uintptr_t)pb->buf.addr + *off;
		sge.length = piece;
		sge.lkey = pb->buf.mr->lkey;
		wr.wr_id = EP_WRID(EP_WR_READ, i);
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = seg->offset + done;
		wr.wr.rdma.rkey = seg->handle;
		ret = sc_post_read(sc, &wr, deadline);
		if (ret)
			return ret;
		*off += piece;
	}
	return 0;
}

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
	struct ep *ep = sc->ep;
	int64_t deadline = ep_now_ms() + SC_RW_TIMEOUT_MS;
	struct rdma_pbuf *pb;
	uint64_t total = 0, off = 0;
	unsigned int k, i;
	int ret;

	/* A client that offered no Read resources cannot send Read chunks. */
	if (!ep_read_depth(ep))
		return -EBADMSG;
	for (k = 0; k < nch; k++)
		total += ch[k].length;
	if (total > sc->lst->params.max_call + EP_MSG_HDR_SLACK)
		return -EMSGSIZE;
	pb = rdma_pool_get(ep_dev(ep), total ? total : 1);
	if (!pb)
		return -ENOMEM;

	for (k = 0; k < nch; k++) {
		for (i = ch[k].first; i < ch[k].first + ch[k].nsegs; i++) {
			ret = sc_read_segment(sc, i, pb, &off, deadline);
			if (ret)
				goto out_fail;
		}
	}
	while (sc->reads_inflight && !ep_dead(ep)) {
		sc_drain(sc);
		if (sc->reads_inflight && !sc_sleep(sc, deadline)) {
			ret = -ETIMEDOUT;
			goto out_fail;
		}
	}
	if (ep_dead(ep)) {
		ret = -ep_dead(ep);
		goto out_fail;
	}
	*out = pb;
	/* s4.4.5.2: every Read chunk is pulled whole. */
	SHIM_STATS_ADD(sc->stats, read_chunk_bytes, total);
	return 0;

out_fail:
	/* Reads may still target pb: only the closed connection frees it. */
	sc_fail(sc, -ret, "RDMA Read of a call's chunks failed");
	sc->call_pb = pb;
	return ret;
}

int
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

	/*
	 * The position-zero chunk holds the call (s4.5.3); other chunks are
	 * data items re-inserted at their positions with XDR round-up
	 * (s4.4.5, s4.4.5.1).
	 */
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
	if (rlen > sc->lst->params.max_call + EP_MSG_HDR_SLACK)
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
