/*
 * rpctest-client's parts; client.c describes the program.
 *
 *   client.c          main: the client handles, made and destroyed per cycle
 *   client_options.c  the command line and the usage text
 *   client_ops.c      the operations: each call, its verification, its line
 *   client_bench.c    -b, -u, -R: timing per call, the table, descriptors
 *                     and resident size
 *   client_fork.c     -F: fork() with a CLIENT in use
 *   client_threads.c  -T: threads sharing one CLIENT
 */
#ifndef RPCTEST_CLIENT_H
#define RPCTEST_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include <rpc/rpc.h>

#include "rpctest.h"

#define EX_USAGE 64
#define EX_RPC 1
#define EX_MISMATCH 2

#define MAX_LIST 64

extern const char *progname;

enum op {
	OP_NULL,
	OP_ECHO,
	OP_SINK,
	OP_SOURCE,
	OP_MIXED,
	OP_WHOAMI,
	OP_DIGEST,
	OP_COUNT
};

struct op_desc {
	const char *name;
	bool sized;		/* runs once per size */
	unsigned int payload;	/* payload bytes per call, in units of size */
};

extern const struct op_desc op_desc[OP_COUNT];

enum create_mode { CM_CREATE, CM_TP, CM_TLI, CM_TCP };

struct options {
	const char *host;
	const char *netid;
	enum create_mode mode;
	unsigned int port;
	bool have_port;
	bool auth_sys;
	unsigned int timeout;
	rpcprog_t prog;
	enum op ops[MAX_LIST];
	unsigned int nops;
	size_t sizes[MAX_LIST];
	unsigned int nsizes;
	unsigned long count;
	unsigned long cycles;
	bool cycles_set;
	unsigned long handles;	/* -N: handles held at once */
	bool bench;
	bool quiet;
	bool keep_going;
	bool hold;
	unsigned int forks;
	unsigned int threads;	/* -T: threads sharing the CLIENT */
	unsigned int pause_ms;	/* -w: between two calls */
};

/* client.c: the handle, made as -m says (exits on failure); the set once. */
CLIENT *make_client(const struct options *o);
void run_set(CLIENT *clnt, const struct options *o, unsigned long iter);

/* client_fork.c: -F; returns an exit status (0: every child was right). */
int fork_test(CLIENT *clnt, const struct options *o);

/* client_threads.c: -T; the set on every thread at once; an exit status. */
int run_threads(CLIENT *clnt, const struct options *o);

/* client_options.c: fills o from the command line, or exits with usage. */
void parse_options(struct options *o, int argc, char **argv);

/* client_ops.c */
extern unsigned long total_calls;
extern unsigned long failed_calls;
extern bool keep_going;

void run_op(CLIENT *clnt, const struct options *o, unsigned int oi,
	    unsigned int si, unsigned long iter);

/* client_bench.c */
extern bool measure_cpu;
extern bool measure_latency;

double call_begin(void);
double call_end(double t0);
void stats_add(unsigned int oi, unsigned int si, double seconds,
	       unsigned long long bytes);
/* Monotonic time and the process's CPU time (every thread), in seconds. */
double now(void);
double cpu_now(void);
void bench_mark_create(void);
void stats_add_locked(unsigned int oi, unsigned int si, double seconds,
		      unsigned long long bytes);
void stats_threads_done(double wall, double cpu);
void print_bench(const struct options *o);
long count_fds(void);
long rss_kb(void);

#endif
