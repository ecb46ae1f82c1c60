/*
 * NFS version 3 procedures on directories: making and removing names,
 * renaming, and listing (RFC 1813 s3.3.8-s3.3.17).
 *
 * Listing cookies (s3.3.16) are hashes of the entry names, and a listing
 * is served in cookie order: a cookie stays valid whatever is created or
 * removed between two calls (the entries after it are those whose hash is
 * larger), so the cookie verifier never needs to change and no cookie is
 * ever answered NFS3ERR_BAD_COOKIE.  Cookies 1 and 2 are "." and "..".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nfstest.h"

/* --- making names ---------------------------------------------------------- */

/* The reply of CREATE, MKDIR and SYMLINK, which share their layout. */
struct made {
	post_op_fh3 *obj;
	post_op_attr *obj_attributes;
	wcc_data *ok_wcc, *fail_wcc;
};

/*
 * Common tail of CREATE, MKDIR, SYMLINK: on success the new object is
 * learned and its handle and attributes returned; either way the
 * directory's wcc data.
 */
static void
made_reply(nfsstat3 status, const struct obj *dir, const char *name,
	   const char *path, struct made *m)
{
	struct stat st;

	if (status == NFS3_OK && lstat(path, &st) == 0) {
		fh_learn(fh_id_of(&dir->st), name, &st);
		post_op_fh_from_stat(m->obj, &st);
		post_op_from_stat(m->obj_attributes, &st);
	}
	wcc_from_path(status == NFS3_OK ? m->ok_wcc : m->fail_wcc, &dir->st, dir->path);
}

/* s3.3.8: EXCLUSIVE keeps the client's verifier in atime and mtime. */
static void
verf_times(const createverf3 verf, struct timespec ts[2])
{
	const unsigned char *v = (const unsigned char *)verf;

	ts[0].tv_sec = (time_t)((uint32_t)v[0] << 24 | v[1] << 16 | v[2] << 8 | v[3]);
	ts[1].tv_sec = (time_t)((uint32_t)v[4] << 24 | v[5] << 16 | v[6] << 8 | v[7]);
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
}

static nfsstat3
create_exclusive(const char *path, const createverf3 verf)
{
	struct timespec ts[2];
	struct stat st;
	int fd;

	verf_times(verf, ts);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* A retransmission of the create that made it: success. */
		if (errno == EEXIST && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_atim.tv_sec == ts[0].tv_sec && st.st_mtim.tv_sec == ts[1].tv_sec)
			return NFS3_OK;
		return errno_to_nfsstat3(errno);
	}
	close(fd);
	if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
		return errno_to_nfsstat3(errno);
	return NFS3_OK;
}

/*
 * UNCHECKED and GUARDED.  A new file gets the client's attributes; an
 * existing one (UNCHECKED) keeps its own, but for a size of zero, as a
 * local open(O_CREAT) leaves the mode of an existing file alone.
 */
static nfsstat3
create_checked(const char *path, createmode3 how, const sattr3 *sa)
{
	mode_t mode = sa->mode.set_it ? sa->mode.set_mode3_u.mode & 07777 : 0644;
	int fd;

	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd >= 0) {
		close(fd);
		return sattr_apply(path, sa, false);
	}
	if (errno != EEXIST || how == GUARDED)
		return errno_to_nfsstat3(errno);
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno_to_nfsstat3(errno);
	close(fd);
	if (sa->size.set_it && sa->size.set_size3_u.size == 0 && truncate(path, 0) < 0)
		return errno_to_nfsstat3(errno);
	return NFS3_OK;
}

/* s3.3.8 CREATE */
bool_t
nfsproc3_create_3_svc(CREATE3args *a, CREATE3res *r, struct svc_req *rq)
{
	CREATE3resok *ok = &r->CREATE3res_u.resok;
	struct made m = { &ok->obj, &ok->obj_attributes, &ok->dir_wcc,
			  &r->CREATE3res_u.resfail.dir_wcc };
	char *path = NULL;
	struct obj dir;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->where.dir, &dir);
	if (r->status != NFS3_OK)
		return TRUE;
	r->status = child_path(&dir, a->where.name, true, &path);
	if (r->status == NFS3_OK && a->how.mode == EXCLUSIVE)
		r->status = create_exclusive(path, a->how.createhow3_u.verf);
	else if (r->status == NFS3_OK)
		r->status = create_checked(path, a->how.mode, &a->how.createhow3_u.obj_attributes);
	made_reply(r->status, &dir, a->where.name, path, &m);
	free(path);
	obj_release(&dir);
	return TRUE;
}

/* s3.3.9 MKDIR */
bool_t
nfsproc3_mkdir_3_svc(MKDIR3args *a, MKDIR3res *r, struct svc_req *rq)
{
	MKDIR3resok *ok = &r->MKDIR3res_u.resok;
	struct made m = { &ok->obj, &ok->obj_attributes, &ok->dir_wcc,
			  &r->MKDIR3res_u.resfail.dir_wcc };
	const sattr3 *sa = &a->attributes;
	char *path = NULL;
	struct obj dir;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->where.dir, &dir);
	if (r->status != NFS3_OK)
		return TRUE;
	r->status = child_path(&dir, a->where.name, true, &path);
	if (r->status == NFS3_OK &&
	    mkdir(path, sa->mode.set_it ? sa->mode.set_mode3_u.mode & 07777 : 0755) < 0)
		r->status = errno_to_nfsstat3(errno);
	if (r->status == NFS3_OK)
		r->status = sattr_apply(path, sa, false);
	made_reply(r->status, &dir, a->where.name, path, &m);
	free(path);
	obj_release(&dir);
	return TRUE;
}

/* s3.3.10 SYMLINK */
bool_t
nfsproc3_symlink_3_svc(SYMLINK3args *a, SYMLINK3res *r, struct svc_req *rq)
{
	SYMLINK3resok *ok = &r->SYMLINK3res_u.resok;
	struct made m = { &ok->obj, &ok->obj_attributes, &ok->dir_wcc,
			  &r->SYMLINK3res_u.resfail.dir_wcc };
	char *path = NULL;
	struct obj dir;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->where.dir, &dir);
	if (r->status != NFS3_OK)
		return TRUE;
	r->status = child_path(&dir, a->where.name, true, &path);
	if (r->status == NFS3_OK && !a->symlink.symlink_data)
		r->status = NFS3ERR_INVAL;
	if (r->status == NFS3_OK && symlink(a->symlink.symlink_data, path) < 0)
		r->status = errno_to_nfsstat3(errno);
	if (r->status == NFS3_OK)
		r->status = sattr_apply(path, &a->symlink.symlink_attributes, true);
	made_reply(r->status, &dir, a->where.name, path, &m);
	free(path);
	obj_release(&dir);
	return TRUE;
}

/* --- removing and renaming ------------------------------------------------- */

/* REMOVE and RMDIR: resfail and resok are the same wcc_data. */
static nfsstat3
remove_name(const diropargs3 *what, bool is_dir, wcc_data *wcc)
{
	struct stat st;
	char *path = NULL;
	struct obj dir;
	nfsstat3 status;

	status = fh_resolve(&what->dir, &dir);
	if (status != NFS3_OK)
		return status;
	status = child_path(&dir, what->name, false, &path);
	if (status == NFS3_OK && lstat(path, &st) < 0)
		status = errno_to_nfsstat3(errno);
	if (status == NFS3_OK && (is_dir ? rmdir(path) : unlink(path)) < 0)
		/* Some file systems say EEXIST for a directory not empty. */
		status = is_dir && errno == EEXIST ? NFS3ERR_NOTEMPTY : errno_to_nfsstat3(errno);
	if (status == NFS3_OK)
		fh_forget(&st, fh_id_of(&dir.st), what->name);
	wcc_from_path(wcc, &dir.st, dir.path);
	free(path);
	obj_release(&dir);
	return status;
}

/* s3.3.12 REMOVE */
bool_t
nfsproc3_remove_3_svc(REMOVE3args *a, REMOVE3res *r, struct svc_req *rq)
{
	memset(r, 0, sizeof(*r));
	r->status = remove_name(&a->object, false, &r->REMOVE3res_u.resok.dir_wcc);
	return TRUE;
}

/* s3.3.13 RMDIR */
bool_t
nfsproc3_rmdir_3_svc(RMDIR3args *a, RMDIR3res *r, struct svc_req *rq)
{
	memset(r, 0, sizeof(*r));
	r->status = remove_name(&a->object, true, &r->RMDIR3res_u.resok.dir_wcc);
	return TRUE;
}

/* s3.3.14 RENAME: the table follows the object to its new name. */
bool_t
nfsproc3_rename_3_svc(RENAME3args *a, RENAME3res *r, struct svc_req *rq)
{
	RENAME3resok *ok = &r->RENAME3res_u.resok;	/* same layout as resfail */
	char *from = NULL, *to = NULL;
	struct obj fdir, tdir = { 0 };
	struct stat fst, tst;
	bool replaced = false;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->from.dir, &fdir);
	if (r->status != NFS3_OK)
		return TRUE;
	r->status = fh_resolve(&a->to.dir, &tdir);
	if (r->status == NFS3_OK)
		r->status = child_path(&fdir, a->from.name, false, &from);
	if (r->status == NFS3_OK)
		r->status = child_path(&tdir, a->to.name, false, &to);
	if (r->status == NFS3_OK && lstat(from, &fst) < 0)
		r->status = errno_to_nfsstat3(errno);
	if (r->status == NFS3_OK) {
		replaced = lstat(to, &tst) == 0;
		if (rename(from, to) < 0)
			r->status = errno == EEXIST ? NFS3ERR_NOTEMPTY : errno_to_nfsstat3(errno);
	}
	if (r->status == NFS3_OK) {
		if (replaced && tst.st_ino != fst.st_ino)
			fh_forget(&tst, fh_id_of(&tdir.st), a->to.name);
		fh_learn(fh_id_of(&tdir.st), a->to.name, &fst);
	}
	wcc_from_path(&ok->fromdir_wcc, &fdir.st, fdir.path);
	if (tdir.path)
		wcc_from_path(&ok->todir_wcc, &tdir.st, tdir.path);
	free(from);
	free(to);
	obj_release(&tdir);
	obj_release(&fdir);
	return TRUE;
}

/* --- listing --------------------------------------------------------------- */

struct dent {
	cookie3 cookie;
	uint64_t ino;
	char *name;
};

struct listing {
	struct dent *d;
	size_t n;
};

/* A name's cookie: FNV-1a, kept clear of 0 (start), 1 (".") and 2 (".."). */
static cookie3
name_cookie(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	if (!strcmp(name, "."))
		return 1;
	if (!strcmp(name, ".."))
		return 2;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ull;
	return (h >> 2) + 3;
}

static int
dent_cmp(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;

	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void
listing_free(struct listing *l)
{
	while (l->n)
		free(l->d[--l->n].name);
	free(l->d);
}

/* The whole directory, in cookie order; at the export's root ".." is the root. */
static nfsstat3
listing_read(const struct obj *dir, struct listing *l)
{
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	memset(l, 0, sizeof(*l));
	if (!S_ISDIR(dir->st.st_mode))
		return NFS3ERR_NOTDIR;
	d = opendir(dir->path);
	if (!d)
		return errno_to_nfsstat3(errno);
	while ((de = readdir(d))) {
		struct dent *e;

		if (l->n == cap) {
			cap = cap ? cap * 2 : 64;
			e = realloc(l->d, cap * sizeof(*e));
			if (!e)
				goto nomem;
			l->d = e;
		}
		e = &l->d[l->n];
		e->name = strdup(de->d_name);
		if (!e->name)
			goto nomem;
		e->cookie = name_cookie(de->d_name);
		e->ino = de->d_ino;
		if (e->cookie == 1 || (e->cookie == 2 && fh_is_root(fh_id_of(&dir->st))))
			e->ino = dir->st.st_ino;
		l->n++;
	}
	closedir(d);
	qsort(l->d, l->n, sizeof(*l->d), dent_cmp);
	return NFS3_OK;

nomem:
	closedir(d);
	listing_free(l);
	return NFS3ERR_SERVERFAULT;
}

/* The first entry after cookie. */
static size_t
listing_start(const struct listing *l, cookie3 cookie)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->d[mid].cookie <= cookie)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t
xdr_string_size(const char *s)
{
	return 4 + ((strlen(s) + 3) & ~(size_t)3);
}

/* Bytes of a reply before the entries: status, dir attributes, verifier, end marks. */
#define LIST_OVERHEAD	(4 + 4 + 84 + NFS3_COOKIEVERFSIZE + 4 + 4)
/* Entries in one reply at most (the XDR routines recurse per entry). */
#define LIST_MAX_ENTRIES 4096

/*
 * How many entries from first fit: each entry's directory part (value
 * flag, fileid, name, cookie) within dirmax, and with extra bytes each
 * (READDIRPLUS: attributes and handle) within max.  Entries sharing a
 * cookie are never split between two replies.
 */
static size_t
listing_fit(const struct listing *l, size_t first, size_t dirmax, size_t max, size_t extra)
{
	size_t i, dirbytes = 0, bytes = LIST_OVERHEAD;

	for (i = first; i < l->n && i - first < LIST_MAX_ENTRIES; i++) {
		size_t e = 4 + 8 + xdr_string_size(l->d[i].name) + 8;

		if (dirbytes + e > dirmax || bytes + e + extra > max)
			break;
		dirbytes += e;
		bytes += e + extra;
	}
	if (i < l->n && i > first + 1)
		while (i > first + 1 && l->d[i - 1].cookie == l->d[i].cookie)
			i--;
	return i - first;
}

static void
set_cookieverf(cookieverf3 verf)
{
	/* Cookies never go stale (see the top of this file). */
	memcpy(verf, nfstest_write_verf, NFS3_COOKIEVERFSIZE);
}

/* s3.3.16 READDIR */
bool_t
nfsproc3_readdir_3_svc(READDIR3args *a, READDIR3res *r, struct svc_req *rq)
{
	READDIR3resok *ok = &r->READDIR3res_u.resok;
	size_t max = a->count, first, n, i;
	entry3 **tail = &ok->reply.entries;
	struct listing l;
	struct obj dir;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->dir, &dir);
	if (r->status != NFS3_OK)
		return TRUE;
	if (max > transport_max_io(rq->rq_xprt))
		max = transport_max_io(rq->rq_xprt);
	r->status = listing_read(&dir, &l);
	post_op_from_stat(&ok->dir_attributes, &dir.st);	/* also in resfail */
	if (r->status != NFS3_OK)
		goto out;
	first = listing_start(&l, a->cookie);
	n = listing_fit(&l, first, max, max, 0);
	if (n == 0 && first < l.n) {
		r->status = NFS3ERR_TOOSMALL;
		goto out_free;
	}
	for (i = first; i < first + n; i++) {
		entry3 *e = calloc(1, sizeof(*e));

		if (!e) {
			r->status = NFS3ERR_SERVERFAULT;
			goto out_free;
		}
		*tail = e;
		tail = &e->nextentry;
		e->fileid = l.d[i].ino;
		e->cookie = l.d[i].cookie;
		e->name = l.d[i].name;
		l.d[i].name = NULL;
	}
	ok->reply.eof = first + n == l.n;
	set_cookieverf(ok->cookieverf);
out_free:
	listing_free(&l);
	if (r->status != NFS3_OK) {
		xdr_free((xdrproc_t)xdr_dirlist3, (char *)&ok->reply);
		memset(&ok->reply, 0, sizeof(ok->reply));
	}
out:
	obj_release(&dir);
	return TRUE;
}

/* Attributes and handle of one entry of a READDIRPLUS reply. */
static void
plus_entry(const struct obj *dir, const char *name, entryplus3 *e)
{
	struct obj o = { 0 };
	char *path = NULL;

	if (!strcmp(name, "."))
		o.st = dir->st;
	else if (!strcmp(name, "..")) {
		char *slash = strrchr(dir->path, '/');

		if (fh_is_root(fh_id_of(&dir->st)) || !slash)
			path = strdup(fh_root_path());
		else
			path = strndup(dir->path, (size_t)(slash - dir->path));
		if (!path || lstat(path, &o.st) < 0)
			goto out;
	} else if (child_path(dir, name, false, &path) != NFS3_OK || lstat(path, &o.st) < 0) {
		goto out;	/* gone since the listing: no attributes */
	} else {
		fh_learn(fh_id_of(&dir->st), name, &o.st);
	}
	post_op_from_stat(&e->name_attributes, &o.st);
	post_op_fh_from_stat(&e->name_handle, &o.st);
out:
	free(path);
}

/* s3.3.17 READDIRPLUS */
bool_t
nfsproc3_readdirplus_3_svc(READDIRPLUS3args *a, READDIRPLUS3res *r, struct svc_req *rq)
{
	READDIRPLUS3resok *ok = &r->READDIRPLUS3res_u.resok;
	size_t dirmax = a->dircount, max = a->maxcount, first, n, i;
	/* Attributes (flag + fattr3) and handle (flag + length + bytes). */
	const size_t extra = 4 + 84 + 4 + 4 + 24;
	entryplus3 **tail = &ok->reply.entries;
	struct listing l;
	struct obj dir;

	memset(r, 0, sizeof(*r));
	r->status = fh_resolve(&a->dir, &dir);
	if (r->status != NFS3_OK)
		return TRUE;
	if (max > transport_max_io(rq->rq_xprt))
		max = transport_max_io(rq->rq_xprt);
	if (dirmax > max)
		dirmax = max;
	r->status = listing_read(&dir, &l);
	post_op_from_stat(&ok->dir_attributes, &dir.st);	/* also in resfail */
	if (r->status != NFS3_OK)
		goto out;
	first = listing_start(&l, a->cookie);
	n = listing_fit(&l, first, dirmax, max, extra);
	if (n == 0 && first < l.n) {
		r->status = NFS3ERR_TOOSMALL;
		goto out_free;
	}
	for (i = first; i < first + n; i++) {
		entryplus3 *e = calloc(1, sizeof(*e));

		if (!e) {
			r->status = NFS3ERR_SERVERFAULT;
			goto out_free;
		}
		*tail = e;
		tail = &e->nextentry;
		e->fileid = l.d[i].ino;
		e->cookie = l.d[i].cookie;
		plus_entry(&dir, l.d[i].name, e);
		if (e->name_attributes.attributes_follow)
			e->fileid = e->name_attributes.post_op_attr_u.attributes.fileid;
		e->name = l.d[i].name;
		l.d[i].name = NULL;
	}
	ok->reply.eof = first + n == l.n;
	set_cookieverf(ok->cookieverf);
out_free:
	listing_free(&l);
	if (r->status != NFS3_OK) {
		xdr_free((xdrproc_t)xdr_dirlistplus3, (char *)&ok->reply);
		memset(&ok->reply, 0, sizeof(ok->reply));
	}
out:
	obj_release(&dir);
	return TRUE;
}
