/*
 * Which fork() generation this process is, without a system call: for
 * checks made on every RPC call (is this object the parent's?), where
 * getpid() would cost one (the C library no longer caches the process
 * id).
 *
 * The first call registers a pthread_atfork() child handler that counts
 * one more generation; an object remembers fork_gen() when it is made,
 * and one made in another generation belongs to an ancestor.  Each copy
 * of this file (the preloaded library has one, the RDMA module another)
 * counts on its own: compare only values read from the same copy.  A
 * child made without the fork handlers (_Fork(), a raw clone()) is not
 * counted, as nothing there runs them.
 */
#ifndef COMMON_FORKGEN_H
#define COMMON_FORKGEN_H

unsigned int fork_gen(void);

#endif
