/*
 * NFS version 3 procedures on single objects: attributes, access, file
 * data, and what the file system is like (RFC 1813 s3.3).
 *
 * rpcgen -M conventions: the dispatch function passes a result for the
 * procedure to fill, sends it when the procedure returns TRUE, then frees
 * it with xdr_free (nfs_program_3_freeresult): everything a result points
 * to is malloc'd.  Every procedure clears its result first.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "nfstest.h"

int
nfs_program_3_freeresult(SVCXPRT *xprt, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

/* s3.3.0 NULL */
bool_t
nfsproc3_null_3_svc(void *arg, void *res, struct svc_req *rq)
{
	return TRUE;
}

/* s3.3.1 GETATTR */
bool_t
nfsproc3_getattr_3_svc(GETATTR3args *a, GETATTR3res *r, struct svc_req *rq)
{
	struct obj o;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->object, &o);
	if (r->status == NFS3_OK)
		fattr_from_stat(&r->GETATTR3res_u.resok.obj_attributes, &o.st);
	obj_release(&o);
	return TRUE;
}

static bool
same_time(const nfstime3 *t, const struct timespec *ts)
{
	return t->seconds == (uint32)ts->tv_sec && t->nseconds == (uint32)ts->tv_nsec;
}

/* s3.3.2 SETATTR, with the ctime guard. */
bool_t
nfsproc3_setattr_3_svc(SETATTR3args *a, SETATTR3res *r, struct svc_req *rq)
{
	wcc_data *wcc = &r->SETATTR3res_u.resfail.obj_wcc;
	struct obj o;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->object, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	if (a->guard.check && !same_time(&a->guard.sattrguard3_u.obj_ctime, &o.st.st_ctim))
		r->status = NFS3ERR_NOT_SYNC;
	else
		r->status = sattr_apply(o.path, &a->new_attributes, S_ISLNK(o.st.st_mode));
	/* resok and resfail hold the same wcc_data. */
	wcc_from_path(wcc, &o.st, o.path);
	obj_release(&o);
	return TRUE;
}

/* The parent of a directory's path; the root is its own parent. */
static nfsstat3
parent_of(const struct obj *dir, struct obj *p)
{
	char *slash;

	if (fh_is_root(fh_id_of(&dir->st)) || !(slash = strrchr(dir->path, '/')))
		p->path = strdup(fh_root_path());
	else
		p->path = strndup(dir->path, (size_t)(slash - dir->path));
	if (!p->path)
		return NFS3ERR_SERVERFAULT;
	if (lstat(p->path, &p->st) < 0)
		return errno_to_nfsstat3(errno);
	return NFS3_OK;
}

/* s3.3.3 LOOKUP */
bool_t
nfsproc3_lookup_3_svc(LOOKUP3args *a, LOOKUP3res *r, struct svc_req *rq)
{
	LOOKUP3resok *ok = &r->LOOKUP3res_u.resok;
	const char *name = a->what.name;
	struct obj dir, o = { 0 };

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->what.dir, &dir);
	if (r->status != NFS3_OK)
		return TRUE;
	if (!S_ISDIR(dir.st.st_mode)) {
		r->status = NFS3ERR_NOTDIR;
	} else if (name && !strcmp(name, ".")) {
		o.path = strdup(dir.path);
		o.st = dir.st;
		r->status = o.path ? NFS3_OK : NFS3ERR_SERVERFAULT;
	} else if (name && !strcmp(name, "..")) {
		r->status = parent_of(&dir, &o);
	} else {
		r->status = child_path(&dir, name, false, &o.path);
		if (r->status == NFS3_OK && lstat(o.path, &o.st) < 0)
			r->status = errno_to_nfsstat3(errno);
		if (r->status == NFS3_OK)
			fh_learn(fh_id_of(&dir.st), name, &o.st);
	}
	if (r->status == NFS3_OK && !fh_encode(&ok->object, &o.st))
		r->status = NFS3ERR_SERVERFAULT;
	if (r->status == NFS3_OK) {
		post_op_from_stat(&ok->obj_attributes, &o.st);
		post_op_from_path(&ok->dir_attributes, dir.path);
	} else {
		free(ok->object.data.data_val);
		memset(ok, 0, sizeof(*ok));
		post_op_from_path(&r->LOOKUP3res_u.resfail.dir_attributes, dir.path);
	}
	obj_release(&o);
	obj_release(&dir);
	return TRUE;
}

static bool
may(const char *path, int mode)
{
	return faccessat(AT_FDCWD, path, mode, AT_EACCESS) == 0;
}

/*
 * s3.3.4 ACCESS: what the caller (the effective user of this request) may
 * do, as the local permission checks answer.
 */
bool_t
nfsproc3_access_3_svc(ACCESS3args *a, ACCESS3res *r, struct svc_req *rq)
{
	ACCESS3resok *ok = &r->ACCESS3res_u.resok;
	uint32 granted = 0;
	struct obj o;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->object, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	if (S_ISLNK(o.st.st_mode)) {
		/* Links have no permissions of their own. */
		granted = ACCESS3_READ;
	} else {
		bool rd = may(o.path, R_OK), wr = may(o.path, W_OK), ex = may(o.path, X_OK);

		if (rd)
			granted |= ACCESS3_READ;
		if (wr)
			granted |= ACCESS3_MODIFY | ACCESS3_EXTEND;
		if (S_ISDIR(o.st.st_mode)) {
			if (ex)
				granted |= ACCESS3_LOOKUP;
			if (wr && ex)
				granted |= ACCESS3_DELETE;
		} else if (ex) {
			granted |= ACCESS3_EXECUTE;
		}
	}
	post_op_from_stat(&ok->obj_attributes, &o.st);
	ok->access = a->access & granted;
	obj_release(&o);
	return TRUE;
}

/* s3.3.5 READLINK */
bool_t
nfsproc3_readlink_3_svc(READLINK3args *a, READLINK3res *r, struct svc_req *rq)
{
	READLINK3resok *ok = &r->READLINK3res_u.resok;
	struct obj o;
	ssize_t n;
	char *buf;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->symlink, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	post_op_from_stat(&ok->symlink_attributes, &o.st);
	if (!S_ISLNK(o.st.st_mode)) {
		r->status = NFS3ERR_INVAL;
	} else if (!(buf = malloc(PATH_MAX + 1))) {
		r->status = NFS3ERR_SERVERFAULT;
	} else if ((n = readlink(o.path, buf, PATH_MAX)) < 0) {
		r->status = errno_to_nfsstat3(errno);
		free(buf);
	} else {
		buf[n] = '\0';
		ok->data = buf;
	}
	obj_release(&o);
	return TRUE;
}

/* Open the regular file o for reading or writing, as the caller. */
static int
open_file(const struct obj *o, int flags, nfsstat3 *status)
{
	int fd;

	if (S_ISDIR(o->st.st_mode)) {
		*status = NFS3ERR_ISDIR;
		return -1;
	}
	if (!S_ISREG(o->st.st_mode)) {
		*status = NFS3ERR_INVAL;
		return -1;
	}
	fd = open(o->path, flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		*status = errno_to_nfsstat3(errno);
	return fd;
}

/* s3.3.6 READ, at most the transport's transfer size. */
bool_t
nfsproc3_read_3_svc(READ3args *a, READ3res *r, struct svc_req *rq)
{
	READ3resok *ok = &r->READ3res_u.resok;
	uint32_t want = a->count, max = transport_max_io(rq->rq_xprt);
	size_t done = 0;
	struct stat st;
	struct obj o;
	char *buf;
	int fd;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->file, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	fd = open_file(&o, O_RDONLY, &r->status);
	if (fd < 0)
		goto fail;
	if (want > max)
		want = max;
	buf = malloc(want ? want : 1);
	if (!buf) {
		r->status = NFS3ERR_SERVERFAULT;
		close(fd);
		goto fail;
	}
	while (done < want) {
		ssize_t n = pread(fd, buf + done, want - done, (off_t)(a->offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r->status = errno_to_nfsstat3(errno);
			break;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	if (r->status != NFS3_OK || fstat(fd, &st) < 0) {
		if (r->status == NFS3_OK)
			r->status = errno_to_nfsstat3(errno);
		free(buf);
		close(fd);
		goto fail;
	}
	close(fd);
	post_op_from_stat(&ok->file_attributes, &st);
	ok->count = (count3)done;
	ok->eof = a->offset + done >= (uint64_t)st.st_size;
	ok->data.data_val = buf;
	ok->data.data_len = (u_int)done;
	obj_release(&o);
	return TRUE;

fail:
	post_op_from_path(&r->READ3res_u.resfail.file_attributes, o.path);
	obj_release(&o);
	return TRUE;
}

/* Make what was written as stable as asked. */
static int
make_stable(int fd, stable_how how)
{
	if (how == FILE_SYNC)
		return fsync(fd);
	if (how == DATA_SYNC)
		return fdatasync(fd);
	return 0;
}

/*
 * s3.3.7 WRITE: UNSTABLE leaves the data to the page cache until COMMIT;
 * DATA_SYNC and FILE_SYNC are made stable before the reply, which says
 * so.  The verifier is the process's: a restarted server has another, and
 * the client then sends its unstable data again.
 */
bool_t
nfsproc3_write_3_svc(WRITE3args *a, WRITE3res *r, struct svc_req *rq)
{
	WRITE3resok *ok = &r->WRITE3res_u.resok;
	size_t len = a->data.data_len, done = 0;
	struct obj o;
	int fd;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->file, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	if (a->count < len)
		len = a->count;
	fd = open_file(&o, O_WRONLY, &r->status);
	if (fd < 0) {
		wcc_from_path(&r->WRITE3res_u.resfail.file_wcc, &o.st, o.path);
		obj_release(&o);
		return TRUE;
	}
	while (done < len) {
		ssize_t n = pwrite(fd, a->data.data_val + done, len - done,
				   (off_t)(a->offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->status = errno_to_nfsstat3(n < 0 ? errno : ENOSPC);
			break;
		}
		done += (size_t)n;
	}
	if (r->status == NFS3_OK && make_stable(fd, a->stable) < 0)
		r->status = errno_to_nfsstat3(errno);
	close(fd);
	wcc_from_path(&ok->file_wcc, &o.st, o.path);	/* same place in resfail */
	if (r->status == NFS3_OK) {
		ok->count = (count3)done;
		ok->committed = a->stable;
		memcpy(ok->verf, nfstest_write_verf, sizeof(ok->verf));
	}
	obj_release(&o);
	return TRUE;
}

/* s3.3.21 COMMIT: the whole file, whatever range was named. */
bool_t
nfsproc3_commit_3_svc(COMMIT3args *a, COMMIT3res *r, struct svc_req *rq)
{
	COMMIT3resok *ok = &r->COMMIT3res_u.resok;
	struct obj o;
	int fd;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->file, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	fd = open_file(&o, O_RDONLY, &r->status);
	if (fd < 0 && r->status == NFS3ERR_ACCES) {
		r->status = NFS3_OK;	/* a file its owner may only write */
		fd = open_file(&o, O_WRONLY, &r->status);
	}
	if (fd >= 0) {
		if (fsync(fd) < 0)
			r->status = errno_to_nfsstat3(errno);
		close(fd);
	}
	wcc_from_path(&ok->file_wcc, &o.st, o.path);
	if (r->status == NFS3_OK)
		memcpy(ok->verf, nfstest_write_verf, sizeof(ok->verf));
	obj_release(&o);
	return TRUE;
}

/* s3.3.11 MKNOD: special files are not served (NFS3ERR_NOTSUPP). */
bool_t
nfsproc3_mknod_3_svc(MKNOD3args *a, MKNOD3res *r, struct svc_req *rq)
{
	struct obj dir;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->where.dir, &dir);
	if (r->status != NFS3_OK)
		return TRUE;
	r->status = NFS3ERR_NOTSUPP;
	wcc_from_path(&r->MKNOD3res_u.resfail.dir_wcc, &dir.st, dir.path);
	obj_release(&dir);
	return TRUE;
}

/* s3.3.15 LINK: hard links are not served (FSINFO says so). */
bool_t
nfsproc3_link_3_svc(LINK3args *a, LINK3res *r, struct svc_req *rq)
{
	LINK3resfail *fail = &r->LINK3res_u.resfail;
	struct obj o, dir;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->file, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	post_op_from_stat(&fail->file_attributes, &o.st);
	if (fh_resolve(&a->link.dir, &dir) == NFS3_OK) {
		wcc_from_path(&fail->linkdir_wcc, &dir.st, dir.path);
		obj_release(&dir);
	}
	r->status = NFS3ERR_NOTSUPP;
	obj_release(&o);
	return TRUE;
}

/* s3.3.18 FSSTAT */
bool_t
nfsproc3_fsstat_3_svc(FSSTAT3args *a, FSSTAT3res *r, struct svc_req *rq)
{
	FSSTAT3resok *ok = &r->FSSTAT3res_u.resok;
	struct statvfs sv;
	struct obj o;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->fsroot, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	post_op_from_stat(&ok->obj_attributes, &o.st);	/* also in resfail */
	if (statvfs(o.path, &sv) < 0) {
		r->status = errno_to_nfsstat3(errno);
	} else {
		ok->tbytes = (size3)sv.f_blocks * sv.f_frsize;
		ok->fbytes = (size3)sv.f_bfree * sv.f_frsize;
		ok->abytes = (size3)sv.f_bavail * sv.f_frsize;
		ok->tfiles = sv.f_files;
		ok->ffiles = sv.f_ffree;
		ok->afiles = sv.f_favail;
		ok->invarsec = 0;
	}
	obj_release(&o);
	return TRUE;
}

/*
 * s3.3.19 FSINFO: the transfer sizes follow the transport the request
 * came on (a stream carries 1 MiB, a datagram 32 KiB).
 */
bool_t
nfsproc3_fsinfo_3_svc(FSINFO3args *a, FSINFO3res *r, struct svc_req *rq)
{
	FSINFO3resok *ok = &r->FSINFO3res_u.resok;
	uint32_t max = transport_max_io(rq->rq_xprt);
	struct obj o;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->fsroot, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	post_op_from_stat(&ok->obj_attributes, &o.st);
	ok->rtmax = ok->rtpref = max;
	ok->wtmax = ok->wtpref = max;
	ok->rtmult = ok->wtmult = 4096;
	ok->dtpref = max;
	ok->maxfilesize = (size3)INT64_MAX;
	ok->time_delta.seconds = 0;
	ok->time_delta.nseconds = 1;
	ok->properties = FSF3_SYMLINK | FSF3_HOMOGENEOUS | FSF3_CANSETTIME;
	obj_release(&o);
	return TRUE;
}

/* s3.3.20 PATHCONF */
bool_t
nfsproc3_pathconf_3_svc(PATHCONF3args *a, PATHCONF3res *r, struct svc_req *rq)
{
	PATHCONF3resok *ok = &r->PATHCONF3res_u.resok;
	struct obj o;
	long v;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->object, &o);
	if (r->status != NFS3_OK)
		return TRUE;
	post_op_from_stat(&ok->obj_attributes, &o.st);
	v = pathconf(o.path, _PC_LINK_MAX);
	ok->linkmax = v > 0 && v < (long)UINT32_MAX ? (uint32)v : 1;
	v = pathconf(o.path, _PC_NAME_MAX);
	ok->name_max = v > 0 && v < (long)UINT32_MAX ? (uint32)v : NAME_MAX;
	ok->no_trunc = TRUE;
	ok->chown_restricted = TRUE;
	ok->case_insensitive = FALSE;
	ok->case_preserving = TRUE;
	obj_release(&o);
	return TRUE;
}
