/*
 * rpctest-client -T N: N threads share one CLIENT, as multi-threaded
 * programs do, each making its own NULL and ECHO calls at once.
 *
 * The rpcgen stubs (rpcgen -N without -M) return their results in static
 * storage, so the threads call clnt_call() themselves with the same XDR
 * routines and procedure numbers.  Every thread fills its ECHO arguments
 * with a pattern of its own (seeded by thread, repetition and size) and
 * checks the reply to the byte: a reply handed to another thread's call
 * fails the check.  The -b table counts the calls of all threads over the
 * wall time of the run, and with -u their CPU time (the whole process's)
 * per call.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client.h"
#include "pattern.h"
#include "rpctest.h"

/* xdr_void takes no arguments, as libtirpc declares it. */
#define XDR_VOID ((xdrproc_t)(void (*)(void))xdr_void)

struct worker {
	CLIENT *clnt;
	const struct options *o;
	unsigned int id;
	pthread_t thread;
	int status;		/* EX_* of its first failure, 0 */
	unsigned long calls;	/* made, verified */
};

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

/* A failed call: its error on this thread (clnt_geterr answers per thread). */
static int
call_failed(struct worker *w, const char *what, size_t size)
{
	char buf[96];

	snprintf(buf, sizeof(buf), "thread %u: %s %zu", w->id, what, size);
	pthread_mutex_lock(&out_lock);
	fprintf(stderr, "%s\n", clnt_sperror(w->clnt, buf));
	pthread_mutex_unlock(&out_lock);
	return EX_RPC;
}

static int
mismatch(struct worker *w, size_t size, size_t off, const char *what)
{
	pthread_mutex_lock(&out_lock);
	fprintf(stderr, "%s: mismatch: thread %u: echo %zu: first difference at offset %zu (%s)\n",
		progname, w->id, size, off, what);
	pthread_mutex_unlock(&out_lock);
	return EX_MISMATCH;
}

static int
echo_once(struct worker *w, size_t size, uint64_t seed, struct timeval tv)
{
	rpctest_data arg, res;
	size_t off = 0;
	int st = 0;

	arg.rpctest_data_len = (u_int)size;
	arg.rpctest_data_val = malloc(size ? size : 1);
	if (!arg.rpctest_data_val)
		return EX_RPC;
	pattern_fill(arg.rpctest_data_val, size, seed);
	memset(&res, 0, sizeof(res));
	if (clnt_call(w->clnt, RPCTEST_ECHO, (xdrproc_t)xdr_rpctest_data,
		      (caddr_t)&arg, (xdrproc_t)xdr_rpctest_data, (caddr_t)&res,
		      tv) != RPC_SUCCESS) {
		free(arg.rpctest_data_val);
		return call_failed(w, "echo", size);
	}
	while (off < size && off < res.rpctest_data_len &&
	       res.rpctest_data_val[off] == arg.rpctest_data_val[off])
		off++;
	if (res.rpctest_data_len != size)
		st = mismatch(w, size, off, "reply length differs");
	else if (off != size)
		st = mismatch(w, size, off, "reply bytes differ");
	clnt_freeres(w->clnt, (xdrproc_t)xdr_rpctest_data, (caddr_t)&res);
	free(arg.rpctest_data_val);
	return st;
}

/* One call of op at size; its latency is recorded. */
static int
call_once(struct worker *w, unsigned int oi, unsigned int si, unsigned long iter)
{
	const struct options *o = w->o;
	enum op op = o->ops[oi];
	size_t size = op_desc[op].sized ? o->sizes[si] : 0;
	struct timeval tv = { .tv_sec = o->timeout };
	/* Seeds no other thread uses. */
	uint64_t seed = ((uint64_t)w->id << 56) ^ ((uint64_t)iter << 24) ^ size;
	double t0 = now();
	int st;

	if (op == OP_NULL)
		st = clnt_call(w->clnt, RPCTEST_NULL, XDR_VOID, NULL, XDR_VOID,
			       NULL, tv) == RPC_SUCCESS ?
		     0 : call_failed(w, "null", 0);
	else
		st = echo_once(w, size, seed, tv);
	if (!st)
		stats_add_locked(oi, si, now() - t0,
				 (unsigned long long)op_desc[op].payload * size);
	return st;
}

static void *
worker_run(void *arg)
{
	struct worker *w = arg;
	const struct options *o = w->o;

	for (unsigned long i = 0; i < o->count && !w->status; i++)
		for (unsigned int oi = 0; oi < o->nops && !w->status; oi++) {
			unsigned int n = op_desc[o->ops[oi]].sized ? o->nsizes : 1;

			for (unsigned int si = 0; si < n && !w->status; si++) {
				w->status = call_once(w, oi, si, i);
				w->calls += !w->status;
			}
		}
	return NULL;
}

int
run_threads(CLIENT *clnt, const struct options *o)
{
	struct worker *w = calloc(o->threads, sizeof(*w));
	double t0, cpu0;
	unsigned int i;
	int st = 0;

	if (!w) {
		fprintf(stderr, "%s: out of memory\n", progname);
		return EX_RPC;
	}
	for (i = 0; i < o->nops; i++) {
		if (o->ops[i] != OP_NULL && o->ops[i] != OP_ECHO) {
			fprintf(stderr, "%s: -T runs null and echo only\n", progname);
			free(w);
			return EX_USAGE;
		}
	}
	t0 = now();
	cpu0 = cpu_now();
	for (i = 0; i < o->threads; i++) {
		w[i] = (struct worker){ .clnt = clnt, .o = o, .id = i };
		if (pthread_create(&w[i].thread, NULL, worker_run, &w[i])) {
			fprintf(stderr, "%s: cannot start thread %u\n", progname, i);
			exit(EX_RPC);
		}
	}
	for (i = 0; i < o->threads; i++) {
		pthread_join(w[i].thread, NULL);
		total_calls += w[i].calls;
		if (w[i].status && !st)
			st = w[i].status;
	}
	stats_threads_done(now() - t0, cpu_now() - cpu0);
	if (!st && !o->quiet)
		printf("threads %u: every reply to its caller\n", o->threads);
	free(w);
	return st;
}
