/*
 * File handles and the table that maps them back to paths.
 *
 * A handle (RFC 1813 s2.5: nfs_fh3, opaque, at most NFS3_FHSIZE bytes) is
 *
 *   magic(4) boot(4) dev(8) ino(8)      big-endian, 24 bytes
 *
 * The boot verifier is chosen when the server starts, so a handle from an
 * earlier server process is answered NFS3ERR_STALE (s2.6).  The server
 * runs unprivileged and cannot open by handle: every object it hands out a
 * handle for is entered in a table, (dev, ino) -> (parent directory, name),
 * filled by LOOKUP, READDIRPLUS, CREATE and friends, moved by RENAME and
 * dropped by REMOVE.  A path is the root's path followed by the names up
 * the chain, checked against lstat() before use.  A handle the table does
 * not know, or whose chain no longer leads to it (another worker process
 * learned it, or the tree changed behind the server), is searched for in
 * the export, breadth first and bounded.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "nfstest.h"

#define FH_MAGIC	0x4e465433u	/* "NFT3" */
#define FH_LEN		24
#define FH_MAX_DEPTH	1024		/* names in a path below the root */
#define FH_SEARCH_MAX	200000		/* entries a search looks at */

struct fh_node {
	struct fh_id id;		/* hash key */
	struct fh_id parent;
	char *name;			/* in the parent directory */
	UT_hash_handle hh;
};

static struct fh_node *table;
static char *root_path;
static struct stat root_st;
static struct fh_id root_id;
static uint32_t boot_verf;

struct fh_id
fh_id_of(const struct stat *st)
{
	struct fh_id id;

	memset(&id, 0, sizeof(id));	/* a hash key: no padding garbage */
	id.dev = (uint64_t)st->st_dev;
	id.ino = (uint64_t)st->st_ino;
	return id;
}

static bool
id_eq(struct fh_id a, struct fh_id b)
{
	return a.dev == b.dev && a.ino == b.ino;
}

bool
fh_is_root(struct fh_id id)
{
	return id_eq(id, root_id);
}

const char *
fh_root_path(void)
{
	return root_path;
}

const struct stat *
fh_root_stat(void)
{
	return &root_st;
}

int
fh_init(const char *root, uint32_t boot)
{
	root_path = realpath(root, NULL);
	if (!root_path) {
		fprintf(stderr, "%s: %s: %s\n", PROGNAME, root, strerror(errno));
		return -1;
	}
	if (lstat(root_path, &root_st) < 0) {
		fprintf(stderr, "%s: %s: %s\n", PROGNAME, root_path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(root_st.st_mode)) {
		fprintf(stderr, "%s: %s: not a directory\n", PROGNAME, root_path);
		return -1;
	}
	root_id = fh_id_of(&root_st);
	boot_verf = boot;
	return 0;
}

static struct fh_node *
find(struct fh_id id)
{
	struct fh_node *n;

	HASH_FIND(hh, table, &id, sizeof(id), n);
	return n;
}

/* --- handles ----------------------------------------------------------- */

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void
put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t
get64(const unsigned char *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

bool
fh_encode(nfs_fh3 *fh, const struct stat *st)
{
	unsigned char *p = malloc(FH_LEN);
	struct fh_id id = fh_id_of(st);

	fh->data.data_val = (char *)p;
	fh->data.data_len = 0;
	if (!p)
		return false;
	put32(p, FH_MAGIC);
	put32(p + 4, boot_verf);
	put64(p + 8, id.dev);
	put64(p + 16, id.ino);
	fh->data.data_len = FH_LEN;
	return true;
}

/* --- paths --------------------------------------------------------------- */

/* The path of a node from the names up its chain; NULL if it is broken. */
static char *
node_path(const struct fh_node *n)
{
	const struct fh_node *chain[FH_MAX_DEPTH];
	size_t depth = 0, len = strlen(root_path), off;
	char *path;

	while (!fh_is_root(n->id)) {
		if (depth == FH_MAX_DEPTH)
			return NULL;
		chain[depth++] = n;
		len += 1 + strlen(n->name);
		n = find(n->parent);
		if (!n)
			return NULL;
	}
	if (len >= PATH_MAX)
		return NULL;
	path = malloc(len + 1);
	if (!path)
		return NULL;
	off = strlen(root_path);
	memcpy(path, root_path, off);
	while (depth--) {
		size_t l = strlen(chain[depth]->name);

		path[off++] = '/';
		memcpy(path + off, chain[depth]->name, l);
		off += l;
	}
	path[off] = '\0';
	return path;
}

void
fh_learn(struct fh_id parent, const char *name, const struct stat *st)
{
	struct fh_id id = fh_id_of(st);
	struct fh_node *n;
	char *copy;

	if (fh_is_root(id) || !strcmp(name, ".") || !strcmp(name, ".."))
		return;
	n = find(id);
	if (n && id_eq(n->parent, parent) && !strcmp(n->name, name))
		return;
	copy = strdup(name);
	if (!copy)
		return;		/* the search finds it later */
	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n) {
			free(copy);
			return;
		}
		n->id = id;
		HASH_ADD(hh, table, id, sizeof(n->id), n);
	}
	free(n->name);
	n->name = copy;
	n->parent = parent;
}

void
fh_forget(const struct stat *st, struct fh_id parent, const char *name)
{
	struct fh_node *n = find(fh_id_of(st));

	/* Another link may still name it: only this name goes. */
	if (!n || !id_eq(n->parent, parent) || strcmp(n->name, name))
		return;
	HASH_DEL(table, n);
	free(n->name);
	free(n);
}

/* --- search -------------------------------------------------------------- */

struct dirq {
	char **path;
	struct fh_id *id;
	size_t head, tail, cap;
};

static bool
dirq_push(struct dirq *q, char *path, struct fh_id id)
{
	if (q->tail == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		char **p = realloc(q->path, cap * sizeof(*p));
		struct fh_id *i;

		if (!p)
			return false;
		q->path = p;
		i = realloc(q->id, cap * sizeof(*i));
		if (!i)
			return false;
		q->id = i;
		q->cap = cap;
	}
	q->path[q->tail] = path;
	q->id[q->tail++] = id;
	return true;
}

static void
dirq_free(struct dirq *q)
{
	while (q->head < q->tail)
		free(q->path[q->head++]);
	free(q->path);
	free(q->id);
}

static char *
join(const char *dir, const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return NULL;
	return p;
}

/*
 * Look through one directory for want; learn what it holds and queue its
 * subdirectories on the same device.  True when found (o filled).
 */
static bool
search_dir(struct dirq *q, const char *dir, struct fh_id dir_id,
	   struct fh_id want, struct obj *o, size_t *seen)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d)) && ++*seen < FH_SEARCH_MAX) {
		bool hit = (uint64_t)de->d_ino == want.ino;
		struct stat st;
		char *path;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!hit && de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		path = join(dir, de->d_name);
		if (!path || lstat(path, &st) < 0) {
			free(path);
			continue;
		}
		if ((uint64_t)st.st_dev != dir_id.dev && !id_eq(fh_id_of(&st), want)) {
			free(path);	/* another file system mounted here */
			continue;
		}
		if (id_eq(fh_id_of(&st), want)) {
			fh_learn(dir_id, de->d_name, &st);
			o->path = path;
			o->st = st;
			found = true;
		} else if (S_ISDIR(st.st_mode)) {
			fh_learn(dir_id, de->d_name, &st);
			if (!dirq_push(q, path, fh_id_of(&st)))
				free(path);
		} else {
			free(path);
		}
	}
	closedir(d);
	return found;
}

static bool
search(struct fh_id want, struct obj *o)
{
	struct dirq q = { 0 };
	size_t seen = 0;
	bool found = false;
	char *first = strdup(root_path);

	if (!first || !dirq_push(&q, first, root_id)) {
		free(first);
		dirq_free(&q);
		return false;
	}
	while (!found && q.head < q.tail && seen < FH_SEARCH_MAX) {
		char *dir = q.path[q.head];
		struct fh_id id = q.id[q.head++];

		found = search_dir(&q, dir, id, want, o, &seen);
		free(dir);
	}
	dirq_free(&q);
	return found;
}

/* --- resolving ----------------------------------------------------------- */

nfsstat3
fh_resolve(const nfs_fh3 *fh, struct obj *o)
{
	const unsigned char *p = (const unsigned char *)fh->data.data_val;
	struct fh_node *n;
	struct fh_id id;
	int err = 0;

	o->path = NULL;
	if (fh->data.data_len != FH_LEN || get32(p) != FH_MAGIC)
		return NFS3ERR_BADHANDLE;
	if (get32(p + 4) != boot_verf)
		return NFS3ERR_STALE;
	memset(&id, 0, sizeof(id));
	id.dev = get64(p + 8);
	id.ino = get64(p + 16);

	if (fh_is_root(id))
		n = NULL, o->path = strdup(root_path);
	else if ((n = find(id)))
		o->path = node_path(n);
	if (o->path) {
		if (lstat(o->path, &o->st) < 0)
			err = errno;
		else if (id_eq(fh_id_of(&o->st), id))
			return NFS3_OK;
		free(o->path);
		o->path = NULL;
		/* Not allowed to look: that is the answer, not a stale handle. */
		if (err == EACCES)
			return NFS3ERR_ACCES;
	}
	if (fh_is_root(id))
		return err ? errno_to_nfsstat3(err) : NFS3ERR_STALE;
	if (search(id, o))
		return NFS3_OK;
	return NFS3ERR_STALE;
}

void
obj_release(struct obj *o)
{
	free(o->path);
	o->path = NULL;
}
