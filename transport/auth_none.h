/*
 * AUTH_NONE for the CLIENTs the shim makes: a constant handle whose
 * operations take no lock and keep no state.
 *
 * libtirpc's authnone_create() hands out one object per process, and its
 * marshal takes a process-wide lock on every call.  A fork() while another
 * thread is inside that marshal leaves the lock held for good in the
 * child, and the child's next authnone_create(), or call with that AUTH,
 * blocks: the child of a busy multi-threaded client could never make a
 * CLIENT of its own.  This handle has nothing a fork can leave behind.
 *
 * It is what a program finds in cl_auth, as libtirpc's would be: it may
 * auth_destroy() it (nothing happens) and put another AUTH in its place.
 */
#ifndef TRANSPORT_AUTH_NONE_H
#define TRANSPORT_AUTH_NONE_H

#include <rpc/rpc.h>

AUTH *rpcrdma_authnone(void);

#endif
