/*
 * The negative cache shared by the processes of one user (negshare.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/sockaddr.h"
#include "negshare.h"

#define NEGSHARE_MAGIC 0x52444e43u	/* "RDNC" */
#define NEGSHARE_VERSION 1u
#define LOCK_TRIES 20			/* 0.5 ms apart: 10 ms at most */

struct negshare_entry {
	struct peer_key key;		/* all zero: every peer (no device) */
	int64_t expires;		/* CLOCK_REALTIME seconds; 0: free */
	uint32_t why;
	int32_t pid;
};

struct negshare_file {
	uint32_t magic;
	uint32_t version;
	uint32_t slots;
	uint32_t entry_size;
	struct negshare_entry e[NEGSHARE_SLOTS];
};

bool
negshare_shareable(enum rdma_fail why)
{
	switch (why) {
	case RDMA_FAIL_NO_DEVICE:
	case RDMA_FAIL_NOT_RDMA:
	case RDMA_FAIL_REFUSED:
	case RDMA_FAIL_UNREACHABLE:
	case RDMA_FAIL_TIMEOUT:
		return true;
	default:
		/* Memory is this process's budget, not the peer's. */
		return false;
	}
}

bool
negshare_dir(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char run[64];
	struct stat st;
	int n;

	if (xdg && *xdg)
		n = snprintf(buf, len, "%s/rpcrdma-shim", xdg);
	else if (snprintf(run, sizeof(run), "/run/user/%u", (unsigned)geteuid()) > 0 &&
		 stat(run, &st) == 0 && S_ISDIR(st.st_mode))
		n = snprintf(buf, len, "%s/rpcrdma-shim", run);
	else
		n = snprintf(buf, len, "/tmp/rpcrdma-shim-%u", (unsigned)geteuid());
	return n > 0 && (size_t)n < len && buf[0] == '/';
}

/* Warn once per process about a directory or file we will not use. */
static void
refuse(const char *path, const char *what)
{
	static int told;

	if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		shim_log(SHIM_LOG_WARN,
			 "%s: %s: not shared with other processes (the negative cache stays this process's)",
			 path, what);
}

/* st is ours alone: our uid, nobody else may read or write it. */
static bool
private_to_us(const char *path, const struct stat *st)
{
	if (st->st_uid != geteuid()) {
		refuse(path, "owned by another user");
		return false;
	}
	if (st->st_mode & 077) {
		refuse(path, "open to other users (mode must be 0700 or 0600)");
		return false;
	}
	return true;
}

/*
 * The directory, opened without following a link (its last component) and
 * made when create; -1 when it is missing or not ours alone.
 */
static int
open_dir(const char *dir, bool create)
{
	struct stat st;
	int fd;

	if (create && mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			refuse(dir, "not a directory (a symbolic link?)");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !private_to_us(dir, &st)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The file, locked (shared, or exclusive for writing); -1 when unusable. */
static int
open_file(const char *dir, bool write)
{
	char path[4096];
	struct stat st;
	int dfd, fd, tries;

	dfd = open_dir(dir, write);
	if (dfd < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, NEGSHARE_FILE);
	fd = openat(dfd, NEGSHARE_FILE, (write ? O_RDWR | O_CREAT : O_RDONLY) |
		    O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0) {
		if (errno == ELOOP)
			refuse(path, "a symbolic link");
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		refuse(path, "not a regular file with one link");
		goto fail;
	}
	if (!private_to_us(path, &st))
		goto fail;
	/* Holders keep it for a read or a write: never wait long for one. */
	for (tries = 0; flock(fd, (write ? LOCK_EX : LOCK_SH) | LOCK_NB) < 0; tries++) {
		if (errno != EWOULDBLOCK || tries >= LOCK_TRIES)
			goto fail;
		usleep(500);
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* Read the table; false when the file is new, short or not ours in layout. */
static bool
read_table(int fd, struct negshare_file *t)
{
	ssize_t n = pread(fd, t, sizeof(*t), 0);
	char extra;

	if (n != (ssize_t)sizeof(*t) || pread(fd, &extra, 1, sizeof(*t)) != 0)
		return false;
	return t->magic == NEGSHARE_MAGIC && t->version == NEGSHARE_VERSION &&
	       t->slots == NEGSHARE_SLOTS &&
	       t->entry_size == sizeof(struct negshare_entry);
}

static bool
key_valid(const struct peer_key *k)
{
	return k->family == 0 || k->family == AF_INET || k->family == AF_INET6;
}

/* e holds for key at now, no longer than max_s from now. */
static bool
entry_holds(const struct negshare_entry *e, const struct peer_key *key,
	    unsigned int max_s, time_t now)
{
	if (!negshare_shareable((enum rdma_fail)e->why) || !key_valid(&e->key))
		return false;
	if (e->key.family == 0 && e->why != RDMA_FAIL_NO_DEVICE)
		return false;
	if (e->expires <= now || e->expires > now + (int64_t)max_s)
		return false;
	return memcmp(&e->key, key, sizeof(*key)) == 0;
}

bool
negshare_lookup(const char *dir, const struct sockaddr *peer,
		unsigned int max_s, time_t now, struct negshare_hit *hit)
{
	struct negshare_file t;
	struct peer_key any, key;
	bool have_key, found = false;
	int fd, i;

	if (!max_s)
		return false;
	fd = open_file(dir, false);
	if (fd < 0)
		return false;
	if (!read_table(fd, &t)) {
		close(fd);
		return false;
	}
	close(fd);
	memset(&any, 0, sizeof(any));
	have_key = peer_key_from(&key, peer);
	for (i = 0; i < NEGSHARE_SLOTS && !found; i++) {
		const struct negshare_entry *e = &t.e[i];

		if (entry_holds(e, &any, max_s, now) ||
		    (have_key && entry_holds(e, &key, max_s, now))) {
			hit->why = (enum rdma_fail)e->why;
			hit->expires = (time_t)e->expires;
			hit->pid = e->pid;
			found = true;
		}
	}
	return found;
}

/* The slot for key: its own, else a free or expired one, else the one expiring first. */
static struct negshare_entry *
slot_for(struct negshare_file *t, const struct peer_key *key, time_t now)
{
	struct negshare_entry *best = &t->e[0];
	int i;

	for (i = 0; i < NEGSHARE_SLOTS; i++)
		if (t->e[i].expires > now &&
		    memcmp(&t->e[i].key, key, sizeof(*key)) == 0)
			return &t->e[i];
	for (i = 0; i < NEGSHARE_SLOTS; i++) {
		if (t->e[i].expires <= now)
			return &t->e[i];
		if (t->e[i].expires < best->expires)
			best = &t->e[i];
	}
	return best;
}

void
negshare_add(const char *dir, const struct sockaddr *peer, enum rdma_fail why,
	     unsigned int ttl_s, time_t now)
{
	struct negshare_file t;
	struct negshare_entry *e;
	struct peer_key key;
	int fd;

	if (!ttl_s || !negshare_shareable(why))
		return;
	if (why == RDMA_FAIL_NO_DEVICE)
		memset(&key, 0, sizeof(key));
	else if (!peer_key_from(&key, peer))
		return;
	fd = open_file(dir, true);
	if (fd < 0)
		return;
	if (!read_table(fd, &t)) {
		/* New, or garbage: start afresh. */
		memset(&t, 0, sizeof(t));
		t.magic = NEGSHARE_MAGIC;
		t.version = NEGSHARE_VERSION;
		t.slots = NEGSHARE_SLOTS;
		t.entry_size = sizeof(struct negshare_entry);
	}
	e = slot_for(&t, &key, now);
	e->key = key;
	e->expires = (int64_t)now + ttl_s;
	e->why = why;
	e->pid = (int32_t)getpid();
	if (pwrite(fd, &t, sizeof(t), 0) != (ssize_t)sizeof(t) ||
	    ftruncate(fd, sizeof(t)) < 0)
		shim_log(SHIM_LOG_DEBUG, "%s/%s: cannot write: %s", dir,
			 NEGSHARE_FILE, strerror(errno));
	close(fd);
}
