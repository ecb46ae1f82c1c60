/*
 * nfstest-server -T N: NFS calls answered by worker threads.
 *
 * The dispatch decodes each call's arguments (libtirpc's TCP transport
 * skips the rest of the record once the dispatch returns) and hands the
 * call to one of N threads, which runs the procedure and sends the reply
 * after svc_run went on: the pattern of file servers with a pool of
 * threads.  libtirpc answers the transport's last call, so this is only
 * right while a connection's next call waits for the reply; the Linux
 * client has many calls in flight on one connection.  The procedures run
 * one at a time (the handle table and directory cookies are not shared
 * between threads); what is concurrent is the reply.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../jobq.h"
#include "nfstest.h"

typedef bool_t (*nfs_local)(void *args, void *res, struct svc_req *rq);

struct nfs_entry {
	xdrproc_t xargs, xres;
	size_t args_size, res_size;
	nfs_local local;
};

/* xdrproc_t is variadic: cast through a plain function pointer type. */
#define XDRPROC(f) ((xdrproc_t)(void (*)(void))(f))
#define ENTRY(proc, A, R, fn) \
	[proc] = { XDRPROC(xdr_##A), XDRPROC(xdr_##R), sizeof(A), sizeof(R), \
		   (nfs_local)(void (*)(void))(fn) }

/* RFC 1813 s3.3: the procedures of NFS version 3, as nfs3.x numbers them. */
static const struct nfs_entry nfs_entries[] = {
	[NFSPROC3_NULL] = { XDRPROC(xdr_void), XDRPROC(xdr_void), 0, 0,
			    (nfs_local)(void (*)(void))nfsproc3_null_3_svc },
	ENTRY(NFSPROC3_GETATTR, GETATTR3args, GETATTR3res, nfsproc3_getattr_3_svc),
	ENTRY(NFSPROC3_SETATTR, SETATTR3args, SETATTR3res, nfsproc3_setattr_3_svc),
	ENTRY(NFSPROC3_LOOKUP, LOOKUP3args, LOOKUP3res, nfsproc3_lookup_3_svc),
	ENTRY(NFSPROC3_ACCESS, ACCESS3args, ACCESS3res, nfsproc3_access_3_svc),
	ENTRY(NFSPROC3_READLINK, READLINK3args, READLINK3res, nfsproc3_readlink_3_svc),
	ENTRY(NFSPROC3_READ, READ3args, READ3res, nfsproc3_read_3_svc),
	ENTRY(NFSPROC3_WRITE, WRITE3args, WRITE3res, nfsproc3_write_3_svc),
	ENTRY(NFSPROC3_CREATE, CREATE3args, CREATE3res, nfsproc3_create_3_svc),
	ENTRY(NFSPROC3_MKDIR, MKDIR3args, MKDIR3res, nfsproc3_mkdir_3_svc),
	ENTRY(NFSPROC3_SYMLINK, SYMLINK3args, SYMLINK3res, nfsproc3_symlink_3_svc),
	ENTRY(NFSPROC3_MKNOD, MKNOD3args, MKNOD3res, nfsproc3_mknod_3_svc),
	ENTRY(NFSPROC3_REMOVE, REMOVE3args, REMOVE3res, nfsproc3_remove_3_svc),
	ENTRY(NFSPROC3_RMDIR, RMDIR3args, RMDIR3res, nfsproc3_rmdir_3_svc),
	ENTRY(NFSPROC3_RENAME, RENAME3args, RENAME3res, nfsproc3_rename_3_svc),
	ENTRY(NFSPROC3_LINK, LINK3args, LINK3res, nfsproc3_link_3_svc),
	ENTRY(NFSPROC3_READDIR, READDIR3args, READDIR3res, nfsproc3_readdir_3_svc),
	ENTRY(NFSPROC3_READDIRPLUS, READDIRPLUS3args, READDIRPLUS3res,
	      nfsproc3_readdirplus_3_svc),
	ENTRY(NFSPROC3_FSSTAT, FSSTAT3args, FSSTAT3res, nfsproc3_fsstat_3_svc),
	ENTRY(NFSPROC3_FSINFO, FSINFO3args, FSINFO3res, nfsproc3_fsinfo_3_svc),
	ENTRY(NFSPROC3_PATHCONF, PATHCONF3args, PATHCONF3res, nfsproc3_pathconf_3_svc),
	ENTRY(NFSPROC3_COMMIT, COMMIT3args, COMMIT3res, nfsproc3_commit_3_svc),
};

#define NFS_NPROCS (sizeof(nfs_entries) / sizeof(nfs_entries[0]))

/* The arguments and results follow the job, each aligned as malloc's. */
#define JOB_ALIGN(n) (((n) + 15) & ~(size_t)15)

struct nfs_job {
	struct jobq_item item;		/* first */
	struct svc_req rq;
	SVCXPRT *xprt;
	const struct nfs_entry *e;
	void *args, *res;		/* in the same allocation, after it */
} __attribute__((aligned(16)));

static struct jobq q = JOBQ_INIT(q);
static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;

static void *
nfs_worker(void *arg)
{
	(void)arg;
	for (;;) {
		struct nfs_job *j = (struct nfs_job *)jobq_pop(&q);
		bool_t ok;

		pthread_mutex_lock(&proc_lock);
		ok = j->e->local(j->args, j->res, &j->rq);
		pthread_mutex_unlock(&proc_lock);
		if (!ok)
			svcerr_systemerr(j->xprt);
		else if (!svc_sendreply(j->xprt, j->e->xres, j->res))
			fprintf(stderr, "%s: worker: svc_sendreply for procedure %u failed\n",
				PROGNAME, (unsigned int)j->rq.rq_proc);
		xdr_free(j->e->xargs, j->args);
		if (ok)
			(void)nfs_program_3_freeresult(j->xprt, j->e->xres, j->res);
		jobq_release(j->xprt);
		free(j);
	}
	return NULL;
}

void
nfs_defer_dispatch(struct svc_req *rq, SVCXPRT *xprt)
{
	const struct nfs_entry *e;
	struct nfs_job *j;

	if (rq->rq_proc >= NFS_NPROCS || !nfs_entries[rq->rq_proc].local) {
		svcerr_noproc(xprt);
		return;
	}
	e = &nfs_entries[rq->rq_proc];
	j = calloc(1, sizeof(*j) + JOB_ALIGN(e->args_size) + e->res_size);
	if (!j) {
		svcerr_systemerr(xprt);
		return;
	}
	j->rq = *rq;
	/* svc_run's, gone once the dispatch returns (the procedures need none). */
	j->rq.rq_clntcred = NULL;
	j->xprt = xprt;
	j->e = e;
	j->args = j + 1;
	j->res = (char *)j->args + JOB_ALIGN(e->args_size);
	if (!svc_getargs(xprt, e->xargs, j->args)) {
		svcerr_decode(xprt);
		free(j);
		return;
	}
	if (jobq_hold(xprt) < 0) {
		xdr_free(e->xargs, j->args);
		free(j);
		svcerr_systemerr(xprt);
		return;
	}
	jobq_push(&q, &j->item);
}

int
nfs_defer_start(int n)
{
	return jobq_threads(n, nfs_worker, PROGNAME);
}
