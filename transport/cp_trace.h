/*
 * The call-path timeline: time stamps taken at fixed points of a call's
 * way through the client and the server, for tools/rpcrdma-cptrace.
 *
 * Built in with `meson configure -Dcallpath_trace=true`; in a default
 * build every CP_MARK() compiles to nothing.  A process records only when
 * RPCRDMA_CP_TRACE (not a configuration key: no RPCRDMA_SHIM_ prefix)
 * names a directory, and writes its stamps there at
 * exit (cp.<pid>).  Stamps are the CPU's time-stamp counter where there is
 * one (x86-64: one instruction, not a system call, so the points cost
 * next to nothing and stamps of two processes compare), else the
 * monotonic clock.  A child of fork() starts with none of its parent's.
 */
#ifndef TRANSPORT_CP_TRACE_H
#define TRANSPORT_CP_TRACE_H

#include <stdint.h>
#include <stdio.h>

/* In the order a call meets them; cp_point_name() gives the tool's names. */
enum cp_point {
	CP_CALL,	/* client: clnt_call entered */
	CP_CALL_POST,	/* client: the Send about to be posted */
	CP_CALL_POSTED,	/* client: ibv_post_send returned */
	CP_REPLY,	/* client: the reply matched to its call */
	CP_RETURN,	/* client: clnt_call returns */
	CP_SVC_CALL,	/* server: the call's receive taken from the CQ */
	CP_SVC_RECV,	/* server: xp_recv returns the call */
	CP_SVC_REPLY,	/* server: xp_reply entered */
	CP_SVC_POST,	/* server: the reply's Send about to be posted */
	CP_SVC_POSTED,	/* server: ibv_post_send returned */
	CP_NPOINTS
};

/* Stamps kept per point; later ones are dropped. */
#define CP_TRACE_CAP (1U << 17)

const char *cp_point_name(enum cp_point p);
void cp_record(enum cp_point p);

/*
 * The stamps recorded so far, in the form tools/rpcrdma-cptrace reads:
 * a "# ticks_per_us" line, then one "point stamp" line per stamp.
 */
int cp_dump(FILE *f);

/* Forget what was recorded and read the environment again (tests). */
void cp_reset(void);

#ifdef SHIM_CALLPATH_TRACE
#define CP_MARK(p) cp_record(p)
#else
#define CP_MARK(p) ((void)0)
#endif

#endif
