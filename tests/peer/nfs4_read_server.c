/*
 * nfs4-read-server: an NFSv4.1 server that knows one COMPOUND, SEQUENCE,
 * PUTFH, READ (nfs4_read.h), and NULL.  An ordinary libtirpc program
 * (svc_vc_create, svc_run), run with the shim preloaded: the shim's
 * server then carries it over RPC-over-RDMA, and its Upper Layer Binding
 * decides which item of the reply goes in the caller's Write chunk.
 *
 *   nfs4-read-server -a ADDR -p PORT [-r READY]
 *
 * READ returns count octets of a pattern of the offset (nfs4_read_seed),
 * the session id, tag, sequence and slot echoed.  Writes "ready PORT" to
 * READY once listening; ends with status 0 on SIGTERM or SIGINT.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "nfs4_read.h"
#include "pattern.h"

/* libtirpc's xdrproc_t, from a routine of another prototype. */
#define XDRPROC(f) ((xdrproc_t)(void (*)(void))(f))

static void
stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void
compound(SVCXPRT *xprt)
{
	static struct nfs4_read_args a;
	static struct nfs4_read_res r;

	memset(&a, 0, sizeof(a));
	if (!svc_getargs(xprt, XDRPROC(xdr_nfs4_read_args), (caddr_t)&a) ||
	    a.count > NFS4_READ_MAX) {
		fprintf(stderr, "nfs4-read-server: not a READ COMPOUND\n");
		svcerr_decode(xprt);
		return;
	}
	free(r.data);
	memset(&r, 0, sizeof(r));
	memcpy(r.tag, a.tag, a.taglen);
	r.taglen = a.taglen;
	memcpy(r.sessionid, a.sessionid, sizeof(r.sessionid));
	r.seqid = a.seqid;
	r.slotid = a.slotid;
	r.highest_slotid = r.target_highest_slotid = a.highest_slotid;
	r.eof = TRUE;
	r.data = malloc(a.count ? a.count : 1);
	if (!r.data) {
		svcerr_systemerr(xprt);
		return;
	}
	pattern_fill(r.data, a.count, nfs4_read_seed(a.offset));
	r.datalen = a.count;
	printf("compound tag=%.*s offset=%llu count=%u\n", (int)a.taglen, a.tag,
	       (unsigned long long)a.offset, a.count);
	fflush(stdout);
	if (!svc_sendreply(xprt, XDRPROC(xdr_nfs4_read_res), (caddr_t)&r))
		fprintf(stderr, "nfs4-read-server: reply not sent\n");
}

static void
dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	switch (rq->rq_proc) {
	case NULLPROC:
		(void)svc_sendreply(xprt, XDRPROC(xdr_void), NULL);
		break;
	case NFS4_PROC_COMPOUND:
		compound(xprt);
		break;
	default:
		svcerr_noproc(xprt);
		break;
	}
}

static int
usage(void)
{
	fprintf(stderr, "usage: nfs4-read-server -a ADDR -p PORT [-r READY]\n");
	return 64;
}

int
main(int argc, char **argv)
{
	const char *addr = NULL, *ready = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int opt, fd, one = 1, port = -1;
	socklen_t len = sizeof(sin);
	SVCXPRT *xprt;
	FILE *f;

	while ((opt = getopt(argc, argv, "a:p:r:")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'r': ready = optarg; break;
		default: return usage();
		}
	}
	if (!addr || port < 0 || port > 65535 ||
	    inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return usage();
	sin.sin_port = htons((uint16_t)port);
	signal(SIGTERM, stop);
	signal(SIGINT, stop);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sin, &len)) {
		perror("nfs4-read-server: socket");
		return 2;
	}
	xprt = svc_vc_create(fd, 0, 0);
	if (!xprt || !svc_register(xprt, NFS4_PROG, NFS4_VERS, dispatch, 0)) {
		fprintf(stderr, "nfs4-read-server: cannot serve %s:%d\n", addr, port);
		return 2;
	}
	if (ready) {
		f = fopen(ready, "w");
		if (!f || fprintf(f, "ready %u\n", ntohs(sin.sin_port)) < 0 ||
		    fclose(f)) {
			perror(ready);
			return 2;
		}
	}
	svc_run();
	return 1;
}
