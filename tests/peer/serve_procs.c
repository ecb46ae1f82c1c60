/*
 * rdma-peer: the RPC program served (the rpctest program, or --prog and
 * --vers), and the dispatch of a received call to its procedure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "serve.h"

/* Octets the XDR length word of an opaque result stands for. */
static bool_t
xdr_opaque_len_only(XDR *x, void *p)
{
	rpctest_data *d = p;

	return xdr_u_int(x, &d->rpctest_data_len);
}

/* Decode the RPC call in call_mem, run it, reply. */
void
dispatch(struct server *s, struct pconn *c, size_t clen)
{
	const struct opts *o = s->o;
	char credbuf[MAX_AUTH_BYTES], verfbuf[MAX_AUTH_BYTES];
	rpctest_data arg_data, res_data;
	rpctest_source_args sargs;
	rpctest_sink_res sink;
	struct rpc_msg cm, rm;
	xdrproc_t xres = XDRPROC(xdr_void);
	void *res = NULL;
	const char *note = NULL;
	char notebuf[64];
	bool data_result = false;
	size_t rlen;
	unsigned int i;
	XDR x, y;

	memset(&cm, 0, sizeof(cm));
	memset(&rm, 0, sizeof(rm));
	memset(&arg_data, 0, sizeof(arg_data));
	memset(&res_data, 0, sizeof(res_data));
	memset(&sargs, 0, sizeof(sargs));
	memset(&sink, 0, sizeof(sink));
	cm.rm_call.cb_cred.oa_base = credbuf;
	cm.rm_call.cb_verf.oa_base = verfbuf;

	xdrmem_create(&x, (char *)c->call_mem, (u_int)clen, XDR_DECODE);
	if (!xdr_callmsg(&x, &cm) || cm.rm_direction != CALL ||
	    cm.rm_xid != c->hdr.xid) {
		/* s5.5.2: the RPC XID must match the transport header's. */
		out("call_error=%s conn=%u xid=0x%08x", cm.rm_xid != c->hdr.xid ?
		    "xid_mismatch" : "undecodable_rpc", c->number, c->hdr.xid);
		s->protocol_errors++;
		xdr_destroy(&x);
		send_error(c, o, c->hdr.xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
		return;
	}

	rm.rm_xid = cm.rm_xid;
	rm.rm_direction = REPLY;
	rm.rm_reply.rp_stat = MSG_ACCEPTED;
	rm.acpted_rply.ar_verf = _null_auth;
	rm.acpted_rply.ar_stat = SUCCESS;
	if (cm.rm_call.cb_rpcvers != RPC_MSG_VERSION) {
		rm.rm_reply.rp_stat = MSG_DENIED;
		rm.rjcted_rply.rj_stat = RPC_MISMATCH;
		rm.rjcted_rply.rj_vers.low = RPC_MSG_VERSION;
		rm.rjcted_rply.rj_vers.high = RPC_MSG_VERSION;
	} else if (cm.rm_call.cb_prog != o->prog) {
		rm.acpted_rply.ar_stat = PROG_UNAVAIL;
	} else if (cm.rm_call.cb_vers != o->vers) {
		rm.acpted_rply.ar_stat = PROG_MISMATCH;
		rm.acpted_rply.ar_vers.low = o->vers;
		rm.acpted_rply.ar_vers.high = o->vers;
	} else {
		switch (cm.rm_call.cb_proc) {
		case RPCTEST_NULL:
			break;
		case RPCTEST_ECHO:
			if (!xdr_rpctest_data(&x, &arg_data)) {
				rm.acpted_rply.ar_stat = GARBAGE_ARGS;
				break;
			}
			res_data = arg_data;
			xres = XDRPROC(xdr_rpctest_data);
			res = &res_data;
			data_result = true;
			break;
		case RPCTEST_SINK:
			if (!xdr_rpctest_data(&x, &arg_data)) {
				rm.acpted_rply.ar_stat = GARBAGE_ARGS;
				break;
			}
			sink.length = arg_data.rpctest_data_len;
			sink.checksum = checksum(arg_data.rpctest_data_val,
						 arg_data.rpctest_data_len);
			xres = XDRPROC(xdr_rpctest_sink_res);
			res = &sink;
			break;
		case RPCTEST_SOURCE:
			if (!xdr_rpctest_source_args(&x, &sargs)) {
				rm.acpted_rply.ar_stat = GARBAGE_ARGS;
				break;
			}
			if (sargs.length > PEER_REGION / 2) {
				rm.acpted_rply.ar_stat = SYSTEM_ERR;
				break;
			}
			res_data.rpctest_data_len = (u_int)sargs.length;
			res_data.rpctest_data_val = malloc(sargs.length ? sargs.length : 1);
			if (!res_data.rpctest_data_val) {
				rm.acpted_rply.ar_stat = SYSTEM_ERR;
				break;
			}
			pattern_fill(res_data.rpctest_data_val, sargs.length, sargs.seed);
			xres = XDRPROC(xdr_rpctest_data);
			res = &res_data;
			data_result = true;
			break;
		default:
			rm.acpted_rply.ar_stat = PROC_UNAVAIL;
			break;
		}
	}
	xdr_destroy(&x);

	/* The reply header echoes the Write list, unused chunks zeroed. */
	c->rhdr.nwrites = c->hdr.nwrites;
	c->rhdr.nwsegs = c->hdr.nwsegs;
	memcpy(c->rhdr.writes, c->hdr.writes, sizeof(c->hdr.writes[0]) * c->hdr.nwrites);
	for (i = 0; i < c->hdr.nwsegs; i++) {
		c->rhdr.wsegs[i] = c->hdr.wsegs[i];
		c->rhdr.wsegs[i].length = 0;
	}
	if (data_result && rm.acpted_rply.ar_stat == SUCCESS && c->hdr.nwrites &&
	    use_write_chunk(c, &res_data)) {
		xres = XDRPROC(xdr_opaque_len_only);
		snprintf(notebuf, sizeof(notebuf), "write_chunk_used=%u",
			 res_data.rpctest_data_len);
		note = notebuf;
	}
	if (rm.rm_reply.rp_stat == MSG_ACCEPTED && rm.acpted_rply.ar_stat == SUCCESS) {
		rm.acpted_rply.ar_results.proc = xres;
		rm.acpted_rply.ar_results.where = res;
	}

	xdrmem_create(&y, (char *)c->data_mem + PEER_REGION, PEER_REGION, XDR_ENCODE);
	if (!xdr_replymsg(&y, &rm)) {
		out("reply_error=cannot_encode conn=%u xid=0x%08x", c->number, c->hdr.xid);
		xdr_destroy(&y);
		send_error(c, o, c->hdr.xid, RPCRDMA1_VERSION, RDMA_ERR_BADHEADER);
	} else {
		rlen = xdr_getpos(&y);
		xdr_destroy(&y);
		send_reply(s, c, c->data_mem + PEER_REGION, rlen,
			   rm.rm_reply.rp_stat == MSG_ACCEPTED ?
			   accept_stat_name(rm.acpted_rply.ar_stat) : "DENIED", note);
	}

	if (cm.rm_call.cb_proc == RPCTEST_SOURCE)
		free(res_data.rpctest_data_val);
	xdr_free(XDRPROC(xdr_rpctest_data), (char *)&arg_data);
}
