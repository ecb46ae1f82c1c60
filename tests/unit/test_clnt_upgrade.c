/*
 * The upgrading CLIENT (transport/clnt_upgrade.c) over two fake CLIENTs:
 * a "TCP" one standing for libtirpc's and an "RDMA" one that the attempt
 * returns when the test opens its gate.  Which one carries each call, the
 * XID sequence across the switch, the requests kept for the RDMA CLIENT,
 * the descriptor, a failed attempt, a CLIENT destroyed while its attempt
 * runs, and the attempt's thread and descriptor left behind (none).
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "clnt_upgrade.h"

/* ---- a fake CLIENT -------------------------------------------------- */

struct fake {
	const char *name;
	int fd;
	bool closeit;
	unsigned int calls;
	uint32_t xid;			/* the last call's, as clnt_vc stores it */
	uint32_t prog, vers;
	struct timeval timeout;
	bool timeout_set;
	AUTH *auth_seen;
	uint32_t last_xid;		/* the XID the last call used */
	int *destroyed;
	/* A call waits here before it takes its XID, while stall is set. */
	bool stall;
	sem_t stalled, resume;
};

static struct fake *
fake_of(CLIENT *cl)
{
	return cl->cl_private;
}

static enum clnt_stat
fake_call(CLIENT *cl, rpcproc_t proc, xdrproc_t xargs, void *argsp,
	  xdrproc_t xres, void *resp, struct timeval timeout)
{
	struct fake *f = fake_of(cl);

	if (f->stall) {
		sem_post(&f->stalled);
		sem_wait(&f->resume);
	}
	f->calls++;
	f->last_xid = --f->xid;
	f->auth_seen = cl->cl_auth;
	return RPC_SUCCESS;
}

static void
fake_geterr(CLIENT *cl, struct rpc_err *err)
{
	err->re_status = RPC_SUCCESS;
	err->re_errno = (int)fake_of(cl)->calls;
}

static bool_t
fake_freeres(CLIENT *cl, xdrproc_t xres, void *resp)
{
	return TRUE;
}

static void
fake_abort(CLIENT *cl)
{
}

static bool_t
fake_control(CLIENT *cl, u_int req, void *info)
{
	struct fake *f = fake_of(cl);

	switch (req) {
	case CLSET_FD_CLOSE: f->closeit = true; return TRUE;
	case CLSET_FD_NCLOSE: f->closeit = false; return TRUE;
	case CLGET_FD: *(int *)info = f->fd; return TRUE;
	case CLGET_XID: *(uint32_t *)info = f->xid; return TRUE;
	case CLSET_XID: f->xid = *(uint32_t *)info + 1; return TRUE;
	case CLGET_PROG: *(uint32_t *)info = f->prog; return TRUE;
	case CLSET_PROG: f->prog = *(uint32_t *)info; return TRUE;
	case CLGET_VERS: *(uint32_t *)info = f->vers; return TRUE;
	case CLSET_VERS: f->vers = *(uint32_t *)info; return TRUE;
	case CLSET_TIMEOUT:
		f->timeout = *(struct timeval *)info;
		f->timeout_set = true;
		return TRUE;
	case CLGET_TIMEOUT: *(struct timeval *)info = f->timeout; return TRUE;
	default: return FALSE;
	}
}

static void
fake_destroy(CLIENT *cl)
{
	struct fake *f = fake_of(cl);

	if (f->closeit)
		close(f->fd);
	(*f->destroyed)++;
	free(f);
	free(cl);
}

static const struct clnt_ops fake_ops = {
	.cl_call = fake_call,
	.cl_abort = fake_abort,
	.cl_geterr = fake_geterr,
	.cl_freeres = fake_freeres,
	.cl_destroy = fake_destroy,
	.cl_control = fake_control,
};

static CLIENT *
fake_new(const char *name, int fd, uint32_t xid, int *destroyed)
{
	CLIENT *cl = calloc(1, sizeof(*cl));
	struct fake *f = calloc(1, sizeof(*f));

	f->name = name;
	f->fd = fd;
	f->xid = xid;
	f->prog = 0x20000099;
	f->vers = 1;
	f->destroyed = destroyed;
	sem_init(&f->stalled, 0, 0);
	sem_init(&f->resume, 0, 0);
	cl->cl_ops = (struct clnt_ops *)&fake_ops;
	cl->cl_private = f;
	cl->cl_auth = NULL;
	return cl;
}

/* ---- the attempt, behind a gate the test opens ---------------------- */

struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open;
	bool succeed;
	int connects;
	int fd;				/* the descriptor the attempt got */
	int releases;
	int rdma_destroyed;
};

static CLIENT *
gate_connect(void *arg, int fd)
{
	struct gate *g = arg;
	bool ok;

	pthread_mutex_lock(&g->lock);
	g->connects++;
	g->fd = fd;
	pthread_cond_broadcast(&g->cond);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	ok = g->succeed;
	pthread_mutex_unlock(&g->lock);
	if (!ok)
		return NULL;
	/* As route_upgrade.c: the duplicate is the RDMA CLIENT's to close. */
	{
		CLIENT *cl = fake_new("rdma", fd, 0x5000, &g->rdma_destroyed);

		fake_of(cl)->closeit = true;
		return cl;
	}
}

static void
gate_release(void *arg)
{
	struct gate *g = arg;

	pthread_mutex_lock(&g->lock);
	g->releases++;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

static const struct clnt_upgrade_ops gate_ops = {
	.connect = gate_connect,
	.release = gate_release,
};

static void
gate_init(struct gate *g, bool succeed)
{
	memset(g, 0, sizeof(*g));
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->succeed = succeed;
	g->fd = -1;
}

static void
gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = true;
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

/* Wait (bounded) until the attempt has called connect. */
static bool
gate_reached(struct gate *g)
{
	struct timespec t;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 10;
	pthread_mutex_lock(&g->lock);
	while (!g->connects &&
	       pthread_cond_timedwait(&g->cond, &g->lock, &t) == 0)
		;
	ok = g->connects > 0;
	pthread_mutex_unlock(&g->lock);
	return ok;
}

/* Wait (bounded) until the attempt let go of its argument. */
static bool
gate_released(struct gate *g)
{
	struct timespec t;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += 10;
	pthread_mutex_lock(&g->lock);
	while (!g->releases &&
	       pthread_cond_timedwait(&g->cond, &g->lock, &t) == 0)
		;
	ok = g->releases == 1;
	pthread_mutex_unlock(&g->lock);
	return ok;
}

/* ---- helpers -------------------------------------------------------- */

static enum clnt_stat
call(CLIENT *cl)
{
	struct timeval tv = { 5, 0 };

	/* The fakes encode nothing. */
	return clnt_call(cl, 0, NULL, NULL, NULL, NULL, tv);
}

static bool
fd_open(int fd)
{
	return fd >= 0 && fcntl(fd, F_GETFD) >= 0;
}

/* Threads of this process. */
static int
threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* Up to 10 s for the attempt's thread to be gone. */
static bool
back_to_threads(int n)
{
	for (int i = 0; i < 1000; i++) {
		if (threads() == n)
			return true;
		usleep(10000);
	}
	return false;
}

/* ---- the cases ------------------------------------------------------ */

static void
test_switch(void)
{
	int tcp_destroyed = 0, sock = dup(1), t0 = threads();
	struct gate g;
	CLIENT *tcp = fake_new("tcp", sock, 0x1000, &tcp_destroyed);
	CLIENT *cl, *rdma;
	struct timeval tv = { 7, 0 };
	struct rpc_err err;
	AUTH *auth = (AUTH *)&g;	/* only compared */
	uint32_t xid, prog = 0x20000099, vers = 3;
	int fd = -1;

	gate_init(&g, true);
	cl = clnt_upgrade_create(tcp, 1, &gate_ops, &g);
	CHECK(cl && clnt_is_upgrade(cl), "the upgrading CLIENT is made");
	CHECK(clnt_control(cl, CLGET_FD, (char *)&fd) && fd == sock,
	      "CLGET_FD: the TCP CLIENT's descriptor");
	CHECK(clnt_control(cl, CLSET_TIMEOUT, (char *)&tv) &&
	      fake_of(tcp)->timeout_set, "CLSET_TIMEOUT reaches the TCP CLIENT");
	CHECK(clnt_control(cl, CLSET_VERS, (char *)&vers), "CLSET_VERS");
	cl->cl_auth = auth;

	CHECK(call(cl) == RPC_SUCCESS && fake_of(tcp)->calls == 1,
	      "the first call goes over TCP");
	CHECK_EQ_U(g.connects, 0, "no attempt for a process that makes one call");
	CHECK(fake_of(tcp)->auth_seen == auth, "the program's cl_auth is lent to it");

	CHECK(call(cl) == RPC_SUCCESS && fake_of(tcp)->calls == 2,
	      "the second call goes over TCP too");
	CHECK(gate_reached(&g), "and starts the attempt");
	CHECK(g.fd != sock && fd_open(g.fd), "on a descriptor of its own (%d)", g.fd);
	CHECK(call(cl) == RPC_SUCCESS && fake_of(tcp)->calls == 3,
	      "calls while RDMA connects go over TCP");
	CHECK(clnt_upgrade_rdma(cl) == NULL, "no RDMA CLIENT yet");

	gate_open(&g);
	CHECK(clnt_upgrade_settled(cl, 10000), "the attempt ends");
	rdma = clnt_upgrade_rdma(cl);
	CHECK(rdma != NULL, "with an RDMA CLIENT");
	xid = fake_of(tcp)->last_xid;
	CHECK(call(cl) == RPC_SUCCESS && fake_of(rdma)->calls == 1 &&
	      fake_of(tcp)->calls == 3, "the next call goes over RDMA");
	CHECK_EQ_U(fake_of(rdma)->last_xid, xid - 1,
		   "its XID follows the TCP CLIENT's last one");
	CHECK(fake_of(rdma)->auth_seen == auth, "with the program's cl_auth");
	CHECK(fake_of(rdma)->timeout_set && fake_of(rdma)->timeout.tv_sec == 7,
	      "the timeout set before the switch holds on RDMA");
	CHECK_EQ_U(fake_of(rdma)->vers, 3, "so does the version");
	CHECK_EQ_U(fake_of(rdma)->prog, prog, "and the program");
	CHECK(clnt_control(cl, CLGET_XID, (char *)&xid) &&
	      xid == fake_of(rdma)->last_xid, "CLGET_XID: the RDMA CLIENT's last");
	CHECK(clnt_control(cl, CLGET_FD, (char *)&fd) && fd == sock,
	      "CLGET_FD: still the TCP CLIENT's descriptor");
	clnt_geterr(cl, &err);
	CHECK_EQ_U(err.re_errno, 1, "clnt_geterr answers for the CLIENT of the last call");

	CHECK(clnt_control(cl, CLSET_FD_CLOSE, NULL) && fake_of(tcp)->closeit,
	      "CLSET_FD_CLOSE is the TCP CLIENT's");
	fd = g.fd;
	clnt_destroy(cl);
	CHECK(tcp_destroyed == 1 && g.rdma_destroyed == 1,
	      "clnt_destroy destroys both");
	CHECK(!fd_open(sock) && !fd_open(fd), "and both descriptors are closed");
	CHECK(gate_released(&g), "the attempt's state is let go once");
	CHECK(back_to_threads(t0), "no thread is left");
}

static void *
call_thread(void *arg)
{
	return (void *)(uintptr_t)call(arg);
}

/*
 * A thread's call picked the TCP CLIENT but has not taken its XID when the
 * RDMA CLIENT takes the sequence over: the two never send the same XID,
 * whichever of the call's three XIDs (a call and two refreshes) it takes.
 */
static void
test_switch_under_tcp_call(void)
{
	int tcp_destroyed = 0, sock = dup(1);
	struct gate g;
	CLIENT *tcp = fake_new("tcp", sock, 0x1000, &tcp_destroyed);
	CLIENT *cl, *rdma;
	pthread_t t;
	uint32_t before;
	void *st;

	gate_init(&g, true);
	cl = clnt_upgrade_create(tcp, 1, &gate_ops, &g);
	CHECK(call(cl) == RPC_SUCCESS && call(cl) == RPC_SUCCESS &&
	      gate_reached(&g), "two calls over TCP start the attempt");
	before = fake_of(tcp)->xid;
	fake_of(tcp)->stall = true;
	CHECK(pthread_create(&t, NULL, call_thread, cl) == 0, "a thread calls");
	sem_wait(&fake_of(tcp)->stalled);
	gate_open(&g);
	CHECK(clnt_upgrade_settled(cl, 10000), "RDMA is up while its call is on TCP");
	rdma = clnt_upgrade_rdma(cl);
	CHECK(call(cl) == RPC_SUCCESS && rdma && fake_of(rdma)->calls == 1,
	      "the next call goes over RDMA");
	fake_of(tcp)->stall = false;
	sem_post(&fake_of(tcp)->resume);
	CHECK(pthread_join(t, &st) == 0 && (uintptr_t)st == RPC_SUCCESS,
	      "the thread's call ends over TCP");
	CHECK_EQ_U(fake_of(tcp)->last_xid, before - 1, "with the TCP CLIENT's next XID");
	CHECK_EQ_U(fake_of(rdma)->last_xid, before - 1 - 3,
		   "the RDMA CLIENT's first is past the three it might have taken");
	clnt_destroy(cl);
	CHECK(gate_released(&g), "the attempt's state is let go");
}

static void
test_failed(void)
{
	int tcp_destroyed = 0, sock = dup(1), t0 = threads();
	struct gate g;
	CLIENT *tcp = fake_new("tcp", sock, 0x1000, &tcp_destroyed);
	CLIENT *cl;

	gate_init(&g, false);
	cl = clnt_upgrade_create(tcp, 0, &gate_ops, &g);
	CHECK(gate_reached(&g), "after_calls 0: the attempt starts at once");
	gate_open(&g);
	CHECK(clnt_upgrade_settled(cl, 10000) && clnt_upgrade_rdma(cl) == NULL,
	      "a failed attempt leaves no RDMA CLIENT");
	CHECK(!fd_open(g.fd), "and closes its descriptor");
	CHECK(call(cl) == RPC_SUCCESS && call(cl) == RPC_SUCCESS &&
	      fake_of(tcp)->calls == 2, "calls stay on TCP");
	CHECK_EQ_U(g.connects, 1, "without another attempt");
	clnt_destroy(cl);
	CHECK(tcp_destroyed == 1 && fd_open(sock),
	      "destroy: the TCP CLIENT, its descriptor left as libtirpc would (no CLSET_FD_CLOSE)");
	close(sock);
	CHECK(gate_released(&g) && back_to_threads(t0), "nothing is left behind");
}

static void
test_destroyed_while_connecting(void)
{
	int tcp_destroyed = 0, sock = dup(1), t0 = threads();
	struct gate g;
	CLIENT *tcp = fake_new("tcp", sock, 0x1000, &tcp_destroyed);
	CLIENT *cl;
	int fd;

	gate_init(&g, true);
	cl = clnt_upgrade_create(tcp, 1, &gate_ops, &g);
	call(cl);
	call(cl);
	CHECK(gate_reached(&g), "the attempt runs");
	clnt_control(cl, CLSET_FD_CLOSE, NULL);
	clnt_destroy(cl);
	CHECK(tcp_destroyed == 1 && !fd_open(sock),
	      "clnt_destroy does not wait for the attempt");
	CHECK_EQ_U(g.releases, 0, "which still holds its state");
	fd = g.fd;
	gate_open(&g);
	CHECK(gate_released(&g), "once it ends, the state is let go");
	CHECK(g.rdma_destroyed == 1 && !fd_open(fd),
	      "the RDMA CLIENT it made is destroyed at once (no connection left open)");
	CHECK(back_to_threads(t0), "and its thread is gone");
}

/* skip: the call that would start the attempt asks first; no thread then. */
static int skips;

static bool
gate_skip(void *arg)
{
	(void)arg;
	skips++;
	return true;
}

static const struct clnt_upgrade_ops skip_ops = {
	.connect = gate_connect,
	.skip = gate_skip,
	.release = gate_release,
};

static void
test_skipped(void)
{
	int tcp_destroyed = 0, sock = dup(1), t0 = threads();
	struct gate g;
	CLIENT *tcp = fake_new("tcp", sock, 0x1000, &tcp_destroyed);
	CLIENT *cl;

	gate_init(&g, true);
	cl = clnt_upgrade_create(tcp, 1, &skip_ops, &g);
	CHECK(call(cl) == RPC_SUCCESS, "the first call goes over TCP");
	CHECK_EQ_U(skips, 0, "without asking");
	CHECK(call(cl) == RPC_SUCCESS && call(cl) == RPC_SUCCESS &&
	      fake_of(tcp)->calls == 3, "the next calls stay on TCP");
	CHECK_EQ_U(skips, 1, "skip is asked once, by the second call");
	CHECK(clnt_upgrade_settled(cl, 0) && clnt_upgrade_rdma(cl) == NULL,
	      "settled at once: no attempt");
	CHECK_EQ_U(g.connects, 0, "connect is never called");
	CHECK(back_to_threads(t0), "no thread was started");
	clnt_destroy(cl);
	CHECK(tcp_destroyed == 1, "destroy: the TCP CLIENT");
	close(sock);
	CHECK(gate_released(&g), "the state is let go");
}

static void *
nothing(void *arg)
{
	return arg;
}

/*
 * A runtime may start a thread of its own at the process's first
 * pthread_create (ThreadSanitizer does): one comes and goes before any
 * count of threads is taken.
 */
static void
first_thread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, nothing, NULL) == 0)
		pthread_join(t, NULL);
}

int
main(void)
{
	first_thread();
	test_switch();
	test_switch_under_tcp_call();
	test_failed();
	test_destroyed_while_connecting();
	test_skipped();
	return check_done();
}
