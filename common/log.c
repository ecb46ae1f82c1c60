/*
 * The logging sink: one formatted line per call, one write(2) per line.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "common/log.h"

#define LOG_PREFIX "rpcrdma-shim"
#define LINE_STACK 1024

/*
 * The sink.  level is read without the lock (shim_log_enabled); the rest
 * changes under it, and a line is written holding it, so a file is never
 * closed under a writer.
 */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_level = SHIM_LOG_INFO;
static enum shim_log_dest log_dest = SHIM_LOG_TO_STDERR;
static int log_fd = -1;			/* SHIM_LOG_TO_FILE */
static dev_t log_dev;			/* what log_fd was when opened */
static ino_t log_ino;
static char log_prog[64];

/* fork(): held across it, so the child finds the sink whole (shim/fork.c). */
void
shim_log_fork_lock(void)
{
	pthread_mutex_lock(&log_lock);
}

void
shim_log_fork_unlock(void)
{
	pthread_mutex_unlock(&log_lock);
}

/*
 * Open the log file as setuid-aware programs do: never through a symbolic
 * link at the last component (O_NOFOLLOW), created readable by its owner
 * only, and only a regular file owned by this process's user or by root
 * (not a FIFO that would block, a device, or another user's file that
 * someone made us append to).  O_NONBLOCK keeps the open of a FIFO from
 * waiting for a reader; it is cleared once the file is known to be one.
 */
static int
open_file_locked(const char *path)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY |
		  O_NOFOLLOW | O_NONBLOCK, 0600);
	if (fd < 0) {
		/* A FIFO without a reader (or a device without a driver). */
		if (errno == ENXIO)
			errno = SHIM_LOG_ERR_NOT_REGULAR;
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		err = errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		err = SHIM_LOG_ERR_NOT_REGULAR;
		goto out_close;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		err = SHIM_LOG_ERR_OWNER;
		goto out_close;
	}
	if (fcntl(fd, F_SETFL, O_APPEND) < 0) {
		err = errno;
		goto out_close;
	}
	log_dev = st.st_dev;
	log_ino = st.st_ino;
	return fd;

out_close:
	close(fd);
	errno = err;
	return -1;
}

/*
 * A daemon that closes every descriptor may hand our number to something
 * else: use (and close) log_fd only while it is still the file we opened.
 */
static bool
fd_is_ours_locked(void)
{
	struct stat st;

	return log_fd >= 0 && fstat(log_fd, &st) == 0 &&
	       st.st_dev == log_dev && st.st_ino == log_ino;
}

static void
close_file_locked(void)
{
	if (fd_is_ours_locked())
		close(log_fd);
	log_fd = -1;
}

/*
 * The file's descriptor; -1 when it was taken from us.  The file is opened
 * once, and not again by its path, which may name another file by now (or
 * the process be another user): a lost file means stderr until the sink is
 * set up again.
 */
static int
file_fd_locked(void)
{
	if (fd_is_ours_locked())
		return log_fd;
	log_fd = -1;
	log_dest = SHIM_LOG_TO_STDERR;
	return -1;
}

static void
write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static int
syslog_prio(enum shim_log_level level)
{
	switch (level) {
	case SHIM_LOG_ERROR:
		return LOG_ERR;
	case SHIM_LOG_WARN:
		return LOG_WARNING;
	case SHIM_LOG_INFO:
		return LOG_INFO;
	case SHIM_LOG_DEBUG:
		break;
	}
	return LOG_DEBUG;
}

/* Write one finished line (ending in '\n') to the sink. */
static void
emit_locked(enum shim_log_level level, char *line, size_t len)
{
	int fd = STDERR_FILENO;

	if (log_dest == SHIM_LOG_TO_SYSLOG) {
		line[len - 1] = '\0';
		syslog(LOG_USER | syslog_prio(level), "%s", line);
		line[len - 1] = '\n';
		return;
	}
	if (log_dest == SHIM_LOG_TO_FILE && file_fd_locked() >= 0)
		fd = log_fd;
	write_all(fd, line, len);
}

/*
 * Format the whole line, then write it; the lock is held throughout, so the
 * name and the sink cannot change under a line.
 */
static void
vlog_locked(enum shim_log_level level, int saved_errno, const char *fmt,
	    va_list ap) __attribute__((format(printf, 3, 0)));

static void
vlog_locked(enum shim_log_level level, int saved_errno, const char *fmt,
	    va_list ap)
{
	const char *word = level == SHIM_LOG_ERROR ? "error: " :
			   level == SHIM_LOG_WARN ? "warning: " : "";
	const char *prog = log_prog[0] ? log_prog : program_invocation_short_name;
	char stack[LINE_STACK];
	char *line = stack;
	size_t cap = sizeof(stack), len;
	int pre, msg;
	va_list ap2;

	pre = snprintf(stack, cap, LOG_PREFIX "[%s:%ld]: %s", prog,
		       (long)getpid(), word);
	if (pre < 0)
		return;
	if ((size_t)pre >= cap - 2)
		pre = (int)(cap - 2);
	va_copy(ap2, ap);
	errno = saved_errno;	/* %m is the caller's errno */
	msg = vsnprintf(stack + pre, cap - (size_t)pre, fmt, ap);
	if (msg < 0)
		msg = 0;
	if ((size_t)pre + (size_t)msg + 2 > cap) {
		/* Longer than the stack buffer: the whole line, else cut. */
		char *big = malloc((size_t)pre + (size_t)msg + 2);

		if (big) {
			memcpy(big, stack, (size_t)pre);
			errno = saved_errno;
			vsnprintf(big + pre, (size_t)msg + 1, fmt, ap2);
			line = big;
		} else {
			msg = (int)(cap - 2 - (size_t)pre);
		}
	}
	va_end(ap2);
	len = (size_t)pre + (size_t)msg;
	while (len > (size_t)pre && line[len - 1] == '\n')
		len--;
	line[len++] = '\n';
	emit_locked(level, line, len);
	if (line != stack)
		free(line);
}

void
shim_vlog(enum shim_log_level level, const char *fmt, va_list ap)
{
	int saved = errno;	/* the caller's, for %m and on return */

	if (!shim_log_enabled(level))
		return;
	pthread_mutex_lock(&log_lock);
	vlog_locked(level, saved, fmt, ap);
	pthread_mutex_unlock(&log_lock);
	errno = saved;
}

void
shim_log(enum shim_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	shim_vlog(level, fmt, ap);
	va_end(ap);
}

bool
shim_log_enabled(enum shim_log_level level)
{
	return (int)level <= __atomic_load_n(&log_level, __ATOMIC_RELAXED);
}

int
shim_log_setup(enum shim_log_level level, enum shim_log_dest dest,
	       const char *path, const char *progname)
{
	const char *name;
	int err = 0;
	size_t n;

	pthread_mutex_lock(&log_lock);
	/* No printf here: a program that logs nothing never runs it. */
	name = progname ? progname : program_invocation_short_name;
	n = strnlen(name, sizeof(log_prog) - 1);
	memcpy(log_prog, name, n);
	log_prog[n] = '\0';
	close_file_locked();
	log_dest = dest;
	if (dest == SHIM_LOG_TO_FILE) {
		log_fd = open_file_locked(path);
		if (log_fd < 0) {
			err = errno;
			log_dest = SHIM_LOG_TO_STDERR;
		}
	}
	__atomic_store_n(&log_level, (int)level, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&log_lock);
	return err;
}

void
shim_log_close(void)
{
	pthread_mutex_lock(&log_lock);
	close_file_locked();
	log_dest = SHIM_LOG_TO_STDERR;
	log_prog[0] = '\0';
	__atomic_store_n(&log_level, SHIM_LOG_INFO, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&log_lock);
}

const char *
shim_log_strerror(int err)
{
	switch (err) {
	case SHIM_LOG_ERR_NOT_REGULAR:
		return "not a regular file";
	case SHIM_LOG_ERR_OWNER:
		return "owned by another user (only the process's own user's "
		       "files and root's are used)";
	case ELOOP:
		return "a symbolic link (not followed)";
	}
	return strerror(err);
}
