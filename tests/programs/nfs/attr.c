/*
 * What every NFS procedure needs: errno to nfsstat3, attributes from
 * lstat(), weak cache consistency data, names checked before use, and
 * client-set attributes applied.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "nfstest.h"

/* RFC 1813 s2.6: each error as the corresponding errno of the server. */
nfsstat3
errno_to_nfsstat3(int err)
{
	switch (err) {
	case 0:
		return NFS3_OK;
	case EPERM:
		return NFS3ERR_PERM;
	case ENOENT:
		return NFS3ERR_NOENT;
	case ENXIO:
		return NFS3ERR_NXIO;
	case EACCES:
		return NFS3ERR_ACCES;
	case EEXIST:
		return NFS3ERR_EXIST;
	case EXDEV:
		return NFS3ERR_XDEV;
	case ENODEV:
		return NFS3ERR_NODEV;
	case ENOTDIR:
		return NFS3ERR_NOTDIR;
	case EISDIR:
		return NFS3ERR_ISDIR;
	case EINVAL:
	case ELOOP:		/* a symbolic link where none is followed */
		return NFS3ERR_INVAL;
	case EFBIG:
		return NFS3ERR_FBIG;
	case ENOSPC:
		return NFS3ERR_NOSPC;
	case EROFS:
		return NFS3ERR_ROFS;
	case EMLINK:
		return NFS3ERR_MLINK;
	case ENAMETOOLONG:
		return NFS3ERR_NAMETOOLONG;
	case ENOTEMPTY:
		return NFS3ERR_NOTEMPTY;
	case EDQUOT:
		return NFS3ERR_DQUOT;
	case ESTALE:
		return NFS3ERR_STALE;
	case EREMOTE:
		return NFS3ERR_REMOTE;
	case EOPNOTSUPP:
		return NFS3ERR_NOTSUPP;
	case EAGAIN:		/* s2.6 JUKEBOX: not now, try again later */
		return NFS3ERR_JUKEBOX;
	case ENOMEM:
	case EFAULT:
	case EBADF:
		return NFS3ERR_SERVERFAULT;
	default:
		return NFS3ERR_IO;
	}
}

static ftype3
ftype_of(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return NF3DIR;
	case S_IFBLK:
		return NF3BLK;
	case S_IFCHR:
		return NF3CHR;
	case S_IFLNK:
		return NF3LNK;
	case S_IFSOCK:
		return NF3SOCK;
	case S_IFIFO:
		return NF3FIFO;
	default:
		return NF3REG;
	}
}

static void
time_from(nfstime3 *t, const struct timespec *ts)
{
	t->seconds = (uint32)ts->tv_sec;
	t->nseconds = (uint32)ts->tv_nsec;
}

/* RFC 1813 s2.5 fattr3. */
void
fattr_from_stat(fattr3 *a, const struct stat *st)
{
	a->type = ftype_of(st->st_mode);
	a->mode = st->st_mode & 07777;
	a->nlink = (uint32)st->st_nlink;
	a->uid = st->st_uid;
	a->gid = st->st_gid;
	a->size = (size3)st->st_size;
	a->used = (size3)st->st_blocks * 512;
	a->rdev.specdata1 = major(st->st_rdev);
	a->rdev.specdata2 = minor(st->st_rdev);
	a->fsid = (uint64)st->st_dev;
	a->fileid = (fileid3)st->st_ino;
	time_from(&a->atime, &st->st_atim);
	time_from(&a->mtime, &st->st_mtim);
	time_from(&a->ctime, &st->st_ctim);
}

void
post_op_from_stat(post_op_attr *p, const struct stat *st)
{
	p->attributes_follow = st != NULL;
	if (st)
		fattr_from_stat(&p->post_op_attr_u.attributes, st);
}

void
post_op_from_path(post_op_attr *p, const char *path)
{
	struct stat st;

	post_op_from_stat(p, path && lstat(path, &st) == 0 ? &st : NULL);
}

void
pre_op_from_stat(pre_op_attr *p, const struct stat *st)
{
	p->attributes_follow = st != NULL;
	if (st) {
		wcc_attr *w = &p->pre_op_attr_u.attributes;

		w->size = (size3)st->st_size;
		time_from(&w->mtime, &st->st_mtim);
		time_from(&w->ctime, &st->st_ctim);
	}
}

/* s2.5 wcc_data: before from the caller's lstat, after from a new one. */
void
wcc_from_path(wcc_data *w, const struct stat *before, const char *path)
{
	pre_op_from_stat(&w->before, before);
	post_op_from_path(&w->after, path);
}

bool
post_op_fh_from_stat(post_op_fh3 *h, const struct stat *st)
{
	h->handle_follows = fh_encode(&h->post_op_fh3_u.handle, st);
	return h->handle_follows;
}

nfsstat3
child_path(const struct obj *dir, const char *name, bool creating, char **path)
{
	*path = NULL;
	if (!S_ISDIR(dir->st.st_mode))
		return NFS3ERR_NOTDIR;
	if (!name || !*name || strchr(name, '/'))
		return NFS3ERR_ACCES;
	if (strlen(name) > NAME_MAX)
		return NFS3ERR_NAMETOOLONG;
	/* "." and ".." always exist and are never removed or renamed. */
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return creating ? NFS3ERR_EXIST : NFS3ERR_INVAL;
	if (asprintf(path, "%s/%s", dir->path, name) < 0) {
		*path = NULL;
		return NFS3ERR_SERVERFAULT;
	}
	if (strlen(*path) >= PATH_MAX) {
		free(*path);
		*path = NULL;
		return NFS3ERR_NAMETOOLONG;
	}
	return NFS3_OK;
}

static void
set_time(struct timespec *ts, time_how how, const nfstime3 *t)
{
	switch (how) {
	case SET_TO_SERVER_TIME:
		ts->tv_nsec = UTIME_NOW;
		break;
	case SET_TO_CLIENT_TIME:
		ts->tv_sec = t->seconds;
		ts->tv_nsec = t->nseconds;
		break;
	default:
		ts->tv_nsec = UTIME_OMIT;
		break;
	}
}

/*
 * RFC 1813 s2.5 sattr3: each attribute the client sets, in the order a
 * local chmod, chown, truncate, touch would.  Symbolic links have no mode
 * and no size of their own.
 */
nfsstat3
sattr_apply(const char *path, const sattr3 *sa, bool is_link)
{
	struct timespec ts[2];

	if (sa->mode.set_it && !is_link &&
	    chmod(path, sa->mode.set_mode3_u.mode & 07777) < 0)
		return errno_to_nfsstat3(errno);
	if ((sa->uid.set_it || sa->gid.set_it) &&
	    lchown(path, sa->uid.set_it ? sa->uid.set_uid3_u.uid : (uid_t)-1,
		   sa->gid.set_it ? sa->gid.set_gid3_u.gid : (gid_t)-1) < 0)
		return errno_to_nfsstat3(errno);
	if (sa->size.set_it) {
		if (is_link)
			return NFS3ERR_INVAL;
		if (truncate(path, (off_t)sa->size.set_size3_u.size) < 0)
			return errno_to_nfsstat3(errno);
	}
	if (sa->atime.set_it != DONT_CHANGE || sa->mtime.set_it != DONT_CHANGE) {
		set_time(&ts[0], sa->atime.set_it, &sa->atime.set_atime_u.atime);
		set_time(&ts[1], sa->mtime.set_it, &sa->mtime.set_mtime_u.mtime);
		if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
			return errno_to_nfsstat3(errno);
	}
	return NFS3_OK;
}
