/*
 * rdma-peer, the call role: what call.c (the connection, the run of the
 * cases, the answers) and call_cases.c (what each case is and sends)
 * share.
 */
#ifndef RDMA_PEER_CALL_H
#define RDMA_PEER_CALL_H

#include "peer.h"
#include "rpctest.h"

/* The answers a case may expect (CASE=EXPECT); judged by call.c. */
enum expect {
	EXP_SUCCESS,		/* RDMA_MSG, RPC accepted SUCCESS, data verified */
	EXP_VERS,		/* RDMA_ERROR ERR_VERS 1..1 or 1..2, version echoed */
	EXP_BADHEADER,		/* RDMA_ERROR BADHEADER, version echoed */
	EXP_NONE,		/* no answer at all */
	EXP_PROG_UNAVAIL,	/* RDMA_MSG, RPC PROG_UNAVAIL */
	EXP_INVALID_OPTION,	/* RDMA2_ERROR RDMA2_ERR_INVALID_OPTION, vers 2 */
	EXP_GARBAGE_ARGS,	/* RDMA_MSG, RPC GARBAGE_ARGS */
	EXP_ANY,		/* whatever comes, only reported */
	EXP_COUNT
};

/* "success", "vers", ...: the names CASE=EXPECT takes. */
extern const char *const expect_names[EXP_COUNT];

/* The call cases: one row each in case_descs (call_cases.c). */
enum case_kind {
	C_NULL, C_ECHO, C_SINK, C_SOURCE, C_NOPROG, C_BADVERS, C_MSGP, C_DONE,
	C_BADPROC, C_BADCHUNK, C_XIDMISMATCH, C_SHORT, C_RDMAERROR, C_BIGREAD,
	C_NFS4READ, C_BADPOS,
	/* Version Two (draft-cel-nfsv4-rpcrdma-version-two-01) */
	C_OPT, C_OPTCALL, C_OPTREPLY, C_V2BACK, C_V2MISMATCH, C_V2TRUNC,
	C_COUNT
};

/* badchunk variants (BC_COUNT: a segment count, not the number of them). */
enum badchunk { BC_DISC, BC_TRUNC, BC_COUNT };

/* One case of the command line, parsed. */
struct pcase {
	const char *text;
	enum case_kind kind;
	enum expect expect;
	uint32_t num;		/* size, the procedure of badproc, bigread's claim,
				 * badvers' version, opt's type, v2trunc's cut */
	enum badchunk variant;
	bool c_read;		/* the call goes in a position-zero Read chunk */
	bool c_write;		/* a Write chunk for the result */
	bool c_reply;		/* a Reply chunk */
};

/*
 * Memory a call offers in chunks, registered for that call alone: the
 * registration ends when the call has its answer (unless --keep-chunks),
 * so the server's access must end too.
 */
struct chunk_mem {
	uint8_t *mem;
	struct ibv_mr *mr;
	uint8_t *read_area, *write_area, *reply_area;
	uint32_t read_len, write_len, reply_len;
};

/* Arguments and results of one call, kept for verification. */
struct call_io {
	rpctest_data data;
	rpctest_source_args sargs;
	rpctest_data res_data;
	rpctest_sink_res res_sink;
	xdrproc_t xargs;
	void *args;
	xdrproc_t xres;
	void *res;
	struct chunk_mem cm;
};

/* call_cases.c */

/* NAME[:ARG][+CHUNK...][=EXPECT] into pc; a usage error when not one. */
void parse_case(const char *text, struct pcase *pc);
/*
 * The message of a case in c->send_mem, its RPC arguments and result
 * decoder in io, the transport version sent in *sent_vers.  Returns the
 * message length, 0 on error.
 */
size_t build_case(struct pconn *c, const struct opts *o, const struct pcase *pc,
		  uint32_t xid, struct call_io *io, uint32_t *sent_vers);
/* The check of a case's decoded results: "ok", "mismatch", NULL for none. */
const char *case_check_results(const struct pcase *pc, const struct call_io *io);

/* call_nfs4.c: nfs4read, an NFSv4.1 READ COMPOUND */

bool nfs4_case_call(const struct pcase *pc, uint32_t xid, struct call_io *io,
		    uint32_t *rpc_proc);
const char *nfs4_case_check(const struct pcase *pc, const struct call_io *io);

/* call.c */

/* Register memory for the chunks of one call (read, write, reply octets). */
int chunk_alloc(struct pconn *c, struct chunk_mem *cm, uint32_t read_len,
		uint32_t write_len, uint32_t reply_len);
/* Deregister and free what chunk_alloc gave (nothing, if it gave nothing). */
void chunk_free(struct chunk_mem *cm);
/* Connect as the options say; NULL (said on stdout) when that fails. */
struct pconn *client_connect(const struct opts *o);

/* A segment describing len octets at p of a chunk registration. */
struct rpcrdma_segment chunk_segment(const struct chunk_mem *cm, const uint8_t *p,
				     uint32_t len);

#endif
