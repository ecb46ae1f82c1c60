/*
 * rpcrdma-stat: finding the statistics files in /dev/shm, checking them
 * (layout, owner, a process that still maps the file) and copying them;
 * stale files of the caller are removed.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "stat.h"

void
msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		msg("out of memory");
		exit(1);
	}
	return p;
}

void *
xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		p = NULL;
	else
		p = realloc(p, n * size);
	if (!p) {
		msg("out of memory");
		exit(1);
	}
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		msg("out of memory");
		exit(1);
	}
	return p;
}

/* "<uid>.<pid>" after the prefix: both decimal, nothing else. */
static bool
parse_name(const char *name, uid_t *uid, pid_t *pid)
{
	const char *p = name + strlen(SHIM_STATS_PREFIX);
	unsigned long long u, q;
	char *end;

	if (strncmp(name, SHIM_STATS_PREFIX, strlen(SHIM_STATS_PREFIX)) ||
	    !isdigit((unsigned char)*p))
		return false;
	errno = 0;
	u = strtoull(p, &end, 10);
	if (errno || *end != '.' || u > UINT_MAX ||
	    !isdigit((unsigned char)end[1]))
		return false;
	q = strtoull(end + 1, &end, 10);
	if (errno || *end || q == 0 || q > INT_MAX)
		return false;
	*uid = (uid_t)u;
	*pid = (pid_t)q;
	return true;
}

/*
 * Whether process pid still has the file st mapped: it maps its file until
 * it exits, and a process that exec()ed or a new process that got the pid
 * does not.  Where its map cannot be read (another user's process, without
 * root), that it exists is all there is to go on.
 */
static bool
file_in_use(pid_t pid, const struct stat *st)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	bool found = false;
	FILE *maps;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps = fopen(path, "re");
	if (!maps)
		return errno != ENOENT && errno != ESRCH;
	while (!found && getline(&line, &cap, maps) > 0) {
		unsigned int maj, min;
		unsigned long long ino;

		if (sscanf(line, "%*s %*s %*s %x:%x %llu", &maj, &min, &ino) == 3 &&
		    maj == major(st->st_dev) && min == minor(st->st_dev) &&
		    ino == (unsigned long long)st->st_ino)
			found = true;
	}
	free(line);
	fclose(maps);
	return found;
}

/* Remove a stale file of ours, unless the name now stands for another one. */
static void
remove_stale(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;

	if (st->st_uid != geteuid())
		return;
	if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
	    now.st_dev == st->st_dev && now.st_ino == st->st_ino)
		unlinkat(dirfd, name, 0);
}

static bool
pid_wanted(const struct options *o, pid_t pid)
{
	if (!o->npids)
		return true;
	for (size_t i = 0; i < o->npids; i++)
		if (o->pids[i] == pid)
			return true;
	return false;
}

/* A string field of the file, ended within its size. */
static void
copy_text(char *dst, const char *src, size_t len)
{
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* Read one file into a new struct proc, or NULL (skipped). */
static struct proc *
read_one(int dirfd, const char *name, uid_t uid, pid_t pid)
{
	struct proc *p;
	struct stat st;
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT && errno != EACCES && errno != EPERM)
			msg("%s/%s: %s", STATS_DIR, name, strerror(errno));
		return NULL;
	}
	/* Only the user the name says can have written it. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != uid) {
		close(fd);
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	n = pread(fd, &p->f, sizeof(p->f), 0);
	close(fd);
	if (n < (ssize_t)offsetof(struct shim_stats_file, slots) ||
	    p->f.magic != SHIM_STATS_MAGIC) {
		/* Empty or without magic: still being created. */
		if (n > 0 && p->f.magic && p->f.magic != SHIM_STATS_MAGIC)
			msg("%s/%s: not a statistics file", STATS_DIR, name);
		goto skip;
	}
	if (p->f.version != SHIM_STATS_VERSION) {
		msg("%s/%s: layout version %" PRIu32 ", this %s reads version %d",
		    STATS_DIR, name, p->f.version, progname, SHIM_STATS_VERSION);
		goto skip;
	}
	if (p->f.size < sizeof(p->f) || (size_t)n < sizeof(p->f) ||
	    (uint64_t)st.st_size < p->f.size) {
		msg("%s/%s: %lld octets, expected %zu", STATS_DIR, name,
		    (long long)st.st_size, sizeof(p->f));
		goto skip;
	}
	if (p->f.pid != pid || p->f.uid != uid)
		goto skip;
	if (!file_in_use(pid, &st)) {
		remove_stale(dirfd, name, &st);
		goto skip;
	}
	if (p->f.nslots > SHIM_STATS_SLOTS)
		p->f.nslots = SHIM_STATS_SLOTS;
	copy_text(p->prog, p->f.prog, sizeof(p->f.prog));
	copy_text(p->config, p->f.config, sizeof(p->f.config));
	return p;
skip:
	free(p);
	return NULL;
}

static int
cmp_proc(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a;
	const struct proc *y = *(struct proc *const *)b;

	return (x->f.pid > y->f.pid) - (x->f.pid < y->f.pid);
}

int
read_all(const struct options *o, struct procs *ps)
{
	bool root = geteuid() == 0;
	struct dirent *de;
	DIR *dir;

	dir = opendir(STATS_DIR);
	if (!dir) {
		if (errno == ENOENT)
			return 0;
		msg("%s: %s", STATS_DIR, strerror(errno));
		return -1;
	}
	while ((de = readdir(dir))) {
		struct proc *p;
		uid_t uid;
		pid_t pid;

		if (!parse_name(de->d_name, &uid, &pid))
			continue;
		if (!root && uid != getuid())
			continue;
		if (!pid_wanted(o, pid))
			continue;
		p = read_one(dirfd(dir), de->d_name, uid, pid);
		if (!p)
			continue;
		if (ps->n == ps->cap) {
			ps->cap = ps->cap ? 2 * ps->cap : 8;
			ps->v = xrealloc(ps->v, ps->cap, sizeof(*ps->v));
		}
		ps->v[ps->n++] = p;
	}
	closedir(dir);
	if (ps->n)
		qsort(ps->v, ps->n, sizeof(*ps->v), cmp_proc);
	return 0;
}
