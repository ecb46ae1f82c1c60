/*
 * Pre-forked workers of the test servers (rpctest-server -W,
 * nfstest-server -W): the process that forked them waits for them.
 */
#ifndef RPCTEST_WORKERS_H
#define RPCTEST_WORKERS_H

#include <signal.h>
#include <sys/types.h>

/*
 * Wait, while status is 0, until a signal of set other than SIGCHLD
 * comes (set is blocked and holds SIGCHLD) or every worker has ended on
 * its own, each such end logged as prog's; then stop the workers left
 * with SIGTERM and reap them.  pids: the n workers forked (entries <= 0
 * are none), left of them running.  Returns 1 when every worker ended on
 * its own or one left did not exit 0 on SIGTERM, else status.
 */
int workers_wait(const char *prog, pid_t *pids, int n, int left,
		 const sigset_t *set, int status);

#endif
