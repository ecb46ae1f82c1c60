/*
 * The server's RPC-over-RDMA Version Two (svc_rdma_v2.h).
 *
 * A listener set to accept Version Two (rpcrdma_version 2 or auto) takes
 * both versions on every connection and answers each call in its own
 * (draft-cel-nfsv4-rpcrdma-version-two-01 s5.3): a Version One message
 * goes through Version One's codec exactly as before, a Version Two one
 * is checked here (rpcrdma2_recv_check) and, when it is a call, handed
 * on as the same Version One view (its lists are Version One's XDR), so
 * Read chunks, Write chunks and Reply chunks are served by the same code;
 * only the reply header differs (a direction word, REPLY).
 *
 * Errors, written down since the draft leaves them open:
 *   - a version outside 1..2 gets ERR_VERS offering 1..2 and echoing the
 *     version sent (RFC 8166 s5.5.1).  Version One's RDMA_ERROR and
 *     Version Two's RDMA2_ERROR have the same octets for it (prefix, 1,
 *     low, high), so there is one form whatever the message's shape;
 *   - a malformed Version Two call gets RDMA2_ERR_BAD_HEADER, the same
 *     octets as Version One's ERR_BADHEADER with version 2;
 *   - RDMA2_OPTIONAL of the CALL direction (with a payload or without):
 *     RDMA2_ERR_INVALID_OPTION with its XID (s3.1), as no type is known;
 *   - a message of the REPLY direction (a backward-direction reply, an
 *     RDMA2_OPTIONAL a responder would send) answers nothing this server
 *     asked: dropped and counted, as an RDMA2_ERROR goes only from
 *     responder to requester (s4.2.2) and cannot answer it;
 *   - a CALL whose payload is an RPC reply breaks s4.2.2's MUST: BAD_HEADER.
 * The connection goes on after each.
 */
#include <errno.h>

#include "common/log.h"
#include "common/sockaddr.h"
#include "rpcrdma_neg.h"
#include "svc_rdma_int.h"
#include "svc_rdma_v2.h"

static bool
sc_accepts_v2(const struct svc_rdma_conn *sc)
{
	return sc->lst->params.rpcrdma_want != RPCRDMA_WANT_V1;
}

const char *
sc_versions_text(const struct svc_rdma_conn *sc)
{
	return sc_accepts_v2(sc) ? ", RPC-over-RDMA versions 1-2" :
				   ", RPC-over-RDMA version 1";
}

/* The connection's first call says its version (statistics, thresholds). */
static void
sc_first_call(struct svc_rdma_conn *sc, uint32_t vers)
{
	char peer[INET6_ADDRSTRLEN];

	if (sc->rvers)
		return;
	sc->rvers = vers;
	if (sc->stats)
		__atomic_store_n(&sc->stats->rpcrdma_vers, vers,
				 __ATOMIC_RELAXED);
	if (vers != RPCRDMA2_VERSION)
		return;
	/* s5.1: 4096 inline both ways with a peer that sent no private data. */
	ep_inline_v2(sc->ep);
	if (sc->stats) {
		sc->stats->inline_send = ep_send_max(sc->ep);
		sc->stats->inline_recv = ep_recv_max(sc->ep);
	}
	sa_format_addr((const struct sockaddr *)&sc->raddr, peer, sizeof(peer));
	shim_log(SHIM_LOG_DEBUG,
		 "server: connection from %s port %u speaks RPC-over-RDMA version 2",
		 peer, sa_port((const struct sockaddr *)&sc->raddr));
}

/* A message this server will not serve nor answer (s4.2.2). */
static int
sc_v2_drop(struct svc_rdma_conn *sc, const struct rpcrdma2_hdr *h)
{
	shim_log(SHIM_LOG_WARN,
		 "server: dropped a Version Two %s of direction %s for xid 0x%08x: backward-direction operation is not served",
		 rpcrdma2_proc_name(h->proc), rpcrdma2_dir_name(h->direction),
		 h->xid);
	SHIM_STATS_ADD(sc->stats, dropped, 1);
	return -EALREADY;
}

int
sc_hdr_decode(struct svc_rdma_conn *sc, const uint8_t *buf, uint32_t len)
{
	struct rpcrdma2_hdr h2;
	uint32_t xid, vers;
	int ret;

	if (!sc_accepts_v2(sc) || rpcrdma_peek_version(buf, len, &xid, &vers) ||
	    vers != RPCRDMA2_VERSION) {
		ret = rpcrdma_hdr_decode(buf, len, &sc->hdr);
		if (ret == 0 && sc->hdr.proc != RDMA_ERROR)
			sc_first_call(sc, RPCRDMA1_VERSION);
		return ret;
	}

	switch (rpcrdma2_recv_check(buf, len, true, &h2)) {
	case RV2_TAKE:
		rpcrdma2_to_v1(&h2, &sc->hdr);
		if (h2.proc != RDMA2_ERROR)
			sc_first_call(sc, RPCRDMA2_VERSION);
		return 0;
	case RV2_MALFORMED:
		/* Answered RDMA2_ERR_BAD_HEADER by the caller (s4.2.3). */
		rpcrdma2_to_v1(&h2, &sc->hdr);
		return -EBADMSG;
	case RV2_INVALID_OPTION:
		/* s3.1 */
		shim_log(SHIM_LOG_WARN,
			 "server: RDMA2_OPTIONAL of unknown type %u for xid 0x%08x, answering RDMA2_ERR_INVALID_OPTION",
			 h2.opttype, h2.xid);
		sc_send_error(sc, h2.xid, RPCRDMA2_VERSION,
			      RDMA2_ERR_INVALID_OPTION);
		return -EALREADY;
	case RV2_WRONG_DIR:
		return sc_v2_drop(sc, &h2);
	default:
		/* Too short for an XID, or a malformed RDMA2_ERROR (s5.5). */
		rpcrdma2_to_v1(&h2, &sc->hdr);
		return len < RPCRDMA2_PREFIX_LEN ? -EMSGSIZE : -EALREADY;
	}
}

/*
 * Draft s4.2, s4.2.2: the reply's header, RDMA2_MSG or RDMA2_NOMSG of
 * direction REPLY with the lists sc_reply placed (Version One's XDR).
 */
ssize_t
sc_reply_hdr_encode(const struct svc_rdma_conn *sc, void *buf, size_t len,
		    struct rpcrdma_hdr *h)
{
	if (sc->hdr.vers != RPCRDMA2_VERSION)
		return rpcrdma_hdr_encode(buf, len, h);
	return rpcrdma2_encode_v1view(buf, len, h, RDMA2_DIR_REPLY);
}

ssize_t
sc_error_encode(const struct svc_rdma_conn *sc, void *buf, size_t len,
		uint32_t xid, uint32_t vers, uint32_t err)
{
	if (!sc_accepts_v2(sc))
		return rpcrdma_encode_error(buf, len, xid, vers, sc->credits,
					    err);
	/* RFC 8166 s5.5.1: the versions this server speaks, 1..2. */
	if (err == RDMA_ERR_VERS)
		return rpcrdma_encode_err_vers(buf, len, xid, vers, sc->credits,
					       RPCRDMA1_VERSION,
					       RPCRDMA2_VERSION);
	if (vers == RPCRDMA2_VERSION)
		return rpcrdma2_encode_error(buf, len, xid, vers, sc->credits,
					     err);
	return rpcrdma_encode_error(buf, len, xid, vers, sc->credits, err);
}
