/*
 * MOUNT version 3 procedures (RFC 1813 Appendix I): one export, "/",
 * which is the served directory; a path below it mounts that directory.
 * The served directory's own path is accepted as a name of the export.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfstest.h"

/* What MNT recorded and DUMP reports: host and directory. */
struct mount_rec {
	char *host;
	char *dir;
	struct mount_rec *next;
};

static struct mount_rec *mounts;

int
mount_program_3_freeresult(SVCXPRT *xprt, xdrproc_t proc, caddr_t res)
{
	xdr_free(proc, res);
	return 1;
}

/* The caller's address, as text. */
static void
caller_host(struct svc_req *rq, char *buf, size_t len)
{
	const struct netbuf *nb = svc_getrpccaller(rq->rq_xprt);
	const struct sockaddr *sa = nb ? (const void *)nb->buf : NULL;

	snprintf(buf, len, "unknown");
	if (!sa)
		return;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf, (socklen_t)len);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf, (socklen_t)len);
}

static void
remember(const char *host, const char *dir)
{
	struct mount_rec *m;

	for (m = mounts; m; m = m->next)
		if (!strcmp(m->host, host) && !strcmp(m->dir, dir))
			return;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->host = strdup(host)) || !(m->dir = strdup(dir))) {
		if (m)
			free(m->host);
		free(m);
		return;
	}
	m->next = mounts;
	mounts = m;
}

/* Forget host's mount of dir, or all of host's mounts (dir NULL). */
static void
forget(const char *host, const char *dir)
{
	struct mount_rec **pm = &mounts, *m;

	while ((m = *pm)) {
		if (!strcmp(m->host, host) && (!dir || !strcmp(m->dir, dir))) {
			*pm = m->next;
			free(m->host);
			free(m->dir);
			free(m);
		} else {
			pm = &m->next;
		}
	}
}

/* The part of an export path below the served directory, or NULL. */
static const char *
below_export(const char *path)
{
	size_t rl = strlen(fh_root_path());

	if (!strncmp(path, fh_root_path(), rl) && (path[rl] == '/' || !path[rl]))
		return path + rl;
	if (path[0] == '/')
		return path;
	return NULL;
}

/*
 * Walk from the root to the directory named, learning each step, so
 * that the handle returned resolves through the table.
 */
static mountstat3
walk(const char *rel, struct stat *st)
{
	char path[PATH_MAX], *comp, *save = NULL, *copy = strdup(rel);
	mountstat3 status = MNT3_OK;

	*st = *fh_root_stat();
	if (!copy)
		return MNT3ERR_SERVERFAULT;
	snprintf(path, sizeof(path), "%s", fh_root_path());
	for (comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		struct stat parent = *st;
		size_t len = strlen(path);

		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			status = MNT3ERR_INVAL;
			break;
		}
		if (len + 1 + strlen(comp) >= sizeof(path)) {
			status = MNT3ERR_NAMETOOLONG;
			break;
		}
		snprintf(path + len, sizeof(path) - len, "/%s", comp);
		if (lstat(path, st) < 0) {
			status = errno == ENOENT ? MNT3ERR_NOENT :
				 errno == EACCES ? MNT3ERR_ACCES : MNT3ERR_IO;
			break;
		}
		if (!S_ISDIR(st->st_mode)) {
			status = MNT3ERR_NOTDIR;
			break;
		}
		fh_learn(fh_id_of(&parent), comp, st);
	}
	free(copy);
	return status;
}

bool_t
mountproc3_null_3_svc(void *a, void *r, struct svc_req *rq)
{
	return TRUE;
}

bool_t
mountproc3_mnt_3_svc(dirpath *a, mountres3 *r, struct svc_req *rq)
{
	mountres3_ok *ok = &r->mountres3_u.mountinfo;
	const char *rel = *a ? below_export(*a) : NULL;
	char host[INET6_ADDRSTRLEN];
	nfs_fh3 fh;
	struct stat st;

	memset(r, 0, sizeof(*r));
	if (!rel) {
		r->fhs_status = MNT3ERR_ACCES;	/* not exported */
		return TRUE;
	}
	r->fhs_status = walk(rel, &st);
	if (r->fhs_status != MNT3_OK)
		return TRUE;
	ok->auth_flavors.auth_flavors_val = malloc(sizeof(int));
	if (!ok->auth_flavors.auth_flavors_val || !fh_encode(&fh, &st)) {
		free(ok->auth_flavors.auth_flavors_val);
		memset(ok, 0, sizeof(*ok));
		r->fhs_status = MNT3ERR_SERVERFAULT;
		return TRUE;
	}
	ok->fhandle.fhandle3_len = fh.data.data_len;
	ok->fhandle.fhandle3_val = fh.data.data_val;
	ok->auth_flavors.auth_flavors_val[0] = AUTH_SYS;
	ok->auth_flavors.auth_flavors_len = 1;
	caller_host(rq, host, sizeof(host));
	remember(host, *a);
	return TRUE;
}

bool_t
mountproc3_dump_3_svc(void *a, mountlist *r, struct svc_req *rq)
{
	struct mount_rec *m;
	mountlist *tail = r;

	*r = NULL;
	for (m = mounts; m; m = m->next) {
		mountbody *b = calloc(1, sizeof(*b));

		if (!b || !(b->ml_hostname = strdup(m->host)) ||
		    !(b->ml_directory = strdup(m->dir))) {
			if (b)
				free(b->ml_hostname);
			free(b);
			break;
		}
		*tail = b;
		tail = &b->ml_next;
	}
	return TRUE;
}

bool_t
mountproc3_umnt_3_svc(dirpath *a, void *r, struct svc_req *rq)
{
	char host[INET6_ADDRSTRLEN];

	caller_host(rq, host, sizeof(host));
	if (*a)
		forget(host, *a);
	return TRUE;
}

bool_t
mountproc3_umntall_3_svc(void *a, void *r, struct svc_req *rq)
{
	char host[INET6_ADDRSTRLEN];

	caller_host(rq, host, sizeof(host));
	forget(host, NULL);
	return TRUE;
}

/* One export, open to everyone (no groups). */
bool_t
mountproc3_export_3_svc(void *a, exports *r, struct svc_req *rq)
{
	exportnode *e = calloc(1, sizeof(*e));

	*r = NULL;
	if (!e)
		return TRUE;
	e->ex_dir = strdup("/");
	if (!e->ex_dir) {
		free(e);
		return TRUE;
	}
	*r = e;
	return TRUE;
}
