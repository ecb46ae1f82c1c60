/*
 * rdma-peer, the serve role: listen, answer each connection request as
 * the serve case says, take each connection's completions and serve what
 * arrived (serve_msg.c), report the end of each connection and the
 * summary.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* The serve cases as the command line names them. */
static const char *const serve_case_names[] = {
	[SV_SILENT] = "silent",
	[SV_REJECT] = "reject",
	[SV_ACCEPT] = "accept",
	[SV_RKEY] = "rkey-after-reply",
	[SV_DROP_FIRST] = "drop-first",
	[SV_LATE_FIRST] = "late-first",
	[SV_LATE_MANY] = "late-many",
	[SV_INV_FIRST] = "inv-first",
};
#define NSERVE_CASES (sizeof(serve_case_names) / sizeof(serve_case_names[0]))

/* Take every completion of c, then serve what was received. */
static void
conn_service(struct server *s, struct pconn *c)
{
	struct ibv_wc wc[16];
	struct ibv_cq *cq;
	void *ctx;
	uint32_t idx, len;
	unsigned int granted = s->o->credits ? s->o->credits : 1;
	int n, k;

	if (c->closed)
		return;
	while (ibv_get_cq_event(c->cch, &cq, &ctx) == 0)
		ibv_ack_cq_events(cq, 1);
	if (ibv_req_notify_cq(c->cq, 0))
		c->dead = true;
	do {
		n = ibv_poll_cq(c->cq, 16, wc);
		for (k = 0; k < n; k++)
			(void)take_wc(c, &wc[k], 0);
	} while (n > 0);
	if (n < 0)
		c->dead = true;

	/* s4.3.1: never more calls outstanding than credits granted. */
	if (c->pend_count > granted) {
		out("violation=credits_exceeded conn=%u outstanding=%u granted=%u",
		    c->number, c->pend_count, granted);
		s->violations++;
	}
	while (!c->dead && pend_pop(c, &idx, &len))
		serve_message(s, c, idx, len);
	if (c->dead)
		conn_kill(c);
}

static struct pconn *
conn_of_id(struct server *s, const struct rdma_cm_id *id)
{
	unsigned int i;

	for (i = 0; i < PEER_MAX_CONNS; i++)
		if (s->conns[i] && s->conns[i]->id == id)
			return s->conns[i];
	return NULL;
}

/* A connection request, answered according to the case; acks ev. */
static void
on_connect_request(struct server *s, struct rdma_cm_event *ev)
{
	const struct opts *o = s->o;
	struct rdma_cm_id *id = ev->id;
	struct rdma_conn_param param;
	char a[INET6_ADDRSTRLEN];
	uint8_t pdata[16];
	unsigned int port, i;
	struct pconn *c = NULL;
	int ret;

	s->requests++;
	sa_format(rdma_get_peer_addr(id), a, sizeof(a), &port);
	out("connect_request n=%u from=%s port=%u initiator_depth=%u responder_resources=%u",
	    s->requests, a, port, ev->param.conn.initiator_depth,
	    ev->param.conn.responder_resources);

	if (s->sc == SV_SILENT) {
		struct rpcrdma_cm_pdata pd;

		(void)report_pdata("client", ev->param.conn.private_data,
				   ev->param.conn.private_data_len, &pd);
		rdma_ack_cm_event(ev);
		if (s->nheld < PEER_MAX_HELD) {
			/* Neither accepted nor rejected: the id is kept as it is. */
			s->held[s->nheld++] = id;
			out("connect_request=ignored n=%u", s->requests);
		} else {
			rdma_reject(id, NULL, 0);
			rdma_destroy_id(id);
			out("connect_request=rejected n=%u reason=too_many_held", s->requests);
		}
		return;
	}
	if (s->sc == SV_REJECT) {
		struct rpcrdma_cm_pdata pd;

		(void)report_pdata("client", ev->param.conn.private_data,
				   ev->param.conn.private_data_len, &pd);
		ret = rdma_reject(id, NULL, 0);
		rdma_ack_cm_event(ev);
		rdma_destroy_id(id);
		s->rejected++;
		out("connect_request=rejected n=%u%s", s->requests, ret ? " reject=failed" : "");
		return;
	}

	for (i = 0; i < PEER_MAX_CONNS; i++)
		if (!s->conns[i])
			break;
	if (i < PEER_MAX_CONNS)
		c = calloc(1, sizeof(*c));
	if (!c) {
		out("connect_request=rejected n=%u reason=too_many_connections", s->requests);
		goto out_reject;
	}
	c->id = id;
	id->context = c;
	c->number = s->requests;
	own_sizes(o, &c->own_send, &c->own_recv);
	c->peer_pd_valid = report_pdata("client", ev->param.conn.private_data,
					ev->param.conn.private_data_len, &c->peer_pd);
	ret = conn_setup(c);
	if (ret) {
		out("connect_request=rejected n=%u reason=setup error=\"%s\"", s->requests,
		    strerror(-ret));
		goto out_reject;
	}
	/*
	 * Reads we may issue are bounded by what the client can answer.  The
	 * request's values are seen from our side: its initiator_depth is
	 * the Reads the client answers, its responder_resources the Reads it
	 * issues (a Linux client: 0).
	 */
	if (c->initiator_depth > ev->param.conn.initiator_depth)
		c->initiator_depth = ev->param.conn.initiator_depth;
	if (c->responder_resources > ev->param.conn.responder_resources)
		c->responder_resources = ev->param.conn.responder_resources;

	memset(&param, 0, sizeof(param));
	param.private_data_len = build_pdata(o, pdata);
	param.private_data = param.private_data_len ? pdata : NULL;
	param.initiator_depth = c->initiator_depth;
	param.responder_resources = c->responder_resources;
	param.retry_count = 6;
	/* The Linux server's 0 keeps a client's missing receive visible. */
	param.rnr_retry_count = o->old_kernel ? 0 : 6;
	if (rdma_accept(id, &param)) {
		out("connect_request=rejected n=%u reason=accept_failed error=\"%s\"",
		    s->requests, strerror(errno));
		goto out_reject;
	}
	rdma_ack_cm_event(ev);
	s->conns[i] = c;
	s->accepted++;
	{
		char pn[32];

		out("accepted conn=%u pdata=%s credits=%u send_max=%u recv_max=%u initiator_depth=%u responder_resources=%u",
		    c->number, pdata_name(o, pn, sizeof(pn)), o->credits,
		    min_u32(c->own_send, c->peer_pd.recv_size),
		    min_u32(c->peer_pd.send_size, c->own_recv), c->initiator_depth,
		    c->responder_resources);
	}
	return;

out_reject:
	rdma_reject(id, NULL, 0);
	rdma_ack_cm_event(ev);
	if (c) {
		c->id = NULL;
		if (c->qp) {
			rdma_destroy_qp(id);
			c->qp = NULL;
		}
		conn_free(c);
	}
	rdma_destroy_id(id);
}

static void
conn_closed(struct server *s, struct pconn *c, const char *event)
{
	unsigned int i;

	if (c->late.pending) {
		if (c->late.have_write)
			out("late_write=untested reason=no_later_call conn=%u of_xid=0x%08x",
			    c->number, c->late.xid);
		if (c->late.have_read)
			out("late_read=untested reason=no_later_call conn=%u of_xid=0x%08x",
			    c->number, c->late.xid);
	}
	if (s->sc == SV_LATE_MANY)
		late_many_closed(c);
	out("disconnected conn=%u calls=%u event=%s", c->number, c->calls, event);
	c->closed = true;
	s->closed++;
	for (i = 0; i < PEER_MAX_CONNS; i++)
		if (s->conns[i] == c)
			s->conns[i] = NULL;
	conn_free(c);
}

static void
server_cm_events(struct server *s)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(s->ech, &ev) == 0) {
		enum rdma_cm_event_type type = ev->event;
		struct pconn *c;

		print_event(ev);
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			on_connect_request(s, ev);	/* acks ev */
			continue;
		}
		c = ev->id != s->lid ? conn_of_id(s, ev->id) : NULL;
		rdma_ack_cm_event(ev);
		if (!c)
			continue;
		switch (type) {
		case RDMA_CM_EVENT_ESTABLISHED:
			c->established = true;
			out("established conn=%u", c->number);
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_REJECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			/* Serve what arrived before the end, then close. */
			conn_service(s, c);
			if (!c->disconnecting) {
				c->disconnecting = true;
				rdma_disconnect(c->id);
			}
			conn_closed(s, c, rdma_event_str(type));
			break;
		default:
			break;
		}
	}
}

static bool
server_done(const struct server *s)
{
	switch (s->sc) {
	case SV_SILENT:
		return false;
	case SV_REJECT:
		return s->rejected >= s->o->connections;
	default:
		break;
	}
	return s->closed >= s->o->connections;
}

static int
write_ready(const char *path, unsigned int port)
{
	size_t len = strlen(path) + sizeof(".tmp");
	char *tmp = malloc(len);
	FILE *f;
	bool ok;

	if (!tmp)
		return -1;
	snprintf(tmp, len, "%s.tmp", path);
	f = fopen(tmp, "w");
	ok = f && fprintf(f, "ready %u\n", port) > 0;
	ok = f && fclose(f) == 0 && ok;
	ok = ok && rename(tmp, path) == 0;
	if (!ok)
		warnmsg("cannot write %s: %s", path, strerror(errno));
	free(tmp);
	return ok ? 0 : -1;
}

int
run_serve(const struct opts *o)
{
	struct server s;
	struct sockaddr_storage ss;
	struct pollfd pfd[1 + PEER_MAX_CONNS];
	bool timed_out = false, ok;
	const char *why = NULL;
	unsigned int i, port;
	char a[INET6_ADDRSTRLEN], pn[32];
	int k;

	memset(&s, 0, sizeof(s));
	s.o = o;
	for (k = 0; k < (int)NSERVE_CASES; k++)
		if (strcmp(o->cases[0], serve_case_names[k]) == 0)
			break;
	if (k == (int)NSERVE_CASES)
		usage_error("unknown serve case", o->cases[0]);
	s.sc = (enum serve_case)k;

	if (!make_sockaddr(o->addr, o->port, &ss))
		return EX_SETUP;
	s.ech = rdma_create_event_channel();
	if (!s.ech || set_nonblock(s.ech->fd) ||
	    rdma_create_id(s.ech, &s.lid, NULL, RDMA_PS_TCP)) {
		out("listen=failed step=create_id error=\"%s\"", strerror(errno));
		if (s.ech)
			rdma_destroy_event_channel(s.ech);
		return EX_SETUP;
	}
	if (ss.ss_family == AF_INET6) {
		int one = 1;

		(void)rdma_set_option(s.lid, RDMA_OPTION_ID, RDMA_OPTION_ID_AFONLY,
				      &one, sizeof(one));
	}
	if (rdma_bind_addr(s.lid, (struct sockaddr *)&ss) || rdma_listen(s.lid, 16)) {
		out("listen=failed step=bind error=\"%s\"", strerror(errno));
		rdma_destroy_id(s.lid);
		rdma_destroy_event_channel(s.ech);
		return EX_SETUP;
	}
	sa_format(rdma_get_local_addr(s.lid), a, sizeof(a), &port);
	port = ntohs(rdma_get_src_port(s.lid));
	out("listening addr=%s port=%u case=%s pdata=%s credits=%u device=%s", a, port,
	    serve_case_names[s.sc], pdata_name(o, pn, sizeof(pn)), o->credits,
	    s.lid->verbs ? ibv_get_device_name(s.lid->verbs->device) : "any");
	if (o->ready && write_ready(o->ready, port)) {
		rdma_destroy_id(s.lid);
		rdma_destroy_event_channel(s.ech);
		return EX_SETUP;
	}

	while (!stop_signal && !server_done(&s)) {
		unsigned int nfd = 0;
		int left = left_ms(run_deadline);

		if (!left) {
			timed_out = true;
			break;
		}
		pfd[nfd].fd = s.ech->fd;
		pfd[nfd++].events = POLLIN;
		for (i = 0; i < PEER_MAX_CONNS; i++) {
			if (!s.conns[i])
				continue;
			pfd[nfd].fd = s.conns[i]->cch->fd;
			pfd[nfd++].events = POLLIN;
		}
		(void)poll(pfd, nfd, left < 500 ? left : 500);
		server_cm_events(&s);
		for (i = 0; i < PEER_MAX_CONNS; i++)
			if (s.conns[i])
				conn_service(&s, s.conns[i]);
	}

	for (i = 0; i < PEER_MAX_CONNS; i++) {
		if (!s.conns[i])
			continue;
		if (!s.conns[i]->disconnecting)
			rdma_disconnect(s.conns[i]->id);
		conn_closed(&s, s.conns[i], "local_end");
		s.closed--;	/* not closed by the client */
	}
	for (i = 0; i < s.nheld; i++)
		rdma_destroy_id(s.held[i]);
	rdma_destroy_id(s.lid);
	rdma_destroy_event_channel(s.ech);

	switch (s.sc) {
	case SV_SILENT:
		if (!s.requests)
			why = "no_connect_request";
		break;
	case SV_REJECT:
		if (!s.rejected)
			why = "no_connect_request";
		else if (timed_out)
			why = "timeout";
		break;
	default:
		if (!s.accepted)
			why = "no_connection";
		else if (s.violations)
			why = "violation";
		else if (s.protocol_errors)
			why = "protocol_error";
		else if (s.late_exposed)
			why = "memory_still_exposed";
		else if (timed_out)
			why = "timeout";
		break;
	}
	if (s.sc == SV_RKEY && !s.late_tested)
		out("late_write=untested late_read=untested reason=%s",
		    s.chunks_offered ? "no_later_call" : "no_chunk_offered");
	ok = why == NULL;
	out("summary case=%s requests=%u accepted=%u rejected=%u closed=%u calls=%u violations=%u protocol_errors=%u chunks_offered=%u err_chunks=%u negotiations=%u late_tested=%u late_exposed=%u%s result=%s%s%s",
	    serve_case_names[s.sc], s.requests, s.accepted, s.rejected, s.closed,
	    s.calls, s.violations, s.protocol_errors, s.chunks_offered,
	    s.err_chunks, s.negotiations, s.late_tested, s.late_exposed,
	    stop_signal ? " stopped_by=signal" : "",
	    ok ? "ok" : "failed", ok ? "" : " why=", ok ? "" : why);
	return ok ? EX_OK : EX_FAIL;
}
