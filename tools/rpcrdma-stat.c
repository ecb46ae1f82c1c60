/*
 * rpcrdma-stat: show the transports of the processes running under the
 * shim, from the statistics files they publish (common/stats_file.h).
 *
 * Each file is copied once and shown from the copy; counters may move on
 * while it is printed.  Files of processes that are gone are skipped, and
 * removed when they belong to the caller.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <config.h>
#include "common/reason.h"
#include "common/stats_file.h"
#include "config/shim_config.h"

#define STATS_DIR "/dev/shm"
#define EX_USAGE 2

static const char *progname = "rpcrdma-stat";

/* One process: its file, copied. */
struct proc {
	struct shim_stats_file f;
	char prog[sizeof(((struct shim_stats_file *)0)->prog) + 1];
	char config[sizeof(((struct shim_stats_file *)0)->config) + 1];
};

struct procs {
	struct proc **v;
	size_t n, cap;
};

struct options {
	pid_t *pids;
	size_t npids;
	bool summary;
	bool json;
};

/* ---- messages ------------------------------------------------------- */

static void
msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p) {
		msg("out of memory");
		exit(1);
	}
	return p;
}

static void *
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

static char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		msg("out of memory");
		exit(1);
	}
	return p;
}

static void
usage(FILE *out, int status)
{
	fprintf(out,
		"usage: %s [-s] [-j] [-p PID]...\n"
		"Show the RPC transports of processes running under rpcrdma-shim.\n"
		"\n"
		"  -p, --pid PID   only this process (repeatable)\n"
		"  -s, --summary   one line per process: mode, configuration,\n"
		"                  transports over RDMA and fallbacks to TCP by reason\n"
		"  -j, --json      everything as one JSON document\n"
		"  -h, --help      show this help and exit\n"
		"  -V, --version   show the version and exit\n"
		"\n"
		"Without root, only the caller's own processes are shown.\n",
		progname);
	exit(status);
}

/* ---- reading the files ------------------------------------------------ */

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

static int
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

/* ---- what the fields say ------------------------------------------------ */

static const char *
role_name(uint32_t role)
{
	switch (role) {
	case SHIM_STATS_CLIENT:
		return "client";
	case SHIM_STATS_LISTENER:
		return "listener";
	case SHIM_STATS_SERVER:
		return "server";
	}
	return "?";
}

/* Listeners first, then their connections, then clients. */
static int
role_rank(uint32_t role)
{
	switch (role) {
	case SHIM_STATS_LISTENER:
		return 0;
	case SHIM_STATS_SERVER:
		return 1;
	default:
		return 2;
	}
}

static bool
is_rdma(const struct shim_stats_conn *s)
{
	return s->transport == SHIM_STATS_RDMA;
}

static const char *
reason_token(uint32_t reason)
{
	return rdma_fail_token((enum rdma_fail)reason);
}

/* The address without the port; false when there is none. */
static bool
addr_text(const struct shim_stats_addr *a, char *buf, size_t len)
{
	if (a->family == AF_INET)
		return inet_ntop(AF_INET, a->addr, buf, (socklen_t)len) != NULL;
	if (a->family == AF_INET6)
		return inet_ntop(AF_INET6, a->addr, buf, (socklen_t)len) != NULL;
	return false;
}

/* "10.0.0.1:2049", "[fd00::1]:2049" or "-". */
static void
endpoint_text(const struct shim_stats_addr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (!addr_text(a, host, sizeof(host)))
		snprintf(buf, len, "-");
	else if (a->family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", host, a->port);
	else
		snprintf(buf, len, "%s:%u", host, a->port);
}

/* 1023, 1.5K, 12K, 3.2M: powers of 1024, as ls -h. */
static void
bytes_text(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64, v);
		return;
	}
	while (d >= 1024 && u < (int)sizeof(units) - 2) {
		d /= 1024;
		u++;
	}
	if (d < 10)
		snprintf(buf, len, "%.1f%c", d, units[u]);
	else
		snprintf(buf, len, "%.0f%c", d, units[u]);
}

/* Control characters would break the table; show them as '?'. */
static const char *
printable(char *s)
{
	for (char *c = s; *c; c++)
		if (iscntrl((unsigned char)*c))
			*c = '?';
	return s;
}

/* ---- tables ----------------------------------------------------------- */

#define MAX_COLS 16

struct table {
	unsigned int ncols;
	const char *head[MAX_COLS];
	bool right[MAX_COLS];		/* right-aligned (numbers) */
	char **cells;			/* nrows * ncols */
	size_t nrows, cap;
};

static void
table_init(struct table *t, const char *const *head, const char *right)
{
	memset(t, 0, sizeof(*t));
	for (t->ncols = 0; head[t->ncols]; t->ncols++) {
		t->head[t->ncols] = head[t->ncols];
		t->right[t->ncols] = right[t->ncols] == 'r';
	}
}

/* Append a row; the caller fills each of its cells with a malloc()ed string. */
static char **
table_row(struct table *t)
{
	if (t->nrows == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->cells = xrealloc(t->cells, t->cap * t->ncols, sizeof(*t->cells));
	}
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(*t->cells));
	return &t->cells[t->nrows++ * t->ncols];
}

static void
table_print(struct table *t)
{
	size_t width[MAX_COLS];

	for (unsigned int c = 0; c < t->ncols; c++) {
		width[c] = strlen(t->head[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t l = strlen(t->cells[r * t->ncols + c]);

			if (l > width[c])
				width[c] = l;
		}
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		for (unsigned int c = 0; c < t->ncols; c++) {
			const char *s = r ? t->cells[(r - 1) * t->ncols + c] :
					    t->head[c];
			bool last = c + 1 == t->ncols;

			if (t->right[c])
				printf("%*s", (int)width[c], s);
			else if (last)
				printf("%s", s);
			else
				printf("%-*s", (int)width[c], s);
			if (!last)
				fputs("  ", stdout);
		}
		putchar('\n');
	}
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
}

static char *
fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *
fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	int rc;

	va_start(ap, f);
	rc = vasprintf(&s, f, ap);
	va_end(ap);
	if (rc < 0) {
		msg("out of memory");
		exit(1);
	}
	return s;
}

static char *
fmt_bytes(uint64_t v)
{
	char buf[32];

	bytes_text(v, buf, sizeof(buf));
	return xstrdup(buf);
}

/* The live slots of p in display order (indices into p->f.slots). */
static size_t
live_slots(const struct proc *p, unsigned int *idx)
{
	size_t n = 0;

	for (int rank = 0; rank < 3; rank++)
		for (unsigned int i = 0; i < p->f.nslots; i++) {
			const struct shim_stats_conn *s = &p->f.slots[i];

			if (s->state == SHIM_STATS_LIVE && role_rank(s->role) == rank)
				idx[n++] = i;
		}
	return n;
}

/*
 * The inline thresholds in call/reply order, as the log lines give them:
 * a client sends calls, a server sends replies.
 */
static void
inline_call_reply(const struct shim_stats_conn *s, uint32_t *call,
		  uint32_t *reply)
{
	if (s->role == SHIM_STATS_SERVER) {
		*call = s->inline_recv;
		*reply = s->inline_send;
	} else {
		*call = s->inline_send;
		*reply = s->inline_recv;
	}
}

static char *
detail_text(const struct shim_stats_conn *s)
{
	char rd[32], wr[32], rp[32];
	uint32_t call, reply;

	if (s->role == SHIM_STATS_LISTENER) {
		if (is_rdma(s))
			return fmt("rdma_port=%u connections=%" PRIu64,
				   s->rdma_port, s->connections);
		return fmt("reason=%s", reason_token(s->reason));
	}
	if (!is_rdma(s))
		return fmt("reason=%s", reason_token(s->reason));
	inline_call_reply(s, &call, &reply);
	bytes_text(s->read_chunk_bytes, rd, sizeof(rd));
	bytes_text(s->write_chunk_bytes, wr, sizeof(wr));
	bytes_text(s->reply_chunk_bytes, rp, sizeof(rp));
	return fmt("inline=%" PRIu32 "/%" PRIu32 " credits=%" PRIu32
		   " R=%u pdata=%s long=%" PRIu64 "/%" PRIu64
		   " rdma_errors=%" PRIu64 " read_chunk=%s write_chunk=%s"
		   " reply_chunk=%s send_inv=%" PRIu64,
		   call, reply, s->credits, s->rinv ? 1u : 0u,
		   s->peer_pdata ? "yes" : "no", s->long_out, s->long_in,
		   s->rdma_errors, rd, wr, rp, s->send_inv);
}

static void
print_transports(struct procs *ps)
{
	static const char *const head[] = {
		"PID", "PROGRAM", "ROLE", "XPRT", "LOCAL", "PEER", "RPC",
		"CALLS", "ERRORS", "TIMEOUTS", "SENT", "RECEIVED", "DETAIL", NULL,
	};
	static const char right[] = "r      rrrrr ";
	unsigned int *idx = xcalloc(SHIM_STATS_SLOTS, sizeof(*idx));
	struct table t;

	table_init(&t, head, right);
	for (size_t i = 0; i < ps->n; i++) {
		struct proc *p = ps->v[i];
		size_t n = live_slots(p, idx);

		for (size_t k = 0; k < n; k++) {
			const struct shim_stats_conn *s = &p->f.slots[idx[k]];
			bool counted = s->role != SHIM_STATS_LISTENER;
			bool bytes = counted && is_rdma(s);
			char ep[INET6_ADDRSTRLEN + 16];
			char **row = table_row(&t);

			row[0] = fmt("%d", (int)p->f.pid);
			row[1] = xstrdup(printable(p->prog));
			row[2] = xstrdup(role_name(s->role));
			row[3] = xstrdup(is_rdma(s) ? "RDMA" : "TCP");
			endpoint_text(&s->local, ep, sizeof(ep));
			row[4] = xstrdup(ep);
			endpoint_text(&s->peer, ep, sizeof(ep));
			row[5] = xstrdup(ep);
			row[6] = s->role == SHIM_STATS_CLIENT ?
				 fmt("%" PRIu32 "/%" PRIu32, s->prog, s->vers) :
				 xstrdup("-");
			row[7] = counted ? fmt("%" PRIu64, s->calls) : xstrdup("-");
			row[8] = counted ? fmt("%" PRIu64, s->errors) : xstrdup("-");
			row[9] = counted ? fmt("%" PRIu64, s->timeouts) : xstrdup("-");
			row[10] = bytes ? fmt_bytes(s->bytes_out) : xstrdup("-");
			row[11] = bytes ? fmt_bytes(s->bytes_in) : xstrdup("-");
			row[12] = detail_text(s);
		}
	}
	table_print(&t);
	free(idx);
}

static uint64_t
fallback_total(const struct proc *p)
{
	uint64_t sum = 0;

	for (unsigned int r = RDMA_FAIL_NO_DEVICE; r < RDMA_FAIL_MAX &&
	     r < SHIM_STATS_REASONS; r++)
		sum += p->f.fallbacks[r];
	return sum;
}

static char *
fallbacks_text(const struct proc *p)
{
	char buf[512];
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int r = RDMA_FAIL_NO_DEVICE; r < RDMA_FAIL_MAX &&
	     r < SHIM_STATS_REASONS; r++) {
		if (!p->f.fallbacks[r] || off >= sizeof(buf))
			continue;
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s=%" PRIu64,
					off ? " " : "", reason_token(r),
					p->f.fallbacks[r]);
	}
	return xstrdup(off ? buf : "-");
}

static void
print_summary(struct procs *ps)
{
	static const char *const head[] = {
		"PID", "UID", "PROGRAM", "MODE", "LIVE", "RDMA", "TCP",
		"FALLBACKS", "CONFIG", NULL,
	};
	static const char right[] = "rr  rrr  ";
	unsigned int *idx = xcalloc(SHIM_STATS_SLOTS, sizeof(*idx));
	struct table t;

	table_init(&t, head, right);
	for (size_t i = 0; i < ps->n; i++) {
		struct proc *p = ps->v[i];
		char **row = table_row(&t);

		row[0] = fmt("%d", (int)p->f.pid);
		row[1] = fmt("%" PRIu32, p->f.uid);
		row[2] = xstrdup(printable(p->prog));
		row[3] = xstrdup(shim_config_mode_name((enum shim_mode)p->f.mode));
		row[4] = fmt("%zu", live_slots(p, idx));
		row[5] = fmt("%" PRIu64, p->f.rdma_transports);
		row[6] = fmt("%" PRIu64, fallback_total(p));
		row[7] = fallbacks_text(p);
		row[8] = fmt("%s%s", p->config[0] ? printable(p->config) : "-",
			     p->f.bad_config ? " (errors)" : "");
	}
	table_print(&t);
	free(idx);
}

/* ---- JSON ------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void
json_str(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;

	putchar('"');
	while (*c) {
		size_t n;

		if (*c == '"' || *c == '\\') {
			printf("\\%c", *c++);
		} else if (*c < 0x20 || *c == 0x7f) {
			printf("\\u%04x", *c++);
		} else if ((n = utf8_len(c)) > 0) {
			fwrite(c, 1, n, stdout);
			c += n;
		} else {
			fputs("\\ufffd", stdout);
			c++;
		}
	}
	putchar('"');
}

static void
json_endpoint(const char *key, const struct shim_stats_addr *a)
{
	char host[INET6_ADDRSTRLEN];

	printf("          \"%s\": ", key);
	if (!addr_text(a, host, sizeof(host))) {
		printf("null,\n");
		return;
	}
	printf("{\"family\": \"%s\", \"address\": \"%s\", \"port\": %u},\n",
	       a->family == AF_INET6 ? "inet6" : "inet", host, a->port);
}

static void
json_u64(const char *key, uint64_t v, bool more)
{
	printf("          \"%s\": %" PRIu64 "%s\n", key, v, more ? "," : "");
}

/* A number, or null where it does not apply. */
static void
json_opt(const char *key, bool applies, uint64_t v)
{
	if (applies)
		json_u64(key, v, true);
	else
		printf("          \"%s\": null,\n", key);
}

static void
json_bool_opt(const char *key, bool applies, bool v)
{
	printf("          \"%s\": %s,\n", key,
	       !applies ? "null" : v ? "true" : "false");
}

static void
json_transport(const struct shim_stats_conn *s, bool more)
{
	bool client = s->role == SHIM_STATS_CLIENT;
	bool rdma_conn = is_rdma(s) && s->role != SHIM_STATS_LISTENER;
	bool listener = s->role == SHIM_STATS_LISTENER;

	printf("        {\n");
	printf("          \"role\": \"%s\",\n", role_name(s->role));
	printf("          \"transport\": \"%s\",\n", is_rdma(s) ? "rdma" : "tcp");
	json_endpoint("local", &s->local);
	json_endpoint("peer", &s->peer);
	json_opt("program", client, s->prog);
	json_opt("version", client, s->vers);
	printf("          \"reason\": ");
	if (is_rdma(s))
		printf("null,\n");
	else
		printf("\"%s\",\n", reason_token(s->reason));
	json_opt("rdma_port", listener && is_rdma(s), s->rdma_port);
	json_opt("inline_send", rdma_conn, s->inline_send);
	json_opt("inline_recv", rdma_conn, s->inline_recv);
	json_opt("credits", rdma_conn, s->credits);
	json_bool_opt("remote_invalidate", rdma_conn, s->rinv);
	json_bool_opt("peer_private_data", rdma_conn, s->peer_pdata);
	json_u64("created", s->created, true);
	json_u64("calls", s->calls, true);
	json_u64("errors", s->errors, true);
	json_u64("timeouts", s->timeouts, true);
	json_u64("bytes_out", s->bytes_out, true);
	json_u64("bytes_in", s->bytes_in, true);
	json_u64("long_out", s->long_out, true);
	json_u64("long_in", s->long_in, true);
	json_u64("rdma_errors", s->rdma_errors, true);
	json_u64("connections", s->connections, true);
	json_u64("read_chunk_bytes", s->read_chunk_bytes, true);
	json_u64("write_chunk_bytes", s->write_chunk_bytes, true);
	json_u64("reply_chunk_bytes", s->reply_chunk_bytes, true);
	json_u64("send_inv", s->send_inv, false);
	printf("        }%s\n", more ? "," : "");
}

static void
print_json(struct procs *ps)
{
	unsigned int *idx = xcalloc(SHIM_STATS_SLOTS, sizeof(*idx));

	printf("{\n  \"format\": 1,\n  \"processes\": [");
	for (size_t i = 0; i < ps->n; i++) {
		struct proc *p = ps->v[i];
		size_t n = live_slots(p, idx);
		bool first = true;

		printf("%s\n    {\n", i ? "," : "");
		printf("      \"pid\": %d,\n", (int)p->f.pid);
		printf("      \"uid\": %" PRIu32 ",\n", p->f.uid);
		printf("      \"program\": ");
		json_str(p->prog);
		printf(",\n      \"started\": %" PRIu64 ",\n", p->f.started);
		printf("      \"config\": ");
		if (p->config[0])
			json_str(p->config);
		else
			printf("null");
		printf(",\n      \"config_errors\": %s,\n",
		       p->f.bad_config ? "true" : "false");
		printf("      \"mode\": \"%s\",\n",
		       shim_config_mode_name((enum shim_mode)p->f.mode));
		printf("      \"rdma_transports\": %" PRIu64 ",\n",
		       p->f.rdma_transports);
		printf("      \"fallbacks\": {");
		for (unsigned int r = RDMA_FAIL_NO_DEVICE; r < RDMA_FAIL_MAX &&
		     r < SHIM_STATS_REASONS; r++) {
			printf("%s\"%s\": %" PRIu64, first ? "" : ", ",
			       reason_token(r), p->f.fallbacks[r]);
			first = false;
		}
		printf("},\n      \"transports\": [%s", n ? "\n" : "");
		for (size_t k = 0; k < n; k++)
			json_transport(&p->f.slots[idx[k]], k + 1 < n);
		printf("%s]\n    }", n ? "      " : "");
	}
	printf("%s]\n}\n", ps->n ? "\n  " : "");
	free(idx);
}

/* ---- main ---------------------------------------------------------------- */

static void
add_pid(struct options *o, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > INT_MAX) {
		msg("-p %s: not a process id", arg);
		usage(stderr, EX_USAGE);
	}
	o->pids = xrealloc(o->pids, o->npids + 1, sizeof(*o->pids));
	o->pids[o->npids] = (pid_t)v;
	o->npids++;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "summary", no_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { 0 };
	struct procs ps = { 0 };
	int opt, status = 0;

	while ((opt = getopt_long(argc, argv, "p:sjhV", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			add_pid(&o, optarg);
			break;
		case 's':
			o.summary = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		case 'V':
			printf("%s (%s) %s\n", progname, PACKAGE_NAME,
			       PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr, EX_USAGE);
		}
	}
	if (optind < argc) {
		msg("unexpected argument: %s", argv[optind]);
		usage(stderr, EX_USAGE);
	}

	if (read_all(&o, &ps) < 0)
		status = 1;
	for (size_t i = 0; i < o.npids; i++) {
		bool shown = false;

		for (size_t k = 0; k < ps.n; k++)
			shown |= ps.v[k]->f.pid == o.pids[i];
		if (shown)
			continue;
		msg("process %d: no statistics (not under the shim, no "
		    "transport yet, or another user's)", (int)o.pids[i]);
		status = 1;
	}
	if (o.json)
		print_json(&ps);
	else if (o.summary)
		print_summary(&ps);
	else
		print_transports(&ps);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		msg("write error: %s", strerror(errno));
		status = 1;
	}
	for (size_t i = 0; i < ps.n; i++)
		free(ps.v[i]);
	free(ps.v);
	free(o.pids);
	return status;
}
