/*
 * rpctest-server: the rpctest program (rpctest.x) served by plain libtirpc.
 *
 * The dispatch function is the one rpcgen -m generates; this file holds the
 * procedures and a main() that creates the listener one of three ways:
 *
 *   (no -p)    svc_create(..., "tcp"), registered with rpcbind
 *   -m tli     a bound, listening socket given to svc_tli_create(), then
 *              svc_reg(..., NULL): no rpcbind registration
 *   -m tcp     the same socket given to svctcp_create(sock, 0, 0), then
 *              svc_register(..., 0): no portmapper registration
 *
 * Results live in static storage, as in any rpcgen server: each procedure
 * frees its previous result before building the next one.  How the
 * process runs once its transports exist (daemon, workers, identities,
 * children) is in server_proc.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "pattern.h"
#include "rpctest.h"
#include "server.h"

#define EX_USAGE 64

const char *progname = "rpctest-server";

/*
 * -X OFFSET: damage replies on purpose so a test can prove the client's
 * verification catches it.  UINT64_MAX: off.
 */
static uint64_t corrupt_at = UINT64_MAX;

/*
 * -T N[,MS[,P]]: worker threads answering after the dispatch, and a
 * procedure never answered (server_defer.c).
 */
static int defer_threads;
static unsigned int defer_ms = 5;
static int defer_drop = -1;
static void (*serve_dispatch)(struct svc_req *, SVCXPRT *) = dispatch;

static void
corrupt(char *buf, uint64_t len)
{
	if (corrupt_at < len)
		buf[corrupt_at] ^= 0x01;
}

/* --- procedures --------------------------------------------------------- */

void *
rpctest_null_1_svc(struct svc_req *rqstp)
{
	static char res;

	return &res;
}

/* Allocate len bytes for a reply, or answer SYSTEM_ERR and return NULL. */
static char *
reply_buffer(struct svc_req *rqstp, uint64_t len)
{
	char *buf;

	if (len > UINT_MAX) {
		svcerr_systemerr(rqstp->rq_xprt);
		return NULL;
	}
	buf = malloc(len ? len : 1);
	if (!buf) {
		fprintf(stderr, "%s: cannot allocate %llu bytes\n", progname,
			(unsigned long long)len);
		svcerr_systemerr(rqstp->rq_xprt);
	}
	return buf;
}

rpctest_data *
rpctest_echo_1_svc(rpctest_data arg, struct svc_req *rqstp)
{
	static rpctest_data res;
	char *buf;

	xdr_free((xdrproc_t)xdr_rpctest_data, (char *)&res);
	memset(&res, 0, sizeof(res));

	buf = reply_buffer(rqstp, arg.rpctest_data_len);
	if (!buf)
		return NULL;
	if (arg.rpctest_data_len)
		memcpy(buf, arg.rpctest_data_val, arg.rpctest_data_len);
	corrupt(buf, arg.rpctest_data_len);
	res.rpctest_data_val = buf;
	res.rpctest_data_len = arg.rpctest_data_len;
	return &res;
}

rpctest_sink_res *
rpctest_sink_1_svc(rpctest_data arg, struct svc_req *rqstp)
{
	static rpctest_sink_res res;

	res.length = arg.rpctest_data_len;
	res.checksum = checksum(arg.rpctest_data_val, arg.rpctest_data_len);
	if (corrupt_at < res.length)
		res.checksum ^= 1;
	return &res;
}

u_quad_t *
rpctest_digest_1_svc(rpctest_data arg, struct svc_req *rqstp)
{
	static u_quad_t res;

	res = checksum(arg.rpctest_data_val, arg.rpctest_data_len);
	if (corrupt_at < arg.rpctest_data_len)
		res ^= 1;
	return &res;
}

rpctest_data *
rpctest_source_1_svc(rpctest_source_args arg, struct svc_req *rqstp)
{
	static rpctest_data res;
	char *buf;

	xdr_free((xdrproc_t)xdr_rpctest_data, (char *)&res);
	memset(&res, 0, sizeof(res));

	buf = reply_buffer(rqstp, arg.length);
	if (!buf)
		return NULL;
	pattern_fill(buf, arg.length, arg.seed);
	corrupt(buf, arg.length);
	res.rpctest_data_val = buf;
	res.rpctest_data_len = (u_int)arg.length;
	return &res;
}

rpctest_mixed_res *
rpctest_mixed_1_svc(int i, quad_t h, rpctest_str s, rpctest_data d,
		    struct svc_req *rqstp)
{
	static rpctest_mixed_res res;

	xdr_free((xdrproc_t)xdr_rpctest_mixed_res, (char *)&res);
	memset(&res, 0, sizeof(res));

	res.s = strdup(s ? s : "");
	if (!res.s) {
		svcerr_systemerr(rqstp->rq_xprt);
		return NULL;
	}
	res.i = i;
	res.h = h;
	res.d_length = d.rpctest_data_len;
	res.d_checksum = checksum(d.rpctest_data_val, d.rpctest_data_len);
	if (corrupt_at < res.d_length)
		res.d_checksum ^= 1;
	return &res;
}

/* The caller's universal address, as taddr2uaddr() writes it. */
static char *
caller_uaddr(SVCXPRT *xprt)
{
	struct netbuf *nb = svc_getrpccaller(xprt);
	struct netconfig *nconf;
	const char *netid;
	char *uaddr;

	if (!nb || !nb->buf || nb->len < sizeof(sa_family_t))
		return strdup("");
	netid = ((struct sockaddr *)nb->buf)->sa_family == AF_INET6 ? "tcp6" : "tcp";
	nconf = getnetconfigent(netid);
	if (!nconf)
		return strdup("");
	uaddr = taddr2uaddr(nconf, nb);
	freenetconfigent(nconf);
	return uaddr ? uaddr : strdup("");
}

/* "ADDR.PORT" (ports in decimal) for an IPv4 or IPv6 address. */
static void
sockaddr_text(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)ss;

		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		port = ntohs(sin->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		port = ntohs(sin6->sin6_port);
	}
	snprintf(buf, len, "%s.%u", a, port);
}

/*
 * What a server that inspects its transport's descriptor learns: the
 * socket type, domain and protocol, whether fstat calls it a socket,
 * TCP_NODELAY set and read back, and the two addresses.
 */
static char *
xp_fd_report(int fd)
{
	struct sockaddr_storage name, peer;
	socklen_t len, nlen = sizeof(name), plen = sizeof(peer);
	int type = -1, domain = -1, proto = -1, nodelay = 1;
	char n[80] = "-", p[80] = "-", *out = NULL;
	struct stat st;

	len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0)
		type = -1;
	len = sizeof(domain);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0)
		domain = -1;
	len = sizeof(proto);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &len) < 0)
		proto = -1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof(nodelay)) < 0)
		nodelay = -1;
	else {
		len = sizeof(nodelay);
		if (getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len) < 0)
			nodelay = -1;
	}
	if (getsockname(fd, (struct sockaddr *)&name, &nlen) == 0)
		sockaddr_text(&name, n, sizeof(n));
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) == 0)
		sockaddr_text(&peer, p, sizeof(p));
	if (asprintf(&out, "type:%s,domain:%s,protocol:%s,sock:%s,nodelay:%d,local:%s,peer:%s",
		     type == SOCK_STREAM ? "stream" : type == SOCK_DGRAM ? "dgram" : "?",
		     domain == AF_INET ? "inet" : domain == AF_INET6 ? "inet6" : "?",
		     proto == IPPROTO_TCP ? "tcp" : proto == IPPROTO_UDP ? "udp" : "?",
		     fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) ? "yes" : "no",
		     nodelay, n, p) < 0)
		return NULL;
	return out;
}

rpctest_whoami_res *
rpctest_whoami_1_svc(struct svc_req *rqstp)
{
	static rpctest_whoami_res res;
	const char *machine = "";

	xdr_free((xdrproc_t)xdr_rpctest_whoami_res, (char *)&res);
	memset(&res, 0, sizeof(res));

	res.flavor = (int)rqstp->rq_cred.oa_flavor;
	if (rqstp->rq_cred.oa_flavor == AUTH_SYS && rqstp->rq_clntcred) {
		const struct authunix_parms *aup = (const void *)rqstp->rq_clntcred;

		res.uid = aup->aup_uid;
		res.gid = aup->aup_gid;
		if (aup->aup_machname)
			machine = aup->aup_machname;
	}
	res.caller = caller_uaddr(rqstp->rq_xprt);
	res.netid = strdup(rqstp->rq_xprt->xp_netid ? rqstp->rq_xprt->xp_netid : "");
	res.machine = strdup(machine);
	res.xp_fd = xp_fd_report(rqstp->rq_xprt->xp_fd);
	if (!res.caller || !res.netid || !res.machine || !res.xp_fd) {
		svcerr_systemerr(rqstp->rq_xprt);
		return NULL;
	}
	return &res;
}

/* --- stopping ------------------------------------------------------------ */

/*
 * SIGTERM and SIGINT are blocked in every thread and taken by one thread
 * with sigwait(), so no libtirpc code ever runs inside a signal handler.
 * That thread calls svc_exit() and then interrupts the poll() in svc_run()
 * with SIGUSR1 (a no-op handler) until svc_run() has returned: svc_run()
 * only looks at svc_exit()'s effect when its poll() returns.  The
 * program's own loop reads svc_pollfd and svc_fdset itself, which
 * svc_exit() frees and clears: it is only interrupted, and calls
 * svc_exit() in its own thread once it sees the stop.
 */
static enum { LOOP_SVC_RUN, LOOP_POLL, LOOP_SELECT } loop = LOOP_SVC_RUN;
static pthread_t main_thread;
static atomic_int svc_run_returned;
static atomic_int stop_signal;

static void
wake_handler(int sig)
{
	(void)sig;
}

static void *
stopper(void *arg)
{
	const sigset_t *set = arg;
	const struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	int sig;

	if (sigwait(set, &sig) != 0)
		return NULL;
	atomic_store(&stop_signal, sig);
	while (!atomic_load(&svc_run_returned)) {
		if (loop == LOOP_SVC_RUN)
			svc_exit();
		pthread_kill(main_thread, SIGUSR1);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/*
 * The program's own event loop instead of svc_run(), as some servers have:
 * poll() over svc_pollfd then svc_getreq_poll(), or select() over
 * svc_fdset then svc_getreqset().  Ends once a stop signal was taken,
 * with svc_exit() as svc_run() would end.
 */
static void
own_loop(bool use_select)
{
	while (!atomic_load(&stop_signal)) {
		if (use_select) {
			fd_set readfds = svc_fdset;
			int n = select(svc_maxfd + 1, &readfds, NULL, NULL, NULL);

			if (n > 0)
				svc_getreqset(&readfds);
		} else {
			int nfds = svc_max_pollfd, n;
			struct pollfd *fds = calloc(nfds ? nfds : 1, sizeof(*fds));

			if (!fds)
				return;
			memcpy(fds, svc_pollfd, sizeof(*fds) * nfds);
			n = poll(fds, nfds, -1);
			if (n > 0)
				svc_getreq_poll(fds, n);
			free(fds);
		}
	}
	svc_exit();
}

/* --- listeners ----------------------------------------------------------- */

enum mode { MODE_CREATE, MODE_TLI, MODE_TCP };

/* A socket bound to addr:port and listening; its family in *family. */
static int
listen_socket(const char *addr, unsigned int port, int *family)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	int one = 1;
	int fd;

	memset(&ss, 0, sizeof(ss));
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) != 1)
			goto bad_addr;
		sslen = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
			goto bad_addr;
		sslen = sizeof(*sin);
	}
	*family = ss.ss_family;

	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0) {
		fprintf(stderr, "%s: socket: %s\n", progname, strerror(errno));
		return -1;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, sslen) < 0 ||
	    listen(fd, SOMAXCONN) < 0) {
		fprintf(stderr, "%s: cannot listen on %s port %u: %s\n",
			progname, addr, port, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;

bad_addr:
	fprintf(stderr, "%s: not a numeric address: %s\n", progname, addr);
	return -1;
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

static SVCXPRT *
create_fixed(enum mode mode, const char *addr, unsigned int port,
	     rpcprog_t prog, unsigned int *bound_port)
{
	struct netconfig *nconf;
	SVCXPRT *xprt;
	int family;
	int fd;

	fd = listen_socket(addr, port, &family);
	if (fd < 0)
		return NULL;
	*bound_port = local_port(fd);

	if (mode == MODE_TCP) {
		xprt = svctcp_create(fd, 0, 0);
		if (!xprt) {
			fprintf(stderr, "%s: svctcp_create failed\n", progname);
			close(fd);
			return NULL;
		}
		if (!svc_register(xprt, prog, RPCTEST_VERS, serve_dispatch, 0)) {
			fprintf(stderr, "%s: svc_register failed\n", progname);
			svc_destroy(xprt);
			return NULL;
		}
		return xprt;
	}

	nconf = getnetconfigent(family == AF_INET6 ? "tcp6" : "tcp");
	if (!nconf) {
		fprintf(stderr, "%s: %s\n", progname, nc_sperror());
		close(fd);
		return NULL;
	}
	xprt = svc_tli_create(fd, nconf, NULL, 0, 0);
	freenetconfigent(nconf);
	if (!xprt) {
		fprintf(stderr, "%s: svc_tli_create failed\n", progname);
		close(fd);
		return NULL;
	}
	if (!svc_reg(xprt, prog, RPCTEST_VERS, serve_dispatch, NULL)) {
		fprintf(stderr, "%s: svc_reg failed\n", progname);
		svc_destroy(xprt);
		return NULL;
	}
	return xprt;
}

/* Write "ready PORT" to path, atomically (readers never see a partial file). */
static int
write_ready(const char *path, unsigned int port)
{
	size_t len = strlen(path) + sizeof(".tmp");
	char *tmp = malloc(len);
	FILE *f;
	int ok;

	if (!tmp)
		return -1;
	snprintf(tmp, len, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", progname, tmp, strerror(errno));
		free(tmp);
		return -1;
	}
	ok = fprintf(f, "ready %u\n", port) > 0;
	ok = (fclose(f) == 0) && ok;
	ok = ok && rename(tmp, path) == 0;
	if (!ok)
		fprintf(stderr, "%s: cannot write %s: %s\n", progname, path, strerror(errno));
	free(tmp);
	return ok ? 0 : -1;
}

/* --- main ---------------------------------------------------------------- */

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
		"usage: %s [-p PORT [-a ADDR] [-m tli|tcp]] [-P PROG] [-r FILE]\n"
		"       [-L LOOP] [-X OFF] [-D 1|2] [-W N] [-u] [-f] [-x CMD] [-T N[,MS[,P]]]\n"
		"       [-K N]\n"
		"  -p PORT   listen on this TCP port, no rpcbind registration\n"
		"            (0: any free port, reported in the ready file)\n"
		"  -a ADDR   numeric bind address for -p (default 0.0.0.0; with a colon: IPv6)\n"
		"  -m MODE   create: svc_create(\"tcp\") with rpcbind (default without -p)\n"
		"            tli: svc_tli_create() on the -p socket (default with -p)\n"
		"            tcp: svctcp_create() on the -p socket\n"
		"  -P PROG   program number (default 0x%x), version %u\n"
		"  -r FILE   write \"ready PORT\" to FILE once listening (PORT 0: rpcbind)\n"
		"  -X OFF    damage ECHO/SOURCE replies at byte OFF and SINK/MIXED checksums\n"
		"            of data longer than OFF (to test client verification)\n"
		"  -L LOOP   run: svc_run (default), poll (own poll() over svc_pollfd,\n"
		"            svc_getreq_poll) or select (own select() over svc_fdset,\n"
		"            svc_getreqset)\n"
		"  -D 1|2    detach once the transports exist: fork (parent exits) and\n"
		"            setsid; 2: fork once more (\"daemon pid N\" on stderr)\n"
		"  -W N      pre-fork N workers that all serve (\"worker pid N\")\n"
		"  -u        run each call as the caller's AUTH_SYS uid, gid and groups\n"
		"            (setgroups, setegid, seteuid, setfsuid; the server starts as root)\n"
		"  -f        fork on each NULL call: the child tries to answer on the\n"
		"            transport it inherited, then the parent answers\n"
		"  -x CMD    on SIGUSR2 run CMD through system(), popen() and fork+exec\n"
		"  -T N[,MS[,P]] hand each call to one of N worker threads, which answers\n"
		"            it MS milliseconds (default 5) after the dispatch returned;\n"
		"            calls of procedure P are never answered, as batched calls\n"
		"            are not (not with -u, -f or -W)\n"
		"  -K N      after answering the Nth call, destroy the listener\n"
		"            (svc_destroy) and go on serving the connections it\n"
		"            accepted (needs -p; not with -T or -W)\n"
		"SIGTERM or SIGINT stop the server; it then exits 0.\n",
		progname, RPCTEST_PROG, RPCTEST_VERS);
	exit(EX_USAGE);
}

static unsigned long
parse_number(const char *s, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max || s[0] == '-') {
		fprintf(stderr, "%s: bad number: %s\n", progname, s);
		usage();
	}
	return v;
}

/* What serve() needs: where to say "ready", and on which port. */
static const char *ready_path;
static unsigned int ready_port;

/*
 * Serve until SIGTERM or SIGINT (0) or until the loop fails (1), in the
 * process that serves (after -D, in each -W worker); say "ready" first
 * when write_ready.
 */
static int
serve_loop(bool write_ready_file)
{
	sigset_t stopset;
	pthread_t stopper_thread;
	int status = 0;

	sigemptyset(&stopset);
	sigaddset(&stopset, SIGTERM);
	sigaddset(&stopset, SIGINT);
	main_thread = pthread_self();
	if (pthread_create(&stopper_thread, NULL, stopper, &stopset) != 0) {
		fprintf(stderr, "%s: cannot start the signal thread\n", progname);
		return 1;
	}
	/* The process that serves starts them (threads do not cross fork). */
	if (defer_threads && defer_start(defer_threads, defer_ms, defer_drop) < 0)
		status = 1;
	else if (proc.spawn && spawner_start(proc.spawn) < 0)
		status = 1;
	else if (write_ready_file && ready_path && write_ready(ready_path, ready_port) < 0)
		status = 1;
	else if (loop == LOOP_SVC_RUN)
		svc_run();
	else
		own_loop(loop == LOOP_SELECT);
	atomic_store(&svc_run_returned, 1);

	if (!atomic_load(&stop_signal)) {
		if (!status)
			fprintf(stderr, "%s: svc_run returned unexpectedly\n", progname);
		status = 1;
		pthread_cancel(stopper_thread);
	}
	pthread_join(stopper_thread, NULL);
	if (!status)
		fprintf(stderr, "%s: stopped by signal %d\n", progname,
			atomic_load(&stop_signal));
	return status;
}

static int
serve_worker(void)
{
	return serve_loop(false);
}

static void
workers_ready(void)
{
	if (ready_path)
		write_ready(ready_path, ready_port);
}

int
main(int argc, char **argv)
{
	const char *addr = NULL, *mode_name = NULL;
	unsigned int port = 0;
	rpcprog_t prog = RPCTEST_PROG;
	int have_port = 0;
	enum mode mode;
	SVCXPRT *xprt = NULL;
	struct sigaction sa;
	sigset_t blocked;
	int status;
	int opt;

	while ((opt = getopt(argc, argv, "p:a:m:P:r:X:L:D:W:ufx:T:K:")) != -1) {
		switch (opt) {
		case 'p':
			port = (unsigned int)parse_number(optarg, 65535);
			have_port = 1;
			break;
		case 'a':
			addr = optarg;
			break;
		case 'm':
			mode_name = optarg;
			break;
		case 'P':
			prog = (rpcprog_t)parse_number(optarg, 0xffffffffUL);
			break;
		case 'r':
			ready_path = optarg;
			break;
		case 'L':
			if (strcmp(optarg, "svc_run") == 0)
				loop = LOOP_SVC_RUN;
			else if (strcmp(optarg, "poll") == 0)
				loop = LOOP_POLL;
			else if (strcmp(optarg, "select") == 0)
				loop = LOOP_SELECT;
			else
				usage();
			break;
		case 'X':
			corrupt_at = parse_number(optarg, UINT_MAX);
			break;
		case 'D':
			proc.daemon = (int)parse_number(optarg, 2);
			if (!proc.daemon)
				usage();
			break;
		case 'W':
			proc.workers = (int)parse_number(optarg, 64);
			if (!proc.workers)
				usage();
			break;
		case 'u':
			proc.switch_ids = true;
			break;
		case 'f':
			proc.fork_per_call = true;
			break;
		case 'x':
			proc.spawn = optarg;
			break;
		case 'K':
			proc.close_after = parse_number(optarg, ULONG_MAX);
			if (!proc.close_after)
				usage();
			break;
		case 'T': {
			char *ms = strchr(optarg, ',');

			if (ms) {
				char *drop = strchr(++ms, ',');

				ms[-1] = '\0';
				if (drop) {
					*drop++ = '\0';
					defer_drop = (int)parse_number(drop, RPCTEST_DIGEST);
				}
				defer_ms = (unsigned int)parse_number(ms, 60000);
			}
			defer_threads = (int)parse_number(optarg, 64);
			if (!defer_threads)
				usage();
			break;
		}
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	if (!mode_name)
		mode = have_port ? MODE_TLI : MODE_CREATE;
	else if (strcmp(mode_name, "create") == 0)
		mode = MODE_CREATE;
	else if (strcmp(mode_name, "tli") == 0)
		mode = MODE_TLI;
	else if (strcmp(mode_name, "tcp") == 0)
		mode = MODE_TCP;
	else
		usage();
	if (mode == MODE_CREATE && (have_port || addr)) {
		fprintf(stderr, "%s: -m create takes no -p or -a (rpcbind picks the port)\n", progname);
		usage();
	}
	if (mode != MODE_CREATE && !have_port) {
		fprintf(stderr, "%s: -m %s needs -p\n", progname, mode_name);
		usage();
	}
	if (proc.workers && mode == MODE_CREATE) {
		fprintf(stderr, "%s: -W needs -p (the workers share its listener)\n", progname);
		usage();
	}
	if (defer_threads && (proc.switch_ids || proc.fork_per_call || proc.workers)) {
		fprintf(stderr, "%s: -T goes without -u, -f and -W\n", progname);
		usage();
	}
	if (proc.close_after && (mode == MODE_CREATE || defer_threads || proc.workers)) {
		fprintf(stderr, "%s: -K needs -p and goes without -T and -W\n", progname);
		usage();
	}
	if (defer_threads)
		serve_dispatch = defer_dispatch;
	if (!addr)
		addr = "0.0.0.0";
	if (ids_init() < 0)
		return 1;

	/* A peer that goes away must not kill the server. */
	signal(SIGPIPE, SIG_IGN);

	/* Blocked before any thread exists, so every thread inherits it. */
	sigemptyset(&blocked);
	sigaddset(&blocked, SIGTERM);
	sigaddset(&blocked, SIGINT);
	sigaddset(&blocked, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &blocked, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_handler;
	sa.sa_flags = SA_RESTART;	/* poll() is interrupted regardless */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);

	if (mode == MODE_CREATE) {
		if (svc_create(serve_dispatch, prog, RPCTEST_VERS, "tcp") == 0) {
			fprintf(stderr, "%s: svc_create failed (is rpcbind running?)\n", progname);
			return 1;
		}
		fprintf(stderr, "%s: program 0x%lx registered with rpcbind\n",
			progname, (unsigned long)prog);
	} else {
		xprt = create_fixed(mode, addr, port, prog, &ready_port);
		if (!xprt)
			return 1;
		proc.listener = xprt;
		fprintf(stderr, "%s: program 0x%lx listening on %s port %u (%s)\n",
			progname, (unsigned long)prog, addr, ready_port,
			mode == MODE_TCP ? "svctcp_create" : "svc_tli_create");
	}

	if (proc.daemon && daemonize(proc.daemon) < 0)
		return 1;
	if (proc.workers) {
		status = run_workers(proc.workers, serve_worker, workers_ready);
		if (!status)
			fprintf(stderr, "%s: the workers stopped\n", progname);
		return status;
	}
	status = serve_loop(true);

	if (mode == MODE_CREATE)
		svc_unreg(prog, RPCTEST_VERS);
	/* -K may have destroyed it already. */
	if (proc.listener)
		svc_destroy(proc.listener);
	return status;
}
