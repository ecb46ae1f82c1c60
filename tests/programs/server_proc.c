/*
 * How rpctest-server runs (server.h), written the way daemons are:
 *
 *   -D 1|2  detach once the transports exist: fork (and setsid), the
 *           parent exits; with 2, fork again (the classic double fork)
 *   -W N    pre-fork N workers that all run the loop; this process waits
 *   -u      each call under the caller's AUTH_SYS identity: setgroups,
 *           setegid, seteuid and setfsuid before, back to root after
 *   -f      fork per NULL call: the child tries to answer on the
 *           transport it inherited, then the parent answers
 *   -x CMD  on SIGUSR2, run CMD through system(), popen() and fork+exec
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server.h"
#include "workers.h"

#define MAX_WORKERS 64
#define MAX_SEEN_IDS 16

struct proc_options proc;

/* --- identities (-u) --------------------------------------------------- */

static gid_t own_gid;
static gid_t *own_groups;
static int own_ngroups;

int
ids_init(void)
{
	int n;

	if (!proc.switch_ids)
		return 0;
	if (geteuid() != 0) {
		fprintf(stderr, "%s: -u needs root (each call runs as its caller)\n", progname);
		return -1;
	}
	own_gid = getegid();
	n = getgroups(0, NULL);
	own_groups = calloc(n > 0 ? (size_t)n : 1, sizeof(gid_t));
	if (n < 0 || !own_groups || (own_ngroups = getgroups(n, own_groups)) < 0) {
		fprintf(stderr, "%s: getgroups: %s\n", progname, strerror(errno));
		return -1;
	}
	return 0;
}

/* Say once per uid that calls run as it (the log shows the switches). */
static void
ids_note(uid_t uid, gid_t gid)
{
	static uid_t seen[MAX_SEEN_IDS];
	static unsigned int nseen;
	unsigned int i;

	for (i = 0; i < nseen; i++)
		if (seen[i] == uid)
			return;
	if (nseen < MAX_SEEN_IDS)
		seen[nseen++] = uid;
	fprintf(stderr, "%s: serving calls as uid %u gid %u\n", progname,
		(unsigned int)uid, (unsigned int)gid);
}

static bool
ids_enter(const struct svc_req *rq)
{
	const struct authunix_parms *au = (const void *)rq->rq_clntcred;

	if (rq->rq_cred.oa_flavor != AUTH_SYS || !au) {
		/* Other flavors run as nobody. */
		static const gid_t none[1] = { 65534 };

		if (setgroups(1, none) || setegid(65534) || seteuid(65534))
			return false;
		setfsuid(65534);
		return true;
	}
	if (setgroups(au->aup_len, au->aup_gids) || setegid(au->aup_gid) ||
	    seteuid(au->aup_uid)) {
		fprintf(stderr, "%s: cannot take uid %u gid %u: %s\n", progname,
			(unsigned int)au->aup_uid, (unsigned int)au->aup_gid,
			strerror(errno));
		return false;
	}
	setfsuid(au->aup_uid);
	ids_note(au->aup_uid, au->aup_gid);
	return true;
}

static void
ids_leave(void)
{
	if (seteuid(0) || setegid(own_gid) ||
	    setgroups((size_t)own_ngroups, own_groups)) {
		/* Serving on under a caller's identity would be worse. */
		fprintf(stderr, "%s: cannot return to root: %s\n", progname, strerror(errno));
		_exit(1);
	}
	setfsuid(0);
}

/* --- fork per call (-f) ------------------------------------------------ */

/* The NULL procedure's result: nothing (an xdrproc_t without a cast). */
static bool_t
no_result(XDR *xdrs, ...)
{
	(void)xdrs;
	return TRUE;
}

/*
 * The child holds a copy of the transport the call came on: an answer
 * from it must fail cleanly over RDMA (the connection is the parent's);
 * the parent waits for it and answers itself.
 */
static void
child_tries_reply(SVCXPRT *xprt)
{
	pid_t pid = fork();
	int ws;

	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", progname, strerror(errno));
		return;
	}
	if (pid == 0) {
		bool_t sent = svc_sendreply(xprt, no_result, NULL);

		fprintf(stderr, "%s: child %d: svc_sendreply on the parent's transport %s\n",
			progname, (int)getpid(), sent ? "sent a reply" : "failed");
		_exit(0);
	}
	if (waitpid(pid, &ws, 0) == pid)
		fprintf(stderr, "%s: child %d exited with status %d\n", progname,
			(int)pid, WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws));
}

void
dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	if (proc.fork_per_call && rq->rq_proc == NULLPROC)
		child_tries_reply(xprt);
	if (proc.switch_ids && !ids_enter(rq)) {
		svcerr_systemerr(xprt);
		ids_leave();
		return;
	}
	rpctest_prog_1(rq, xprt);
	if (proc.switch_ids)
		ids_leave();
	if (proc.close_after && --proc.close_after == 0 && proc.listener) {
		/* As a server that stops taking clients and serves its own. */
		svc_destroy(proc.listener);
		proc.listener = NULL;
		fprintf(stderr, "%s: listener destroyed\n", progname);
	}
}

/* --- daemon (-D) ------------------------------------------------------- */

int
daemonize(int times)
{
	int i, fd;

	for (i = 0; i < times; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "%s: fork: %s\n", progname, strerror(errno));
			return -1;
		}
		if (pid > 0)
			_exit(0);
		if (i == 0)
			setsid();
	}
	fd = open("/dev/null", O_RDONLY);
	if (fd > 0) {
		dup2(fd, 0);
		close(fd);
	}
	/* stderr stays: it is the test's log. */
	fprintf(stderr, "%s: daemon pid %d\n", progname, (int)getpid());
	return 0;
}

/* --- pre-forked workers (-W) ------------------------------------------- */

int
run_workers(int n, int (*serve)(void), void (*ready)(void))
{
	pid_t pids[MAX_WORKERS];
	int i, left = 0, status = 0;
	sigset_t set;

	if (n > MAX_WORKERS)
		n = MAX_WORKERS;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "%s: fork: %s\n", progname, strerror(errno));
			status = 1;
			break;
		}
		if (pids[i] == 0)
			exit(serve());
		fprintf(stderr, "%s: worker pid %d\n", progname, (int)pids[i]);
		left++;
	}
	if (!status)
		ready();
	return workers_wait(progname, pids, i < n ? i + 1 : n, left, &set, status);
}

/* --- children of a serving process (-x) -------------------------------- */

static const char *spawn_cmd;

static int
exit_status(int ws)
{
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static void
spawn_all(void)
{
	char line[512];
	FILE *p;
	pid_t pid;
	int ws;

	ws = system(spawn_cmd);
	fprintf(stderr, "%s: system: exit status %d\n", progname, exit_status(ws));

	p = popen(spawn_cmd, "r");
	if (p) {
		while (fgets(line, sizeof(line), p))
			fprintf(stderr, "%s: popen: %s", progname, line);
		fprintf(stderr, "%s: popen: exit status %d\n", progname,
			exit_status(pclose(p)));
	}

	pid = fork();
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", spawn_cmd, (char *)NULL);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &ws, 0) == pid)
		fprintf(stderr, "%s: fork+exec: exit status %d\n", progname,
			exit_status(ws));
}

static void *
spawner(void *arg)
{
	sigset_t set;
	int sig;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	while (sigwait(&set, &sig) == 0)
		spawn_all();
	return NULL;
}

int
spawner_start(const char *cmd)
{
	pthread_t t;

	spawn_cmd = cmd;
	if (pthread_create(&t, NULL, spawner, NULL) != 0) {
		fprintf(stderr, "%s: cannot start the spawning thread\n", progname);
		return -1;
	}
	pthread_detach(t);
	return 0;
}
