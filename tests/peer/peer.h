/*
 * rdma-peer: what its parts share.  The program is described in main.c;
 * its parts are:
 *
 *   main.c         output, time, signals, main()
 *   options.c      the command line
 *   cm.c           RDMA-CM: events, addresses, RFC 8797 private data
 *   conn.c         one connection: queue pair, completion queue, buffers
 *   rpc.c          RPC message helpers
 *   call.c         the call role: connect, run the cases, read the answers
 *   call_cases.c   the call cases: their table, parsing and messages
 *   serve.c        the serve role: listener, connections, serve cases
 *   serve_msg.c    serving one received message: header, chunks, reply
 *   serve_procs.c  the RPC procedures served, and the dispatch to them
 *   abuse.c        the abuse role: flooding, non-reposting, vanishing clients
 *
 * call.h and serve.h hold what the files of one role share.
 */
#ifndef RDMA_PEER_PEER_H
#define RDMA_PEER_PEER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rpc/rpc.h>

#include "pvtdata.h"
#include "rpcrdma_xdr.h"

#define EX_OK 0
#define EX_FAIL 1
#define EX_SETUP 2
#define EX_USAGE 64

/* Receives kept posted per connection. */
#define PEER_NRECV 32
/*
 * Receive buffers are at least this big whatever is advertised, so that a
 * message above the advertised size arrives and is reported as a
 * violation instead of breaking the connection.
 */
#define PEER_RECV_BUF_MIN 65536u
/* Room for any inline message this peer builds. */
#define PEER_SEND_BUF (RPCRDMA1_INLINE_MAX + 4096u)
/* Largest chunk data, rebuilt call or reply handled. */
#define PEER_REGION (4u << 20)
#define PEER_MAX_CASES 128
/* RDMA Reads in flight, each way. */
#define PEER_RD_ATOM 8

#define DEFAULT_TIMEOUT_S 20
#define DEFAULT_ANSWER_MS 5000
#define DEFAULT_QUIET_MS 1000

/* xdrproc_t is variadic: cast through a plain function pointer type. */
#define XDRPROC(f) ((xdrproc_t)(void (*)(void))(f))

/* Work request ids: kind in the high word, a buffer index in the low. */
enum wr_kind { WR_RECV = 1, WR_SEND, WR_READ, WR_WRITE };
#define WRID(kind, idx) (((uint64_t)(kind) << 32) | (uint32_t)(idx))
#define WRID_KIND(id) ((enum wr_kind)((id) >> 32))
#define WRID_IDX(id) ((uint32_t)(id))

/* main.c: the name in messages, -v, the signal that stops the run, its end. */
extern const char *progname;
extern bool verbose;
extern volatile sig_atomic_t stop_signal;
extern int64_t run_deadline;

/* ------------------------------------------------------------------ */
/* Output and time (main.c)                                            */
/* ------------------------------------------------------------------ */

/* One line of the machine-readable output, on stdout. */
void out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "rdma-peer: ..." on stderr. */
void warnmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A line assembled piece by piece, printed once. */
struct line {
	char buf[2048];
	size_t len;
};

/* Append to a line; what does not fit is cut. */
void line_add(struct line *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Milliseconds on the monotonic clock. */
int64_t now_ms(void);
/* now + ms, but never past the end of the whole run. */
int64_t bound(int64_t ms);
/* Milliseconds until deadline, 0 when passed, for poll(). */
int left_ms(int64_t deadline);
/* A short pause between polls of a completion queue. */
void nap(void);
/* O_NONBLOCK on fd: 0 or -errno. */
int set_nonblock(int fd);
/* "ADDR" and *port of a socket address, for the output. */
void sa_format(const struct sockaddr *sa, char *buf, size_t len, unsigned int *port);

/* XDR words (big-endian) in a message being built or taken apart. */
static inline uint8_t *
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static inline uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static inline uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* ------------------------------------------------------------------ */
/* Options (options.c)                                                 */
/* ------------------------------------------------------------------ */

enum pdata_kind {
	PD_SIZES,	/* RFC 8797 message with --pdata SEND:RECV[:R] */
	PD_NONE,	/* no private data at all */
	PD_GARBAGE,	/* 16 octets without the format identifier */
	PD_BADVERSION,	/* the format identifier with version 2 */
};

struct opts {
	bool serve;
	bool abuse;			/* the abuse role (abuse.c) */
	const char *addr;
	unsigned int port;
	bool have_port;
	enum pdata_kind pdata;
	struct rpcrdma_cm_pdata pd;
	uint32_t prog;
	uint32_t vers;
	unsigned int credits;
	unsigned int timeout_s;
	unsigned int answer_ms;
	unsigned int quiet_ms;
	unsigned int linger_ms;
	bool late_ok;			/* call: strays do not fail a case */
	unsigned int connections;
	bool keep_chunks;
	/*
	 * serve --old-kernel: check each call's chunks as Linux svcrdma did
	 * before 5.11 (ERR_CHUNK above these segment sizes, more than two
	 * Write chunks, Read segments at different positions) and accept
	 * with rnr_retry 0.
	 */
	bool old_kernel;
	unsigned int held;		/* serve late-many: replies held back */
	uint32_t special_seg_max;	/* Reply and Read segments */
	uint32_t write_seg_max;		/* Write segments */
	bool drop_v2;			/* serve: Version Two messages unanswered */
	uint32_t rpcrdma_vers;		/* call: version of the valid calls */
	int rd_init;			/* call: -1, or the connect's initiator_depth */
	int rd_resp;			/* call: -1, or its responder_resources */
	const char *ready;
	char **cases;
	int ncases;
};

/* Fill o from the command line; exits 64 on a usage error. */
void parse_options(struct opts *o, int argc, char **argv);
/* "rdma-peer: what: arg", the usage text, exit 64. */
void usage_error(const char *what, const char *arg) __attribute__((noreturn));
/* A number up to max, or a usage error. */
unsigned long parse_number(const char *s, unsigned long max);
/* NUMBER[K]: bytes; *end set past it. */
bool parse_bytes(const char *s, char **end, uint32_t *out_bytes);

/* ------------------------------------------------------------------ */
/* RDMA-CM (cm.c)                                                      */
/* ------------------------------------------------------------------ */

/* An event, when -v. */
void print_event(const struct rdma_cm_event *ev);
/* Next event on ch before the deadline: 0, or -ETIMEDOUT, -EINTR, -errno. */
int wait_cm_event(struct rdma_event_channel *ch, int64_t deadline,
		  struct rdma_cm_event **ev);
/* A numeric address and port; false (said on stderr) when not one. */
bool make_sockaddr(const char *addr, unsigned int port, struct sockaddr_storage *ss);
/* What this end advertises, or the Version One defaults (RFC 8797 s5.1). */
void own_sizes(const struct opts *o, uint32_t *send, uint32_t *recv);
/* --pdata as the output names it. */
const char *pdata_name(const struct opts *o, char *buf, size_t len);
/* The private data to send; returns its length (0: none). */
uint8_t build_pdata(const struct opts *o, uint8_t buf[16]);
/* Print the other end's private data; true when it is a valid RFC 8797 message. */
bool report_pdata(const char *who, const void *data, uint8_t len,
		  struct rpcrdma_cm_pdata *pd);

/* ------------------------------------------------------------------ */
/* One connection (conn.c)                                             */
/* ------------------------------------------------------------------ */

/* rkey-after-reply: the chunks of the previous call on a connection. */
struct late {
	bool pending;
	uint32_t xid;
	bool have_write;
	const char *write_target;	/* "reply" or "write" chunk */
	struct rpcrdma_segment wseg;
	bool have_read;
	struct rpcrdma_segment rseg;
};

/* drop-first, late-first, inv-first: the first call's reply, held back. */
struct held_reply {
	bool pending;
	struct rpcrdma_hdr hdr;		/* the call's header */
	uint8_t rpc[1024];		/* its RPC reply */
	size_t len;
};

struct pconn {
	struct rdma_cm_id *id;
	struct rdma_event_channel *ech;	/* call role only */
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	uint8_t *recv_mem;
	struct ibv_mr *recv_mr;
	uint32_t recv_size;		/* octets per receive buffer */
	uint8_t *send_mem;
	struct ibv_mr *send_mr;
	/* [0, REGION): RDMA Read targets; [REGION, 2 REGION): the reply. */
	uint8_t *data_mem;
	struct ibv_mr *data_mr;
	uint8_t *call_mem;		/* a call rebuilt from chunks */

	/* Receives completed while waiting for something else. */
	uint32_t pend_idx[PEER_NRECV];
	uint32_t pend_len[PEER_NRECV];
	unsigned int pend_head, pend_count;

	uint32_t own_send, own_recv;	/* as advertised (or the defaults) */
	struct rpcrdma_cm_pdata peer_pd;	/* the other end's, or defaults */
	bool peer_pd_valid;
	uint8_t initiator_depth, responder_resources;

	bool dead;			/* the queue pair failed or was flushed */
	bool disconnecting;		/* rdma_disconnect() called */
	bool established;
	bool closed;
	unsigned int number;		/* serve: 1, 2, ... in accept order */
	unsigned int calls;
	struct late late;
	struct held_reply held;
	uint32_t send_inv;		/* the next Send invalidates this key, or 0 */
	bool reply_chunk_always;	/* a reply goes by the Reply chunk when offered */
	struct rpcrdma_hdr hdr;		/* scratch: a decoded header */
	struct rpcrdma_hdr rhdr;	/* scratch: a header to encode */
};

/* Protection domain, completion queue, queue pair and buffers on c->id. */
int conn_setup(struct pconn *c);
/* Free c and all it holds, its id included. */
void conn_free(struct pconn *c);
/* Mark c dead and disconnect it, once. */
void conn_kill(struct pconn *c);
/* Post receive buffer idx again; -1 (c dead) on failure. */
int post_recv(struct pconn *c, uint32_t idx);
/* Account for one completion; true when it is the completion of wrid. */
bool take_wc(struct pconn *c, const struct ibv_wc *wc, uint64_t wrid);
/* The oldest receive completed and not yet taken. */
bool pend_pop(struct pconn *c, uint32_t *idx, uint32_t *len);
/* Send len octets of send_mem and wait: its status, or -1 (not posted, timeout, signal). */
int send_sync(struct pconn *c, uint32_t len, int64_t deadline);
/* An RDMA Read or Write (local inside data_mem) and wait, as send_sync. */
int rdma_sync(struct pconn *c, enum wr_kind kind, uint8_t *local, uint32_t len,
	      uint32_t rkey, uint64_t raddr, int64_t deadline);
/* A status of send_sync or rdma_sync, for the output. */
const char *wc_status_name(int st);

/* ------------------------------------------------------------------ */
/* RPC messages (rpc.c)                                                */
/* ------------------------------------------------------------------ */

/* An RPC call with AUTH_NONE; returns its octets, or 0 when it does not fit. */
size_t encode_call(uint8_t *p, size_t room, uint32_t xid, uint32_t prog,
		   uint32_t vers, uint32_t proc, xdrproc_t xargs, void *args);
/* "SUCCESS", "PROG_UNAVAIL", ... */
const char *accept_stat_name(enum accept_stat st);

/* ------------------------------------------------------------------ */
/* The two roles: an exit status each                                  */
/* ------------------------------------------------------------------ */

/* call.c */
int run_call(const struct opts *o);
/* serve.c */
int run_serve(const struct opts *o);
/* abuse.c: clients that hurt a server (its modes are described there) */
int run_abuse(const struct opts *o);

#endif
