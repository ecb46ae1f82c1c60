/*
 * rdma-peer: the call cases.  A case is one message sent on the
 * connection, and the answer it expects by default.
 *
 * To add a case:
 *   - a C_ value in call.h and its row in case_descs below: name,
 *     default expectation, argument, whether it takes chunks (+read,
 *     +reply) and a Write chunk (+write);
 *   - a valid call to a new procedure: its arguments and result decoder
 *     in case_rpc_call(), its data check in case_check_results();
 *   - a message the protocol forbids: its header change, or the whole
 *     message, in build_case();
 *   - the list in usage() (options.c) and in tests/README.md, and the
 *     usage errors of parse_case() that name the cases taking chunks.
 * A new expectation (CASE=EXPECT) goes to enum expect (call.h),
 * expect_names and answer_expected() (call.c).
 */
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "pattern.h"
#include "rpcrdma2_xdr.h"

/* A program number nobody registers (noprog). */
#define PEER_NOPROG 0x3ffffffeu

/* What follows NAME: in a case. */
enum case_arg { ARG_NONE, ARG_SIZE, ARG_OPT_NUMBER, ARG_OPT_WORD };

static const struct case_desc {
	const char *name;
	enum expect expect;
	enum case_arg arg;
	bool chunks;		/* a valid call that may offer chunks */
	bool write;		/* and a Write chunk for its result */
} case_descs[C_COUNT] = {
	[C_NULL] = { "null", EXP_SUCCESS, ARG_NONE, true, false },
	[C_ECHO] = { "echo", EXP_SUCCESS, ARG_SIZE, true, true },
	[C_SINK] = { "sink", EXP_SUCCESS, ARG_SIZE, true, false },
	[C_SOURCE] = { "source", EXP_SUCCESS, ARG_SIZE, true, true },
	[C_NOPROG] = { "noprog", EXP_PROG_UNAVAIL, ARG_NONE, true, false },
	[C_BADVERS] = { "badvers", EXP_VERS, ARG_OPT_NUMBER, false, false },
	[C_MSGP] = { "msgp", EXP_BADHEADER, ARG_NONE, false, false },
	[C_DONE] = { "done", EXP_BADHEADER, ARG_NONE, false, false },
	[C_BADPROC] = { "badproc", EXP_BADHEADER, ARG_OPT_NUMBER, false, false },
	[C_BADCHUNK] = { "badchunk", EXP_BADHEADER, ARG_OPT_WORD, false, false },
	[C_XIDMISMATCH] = { "xidmismatch", EXP_BADHEADER, ARG_NONE, false, false },
	[C_SHORT] = { "short", EXP_NONE, ARG_NONE, false, false },
	[C_RDMAERROR] = { "rdmaerror", EXP_NONE, ARG_NONE, false, false },
	[C_BIGREAD] = { "bigread", EXP_BADHEADER, ARG_OPT_NUMBER, false, false },
	[C_NFS4READ] = { "nfs4read", EXP_SUCCESS, ARG_SIZE, true, true },
	[C_BADPOS] = { "badpos", EXP_GARBAGE_ARGS, ARG_NONE, false, false },
	[C_OPT] = { "opt", EXP_INVALID_OPTION, ARG_OPT_NUMBER, false, false },
	[C_OPTCALL] = { "optcall", EXP_INVALID_OPTION, ARG_NONE, false, false },
	[C_OPTREPLY] = { "optreply", EXP_NONE, ARG_NONE, false, false },
	[C_V2BACK] = { "v2back", EXP_NONE, ARG_NONE, false, false },
	[C_V2MISMATCH] = { "v2mismatch", EXP_BADHEADER, ARG_NONE, false, false },
	[C_V2TRUNC] = { "v2trunc", EXP_BADHEADER, ARG_OPT_NUMBER, false, false },
};

/* The default argument of a case taking an optional number. */
static uint32_t
default_num(enum case_kind k)
{
	switch (k) {
	case C_BIGREAD:
		return 1u << 30;
	case C_BADVERS:
		return 3;	/* a version no server here speaks */
	case C_OPT:
		return 0x77;
	case C_V2TRUNC:
		return 20;
	default:
		return 7;
	}
}

/* badchunk's argument, by enum badchunk. */
static const char *const badchunk_names[] = { "disc", "trunc", "count" };

/* NAME[:ARG][+CHUNK...][=EXPECT] */
void
parse_case(const char *text, struct pcase *pc)
{
	char buf[128], *ex, *flags, *arg;
	int k;

	memset(pc, 0, sizeof(*pc));
	pc->text = text;
	if (strlen(text) >= sizeof(buf))
		usage_error("unknown case", text);
	strcpy(buf, text);
	ex = strchr(buf, '=');
	if (ex)
		*ex++ = '\0';
	flags = strchr(buf, '+');
	if (flags)
		*flags++ = '\0';
	arg = strchr(buf, ':');
	if (arg) {
		*arg++ = '\0';
		if (!*arg)
			usage_error("bad case argument", text);
	}

	for (k = 0; k < C_COUNT; k++)
		if (strcmp(buf, case_descs[k].name) == 0)
			break;
	if (k == C_COUNT)
		usage_error("unknown case", text);
	pc->kind = (enum case_kind)k;
	pc->expect = case_descs[k].expect;

	switch (case_descs[k].arg) {
	case ARG_NONE:
		if (arg)
			usage_error("this case takes no argument", text);
		break;
	case ARG_SIZE: {
		char *end;

		if (!arg || !parse_bytes(arg, &end, &pc->num) || *end ||
		    pc->num > PEER_REGION / 2)
			usage_error("this case needs a size (at most 2M)", text);
		break;
	}
	case ARG_OPT_NUMBER:
		pc->num = arg ? (uint32_t)parse_number(arg, UINT32_MAX) :
		      default_num((enum case_kind)k);
		/* RFC 8166 s5.5: shorter than the fixed words, nothing known. */
		if (k == C_V2TRUNC && pc->num < RPCRDMA2_PREFIX_LEN)
			pc->expect = EXP_NONE;
		break;
	case ARG_OPT_WORD:
		pc->variant = BC_DISC;
		if (arg) {
			unsigned int v;

			for (v = 0; v < 3; v++)
				if (strcmp(arg, badchunk_names[v]) == 0)
					break;
			if (v == 3)
				usage_error("badchunk takes disc, trunc or count", text);
			pc->variant = (enum badchunk)v;
		}
		break;
	}

	while (flags) {
		char *next = strchr(flags, '+');

		if (next)
			*next++ = '\0';
		if (strcmp(flags, "read") == 0)
			pc->c_read = true;
		else if (strcmp(flags, "write") == 0)
			pc->c_write = true;
		else if (strcmp(flags, "reply") == 0)
			pc->c_reply = true;
		else
			usage_error("chunks are +read, +write and +reply", text);
		flags = next;
	}
	if ((pc->c_read || pc->c_write || pc->c_reply) && !case_descs[k].chunks)
		usage_error("chunks go with null, echo, sink, source and noprog", text);
	if (pc->c_write && !case_descs[k].write)
		usage_error("a Write chunk goes with echo and source", text);

	if (ex) {
		for (k = 0; k < EXP_COUNT; k++)
			if (strcmp(ex, expect_names[k]) == 0)
				break;
		if (k == EXP_COUNT)
			usage_error("unknown expectation", text);
		pc->expect = (enum expect)k;
	}
}

/*
 * The RPC call of a case: its procedure, its arguments and the decoder of
 * its results, in io.  False when the arguments cannot be made.
 */
static bool
case_rpc_call(const struct pcase *pc, uint32_t xid, struct call_io *io,
	      uint32_t *rpc_proc)
{
	*rpc_proc = RPCTEST_NULL;
	io->xargs = XDRPROC(xdr_void);
	io->args = NULL;
	io->xres = XDRPROC(xdr_void);
	io->res = NULL;

	switch (pc->kind) {
	case C_ECHO:
	case C_SINK:
		io->data.rpctest_data_len = pc->num;
		io->data.rpctest_data_val = malloc(pc->num ? pc->num : 1);
		if (!io->data.rpctest_data_val)
			return false;
		pattern_fill(io->data.rpctest_data_val, pc->num, xid);
		io->xargs = XDRPROC(xdr_rpctest_data);
		io->args = &io->data;
		*rpc_proc = pc->kind == C_ECHO ? RPCTEST_ECHO : RPCTEST_SINK;
		if (pc->kind == C_ECHO) {
			io->xres = XDRPROC(xdr_rpctest_data);
			io->res = &io->res_data;
		} else {
			io->xres = XDRPROC(xdr_rpctest_sink_res);
			io->res = &io->res_sink;
		}
		break;
	case C_NFS4READ:
		return nfs4_case_call(pc, xid, io, rpc_proc);
	case C_SOURCE:
		io->sargs.length = pc->num;
		io->sargs.seed = ((uint64_t)xid << 32) | pc->num;
		io->xargs = XDRPROC(xdr_rpctest_source_args);
		io->args = &io->sargs;
		io->xres = XDRPROC(xdr_rpctest_data);
		io->res = &io->res_data;
		*rpc_proc = RPCTEST_SOURCE;
		break;
	default:
		break;
	}
	return true;
}

const char *
case_check_results(const struct pcase *pc, const struct call_io *io)
{
	switch (pc->kind) {
	case C_ECHO:
		return io->res_data.rpctest_data_len == pc->num &&
		       (!pc->num || memcmp(io->res_data.rpctest_data_val,
					   io->data.rpctest_data_val, pc->num) == 0) ?
		       "ok" : "mismatch";
	case C_SINK:
		return io->res_sink.length == pc->num &&
		       io->res_sink.checksum == checksum(io->data.rpctest_data_val, pc->num) ?
		       "ok" : "mismatch";
	case C_SOURCE:
		return io->res_data.rpctest_data_len == pc->num &&
		       pattern_check(io->res_data.rpctest_data_val, pc->num,
				     io->sargs.seed) == pc->num ?
		       "ok" : "mismatch";
	case C_NFS4READ:
		return nfs4_case_check(pc, io);
	default:
		return NULL;
	}
}

/*
 * A call's transport header in version vers: Version Two puts direction
 * CALL before the same lists (draft-cel-nfsv4-rpcrdma-version-two-01
 * s4.2, s4.2.2).
 */
static ssize_t
encode_call_hdr(uint8_t *buf, struct rpcrdma_hdr *h, uint32_t vers)
{
	static struct rpcrdma2_hdr h2;

	if (vers != RPCRDMA2_VERSION)
		return rpcrdma_hdr_encode(buf, PEER_SEND_BUF, h);
	memset(&h2, 0, sizeof(h2));
	h2.xid = h->xid;
	h2.vers = RPCRDMA2_VERSION;
	h2.credits = h->credits;
	h2.proc = h->proc;
	h2.direction = RDMA2_DIR_CALL;
	h2.chunks = *h;
	return rpcrdma2_hdr_encode(buf, PEER_SEND_BUF, &h2);
}

/* An accepted RPC reply with no results (RFC 5531 s9), the wrong way. */
static uint8_t *
put_rpc_reply(uint8_t *q, const uint8_t *end, uint32_t xid)
{
	if (end - q < 24)
		return NULL;
	/* xid, REPLY, MSG_ACCEPTED, AUTH_NONE verifier, SUCCESS */
	return put32(put32(put32(put32(put32(put32(q, xid), 1), 0), 0), 0), 0);
}

/*
 * The Version Two cases (draft-cel-nfsv4-rpcrdma-version-two-01 s3.1,
 * s4.2.2), whole messages: RDMA2_OPTIONAL without and with a payload,
 * of direction CALL and REPLY; RDMA2_MSG of direction REPLY (a
 * backward-direction reply) and of direction CALL carrying a reply; a
 * header with a Write and a Reply chunk cut at pc->num octets.
 */
static size_t
build_v2_case(struct pconn *c, const struct opts *o, const struct pcase *pc,
	      uint32_t xid, struct call_io *io)
{
	static const uint8_t info[3] = { 'o', 'p', 't' };
	struct rpcrdma_segment seg = { .handle = 0x1234, .length = 4096, .offset = 0x1000 };
	struct rpcrdma_write_chunk wc = { .first = 0, .nsegs = 1 };
	uint8_t *p = c->send_mem, *end = c->send_mem + PEER_SEND_BUF, *q;
	uint32_t proc = pc->kind == C_OPT || pc->kind == C_OPTCALL ||
			pc->kind == C_OPTREPLY ? RDMA2_OPTIONAL : RDMA2_MSG;
	size_t n = 0;

	q = rpcrdma_encode_prefix(p, end, xid, RPCRDMA2_VERSION, o->credits, proc);
	switch (pc->kind) {
	case C_OPT:
		q = rpcrdma2_encode_optional(q, end, RDMA2_DIR_CALL, pc->num,
					     info, sizeof(info));
		break;
	case C_OPTCALL:
		q = rpcrdma2_encode_optional(q, end, RDMA2_DIR_CALL, 0x77,
					     info, sizeof(info));
		if (q)
			n = encode_call(q, (size_t)(end - q), xid, o->prog, o->vers,
					RPCTEST_NULL, io->xargs, io->args);
		if (!n)
			return 0;
		break;
	case C_OPTREPLY:
		q = rpcrdma2_encode_optional(q, end, RDMA2_DIR_REPLY, 0x77, NULL, 0);
		break;
	case C_V2BACK:
	case C_V2MISMATCH:
		q = rpcrdma2_encode_direction(q, end, pc->kind == C_V2BACK ?
					      RDMA2_DIR_REPLY : RDMA2_DIR_CALL);
		q = rpcrdma_encode_read_list(q, end, NULL, 0);
		q = rpcrdma_encode_write_list(q, end, NULL, 0, NULL);
		q = rpcrdma_encode_reply_chunk(q, end, false, NULL, 0);
		q = q ? put_rpc_reply(q, end, xid) : NULL;
		break;
	default:	/* C_V2TRUNC */
		q = rpcrdma2_encode_direction(q, end, RDMA2_DIR_CALL);
		q = rpcrdma_encode_read_list(q, end, NULL, 0);
		q = rpcrdma_encode_write_list(q, end, &wc, 1, &seg);
		q = rpcrdma_encode_reply_chunk(q, end, true, &seg, 1);
		if (q && (size_t)(q - p) > pc->num)
			q = p + pc->num;
		break;
	}
	return q ? (size_t)(q - p) + n : 0;
}

/*
 * A valid call offering chunks (RFC 8166 s4.4): the whole call in a
 * position-zero Read chunk with RDMA_NOMSG (a Long Call, s4.5.3), a Write
 * chunk of the size of the result, a Reply chunk with room for the whole
 * reply.  Returns the length of the message in send_mem, 0 on error.
 */
static size_t
build_chunked_call(struct pconn *c, const struct opts *o, const struct pcase *pc,
		   uint32_t xid, uint32_t prog, uint32_t rpc_proc,
		   struct call_io *io)
{
	struct rpcrdma_hdr *h = &c->rhdr;
	size_t clen;
	ssize_t hl;

	clen = encode_call(c->call_mem, PEER_REGION, xid, prog, o->vers, rpc_proc,
			   io->xargs, io->args);
	if (!clen)
		return 0;
	if (chunk_alloc(c, &io->cm, pc->c_read ? (uint32_t)clen : 0,
			pc->c_write ? pc->num : 0, pc->c_reply ? pc->num + 1024 : 0))
		return 0;

	h->xid = xid;
	h->vers = o->rpcrdma_vers;
	h->credits = o->credits;
	h->proc = pc->c_read ? RDMA_NOMSG : RDMA_MSG;
	h->nreads = 0;
	h->nwrites = 0;
	h->nwsegs = 0;
	h->has_reply = false;
	h->nreply = 0;
	if (pc->c_read) {
		memcpy(io->cm.read_area, c->call_mem, clen);
		h->nreads = 1;
		h->reads[0].position = 0;
		h->reads[0].target = chunk_segment(&io->cm, io->cm.read_area,
						   (uint32_t)clen);
	}
	if (pc->c_write) {
		h->nwrites = 1;
		h->writes[0].first = 0;
		h->writes[0].nsegs = 1;
		h->nwsegs = 1;
		h->wsegs[0] = chunk_segment(&io->cm, io->cm.write_area, io->cm.write_len);
	}
	if (pc->c_reply) {
		h->has_reply = true;
		h->nreply = 1;
		h->reply[0] = chunk_segment(&io->cm, io->cm.reply_area, io->cm.reply_len);
	}
	hl = encode_call_hdr(c->send_mem, h, o->rpcrdma_vers);
	if (hl <= 0)
		return 0;
	if (pc->c_read)
		return (size_t)hl;
	if ((size_t)hl + clen > PEER_SEND_BUF)
		return 0;
	memcpy(c->send_mem + hl, c->call_mem, clen);
	return (size_t)hl + clen;
}

/*
 * A Version One header of procedure proc with one Read chunk of one
 * segment, target, at position; no Write or Reply chunk.
 */
static void
one_read_header(struct rpcrdma_hdr *h, const struct opts *o, uint32_t xid,
		uint32_t proc, uint32_t position, struct rpcrdma_segment target)
{
	memset(h, 0, sizeof(*h));
	h->xid = xid;
	h->vers = RPCRDMA1_VERSION;
	h->credits = o->credits;
	h->proc = proc;
	h->nreads = 1;
	h->reads[0].position = position;
	h->reads[0].target = target;
}

/*
 * bigread: a NULL call in a position-zero Read chunk (RDMA_NOMSG) whose
 * segment claims pc->num octets of a registration that holds only the
 * call: what a hostile client sends to make a server set memory aside
 * (RFC 8166 s4.4.5.2: the responder pulls the whole chunk).
 */
static size_t
build_bigread(struct pconn *c, const struct opts *o, const struct pcase *pc,
	      uint32_t xid, struct call_io *io)
{
	struct rpcrdma_hdr *h = &c->rhdr;
	size_t clen;
	ssize_t hl;

	clen = encode_call(c->call_mem, PEER_REGION, xid, o->prog, o->vers,
			   RPCTEST_NULL, io->xargs, io->args);
	if (!clen || chunk_alloc(c, &io->cm, (uint32_t)clen, 0, 0))
		return 0;
	memcpy(io->cm.read_area, c->call_mem, clen);
	one_read_header(h, o, xid, RDMA_NOMSG, 0,
			chunk_segment(&io->cm, io->cm.read_area, pc->num));
	hl = rpcrdma_hdr_encode(c->send_mem, PEER_SEND_BUF, h);
	return hl > 0 ? (size_t)hl : 0;
}

/*
 * badpos: a NULL call inline (RDMA_MSG) with a Read chunk of 16 octets
 * positioned 8 octets past the end of the Payload stream.  The header is
 * well formed; the chunk does not fit the payload, which RFC 8166 s5.5.2
 * says the responder SHOULD answer with RPC GARBAGE_ARGS.
 */
static size_t
build_badpos(struct pconn *c, const struct opts *o, uint32_t xid,
	     struct call_io *io)
{
	struct rpcrdma_hdr *h = &c->rhdr;
	size_t clen;
	ssize_t hl;

	clen = encode_call(c->call_mem, PEER_REGION, xid, o->prog, o->vers,
			   RPCTEST_NULL, io->xargs, io->args);
	if (!clen || chunk_alloc(c, &io->cm, 16, 0, 0))
		return 0;
	memset(io->cm.read_area, 0, 16);
	one_read_header(h, o, xid, RDMA_MSG,
			(uint32_t)((clen + 3) & ~(size_t)3) + 8,
			chunk_segment(&io->cm, io->cm.read_area, 16));
	hl = rpcrdma_hdr_encode(c->send_mem, PEER_SEND_BUF, h);
	if (hl <= 0 || (size_t)hl + clen > PEER_SEND_BUF)
		return 0;
	memcpy(c->send_mem + hl, c->call_mem, clen);
	return (size_t)hl + clen;
}

/*
 * The message of a case.  Cases that are no RPC-over-RDMA call build it
 * whole; the others change the header (RFC 8166 s5.2 fixed fields, s5.3
 * chunk lists) or the RPC call of a valid one.
 */
size_t
build_case(struct pconn *c, const struct opts *o, const struct pcase *pc,
	   uint32_t xid, struct call_io *io, uint32_t *sent_vers)
{
	uint8_t *p = c->send_mem, *end = c->send_mem + PEER_SEND_BUF, *q;
	uint32_t vers = o->rpcrdma_vers, proc = RDMA_MSG, rpc_xid = xid;
	uint32_t prog = o->prog, rpc_proc;
	struct rpcrdma_segment seg = { .handle = 0x1234, .length = 64, .offset = 0x1000 };
	size_t n;

	if (!case_rpc_call(pc, xid, io, &rpc_proc))
		return 0;

	switch (pc->kind) {
	case C_SHORT:
		/* RFC 8166 s5.5: shorter than the fixed fields, no XID known. */
		q = put32(put32(p, xid), RPCRDMA1_VERSION);
		*sent_vers = RPCRDMA1_VERSION;
		return (size_t)(q - p);
	case C_DONE:
		/* RFC 5666's RDMA_DONE: the fixed fields only. */
		q = rpcrdma_encode_prefix(p, end, xid, RPCRDMA1_VERSION, o->credits,
					  RDMA_DONE);
		*sent_vers = RPCRDMA1_VERSION;
		return q ? (size_t)(q - p) : 0;
	case C_RDMAERROR: {
		ssize_t r = rpcrdma_encode_error(p, PEER_SEND_BUF, xid,
						 RPCRDMA1_VERSION, o->credits,
						 RDMA_ERR_BADHEADER);

		*sent_vers = RPCRDMA1_VERSION;
		return r > 0 ? (size_t)r : 0;
	}
	case C_BIGREAD:
		*sent_vers = RPCRDMA1_VERSION;
		return build_bigread(c, o, pc, xid, io);
	case C_BADPOS:
		*sent_vers = RPCRDMA1_VERSION;
		return build_badpos(c, o, xid, io);
	case C_BADVERS:
		vers = pc->num;
		break;
	case C_OPT:
	case C_OPTCALL:
	case C_OPTREPLY:
	case C_V2BACK:
	case C_V2MISMATCH:
	case C_V2TRUNC:
		*sent_vers = RPCRDMA2_VERSION;
		return build_v2_case(c, o, pc, xid, io);
	case C_MSGP:
		proc = RDMA_MSGP;
		break;
	case C_BADPROC:
		proc = pc->num;
		break;
	case C_XIDMISMATCH:
		rpc_xid = xid ^ 0x5a5a5a5au;
		break;
	case C_NOPROG:
		prog = PEER_NOPROG;
		break;
	default:
		break;
	}
	*sent_vers = vers;

	if (pc->c_read || pc->c_write || pc->c_reply)
		return build_chunked_call(c, o, pc, xid, prog, rpc_proc, io);

	q = rpcrdma_encode_prefix(p, end, xid, vers, o->credits, proc);
	/* Version Two (--rpcrdma 2): the direction before the lists. */
	if (vers == RPCRDMA2_VERSION && pc->kind != C_BADVERS)
		q = rpcrdma2_encode_direction(q, end, RDMA2_DIR_CALL);
	if (!q)
		return 0;
	if (pc->kind == C_BADCHUNK) {
		switch (pc->variant) {
		case BC_DISC:
			/* A Read list discriminator that is no XDR bool. */
			q = put32(put32(put32(q, 2), 0), 0);
			break;
		case BC_TRUNC:
			/* One read segment, cut after 8 of its 20 octets. */
			q = put32(put32(put32(q, 1), 0), seg.handle);
			return (size_t)(q - p);
		case BC_COUNT:
			/* A Write chunk claiming 0xffffffff segments. */
			q = put32(put32(put32(q, 0), 1), 0xffffffffu);
			q = rpcrdma_encode_segment(q, end, &seg);
			if (!q)
				return 0;
			q = put32(put32(q, 0), 0);
			break;
		}
	} else {
		q = rpcrdma_encode_read_list(q, end, NULL, 0);
		q = rpcrdma_encode_write_list(q, end, NULL, 0, NULL);
		q = rpcrdma_encode_reply_chunk(q, end, false, NULL, 0);
		if (!q)
			return 0;
		if (pc->kind == C_MSGP)
			q = put32(put32(q, 0), 0);	/* RFC 5666: align, thresh */
	}
	n = encode_call(q, (size_t)(end - q), rpc_xid, prog, o->vers, rpc_proc,
			io->xargs, io->args);
	if (!n)
		return 0;
	return (size_t)(q - p) + n;
}
