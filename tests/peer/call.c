/*
 * rdma-peer, the call role: connect to a server, run each case on that
 * one connection (call_cases.c builds its message), take its answer apart
 * and judge it against the expectation.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "call.h"
#include "rpcrdma2_xdr.h"

const char *const expect_names[EXP_COUNT] = {
	[EXP_SUCCESS] = "success",
	[EXP_VERS] = "vers",
	[EXP_BADHEADER] = "badheader",
	[EXP_NONE] = "none",
	[EXP_PROG_UNAVAIL] = "prog-unavail",
	[EXP_INVALID_OPTION] = "invalid-option",
	[EXP_GARBAGE_ARGS] = "garbage-args",
	[EXP_ANY] = "any",
};

/* What came back for one case. */
struct answer {
	bool got;
	uint32_t len;
	uint32_t xid, vers, credits, proc;
	bool hdr_ok;			/* RDMA_MSG header well formed */
	bool dir_bad;			/* Version Two: direction not REPLY */
	bool has_err;
	uint32_t err;
	bool has_range;
	uint32_t low, high;
	const char *rpc;		/* RPC outcome, NULL when none */
	bool rpc_xid_ok;
	const char *data;		/* result check, NULL when none */
	bool over_inline;		/* longer than this end may receive */
	unsigned int strays;		/* messages for other XIDs */
	uint64_t reply_used;		/* octets the server put in the Reply chunk */
	uint64_t write_used;		/* octets it put in the Write chunk */
};

/* --keep-chunks: registrations left alone until the connection ends. */
static struct chunk_mem kept_chunks[PEER_MAX_CASES];
static unsigned int nkept_chunks;

int
chunk_alloc(struct pconn *c, struct chunk_mem *cm, uint32_t read_len,
	    uint32_t write_len, uint32_t reply_len)
{
	size_t r = (read_len + 63u) & ~(size_t)63, w = (write_len + 63u) & ~(size_t)63;
	size_t len = r + w + reply_len + 64;
	void *p;

	if (posix_memalign(&p, 4096, len))
		return -ENOMEM;
	memset(p, 0, len);
	cm->mem = p;
	cm->mr = ibv_reg_mr(c->pd, p, len, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!cm->mr) {
		free(p);
		cm->mem = NULL;
		return -ENOMEM;
	}
	cm->read_area = cm->mem;
	cm->read_len = read_len;
	cm->write_area = cm->mem + r;
	cm->write_len = write_len;
	cm->reply_area = cm->mem + r + w;
	cm->reply_len = reply_len;
	return 0;
}

static void
chunk_release(struct chunk_mem *cm, bool keep)
{
	if (!cm->mr)
		return;
	if (keep && nkept_chunks < PEER_MAX_CASES) {
		kept_chunks[nkept_chunks++] = *cm;
	} else {
		ibv_dereg_mr(cm->mr);
		free(cm->mem);
	}
	memset(cm, 0, sizeof(*cm));
}

void
chunk_free(struct chunk_mem *cm)
{
	chunk_release(cm, false);
}

static void
chunk_release_kept(void)
{
	while (nkept_chunks) {
		struct chunk_mem *cm = &kept_chunks[--nkept_chunks];

		ibv_dereg_mr(cm->mr);
		free(cm->mem);
	}
}

/* A segment describing len octets at p of a chunk registration. */
struct rpcrdma_segment
chunk_segment(const struct chunk_mem *cm, const uint8_t *p, uint32_t len)
{
	struct rpcrdma_segment seg = {
		.handle = cm->mr->rkey,
		.length = len,
		.offset = (uintptr_t)p,
	};

	return seg;
}

/* Decode an RDMA_MSG reply's RPC part and check the results. */
static void
decode_rpc_reply(const uint8_t *payload, size_t plen, uint32_t xid,
		 const struct pcase *pc, struct call_io *io, struct answer *a)
{
	struct rpc_msg rm;
	XDR x;

	memset(&rm, 0, sizeof(rm));
	rm.acpted_rply.ar_verf = _null_auth;
	rm.acpted_rply.ar_results.where = io->res;
	rm.acpted_rply.ar_results.proc = io->xres;
	xdrmem_create(&x, (char *)payload, (u_int)plen, XDR_DECODE);
	if (!xdr_replymsg(&x, &rm)) {
		a->rpc = "undecodable";
		xdr_destroy(&x);
		return;
	}
	xdr_destroy(&x);
	a->rpc_xid_ok = rm.rm_xid == xid;
	if (rm.rm_reply.rp_stat != MSG_ACCEPTED) {
		a->rpc = "DENIED";
		return;
	}
	a->rpc = accept_stat_name(rm.acpted_rply.ar_stat);
	if (rm.acpted_rply.ar_stat != SUCCESS)
		return;
	a->data = case_check_results(pc, io);
}

/*
 * The reply's Payload stream: inline (RDMA_MSG) or in the Reply chunk
 * (RDMA_NOMSG), with the data the server wrote to the Write chunk put
 * back after it (the opaque result is the last item, its length word
 * stayed in the stream, s4.4.6), then decoded.
 */
static void
decode_chunked_reply(struct pconn *c, const uint8_t *buf, uint32_t len,
		     uint32_t hxid, const struct pcase *pc, struct call_io *io,
		     struct answer *a)
{
	const struct rpcrdma_hdr *h = &c->hdr;
	const uint8_t *payload = buf + h->hdrlen;
	uint64_t plen = len - h->hdrlen;
	unsigned int i;
	uint8_t *whole;

	if (h->proc == RDMA_NOMSG) {
		if (!io->cm.reply_len || !h->has_reply) {
			a->rpc = "nomsg_without_reply_chunk";
			return;
		}
		for (plen = 0, i = 0; i < h->nreply; i++)
			plen += h->reply[i].length;
		if (plen > io->cm.reply_len) {
			a->rpc = "reply_chunk_overrun";
			return;
		}
		payload = io->cm.reply_area;
		a->reply_used = plen;
	}
	if (io->cm.write_len && h->nwrites) {
		for (i = 0; i < h->writes[0].nsegs; i++)
			a->write_used += h->wsegs[h->writes[0].first + i].length;
		if (a->write_used > io->cm.write_len) {
			a->rpc = "write_chunk_overrun";
			return;
		}
	}
	if (!a->write_used) {
		decode_rpc_reply(payload, plen, hxid, pc, io, a);
		return;
	}
	whole = calloc(1, plen + a->write_used + 4);
	if (!whole) {
		a->rpc = "no_memory";
		return;
	}
	memcpy(whole, payload, plen);
	memcpy(whole + plen, io->cm.write_area, a->write_used);
	decode_rpc_reply(whole, plen + rpcrdma_xdr_roundup((uint32_t)a->write_used),
			 hxid, pc, io, a);
	free(whole);
}

/* Take apart an answer to hxid (received in buf) into a. */
static void
parse_answer(struct pconn *c, const uint8_t *buf, uint32_t len, uint32_t hxid,
	     const struct pcase *pc, struct call_io *io, struct answer *a)
{
	a->got = true;
	a->len = len;
	a->over_inline = len > c->own_recv;
	if (len < RPCRDMA1_PREFIX_LEN) {
		a->proc = UINT32_MAX;
		return;
	}
	a->xid = get32(buf);
	a->vers = get32(buf + 4);
	a->credits = get32(buf + 8);
	a->proc = get32(buf + 12);
	if (a->proc == RDMA_ERROR) {
		/* By hand: the codec takes no header of another version. */
		if (len >= RPCRDMA1_PREFIX_LEN + 4) {
			a->has_err = true;
			a->err = get32(buf + 16);
		}
		if (a->has_err && a->err == RDMA_ERR_VERS &&
		    len >= RPCRDMA1_PREFIX_LEN + 12) {
			a->has_range = true;
			a->low = get32(buf + 20);
			a->high = get32(buf + 24);
		}
		return;
	}
	if (a->vers == RPCRDMA2_VERSION) {
		/* Draft s4.2: the same lists after a direction word. */
		static struct rpcrdma2_hdr h2;

		if (rpcrdma2_hdr_decode(buf, len, &h2) != 0)
			return;
		a->dir_bad = h2.direction != RDMA2_DIR_REPLY;
		c->hdr = h2.chunks;
		c->hdr.xid = h2.xid;
		c->hdr.vers = h2.vers;
		c->hdr.credits = h2.credits;
		c->hdr.proc = h2.proc;
		c->hdr.hdrlen = h2.hdrlen;
	} else if (rpcrdma_hdr_decode(buf, len, &c->hdr) != 0) {
		return;
	}
	a->hdr_ok = true;
	if (a->proc == RDMA_MSG || a->proc == RDMA_NOMSG)
		decode_chunked_reply(c, buf, len, hxid, pc, io, a);
}

/* Whether the answer is the one expected; *why says what differs. */
static bool
answer_expected(const struct answer *a, enum expect e, uint32_t sent_vers,
		const char **why)
{
	*why = NULL;
	if (a->over_inline) {
		*why = "answer_exceeds_inline";
		return false;
	}
	if (a->strays && e != EXP_ANY) {
		*why = "stray_message";
		return false;
	}
	switch (e) {
	case EXP_ANY:
		return true;
	case EXP_NONE:
		if (a->got)
			*why = "unexpected_answer";
		return !a->got;
	default:
		break;
	}
	if (!a->got) {
		*why = "no_answer";
		return false;
	}
	switch (e) {
	case EXP_SUCCESS:
	case EXP_PROG_UNAVAIL:
	case EXP_GARBAGE_ARGS:
		if ((a->proc != RDMA_MSG && a->proc != RDMA_NOMSG) || !a->hdr_ok)
			*why = "not_rdma_msg";
		else if (a->vers != sent_vers)
			*why = "version_not_echoed";	/* draft s5.3 */
		else if (a->dir_bad)
			*why = "direction_not_reply";	/* draft s4.2.2 */
		else if (!a->credits)
			*why = "zero_credits";
		else if (!a->rpc || !a->rpc_xid_ok)
			*why = "bad_rpc_reply";
		else if (strcmp(a->rpc, e == EXP_SUCCESS ? "SUCCESS" :
				 e == EXP_PROG_UNAVAIL ? "PROG_UNAVAIL" : "GARBAGE_ARGS"))
			*why = "rpc_status";
		else if (a->data && strcmp(a->data, "ok"))
			*why = "data_mismatch";
		break;
	case EXP_VERS:
		if (a->proc != RDMA_ERROR || !a->has_err || a->err != RDMA_ERR_VERS)
			*why = "not_err_vers";
		else if (!a->has_range || a->low != 1 || a->high < 1 || a->high > 2)
			*why = "bad_version_range";
		else if (a->vers != sent_vers)
			*why = "version_not_echoed";
		break;
	case EXP_BADHEADER:
		if (a->proc != RDMA_ERROR || !a->has_err || a->err != RDMA_ERR_BADHEADER)
			*why = "not_badheader";
		else if (a->vers != sent_vers)
			*why = "version_not_echoed";
		break;
	case EXP_INVALID_OPTION:
		if (a->proc != RDMA_ERROR || !a->has_err ||
		    a->err != RDMA2_ERR_INVALID_OPTION)
			*why = "not_invalid_option";
		else if (a->vers != RPCRDMA2_VERSION)
			*why = "version_not_echoed";
		break;
	default:
		break;
	}
	return *why == NULL;
}

static void
client_cm_events(struct pconn *c)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(c->ech, &ev) == 0) {
		print_event(ev);
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			if (!c->closed)
				out("disconnected by=server event=%s",
				    rdma_event_str(ev->event));
			c->closed = true;
			c->dead = true;
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

/*
 * The next received message before the deadline: 1 (in *idx, *len), 0 when
 * none came, -1 when the connection is gone or a signal came.
 */
static int
wait_recv(struct pconn *c, int64_t deadline, uint32_t *idx, uint32_t *len)
{
	struct ibv_wc wc;
	int n;

	for (;;) {
		if (pend_pop(c, idx, len))
			return 1;
		if (c->dead)
			return -1;
		n = ibv_poll_cq(c->cq, 1, &wc);
		if (n < 0) {
			c->dead = true;
			return -1;
		}
		if (n == 1) {
			(void)take_wc(c, &wc, 0);
			continue;
		}
		client_cm_events(c);
		if (stop_signal)
			return -1;
		if (now_ms() >= deadline)
			return 0;
		nap();
	}
}

static void
free_io(struct call_io *io, bool keep_chunks)
{
	chunk_release(&io->cm, keep_chunks);
	free(io->data.rpctest_data_val);
	xdr_free(XDRPROC(xdr_rpctest_data), (char *)&io->res_data);
}

/* Run one case; prints its line and returns whether it went as expected. */
static bool
run_case(struct pconn *c, const struct opts *o, const struct pcase *pc,
	 uint32_t xid)
{
	struct call_io io;
	struct answer a;
	struct line l;
	uint32_t sent_vers = RPCRDMA1_VERSION, idx, len;
	int64_t started, deadline;
	const char *why;
	bool ok;
	size_t n;
	int st, r;

	memset(&io, 0, sizeof(io));
	memset(&a, 0, sizeof(a));
	memset(&l, 0, sizeof(l));
	line_add(&l, "case=%s expect=%s xid=0x%08x", pc->text,
		 expect_names[pc->expect], xid);

	n = build_case(c, o, pc, xid, &io, &sent_vers);
	if (!n) {
		out("%s result=failed why=cannot_build", l.buf);
		free_io(&io, o->keep_chunks);
		return false;
	}
	line_add(&l, " sent=%zu", n);
	if (n > min_u32(c->own_send, c->peer_pd.recv_size))
		line_add(&l, " sent_over_inline=%u", min_u32(c->own_send, c->peer_pd.recv_size));

	started = now_ms();
	st = send_sync(c, (uint32_t)n, bound(o->answer_ms));
	if (st != IBV_WC_SUCCESS) {
		out("%s answer=send_failed status=\"%s\" result=failed why=send_failed",
		    l.buf, wc_status_name(st));
		free_io(&io, o->keep_chunks);
		return false;
	}

	deadline = bound(pc->expect == EXP_NONE ? o->quiet_ms : o->answer_ms);
	for (;;) {
		r = wait_recv(c, deadline, &idx, &len);
		if (r <= 0)
			break;
		{
			const uint8_t *buf = c->recv_mem + (size_t)idx * c->recv_size;

			if (len >= 4 && get32(buf) != xid) {
				out("stray xid=0x%08x len=%u during=%s", get32(buf), len,
				    pc->text);
				a.strays++;
				if (post_recv(c, idx))
					break;
				continue;
			}
			parse_answer(c, buf, len, xid, pc, &io, &a);
		}
		(void)post_recv(c, idx);
		break;
	}

	if (!a.got) {
		if (c->dead)
			line_add(&l, " answer=disconnected");
		else
			line_add(&l, " answer=none waited_ms=%lld",
				 (long long)(now_ms() - started));
	} else if (a.proc == UINT32_MAX) {
		line_add(&l, " answer=runt len=%u", a.len);
	} else {
		line_add(&l, " answer=%s len=%u xid=ok vers=%u credits=%u",
			 rpcrdma_proc_name(a.proc), a.len, a.vers, a.credits);
		if (a.has_err)
			line_add(&l, " err=%s", a.err == RDMA_ERR_VERS ? "ERR_VERS" :
				 a.err == RDMA_ERR_BADHEADER ? "BADHEADER" :
				 a.err == RDMA2_ERR_INVALID_OPTION ? "INVALID_OPTION" :
				 "unknown");
		if (a.has_range)
			line_add(&l, " low=%u high=%u", a.low, a.high);
		if (a.proc == RDMA_MSG && !a.hdr_ok)
			line_add(&l, " header=malformed");
		if (a.dir_bad)
			line_add(&l, " direction=not_reply");
		if (a.rpc)
			line_add(&l, " rpc=%s%s", a.rpc, a.rpc_xid_ok ? "" : " rpc_xid=mismatch");
		if (a.data)
			line_add(&l, " data=%s", a.data);
		if (pc->c_reply)
			line_add(&l, " reply_chunk_used=%" PRIu64, a.reply_used);
		if (pc->c_write)
			line_add(&l, " write_chunk_used=%" PRIu64, a.write_used);
		if (a.over_inline)
			line_add(&l, " violation=answer_exceeds_inline limit=%u", c->own_recv);
	}
	/* The stray lines above say what came; they fail nothing here. */
	if (o->late_ok)
		a.strays = 0;
	ok = answer_expected(&a, pc->expect, sent_vers, &why);
	if (c->dead && pc->expect != EXP_ANY && ok && !a.got) {
		ok = false;
		why = "disconnected";
	}
	if (ok)
		out("%s result=ok", l.buf);
	else
		out("%s result=failed why=%s", l.buf, why ? why : "disconnected");
	free_io(&io, o->keep_chunks);
	return ok;
}

struct pconn *
client_connect(const struct opts *o)
{
	struct sockaddr_storage ss;
	struct rdma_conn_param param;
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type want;
	uint8_t pdata[16];
	char pname[32];
	struct pconn *c;
	int ret, step;

	if (!make_sockaddr(o->addr, o->port, &ss))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	own_sizes(o, &c->own_send, &c->own_recv);
	rpcrdma_cmp_decode(NULL, 0, &c->peer_pd);

	c->ech = rdma_create_event_channel();
	if (!c->ech) {
		out("connect=failed step=event_channel error=\"%s\"", strerror(errno));
		goto fail;
	}
	if (set_nonblock(c->ech->fd) ||
	    rdma_create_id(c->ech, &c->id, c, RDMA_PS_TCP)) {
		c->id = NULL;
		out("connect=failed step=create_id error=\"%s\"", strerror(errno));
		goto fail;
	}
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&ss,
			      left_ms(bound(o->answer_ms)) + 1)) {
		out("connect=failed step=resolve_addr error=\"%s\"", strerror(errno));
		goto fail;
	}

	for (step = 0; step < 3; step++) {
		want = step == 0 ? RDMA_CM_EVENT_ADDR_RESOLVED :
		       step == 1 ? RDMA_CM_EVENT_ROUTE_RESOLVED :
				   RDMA_CM_EVENT_ESTABLISHED;
		ret = wait_cm_event(c->ech, run_deadline, &ev);
		if (ret) {
			out("connect=failed waiting_for=%s error=\"%s\"",
			    rdma_event_str(want), strerror(-ret));
			goto fail;
		}
		if (ev->event != want) {
			out("connect=%s event=%s status=%d",
			    ev->event == RDMA_CM_EVENT_REJECTED ? "rejected" : "failed",
			    rdma_event_str(ev->event), ev->status);
			rdma_ack_cm_event(ev);
			goto fail;
		}
		if (want == RDMA_CM_EVENT_ESTABLISHED) {
			c->peer_pd_valid = report_pdata("server",
							ev->param.conn.private_data,
							ev->param.conn.private_data_len,
							&c->peer_pd);
			/*
			 * What the accept granted, against what we offered.
			 * The event gives the accept's values from our side:
			 * its initiator_depth is the Reads we may issue (the
			 * server's responder resources), and the other way.
			 */
			out("server_accept server_initiator_depth=%u server_responder_resources=%u offered_initiator_depth=%u offered_responder_resources=%u",
			    ev->param.conn.responder_resources,
			    ev->param.conn.initiator_depth, c->initiator_depth,
			    c->responder_resources);
		}
		rdma_ack_cm_event(ev);

		if (step == 0) {
			if (rdma_resolve_route(c->id, left_ms(bound(o->answer_ms)) + 1)) {
				out("connect=failed step=resolve_route error=\"%s\"",
				    strerror(errno));
				goto fail;
			}
		} else if (step == 1) {
			ret = conn_setup(c);
			if (ret) {
				out("connect=failed step=setup error=\"%s\"", strerror(-ret));
				goto fail;
			}
			memset(&param, 0, sizeof(param));
			param.private_data_len = build_pdata(o, pdata);
			param.private_data = param.private_data_len ? pdata : NULL;
			if (o->rd_init >= 0) {
				c->initiator_depth = (uint8_t)o->rd_init;
				c->responder_resources = (uint8_t)o->rd_resp;
			}
			param.responder_resources = c->responder_resources;
			param.initiator_depth = c->initiator_depth;
			param.retry_count = 6;
			param.rnr_retry_count = 6;
			if (rdma_connect(c->id, &param)) {
				out("connect=failed step=connect error=\"%s\"", strerror(errno));
				goto fail;
			}
		}
	}
	c->established = true;
	{
		char a[INET6_ADDRSTRLEN];
		unsigned int port;

		sa_format((struct sockaddr *)&ss, a, sizeof(a), &port);
		out("connected addr=%s port=%u pdata=%s send_max=%u recv_max=%u",
		    a, port, pdata_name(o, pname, sizeof(pname)),
		    min_u32(c->own_send, c->peer_pd.recv_size),
		    min_u32(c->peer_pd.send_size, c->own_recv));
	}
	return c;

fail:
	conn_free(c);
	return NULL;
}

int
run_call(const struct opts *o)
{
	struct pcase cases[PEER_MAX_CASES];
	unsigned int nok = 0, nfail = 0, notrun = 0;
	struct pconn *c;
	uint32_t xid;
	int i;

	for (i = 0; i < o->ncases; i++)
		parse_case(o->cases[i], &cases[i]);

	c = client_connect(o);
	if (!c) {
		out("summary cases=%d ok=0 failed=0 not_run=%d result=failed why=no_connection",
		    o->ncases, o->ncases);
		return EX_SETUP;
	}
	xid = (uint32_t)getpid() ^ (uint32_t)time(NULL) ^ 0x10000000u;
	for (i = 0; i < o->ncases; i++) {
		if (c->dead || stop_signal) {
			out("case=%s result=not_run", cases[i].text);
			notrun++;
			continue;
		}
		if (run_case(c, o, &cases[i], xid++))
			nok++;
		else
			nfail++;
	}

	if (!c->dead) {
		struct rdma_cm_event *ev;
		int64_t deadline;

		if (o->linger_ms && !stop_signal) {
			struct timespec t = {
				.tv_sec = o->linger_ms / 1000,
				.tv_nsec = (long)(o->linger_ms % 1000) * 1000000,
			};

			nanosleep(&t, NULL);
		}
		deadline = bound(2000);
		rdma_disconnect(c->id);
		while (wait_cm_event(c->ech, deadline, &ev) == 0) {
			bool done = ev->event == RDMA_CM_EVENT_DISCONNECTED;

			rdma_ack_cm_event(ev);
			if (done)
				break;
		}
	}
	chunk_release_kept();
	conn_free(c);
	out("summary cases=%d ok=%u failed=%u not_run=%u result=%s%s",
	    o->ncases, nok, nfail, notrun, nfail || notrun ? "failed" : "ok",
	    nfail || notrun ? " why=case_failed" : "");
	return nfail || notrun ? EX_FAIL : EX_OK;
}
