/*
 * nfstest-server: NFS version 3 and MOUNT version 3 for one directory,
 * on plain libtirpc, as user-space file servers are written:
 *
 *   -p PORT    a listening socket given to svc_tli_create(), both programs
 *              registered on it with svc_reg(..., NULL): no rpcbind
 *   (no -p)    svc_create(..., "tcp") for each program, registered with
 *              rpcbind; both share libtirpc's one "tcp" transport
 *
 * served by svc_run(), or by its own loop around svc_getreq_poll() or
 * svc_getreqset() (-L).  With -u each request runs under the caller's
 * AUTH_SYS identity (setgroups, setegid, seteuid, and back to root once
 * the reply is sent); -D daemonizes and -W pre-forks workers once the
 * transports exist; with -K, SIGUSR2 makes it destroy its listener and
 * serve on the connections it has.  The dispatch functions are rpcgen's
 * (-M -m); the procedures are in nfs_proc.c, nfs_dir.c and mount_proc.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "nfstest.h"
#include "../workers.h"

#define EX_USAGE	64
#define MAX_WORKERS	64

char nfstest_write_verf[NFS3_WRITEVERFSIZE];

enum loop { LOOP_SVC_RUN, LOOP_POLL, LOOP_SELECT };

/* -u, -U: the identities requests run under. */
static bool switch_ids;
/* -T N: NFS calls answered by N worker threads (nfs_defer.c). */
static int defer_threads;
static uid_t anon_uid = 65534;
static gid_t anon_gid = 65534;
static gid_t own_gid;
static gid_t *own_groups;
static int own_ngroups;

/* --- transfer sizes ---------------------------------------------------------- */

/*
 * A stream carries a whole 1 MiB READ or WRITE; a datagram is kept to
 * 32 KiB.  The answer comes from the request's own descriptor, as file
 * servers do it; a descriptor that does not answer counts as a datagram.
 */
uint32_t
transport_max_io(SVCXPRT *xprt)
{
	static atomic_int warned;
	socklen_t len = sizeof(int);
	int type = 0;

	if (getsockopt(xprt->xp_fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0) {
		if (!atomic_exchange(&warned, 1))
			fprintf(stderr, "%s: cannot determine the socket type of descriptor %d: %s\n",
				PROGNAME, xprt->xp_fd, strerror(errno));
		return NFSTEST_MAX_DGRAM;
	}
	return type == SOCK_STREAM ? NFSTEST_MAX_STREAM : NFSTEST_MAX_DGRAM;
}

/* --- identities -------------------------------------------------------------- */

static void
ids_leave(void)
{
	if (!switch_ids)
		return;
	if (seteuid(0) < 0 || setegid(own_gid) < 0 || setgroups((size_t)own_ngroups, own_groups) < 0) {
		/* Serving on under a client's identity would be worse. */
		fprintf(stderr, "%s: cannot return to the server's identity: %s\n",
			PROGNAME, strerror(errno));
		_exit(1);
	}
}

/* Take the caller's AUTH_SYS identity, or the -U one for other flavors. */
static bool
ids_enter(const struct svc_req *rq)
{
	const gid_t *gids = NULL;
	uid_t uid = anon_uid;
	gid_t gid = anon_gid;
	size_t ngids = 0;

	if (!switch_ids)
		return true;
	if (rq->rq_cred.oa_flavor == AUTH_SYS && rq->rq_clntcred) {
		const struct authunix_parms *au = (const void *)rq->rq_clntcred;

		uid = au->aup_uid;
		gid = au->aup_gid;
		gids = au->aup_gids;
		ngids = au->aup_len;
	}
	if (setgroups(ngids, gids) == 0 && setegid(gid) == 0 && seteuid(uid) == 0)
		return true;
	fprintf(stderr, "%s: cannot take uid %u gid %u (%zu groups): %s\n",
		PROGNAME, (unsigned int)uid, (unsigned int)gid, ngids, strerror(errno));
	return false;
}

static int
ids_init(void)
{
	int n;

	if (!switch_ids)
		return 0;
	if (geteuid() != 0) {
		fprintf(stderr, "%s: -u needs root (the server switches to each caller's identity)\n",
			PROGNAME);
		return -1;
	}
	own_gid = getegid();
	n = getgroups(0, NULL);
	own_groups = calloc(n > 0 ? (size_t)n : 1, sizeof(gid_t));
	if (n < 0 || !own_groups || (own_ngroups = getgroups(n, own_groups)) < 0) {
		fprintf(stderr, "%s: getgroups: %s\n", PROGNAME, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * -K: on SIGUSR2 the listener is destroyed before the next call, as by a
 * server that stops taking clients and finishes with those it has.
 */
static bool close_on_usr2;
static SVCXPRT *listener;
static atomic_int close_asked;

static void
close_listener_if_asked(void)
{
	if (!listener || !atomic_load(&close_asked))
		return;
	svc_destroy(listener);
	listener = NULL;
	fprintf(stderr, "%s: listener destroyed\n", PROGNAME);
}

static void
serve(struct svc_req *rq, SVCXPRT *xprt, void (*program)(struct svc_req *, SVCXPRT *))
{
	close_listener_if_asked();
	if (ids_enter(rq))
		program(rq, xprt);	/* decodes, runs, replies, frees */
	else
		svcerr_systemerr(xprt);
	ids_leave();
}

static void
nfs_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	if (defer_threads) {
		close_listener_if_asked();
		nfs_defer_dispatch(rq, xprt);	/* nfs_defer.c */
	} else {
		serve(rq, xprt, nfs_program_3);
	}
}

static void
mount_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	serve(rq, xprt, mount_program_3);
}

/* --- transports -------------------------------------------------------------- */

static int
listen_socket(const char *addr, unsigned int port, int *family)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t sslen;
	int one = 1, fd;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		sslen = sizeof(*sin6);
	} else if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		sslen = sizeof(*sin);
	} else {
		fprintf(stderr, "%s: not a numeric address: %s\n", PROGNAME, addr);
		return -1;
	}
	*family = ss.ss_family;
	/*
	 * Non-blocking, as pre-forking servers make it: every worker polls
	 * the listener, and those that lose the race to accept() must get
	 * EAGAIN, not block in it.
	 */
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, sslen) < 0 || listen(fd, SOMAXCONN) < 0) {
		fprintf(stderr, "%s: cannot listen on %s port %u: %s\n",
			PROGNAME, addr, port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static unsigned int
local_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return 0;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

/* NFS and MOUNT on one TCP listener; its port in *bound (0: rpcbind's choice). */
static int
create_transports(const char *addr, bool have_port, unsigned int port, unsigned int *bound)
{
	struct netconfig *nconf;
	SVCXPRT *xprt;
	int family, fd;

	*bound = 0;
	if (!have_port) {
		if (!svc_create(nfs_dispatch, NFS_PROGRAM, NFS_V3, "tcp") ||
		    !svc_create(mount_dispatch, MOUNT_PROGRAM, MOUNT_V3, "tcp")) {
			fprintf(stderr, "%s: svc_create failed (is rpcbind running?)\n", PROGNAME);
			return -1;
		}
		return 0;
	}
	fd = listen_socket(addr, port, &family);
	if (fd < 0)
		return -1;
	*bound = local_port(fd);
	nconf = getnetconfigent(family == AF_INET6 ? "tcp6" : "tcp");
	if (!nconf) {
		fprintf(stderr, "%s: %s\n", PROGNAME, nc_sperror());
		close(fd);
		return -1;
	}
	xprt = svc_tli_create(fd, nconf, NULL, 0, 0);
	freenetconfigent(nconf);
	if (!xprt) {
		fprintf(stderr, "%s: svc_tli_create failed\n", PROGNAME);
		close(fd);
		return -1;
	}
	if (!svc_reg(xprt, NFS_PROGRAM, NFS_V3, nfs_dispatch, NULL) ||
	    !svc_reg(xprt, MOUNT_PROGRAM, MOUNT_V3, mount_dispatch, NULL)) {
		fprintf(stderr, "%s: svc_reg failed\n", PROGNAME);
		svc_destroy(xprt);
		return -1;
	}
	listener = xprt;
	return 0;
}

/* Write "ready PORT" to path atomically (readers never see half of it). */
static int
write_ready(const char *path, unsigned int port)
{
	char *tmp = NULL;
	FILE *f;
	int ok;

	if (asprintf(&tmp, "%s.tmp", path) < 0)
		return -1;
	f = fopen(tmp, "w");
	ok = f && fprintf(f, "ready %u\n", port) > 0;
	ok = f && fclose(f) == 0 && ok;
	ok = ok && rename(tmp, path) == 0;
	if (!ok)
		fprintf(stderr, "%s: cannot write %s: %s\n", PROGNAME, path, strerror(errno));
	free(tmp);
	return ok ? 0 : -1;
}

/* --- serving and stopping ---------------------------------------------------- */

/*
 * SIGTERM and SIGINT are blocked everywhere and taken by one thread with
 * sigwait(), so no libtirpc code runs in a signal handler.  That thread
 * calls svc_exit() and interrupts the loop's poll() with SIGUSR1 (a no-op
 * handler) until the loop has returned.
 */
static sigset_t stop_set;
static pthread_t loop_thread;
static atomic_int loop_returned;
static atomic_int stop_signal;

static void
wake(int sig)
{
	(void)sig;
}

static void *
stopper(void *arg)
{
	const struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (close_on_usr2)
		sigaddset(&set, SIGUSR2);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			return NULL;
		if (sig != SIGUSR2)
			break;
		atomic_store(&close_asked, 1);
	}
	atomic_store(&stop_signal, sig);
	while (!atomic_load(&loop_returned)) {
		svc_exit();
		pthread_kill(loop_thread, SIGUSR1);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* The program's own loop: poll() + svc_getreq_poll(), or select() + svc_getreqset(). */
static void
own_loop(bool use_select)
{
	while (!atomic_load(&stop_signal)) {
		if (use_select) {
			fd_set readfds = svc_fdset;

			if (select(svc_maxfd + 1, &readfds, NULL, NULL, NULL) > 0)
				svc_getreqset(&readfds);
		} else {
			int nfds = svc_max_pollfd, n;
			struct pollfd *fds = calloc(nfds ? (size_t)nfds : 1, sizeof(*fds));

			if (!fds)
				return;
			memcpy(fds, svc_pollfd, sizeof(*fds) * (size_t)nfds);
			n = poll(fds, (nfds_t)nfds, -1);
			if (n > 0)
				svc_getreq_poll(fds, n);
			free(fds);
		}
	}
}

/* Serve until SIGTERM or SIGINT (status 0) or until the loop fails (1). */
static int
serve_until_stopped(enum loop loop, const char *ready, unsigned int port)
{
	pthread_t thread;
	int status = 0;

	loop_thread = pthread_self();
	if (pthread_create(&thread, NULL, stopper, NULL) != 0) {
		fprintf(stderr, "%s: cannot start the signal thread\n", PROGNAME);
		return 1;
	}
	/* Each serving process has its own (threads do not cross fork). */
	if (defer_threads && nfs_defer_start(defer_threads) < 0)
		return 1;
	if (ready && write_ready(ready, port) < 0)
		status = 1;
	else if (loop == LOOP_SVC_RUN)
		svc_run();
	else
		own_loop(loop == LOOP_SELECT);
	atomic_store(&loop_returned, 1);
	if (!atomic_load(&stop_signal)) {
		if (!status)
			fprintf(stderr, "%s: the service loop returned unexpectedly\n", PROGNAME);
		status = 1;
		pthread_cancel(thread);
	}
	pthread_join(thread, NULL);
	if (!status)
		fprintf(stderr, "%s: stopped by signal %d\n", PROGNAME, atomic_load(&stop_signal));
	return status;
}

/* -D: the parent exits at once; the child leads a new session and serves. */
static int
daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0) {
		fprintf(stderr, "%s: fork: %s\n", PROGNAME, strerror(errno));
		return -1;
	}
	if (pid > 0)
		_exit(0);
	setsid();
	fd = open("/dev/null", O_RDONLY);
	if (fd > 0) {
		dup2(fd, 0);
		close(fd);
	}
	/* stderr stays (the caller's log), and says who serves. */
	fprintf(stderr, "%s: daemon pid %d\n", PROGNAME, (int)getpid());
	return 0;
}

/*
 * -W N: N worker processes share the transports and each runs the loop;
 * this process waits.  SIGTERM or SIGINT is passed on to the workers; the
 * status is 0 when every worker exited 0 on it.
 */
static int
run_workers(int n, enum loop loop, const char *ready, unsigned int port)
{
	pid_t pids[MAX_WORKERS];
	int i, left = 0, status = 0;
	sigset_t set = stop_set;

	for (i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "%s: fork: %s\n", PROGNAME, strerror(errno));
			status = 1;
			break;
		}
		if (pids[i] == 0)
			exit(serve_until_stopped(loop, NULL, port));
		left++;
	}
	if (!status && ready && write_ready(ready, port) < 0)
		status = 1;
	fprintf(stderr, "%s: %d workers serving\n", PROGNAME, left);
	sigaddset(&set, SIGCHLD);
	return workers_wait(PROGNAME, pids, i < n ? i + 1 : n, left, &set, status);
}

/* --- main ---------------------------------------------------------------------- */

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
		"usage: %s -d DIR [-p PORT [-a ADDR]] [-r FILE] [-L svc_run|poll|select]\n"
		"       [-u] [-U UID[:GID]] [-D] [-W N] [-T N] [-K]\n"
		"  -d DIR    the directory to serve, exported as \"/\"\n"
		"  -p PORT   NFS and MOUNT on this TCP port (svc_tli_create, no rpcbind;\n"
		"            0: any free port, reported in the ready file); without -p:\n"
		"            svc_create(\"tcp\"), registered with rpcbind\n"
		"  -a ADDR   numeric bind address for -p (default 0.0.0.0; IPv6 too)\n"
		"  -r FILE   write \"ready PORT\" to FILE once serving\n"
		"  -L LOOP   svc_run (default), poll (own poll() and svc_getreq_poll)\n"
		"            or select (own select() and svc_getreqset)\n"
		"  -u        run each request as the caller's AUTH_SYS uid, gid and groups\n"
		"            (the server starts as root)\n"
		"  -U ID     the identity of requests without AUTH_SYS under -u\n"
		"            (default 65534:65534)\n"
		"  -D        daemonize once the transports exist (the child writes FILE)\n"
		"  -W N      pre-fork N worker processes (1-%d) that all serve (with -p)\n"
		"  -T N      N worker threads (1-64) run the NFS calls and reply after\n"
		"            the dispatch returned (not with -u)\n"
		"  -K        on SIGUSR2, destroy the listener (svc_destroy) before the\n"
		"            next call and serve on the connections it accepted (with -p,\n"
		"            not with -W)\n"
		"SIGTERM or SIGINT stop the server; it then exits 0.\n",
		PROGNAME, MAX_WORKERS);
	exit(EX_USAGE);
}

static unsigned long
number(const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-') {
		fprintf(stderr, "%s: bad number: %s\n", PROGNAME, s);
		usage();
	}
	return v;
}

static void
parse_ids(char *s)
{
	char *colon = strchr(s, ':');

	if (colon)
		*colon = '\0';
	anon_uid = (uid_t)number(s, 0xfffffffeUL);
	anon_gid = colon ? (gid_t)number(colon + 1, 0xfffffffeUL) : (gid_t)anon_uid;
}

/* Verifiers of this process: handles, writes and cookies. */
static uint32_t
make_verifiers(void)
{
	struct timespec now;
	uint32_t a, b;

	clock_gettime(CLOCK_REALTIME, &now);
	a = (uint32_t)now.tv_sec;
	b = (uint32_t)now.tv_nsec ^ ((uint32_t)getpid() << 12);
	memcpy(nfstest_write_verf, &a, 4);
	memcpy(nfstest_write_verf + 4, &b, 4);
	return a ^ b;
}

int
main(int argc, char **argv)
{
	const char *dir = NULL, *addr = NULL, *ready = NULL;
	unsigned int port = 0, bound = 0;
	bool have_port = false, detach = false;
	enum loop loop = LOOP_SVC_RUN;
	int workers = 0, status, opt;
	struct sigaction sa;

	while ((opt = getopt(argc, argv, "d:p:a:r:L:uU:DW:T:Kh")) != -1) {
		switch (opt) {
		case 'd':
			dir = optarg;
			break;
		case 'p':
			port = (unsigned int)number(optarg, 65535);
			have_port = true;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'r':
			ready = optarg;
			break;
		case 'L':
			if (!strcmp(optarg, "svc_run"))
				loop = LOOP_SVC_RUN;
			else if (!strcmp(optarg, "poll"))
				loop = LOOP_POLL;
			else if (!strcmp(optarg, "select"))
				loop = LOOP_SELECT;
			else
				usage();
			break;
		case 'u':
			switch_ids = true;
			break;
		case 'U':
			parse_ids(optarg);
			break;
		case 'D':
			detach = true;
			break;
		case 'W':
			workers = (int)number(optarg, MAX_WORKERS);
			if (workers < 1)
				usage();
			break;
		case 'T':
			defer_threads = (int)number(optarg, 64);
			if (defer_threads < 1)
				usage();
			break;
		case 'K':
			close_on_usr2 = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc || !dir)
		usage();
	if (addr && !have_port) {
		fprintf(stderr, "%s: -a needs -p (svc_create binds every address)\n", PROGNAME);
		usage();
	}
	if (workers && !have_port) {
		fprintf(stderr, "%s: -W needs -p (the workers share its listening socket)\n", PROGNAME);
		usage();
	}
	if (close_on_usr2 && (!have_port || workers)) {
		fprintf(stderr, "%s: -K needs -p and goes without -W\n", PROGNAME);
		usage();
	}
	if (defer_threads && switch_ids) {
		/* Identities are the process's: a worker cannot take one alone. */
		fprintf(stderr, "%s: -T goes without -u\n", PROGNAME);
		usage();
	}
	if (!addr)
		addr = "0.0.0.0";

	/* Modes come from the client, which applied its own umask. */
	umask(0);
	signal(SIGPIPE, SIG_IGN);
	if (fh_init(dir, make_verifiers()) < 0 || ids_init() < 0)
		return 1;

	/* Blocked before any thread or worker exists: all inherit it. */
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	sigaddset(&stop_set, SIGCHLD);
	if (close_on_usr2)
		sigaddset(&stop_set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &stop_set, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	if (create_transports(addr, have_port, port, &bound) < 0)
		return 1;
	if (have_port)
		fprintf(stderr, "%s: serving %s on %s port %u (NFS 3, MOUNT 3; svc_tli_create)\n",
			PROGNAME, fh_root_path(), addr, bound);
	else
		fprintf(stderr, "%s: serving %s (NFS 3, MOUNT 3; svc_create, registered with rpcbind)\n",
			PROGNAME, fh_root_path());
	if (detach && daemonize() < 0)
		return 1;
	if (workers)
		return run_workers(workers, loop, ready, bound);
	status = serve_until_stopped(loop, ready, bound);
	if (!have_port) {
		/* Leave rpcbind as it was found. */
		svc_unreg(NFS_PROGRAM, NFS_V3);
		svc_unreg(MOUNT_PROGRAM, MOUNT_V3);
	}
	return status;
}
