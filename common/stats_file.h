/*
 * The statistics file: its layout is shared by the shim, which writes it
 * (common/stats.h), and rpcrdma-stat(1), which reads it.
 *
 * Each process that creates a transport maps one file,
 * /dev/shm/rpcrdma-shim.<uid>.<pid> (POSIX shared memory, mode 0600: a user
 * sees their own processes, root sees all), holding one struct
 * shim_stats_file.  The shim writes it with relaxed atomic stores and adds
 * only; readers copy it and tolerate a slot changing under them.  The file
 * goes away when the process exits; a reader ignores (and, when it owns
 * them, removes) files of processes that are gone.
 *
 * The layout is versioned: append fields, bump SHIM_STATS_VERSION when
 * the meaning of a field changes, or when a field appended to struct
 * shim_stats_conn moves every slot after the first (version 2: the
 * chunk and remote invalidation counters; version 3: the registered
 * memory of the process, and room for 2048 transports; version 4: the
 * RPC-over-RDMA version of a connection and the messages it dropped;
 * version 5: its polling windows missed and skipped).
 */
#ifndef COMMON_STATS_FILE_H
#define COMMON_STATS_FILE_H

#include <stdint.h>

#define SHIM_STATS_MAGIC 0x5453534d41445052ull	/* "RPDAMSST" */
#define SHIM_STATS_VERSION 5
#define SHIM_STATS_SLOTS 2048
#define SHIM_STATS_REASONS 16
#define SHIM_STATS_PREFIX "rpcrdma-shim."	/* + "<uid>.<pid>" */

enum shim_stats_state {
	SHIM_STATS_FREE = 0,
	SHIM_STATS_LIVE = 1,
	SHIM_STATS_CLAIMED = 2,		/* being filled in */
};

enum shim_stats_role {
	SHIM_STATS_CLIENT = 1,
	SHIM_STATS_LISTENER = 2,	/* a server's TCP rendezvous (and RDMA listener) */
	SHIM_STATS_SERVER = 3,		/* one accepted RDMA connection */
};

enum shim_stats_transport {
	SHIM_STATS_RDMA = 1,
	SHIM_STATS_TCP = 2,
};

/* An address without the variable size of struct sockaddr. */
struct shim_stats_addr {
	uint16_t family;		/* AF_INET, AF_INET6, 0: none */
	uint16_t port;			/* host order */
	uint8_t addr[16];
};

/* One transport: a client, a listener, a server-side connection. */
struct shim_stats_conn {
	uint32_t state;			/* enum shim_stats_state */
	uint32_t role;			/* enum shim_stats_role */
	uint32_t transport;		/* enum shim_stats_transport */
	uint32_t reason;		/* TCP: why (enum rdma_fail) */
	uint32_t prog, vers;		/* clients: the RPC program */
	struct shim_stats_addr peer;
	struct shim_stats_addr local;
	uint16_t rdma_port;		/* listeners: the RDMA port, 0: none */
	uint16_t pad;
	/* RDMA: what the connection negotiated. */
	uint32_t inline_send;		/* our inline threshold (RFC 8797 s4.2) */
	uint32_t inline_recv;		/* the peer's */
	uint32_t credits;		/* granted (clients: last seen) */
	uint32_t rinv;			/* remote invalidation on */
	uint32_t peer_pdata;		/* the peer sent RFC 8797 private data */
	uint64_t created;		/* CLOCK_REALTIME seconds */
	/* Counters; TCP clients count calls, errors and timeouts only. */
	uint64_t calls;
	uint64_t errors;		/* calls that did not return RPC_SUCCESS */
	uint64_t timeouts;
	uint64_t bytes_out;		/* RPC messages sent, octets */
	uint64_t bytes_in;		/* RPC messages received, octets */
	uint64_t long_out;		/* sent through chunks */
	uint64_t long_in;		/* received through chunks */
	uint64_t rdma_errors;		/* RDMA_ERROR sent or received */
	uint64_t connections;		/* listeners: connections accepted */
	/*
	 * RDMA: how the data moved, in octets the peer actually used
	 * (RFC 8166 s4.4.6: the Write and Reply chunk lengths the responder
	 * returns), not the sizes offered.
	 */
	uint64_t read_chunk_bytes;	/* server: pulled by RDMA Read;
					 * client: its calls' Read chunks */
	uint64_t write_chunk_bytes;	/* server: pushed by RDMA Write;
					 * client: received there */
	uint64_t reply_chunk_bytes;	/* the same for Reply chunks */
	uint64_t send_inv;		/* replies with remote invalidation
					 * (RFC 8797 s4.1), sent or received */
	/*
	 * RDMA: the RPC-over-RDMA version in use (draft-cel-nfsv4-rpcrdma-
	 * version-two-01 s5): 1 or 2; 0 while a client's first call, sent
	 * in Version Two, waits for its answer, or before a server's first
	 * call.
	 */
	uint32_t rpcrdma_vers;
	uint32_t pad2;
	/* Messages dropped unanswered: the wrong direction (s3.2, s4.2.2). */
	uint64_t dropped;
	/*
	 * RDMA: waits that polled for poll_us in vain (then slept), and
	 * waits that slept at once because the last ones had (ep.h).
	 */
	uint64_t poll_missed;
	uint64_t poll_skipped;
};

struct shim_stats_file {
	uint64_t magic;
	uint32_t version;
	uint32_t size;			/* sizeof(struct shim_stats_file) */
	int32_t pid;
	uint32_t uid;
	uint64_t started;		/* CLOCK_REALTIME seconds */
	char prog[64];			/* program_invocation_short_name */
	char config[256];		/* the configuration file read, or "" */
	uint32_t mode;			/* enum shim_mode */
	uint32_t bad_config;
	/* Transports kept on TCP, by reason (enum rdma_fail). */
	uint64_t fallbacks[SHIM_STATS_REASONS];
	uint64_t rdma_transports;	/* transports that ran over RDMA */
	/*
	 * Registered memory (transport/budget.h): octets in use, the budget,
	 * the most ever in use, and registrations the budget refused.
	 */
	uint64_t pinned_used;
	uint64_t pinned_total;
	uint64_t pinned_peak;
	uint64_t pinned_refused;
	uint32_t nslots;
	uint32_t pad;
	struct shim_stats_conn slots[SHIM_STATS_SLOTS];
};

#endif
