/*
 * Pre-forked workers: waiting for them and stopping them (workers.h).
 */
#include <stdio.h>
#include <sys/wait.h>

#include "workers.h"

int
workers_wait(const char *prog, pid_t *pids, int n, int left,
	     const sigset_t *set, int status)
{
	int i, sig, ws;
	pid_t pid;

	while (left > 0 && !status) {
		if (sigwait(set, &sig) != 0 || sig != SIGCHLD)
			break;
		while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
			fprintf(stderr, "%s: worker %d ended unexpectedly (status 0x%x)\n",
				prog, (int)pid, ws);
			for (i = 0; i < n; i++)
				if (pids[i] == pid)
					pids[i] = 0;
			left--;
		}
	}
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (i = 0; i < n; i++) {
		if (pids[i] <= 0 || waitpid(pids[i], &ws, 0) < 0)
			continue;
		if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
			status = 1;
	}
	/* Every worker ended on its own: nothing serves any more. */
	return left == 0 ? 1 : status;
}
