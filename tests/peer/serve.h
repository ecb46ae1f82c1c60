/*
 * rdma-peer, the serve role: what serve.c (the listener, the connections,
 * the serve cases), serve_msg.c (one received message: its header, its
 * chunks, the reply) and serve_procs.c (the RPC procedures served) share.
 */
#ifndef RDMA_PEER_SERVE_H
#define RDMA_PEER_SERVE_H

#include "peer.h"
#include "rpctest.h"

#define PEER_MAX_CONNS 16
#define PEER_MAX_HELD 512

/*
 * The serve cases, named in serve_case_names (serve.c).  A case decides
 * the answer to a connection request (on_connect_request), what happens
 * around each call (serve_message: rkey-after-reply's late access), when
 * the run is over (server_done) and what counts as a failure (the summary
 * of run_serve).
 */
enum serve_case {
	SV_SILENT, SV_REJECT, SV_ACCEPT, SV_RKEY,
	SV_DROP_FIRST,		/* never answer a connection's first call */
	SV_LATE_FIRST,		/* answer it after the second call came, by its
				 * Reply chunk when it offered one (as Linux does) */
	SV_INV_FIRST,		/* answer the second call With Invalidate of the
				 * first call's Reply chunk, then the first late */
	SV_LATE_MANY,		/* answer the first --held calls late, by their
				 * Reply chunks (serve_late.c) */
};

/* The listener and everything seen on it. */
struct server {
	const struct opts *o;
	enum serve_case sc;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *lid;
	struct pconn *conns[PEER_MAX_CONNS];
	struct rdma_cm_id *held[PEER_MAX_HELD];
	unsigned int nheld;
	unsigned int requests, rejected, accepted, closed;
	unsigned int calls, violations, protocol_errors;
	unsigned int late_tested, late_exposed;
	unsigned int chunks_offered;
	unsigned int err_chunks;	/* --old-kernel: headers refused */
	unsigned int negotiations;	/* Version Two messages (not calls) */
};

/* serve_msg.c */

/* Serve one received message (receive buffer idx, len octets) on c. */
void serve_message(struct server *s, struct pconn *c, uint32_t idx, uint32_t len);
/* RDMA_ERROR for a call we cannot serve (RFC 8166 s5.5). */
void send_error(struct pconn *c, const struct opts *o, uint32_t xid, uint32_t vers,
		uint32_t err);
/*
 * Send the RPC reply (plen octets at payload, in the reply region) to the
 * call in c->hdr: inline, else through its Reply chunk; c->rhdr's Write
 * list must be filled.  rpc and note are for the output.
 */
void send_reply(struct server *s, struct pconn *c, const uint8_t *payload,
		size_t plen, const char *rpc, const char *note);
/*
 * The first call's reply is held back (drop-first, late-first,
 * inv-first): true when send_reply must keep it.
 */
bool hold_reply(struct server *s, struct pconn *c, const uint8_t *payload,
		size_t plen);
/* Keep the reply to c's current call in hr; false when it does not fit. */
bool keep_reply(struct held_reply *hr, const struct pconn *c,
		const uint8_t *payload, size_t plen);
/* Before serving a later call: what the serve case does with the held reply. */
void held_reply_due(struct server *s, struct pconn *c);
/* Send c->held now: the call it answers timed out long ago. */
void send_held(struct server *s, struct pconn *c);
/* Place an opaque result in the call's first Write chunk; true when it took it. */
bool use_write_chunk(struct pconn *c, const rpctest_data *d);

/* serve_late.c: late-many */

/* Hold this reply back; true when it was. */
bool late_many_hold(struct server *s, struct pconn *c, const uint8_t *payload,
		    size_t plen);
/* A call came on c: the replies held for c go out first, unless it is held too. */
void late_many_due(struct server *s, struct pconn *c);
/* c closed: the replies still held for it are lost. */
void late_many_closed(struct pconn *c);

/* serve_procs.c */

/* Decode the RPC call (clen octets in c->call_mem), run it, reply. */
void dispatch(struct server *s, struct pconn *c, size_t clen);

#endif
