/*
 * ctlprobe: an ordinary libtirpc client that exercises clnt_control() and
 * the other CLIENT operations a program can observe, and prints what it
 * sees in a form that does not depend on the transport (no descriptor
 * numbers, no random XIDs).  Run over TCP and under the shim over RDMA,
 * the two outputs must be the same.
 *
 * usage: ctlprobe HOST PORT [PROG]
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#define RPCTEST_PROG 0x20000099
#define RPCTEST_VERS 1

static const struct timeval tmo = { 25, 0 };

static CLIENT *
make(const char *host, const char *port, unsigned long prog)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	struct netconfig *nconf;
	struct netbuf nb;
	CLIENT *cl;

	if (getaddrinfo(host, port, &hints, &ai)) {
		fprintf(stderr, "ctlprobe: cannot resolve %s\n", host);
		exit(1);
	}
	nconf = getnetconfigent(ai->ai_family == AF_INET6 ? "tcp6" : "tcp");
	nb.buf = ai->ai_addr;
	nb.len = nb.maxlen = ai->ai_addrlen;
	cl = clnt_tli_create(RPC_ANYFD, nconf, &nb, prog, RPCTEST_VERS, 0, 0);
	if (!cl) {
		clnt_pcreateerror("ctlprobe");
		exit(1);
	}
	freenetconfigent(nconf);
	freeaddrinfo(ai);
	return cl;
}

static const char *
yes(bool_t b)
{
	return b ? "TRUE" : "FALSE";
}

static enum clnt_stat
null_call(CLIENT *cl)
{
	return clnt_call(cl, NULLPROC, (xdrproc_t)xdr_void, NULL,
			 (xdrproc_t)xdr_void, NULL, tmo);
}

/* The XID libtirpc's stream client uses next, from the stored one. */
static uint32_t
next_xid(uint32_t stored)
{
	return ntohl(htonl(stored) - 1);
}

int
main(int argc, char **argv)
{
	unsigned long prog = argc > 3 ? strtoul(argv[3], NULL, 0) : RPCTEST_PROG;
	struct sockaddr_storage ss;
	struct timeval tv;
	struct netbuf nb;
	struct rpc_err err;
	uint32_t u, xid0, xid1;
	enum clnt_stat st;
	socklen_t len;
	int fd, type;
	CLIENT *cl;

	if (argc < 3) {
		fprintf(stderr, "usage: ctlprobe HOST PORT [PROG]\n");
		return 64;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	cl = make(argv[1], argv[2], prog);

	/* The descriptor: a real stream socket, owned as libtirpc owns it. */
	printf("CLGET_FD=%s", yes(clnt_control(cl, CLGET_FD, (char *)&fd)));
	len = sizeof(type);
	printf(" stream_socket=%d\n",
	       getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	       type == SOCK_STREAM);
	printf("CLGET_FD(NULL)=%s\n", yes(clnt_control(cl, CLGET_FD, NULL)));

	/* Addresses: what was given. */
	memset(&ss, 0, sizeof(ss));
	printf("CLGET_SERVER_ADDR=%s", yes(clnt_control(cl, CLGET_SERVER_ADDR, (char *)&ss)));
	printf(" port=%u\n", ntohs(ss.ss_family == AF_INET6 ?
				     ((struct sockaddr_in6 *)&ss)->sin6_port :
				     ((struct sockaddr_in *)&ss)->sin_port));
	printf("CLGET_SVC_ADDR=%s", yes(clnt_control(cl, CLGET_SVC_ADDR, (char *)&nb)));
	printf(" len=%u family_ok=%d\n", nb.len,
	       nb.len >= sizeof(sa_family_t) &&
	       ((struct sockaddr *)nb.buf)->sa_family == ss.ss_family);
	printf("CLSET_SVC_ADDR=%s\n", yes(clnt_control(cl, CLSET_SVC_ADDR, (char *)&nb)));

	/* Program and version, as serialized in the call header. */
	clnt_control(cl, CLGET_PROG, (char *)&u);
	printf("CLGET_PROG=0x%x\n", u);
	clnt_control(cl, CLGET_VERS, (char *)&u);
	printf("CLGET_VERS=%u\n", u);

	/* Timeouts. */
	tv.tv_sec = 7;
	tv.tv_usec = 250000;
	printf("CLSET_TIMEOUT=%s", yes(clnt_control(cl, CLSET_TIMEOUT, (char *)&tv)));
	memset(&tv, 0, sizeof(tv));
	clnt_control(cl, CLGET_TIMEOUT, (char *)&tv);
	printf(" CLGET_TIMEOUT=%ld.%06ld\n", (long)tv.tv_sec, (long)tv.tv_usec);
	tv.tv_sec = -1;
	printf("CLSET_TIMEOUT(-1)=%s\n", yes(clnt_control(cl, CLSET_TIMEOUT, (char *)&tv)));
	tv.tv_sec = 1;
	tv.tv_usec = 1000000;
	printf("CLSET_TIMEOUT(usec 1000000)=%s\n",
	       yes(clnt_control(cl, CLSET_TIMEOUT, (char *)&tv)));

	/* XIDs: the same sequence as libtirpc's stream client. */
	clnt_control(cl, CLGET_XID, (char *)&xid0);
	st = null_call(cl);
	clnt_control(cl, CLGET_XID, (char *)&xid1);
	printf("call=%s xid_sequence_ok=%d\n", clnt_sperrno(st),
	       xid1 == next_xid(xid0));
	u = 0x11223344;
	printf("CLSET_XID=%s", yes(clnt_control(cl, CLSET_XID, (char *)&u)));
	st = null_call(cl);
	clnt_control(cl, CLGET_XID, (char *)&xid1);
	printf(" call=%s xid=0x%08x\n", clnt_sperrno(st), xid1);

	/* Another version: the server's answer comes back as an RPC error. */
	u = 2;
	printf("CLSET_VERS=%s", yes(clnt_control(cl, CLSET_VERS, (char *)&u)));
	st = null_call(cl);
	clnt_geterr(cl, &err);
	printf(" call=%s low=%lu high=%lu\n", clnt_sperrno(st),
	       (unsigned long)err.re_vers.low, (unsigned long)err.re_vers.high);
	u = RPCTEST_VERS;
	clnt_control(cl, CLSET_VERS, (char *)&u);

	/* Another program: not served. */
	u = 0x2000beef;
	printf("CLSET_PROG=%s", yes(clnt_control(cl, CLSET_PROG, (char *)&u)));
	st = null_call(cl);
	printf(" call=%s\n", clnt_sperrno(st));
	u = (uint32_t)prog;
	clnt_control(cl, CLSET_PROG, (char *)&u);
	printf("call=%s\n", clnt_sperrno(null_call(cl)));

	/* A request nobody knows. */
	printf("unknown_request=%s\n", yes(clnt_control(cl, 9999, (char *)&u)));

	/* A one-way call (no results, zero timeout): libtirpc does not wait. */
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	st = clnt_call(cl, NULLPROC, (xdrproc_t)xdr_void, NULL, NULL, NULL, tv);
	printf("one_way=%s\n", clnt_sperrno(st));
	/* The next call still gets its own reply. */
	printf("call=%s\n", clnt_sperrno(null_call(cl)));

	/* Destroy with CLSET_FD_NCLOSE: the descriptor stays ours. */
	printf("CLSET_FD_NCLOSE=%s\n", yes(clnt_control(cl, CLSET_FD_NCLOSE, NULL)));
	clnt_destroy(cl);
	printf("fd_open_after_destroy=%d\n", fcntl(fd, F_GETFD) != -1);
	close(fd);

	/* clnt_tli_create made the descriptor: it goes with the client. */
	cl = make(argv[1], argv[2], prog);
	clnt_control(cl, CLGET_FD, (char *)&fd);
	printf("call=%s\n", clnt_sperrno(null_call(cl)));
	clnt_destroy(cl);
	printf("fd_open_after_destroy=%d\n", fcntl(fd, F_GETFD) != -1);
	return 0;
}
