/*
 * rpcrdma-stat's parts (the program is described in rpcrdma-stat.c):
 *
 *   rpcrdma-stat.c  the command line and main
 *   stat_read.c     finding, checking and copying the statistics files;
 *                   messages and allocation that exit on failure
 *   stat_fields.c   what the fields of a file say, as text
 *   stat_table.c    the transports table and the summary (-s)
 *   stat_json.c     everything as JSON (-j)
 */
#ifndef TOOLS_STAT_H
#define TOOLS_STAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/stats_file.h"

#define STATS_DIR "/dev/shm"

extern const char *progname;

/* One process: its file, copied. */
struct proc {
	struct shim_stats_file f;
	char prog[sizeof(((struct shim_stats_file *)0)->prog) + 1];
	char config[sizeof(((struct shim_stats_file *)0)->config) + 1];
};

struct procs {
	struct proc **v;
	size_t n, cap;
};

struct options {
	pid_t *pids;
	size_t npids;
	bool summary;
	bool json;
};

/* stat_read.c */
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
/* The files of the processes o asks for, sorted by pid; -1 on error. */
int read_all(const struct options *o, struct procs *ps);

/* stat_fields.c */
const char *role_name(uint32_t role);
bool is_rdma(const struct shim_stats_conn *s);
const char *reason_token(uint32_t reason);
/* The address without the port; false when there is none. */
bool addr_text(const struct shim_stats_addr *a, char *buf, size_t len);
/* "10.0.0.1:2049", "[fd00::1]:2049" or "-". */
void endpoint_text(const struct shim_stats_addr *a, char *buf, size_t len);
/* 1023, 1.5K, 12K, 3.2M: powers of 1024, as ls -h. */
void bytes_text(uint64_t v, char *buf, size_t len);
/* Control characters shown as '?', in place. */
const char *printable(char *s);
/* The live slots of p in display order (indices into p->f.slots). */
size_t live_slots(const struct proc *p, unsigned int *idx);

/* stat_table.c */
void print_transports(struct procs *ps);
void print_summary(struct procs *ps);

/* stat_json.c */
void print_json(struct procs *ps);

#endif
