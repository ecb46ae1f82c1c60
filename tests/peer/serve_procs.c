/*
 * rdma-peer: the RPC program served (the rpctest program, or --prog and
 * --vers), and the dispatch of a received call to its procedure.
 *
 * To serve another procedure: a function that decodes its arguments from
 * the call and fills in its result (struct proc_run), and its row in
 * served_procs.  A result that may go in a Write chunk (an opaque, RFC
 * 8166 s4.4.6) is put in run->data with run->data_result set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "serve.h"

/* One call being run: its arguments and its result. */
struct proc_run {
	rpctest_data args;		/* ECHO and SINK arguments */
	rpctest_source_args sargs;	/* SOURCE arguments */
	rpctest_data data;		/* an opaque result */
	bool data_owned;		/* data allocated here, freed after the reply */
	bool data_result;		/* the result is data: a Write chunk may take it */
	rpctest_sink_res sink;		/* SINK result */
	xdrproc_t xres;			/* the result's encoder, and the result */
	void *res;
};

/* Decode the arguments from x, run, fill in the result: the RPC status. */
typedef enum accept_stat (*proc_fn)(XDR *x, struct proc_run *run);

static enum accept_stat
proc_null(XDR *x, struct proc_run *run)
{
	return SUCCESS;
}

static enum accept_stat
proc_echo(XDR *x, struct proc_run *run)
{
	if (!xdr_rpctest_data(x, &run->args))
		return GARBAGE_ARGS;
	run->data = run->args;
	run->xres = XDRPROC(xdr_rpctest_data);
	run->res = &run->data;
	run->data_result = true;
	return SUCCESS;
}

static enum accept_stat
proc_sink(XDR *x, struct proc_run *run)
{
	if (!xdr_rpctest_data(x, &run->args))
		return GARBAGE_ARGS;
	run->sink.length = run->args.rpctest_data_len;
	run->sink.checksum = checksum(run->args.rpctest_data_val,
				      run->args.rpctest_data_len);
	run->xres = XDRPROC(xdr_rpctest_sink_res);
	run->res = &run->sink;
	return SUCCESS;
}

static enum accept_stat
proc_source(XDR *x, struct proc_run *run)
{
	if (!xdr_rpctest_source_args(x, &run->sargs))
		return GARBAGE_ARGS;
	if (run->sargs.length > PEER_REGION / 2)
		return SYSTEM_ERR;
	run->data.rpctest_data_len = (u_int)run->sargs.length;
	run->data.rpctest_data_val = malloc(run->sargs.length ? run->sargs.length : 1);
	if (!run->data.rpctest_data_val)
		return SYSTEM_ERR;
	run->data_owned = true;
	pattern_fill(run->data.rpctest_data_val, run->sargs.length, run->sargs.seed);
	run->xres = XDRPROC(xdr_rpctest_data);
	run->res = &run->data;
	run->data_result = true;
	return SUCCESS;
}

/* The procedures served, by number; any other gets PROC_UNAVAIL. */
static const struct served_proc {
	uint32_t proc;
	proc_fn run;
} served_procs[] = {
	{ RPCTEST_NULL, proc_null },
	{ RPCTEST_ECHO, proc_echo },
	{ RPCTEST_SINK, proc_sink },
	{ RPCTEST_SOURCE, proc_source },
};

static proc_fn
find_proc(uint32_t proc)
{
	size_t i;

	for (i = 0; i < sizeof(served_procs) / sizeof(served_procs[0]); i++)
		if (served_procs[i].proc == proc)
			return served_procs[i].run;
	return NULL;
}

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
	struct proc_run run;
	struct rpc_msg cm, rm;
	const char *note = NULL;
	char notebuf[64];
	proc_fn fn;
	size_t rlen;
	unsigned int i;
	XDR x, y;

	memset(&cm, 0, sizeof(cm));
	memset(&rm, 0, sizeof(rm));
	memset(&run, 0, sizeof(run));
	run.xres = XDRPROC(xdr_void);
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
		fn = find_proc(cm.rm_call.cb_proc);
		rm.acpted_rply.ar_stat = fn ? fn(&x, &run) : PROC_UNAVAIL;
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
	if (run.data_result && rm.acpted_rply.ar_stat == SUCCESS && c->hdr.nwrites &&
	    use_write_chunk(c, &run.data)) {
		run.xres = XDRPROC(xdr_opaque_len_only);
		snprintf(notebuf, sizeof(notebuf), "write_chunk_used=%u",
			 run.data.rpctest_data_len);
		note = notebuf;
	}
	if (rm.rm_reply.rp_stat == MSG_ACCEPTED && rm.acpted_rply.ar_stat == SUCCESS) {
		rm.acpted_rply.ar_results.proc = run.xres;
		rm.acpted_rply.ar_results.where = run.res;
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

	if (run.data_owned)
		free(run.data.rpctest_data_val);
	xdr_free(XDRPROC(xdr_rpctest_data), (char *)&run.args);
}
