/*
 * nfstest-client: a small NFS version 3 client on libtirpc, the shim's
 * client side against NFS servers (the kernel's nfsd in
 * tests/rdma/120-kernel-peers.bats).  It gets the export's root file
 * handle from MOUNT, then runs each command in order:
 *
 *   null N             N NULL calls, their mean latency
 *   getattr N          N GETATTR calls on the root
 *   read NAME SIZE     one READ of SIZE octets of NAME (in the root) to
 *                      the output file (-o), its length printed
 *   readdir COUNT      one READDIR of the root with that count, the names
 *                      printed one per line
 *   hold               print "holding" and wait for a signal, the CLIENT
 *                      kept (its statistics stay readable)
 *
 * A failed call prints its RPC error and ends with status 1.  Usage
 * errors end with 64.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "mount3.h"
#include "nfs3.h"

static struct timeval tmo = { 60, 0 };
static const char *outfile = "/dev/null";

static void
usage(void)
{
	fprintf(stderr,
		"usage: nfstest-client -a ADDR -e EXPORT [-o FILE] CMD...\n"
		"commands: null N, getattr N, read NAME SIZE, readdir COUNT, hold\n");
	exit(64);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
die_call(CLIENT *cl, const char *what)
{
	fprintf(stderr, "nfstest-client: %s: %s\n", what,
		clnt_sperror(cl, "call"));
	exit(1);
}

static nfs_fh3
mount_root(const char *addr, const char *export)
{
	mountres3 res;
	nfs_fh3 fh;
	CLIENT *cl;
	char *path = (char *)export;

	cl = clnt_create(addr, MOUNT_PROGRAM, MOUNT_V3, "tcp");
	if (!cl) {
		fprintf(stderr, "nfstest-client: %s\n",
			clnt_spcreateerror("MOUNT"));
		exit(1);
	}
	memset(&res, 0, sizeof(res));
	if (clnt_call(cl, MOUNTPROC3_MNT, (xdrproc_t)xdr_dirpath, (char *)&path,
		      (xdrproc_t)xdr_mountres3, (char *)&res, tmo) != RPC_SUCCESS)
		die_call(cl, "MNT");
	if (res.fhs_status != MNT3_OK) {
		fprintf(stderr, "nfstest-client: MNT %s: status %d\n", export,
			res.fhs_status);
		exit(1);
	}
	fh.data.data_len = res.mountres3_u.mountinfo.fhandle.fhandle3_len;
	fh.data.data_val = malloc(fh.data.data_len);
	memcpy(fh.data.data_val, res.mountres3_u.mountinfo.fhandle.fhandle3_val,
	       fh.data.data_len);
	clnt_freeres(cl, (xdrproc_t)xdr_mountres3, (char *)&res);
	clnt_destroy(cl);
	return fh;
}

static void
cmd_null(CLIENT *cl, unsigned long n)
{
	double t0 = now_us();
	unsigned long i;

	for (i = 0; i < n; i++)
		if (clnt_call(cl, NFSPROC3_NULL, (xdrproc_t)(void (*)(void))xdr_void, NULL,
			      (xdrproc_t)(void (*)(void))xdr_void, NULL, tmo) != RPC_SUCCESS)
			die_call(cl, "NULL");
	printf("null calls=%lu us_per_call=%.1f\n", n, (now_us() - t0) / n);
	fflush(stdout);
}

static void
cmd_getattr(CLIENT *cl, const nfs_fh3 *root, unsigned long n)
{
	GETATTR3args args = { .object = *root };
	GETATTR3res res;
	double t0 = now_us();
	unsigned long i;

	for (i = 0; i < n; i++) {
		memset(&res, 0, sizeof(res));
		if (clnt_call(cl, NFSPROC3_GETATTR, (xdrproc_t)xdr_GETATTR3args,
			      (char *)&args, (xdrproc_t)xdr_GETATTR3res,
			      (char *)&res, tmo) != RPC_SUCCESS)
			die_call(cl, "GETATTR");
		if (res.status != NFS3_OK) {
			fprintf(stderr, "nfstest-client: GETATTR: status %d\n",
				res.status);
			exit(1);
		}
	}
	printf("getattr calls=%lu us_per_call=%.1f\n", n, (now_us() - t0) / n);
	fflush(stdout);
}

static void
cmd_read(CLIENT *cl, const nfs_fh3 *root, char *name, unsigned long size)
{
	LOOKUP3args largs = { .what = { .dir = *root, .name = name } };
	LOOKUP3res lres;
	READ3args rargs;
	READ3res rres;
	READ3resok *ok;
	FILE *f;

	memset(&lres, 0, sizeof(lres));
	if (clnt_call(cl, NFSPROC3_LOOKUP, (xdrproc_t)xdr_LOOKUP3args,
		      (char *)&largs, (xdrproc_t)xdr_LOOKUP3res, (char *)&lres,
		      tmo) != RPC_SUCCESS)
		die_call(cl, "LOOKUP");
	if (lres.status != NFS3_OK) {
		fprintf(stderr, "nfstest-client: LOOKUP %s: status %d\n", name,
			lres.status);
		exit(1);
	}
	rargs.file = lres.LOOKUP3res_u.resok.object;
	rargs.offset = 0;
	rargs.count = (count3)size;
	memset(&rres, 0, sizeof(rres));
	if (clnt_call(cl, NFSPROC3_READ, (xdrproc_t)xdr_READ3args,
		      (char *)&rargs, (xdrproc_t)xdr_READ3res, (char *)&rres,
		      tmo) != RPC_SUCCESS)
		die_call(cl, "READ");
	if (rres.status != NFS3_OK) {
		fprintf(stderr, "nfstest-client: READ: status %d\n", rres.status);
		exit(1);
	}
	ok = &rres.READ3res_u.resok;
	f = fopen(outfile, "w");
	if (!f || fwrite(ok->data.data_val, 1, ok->data.data_len, f) !=
		  ok->data.data_len || fclose(f)) {
		fprintf(stderr, "nfstest-client: %s: %s\n", outfile,
			strerror(errno));
		exit(1);
	}
	printf("read count=%u data=%u eof=%d\n", ok->count, ok->data.data_len,
	       ok->eof);
	fflush(stdout);
	clnt_freeres(cl, (xdrproc_t)xdr_READ3res, (char *)&rres);
	clnt_freeres(cl, (xdrproc_t)xdr_LOOKUP3res, (char *)&lres);
}

static void
cmd_readdir(CLIENT *cl, const nfs_fh3 *root, unsigned long count)
{
	READDIR3args args;
	READDIR3res res;
	entry3 *e;
	unsigned int n = 0;

	memset(&args, 0, sizeof(args));
	args.dir = *root;
	args.count = (count3)count;
	memset(&res, 0, sizeof(res));
	if (clnt_call(cl, NFSPROC3_READDIR, (xdrproc_t)xdr_READDIR3args,
		      (char *)&args, (xdrproc_t)xdr_READDIR3res, (char *)&res,
		      tmo) != RPC_SUCCESS)
		die_call(cl, "READDIR");
	if (res.status != NFS3_OK) {
		fprintf(stderr, "nfstest-client: READDIR: status %d\n", res.status);
		exit(1);
	}
	for (e = res.READDIR3res_u.resok.reply.entries; e; e = e->nextentry, n++)
		printf("%s\n", e->name);
	fflush(stdout);
	printf("readdir entries=%u eof=%d\n", n, res.READDIR3res_u.resok.reply.eof);
	clnt_freeres(cl, (xdrproc_t)xdr_READDIR3res, (char *)&res);
}

static unsigned long
number(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (!*s || *end)
		usage();
	return v;
}

int
main(int argc, char **argv)
{
	const char *addr = NULL, *export = NULL;
	nfs_fh3 root;
	CLIENT *cl;
	int opt, i;

	while ((opt = getopt(argc, argv, "a:e:o:")) != -1) {
		switch (opt) {
		case 'a':
			addr = optarg;
			break;
		case 'e':
			export = optarg;
			break;
		case 'o':
			outfile = optarg;
			break;
		default:
			usage();
		}
	}
	if (!addr || !export || optind >= argc)
		usage();
	root = mount_root(addr, export);
	cl = clnt_create(addr, NFS_PROGRAM, NFS_V3, "tcp");
	if (!cl) {
		fprintf(stderr, "nfstest-client: %s\n", clnt_spcreateerror("NFS"));
		return 1;
	}
	/* AUTH_SYS as the caller: servers give AUTH_NONE no file access. */
	auth_destroy(cl->cl_auth);
	cl->cl_auth = authunix_create_default();
	for (i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "null") && i + 1 < argc) {
			cmd_null(cl, number(argv[++i]));
		} else if (!strcmp(argv[i], "getattr") && i + 1 < argc) {
			cmd_getattr(cl, &root, number(argv[++i]));
		} else if (!strcmp(argv[i], "read") && i + 2 < argc) {
			cmd_read(cl, &root, argv[i + 1], number(argv[i + 2]));
			i += 2;
		} else if (!strcmp(argv[i], "readdir") && i + 1 < argc) {
			cmd_readdir(cl, &root, number(argv[++i]));
		} else if (!strcmp(argv[i], "hold")) {
			printf("holding\n");
			fflush(stdout);
			pause();
		} else {
			usage();
		}
	}
	clnt_destroy(cl);
	free(root.data.data_val);
	return 0;
}
