/*
 * Unit tests of the log sink (common/log.c), set up from a configuration
 * (shim_log_open): lines, levels, files, threads, syslog.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "common/log.h"
#include "config_fixture.h"

/* Run fn with stderr sent to path; returns what it wrote. */
static const char *
capture_stderr(const char *path, void (*fn)(void *), void *arg)
{
	int saved = dup(STDERR_FILENO);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	fflush(stderr);
	dup2(fd, STDERR_FILENO);
	close(fd);
	fn(arg);
	dup2(saved, STDERR_FILENO);
	close(saved);
	return read_text(path);
}

static void
log_open_cfg(void *arg)
{
	shim_log_open(arg, "tprog");
	shim_log(SHIM_LOG_INFO, "after");
}

static void
log_default(void *arg)
{
	shim_log_close();
	shim_log(SHIM_LOG_INFO, "plain %s", "info");
	shim_log(SHIM_LOG_DEBUG, "hidden");
}

static void
log_still_mine(void *arg)
{
	(void)arg;
	shim_log(SHIM_LOG_INFO, "still mine");
	shim_log(SHIM_LOG_INFO, "and on");
}

struct log_thread {
	int id;
};

static void *
log_thread(void *arg)
{
	struct log_thread *t = arg;

	for (int i = 0; i < 200; i++)
		shim_log(SHIM_LOG_INFO, "thread %d line %d %s", t->id, i,
			 "padding-padding-padding-padding-padding-padding");
	return NULL;
}

/* The descriptor the sink holds on path (from /proc/self/fd), or -1. */
static int
sink_fd(const char *path)
{
	char link[64], target[PATH_MAX];

	for (int fd = 3; fd < 1024; fd++) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (!strcmp(target, path))
			return fd;
	}
	return -1;
}

static void
test_log(void)
{
	char logf[PATH_MAX], other[PATH_MAX], errf[PATH_MAX];
	char want[8192], pre[128], longmsg[3001];
	struct shim_config c;
	const char *out;
	pthread_t th[4];
	struct log_thread ta[4];
	size_t lines = 0;
	bool intact = true;
	int fd, fd2;

	snprintf(pre, sizeof(pre), "rpcrdma-shim[tprog:%ld]: ", (long)getpid());
	in_tmp(logf, "shim.log");
	in_tmp(other, "other.file");
	in_tmp(errf, "stderr.txt");

	shim_config_init_defaults(&c);
	c.log_dest = SHIM_LOG_TO_FILE;
	snprintf(c.log_path, sizeof(c.log_path), "%s", logf);
	shim_log_open(&c, "tprog");
	CHECK(shim_log_enabled(SHIM_LOG_INFO) && !shim_log_enabled(SHIM_LOG_DEBUG),
	      "level info: info on, debug off");
	shim_log(SHIM_LOG_INFO, "hello %d", 42);
	shim_log(SHIM_LOG_DEBUG, "not shown");
	shim_log(SHIM_LOG_ERROR, "broken\n");
	shim_log(SHIM_LOG_WARN, "careful");
	snprintf(want, sizeof(want), "%shello 42\n%serror: broken\n"
		 "%swarning: careful\n", pre, pre, pre);
	CHECK_STR(read_text(logf), want, "file lines: prefix, level word, one "
		  "newline");

	remove(logf);
	shim_log_open(&c, "tprog");
	memset(longmsg, 'y', 2000);
	longmsg[2000] = '\0';
	errno = ENOENT;
	shim_log(SHIM_LOG_INFO, "%s", longmsg);
	CHECK(errno == ENOENT, "shim_log keeps errno");
	snprintf(want, sizeof(want), "%s%s\n", pre, longmsg);
	CHECK_STR(read_text(logf), want, "a 2000-character line");

	fd = sink_fd(logf);
	CHECK(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC) &&
	      (fcntl(fd, F_GETFL) & O_APPEND), "log file open O_APPEND|O_CLOEXEC");

	memset(longmsg, 'x', sizeof(longmsg) - 1);
	longmsg[sizeof(longmsg) - 1] = '\0';
	remove(logf);
	shim_log_open(&c, "tprog");
	shim_log(SHIM_LOG_INFO, "%s", longmsg);
	out = read_text(logf);
	CHECK(strlen(out) == strlen(pre) + 3001 && out[strlen(out) - 1] == '\n' &&
	      !strncmp(out + strlen(pre), longmsg, 3000),
	      "a 3000-character message is written whole");

	/*
	 * The application closes our descriptor and reuses the number: the
	 * sink leaves it alone, and does not open the path again (which may
	 * name another file by now): lines go to stderr.
	 */
	remove(logf);
	shim_log_open(&c, "tprog");
	fd = sink_fd(logf);
	close(fd);
	fd2 = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd2 != fd) {
		dup2(fd2, fd);
		close(fd2);
		fd2 = fd;
	}
	remove(logf);
	out = capture_stderr(errf, log_still_mine, NULL);
	snprintf(want, sizeof(want), "%sstill mine\n%sand on\n", pre, pre);
	CHECK_STR(out, want, "a lost descriptor: lines go to stderr from then "
		  "on");
	CHECK(fd2 == fd && read_text(other)[0] == '\0',
	      "... the reused descriptor is left alone");
	CHECK(access(logf, F_OK) < 0, "... the path is not opened again");
	shim_log_open(&c, "tprog");
	CHECK(fcntl(fd2, F_GETFD) >= 0, "setting the sink up again does not "
	      "close the application's descriptor");
	CHECK(sink_fd(logf) >= 0, "... and opens the file again");
	close(fd2);

	remove(logf);
	c.log_level = SHIM_LOG_DEBUG;
	shim_log_open(&c, "tprog");
	CHECK(shim_log_enabled(SHIM_LOG_DEBUG), "level debug: debug on");
	for (int i = 0; i < 4; i++) {
		ta[i].id = i;
		pthread_create(&th[i], NULL, log_thread, &ta[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	out = read_text(logf);
	for (const char *l = out; *l; lines++) {
		const char *nl = strchr(l, '\n');
		int id, n;
		char tail[64];

		if (!nl || strncmp(l, pre, strlen(pre)) ||
		    sscanf(l + strlen(pre), "thread %d line %d %63s", &id, &n,
			   tail) != 3 ||
		    (size_t)(nl - l) != strlen(pre) + strlen("thread 0 line ") +
		    (n >= 100 ? 3 : n >= 10 ? 2 : 1) + 1 + 47) {
			intact = false;
			break;
		}
		l = nl + 1;
	}
	CHECK(intact && lines == 800, "4 threads x 200 lines, none mixed (%zu)",
	      lines);

	remove(logf);
	c.log_level = SHIM_LOG_ERROR;
	shim_log_open(&c, "tprog");
	{
		struct shim_config bad;

		parse_text(&bad, "credits = 0\nfoo\n");
		shim_log_config_messages(&bad);
		snprintf(want, sizeof(want), "%serror: %s\n%serror: %s\n", pre,
			 bad.msgs[0].text, pre, bad.msgs[1].text);
		shim_config_free(&bad);
	}
	CHECK_STR(read_text(logf), want, "configuration messages logged with "
		  "their level");
	CHECK(!shim_log_enabled(SHIM_LOG_WARN), "level error: warn off");

	snprintf(c.log_path, sizeof(c.log_path), "%s/no/such/dir/x.log", tmp);
	c.log_level = SHIM_LOG_INFO;
	out = capture_stderr(errf, log_open_cfg, &c);
	snprintf(want, sizeof(want), "%swarning: log = %s: cannot open: No such "
		 "file or directory; logging to stderr\n%safter\n", pre,
		 c.log_path, pre);
	CHECK_STR(out, want, "an unopenable log file: one warning, then stderr");

	out = capture_stderr(errf, log_default, NULL);
	snprintf(want, sizeof(want), "rpcrdma-shim[%s:%ld]: plain info\n",
		 program_invocation_short_name, (long)getpid());
	CHECK_STR(out, want, "before shim_log_open: stderr, info, the program's "
		  "own name");

	c.log_dest = SHIM_LOG_TO_SYSLOG;
	shim_log_open(&c, "tprog");
	shim_log(SHIM_LOG_DEBUG, "unit test: to syslog, filtered out");
	CHECK(sink_fd(logf) < 0, "syslog: no file held");
	shim_log_close();
	shim_config_free(&c);
}

/*
 * Open path as the log file with stderr captured: what stderr got (the
 * warning when the file is refused, then "after").
 */
static const char *
open_captured(struct shim_config *c, const char *path)
{
	char errf[PATH_MAX];

	snprintf(c->log_path, sizeof(c->log_path), "%s", path);
	return capture_stderr(in_tmp(errf, "stderr.txt"), log_open_cfg, c);
}

/* The warning of a refused log file, then the line logged after it. */
static const char *
refused(const char *path, const char *why)
{
	static char want[8192];

	snprintf(want, sizeof(want), "rpcrdma-shim[tprog:%ld]: warning: log = "
		 "%s: cannot open: %s; logging to stderr\n"
		 "rpcrdma-shim[tprog:%ld]: after\n", (long)getpid(), path, why,
		 (long)getpid());
	return want;
}

/*
 * The file as setuid-aware programs open theirs: created 0600 whatever the
 * umask, no symbolic link followed, only a regular file of our own user or
 * root's.
 */
static void
test_file_safety(void)
{
	char logf[PATH_MAX], link[PATH_MAX], target[PATH_MAX], fifo[PATH_MAX];
	struct shim_config c;
	struct stat st;
	mode_t mask;
	int rd, fd;

	shim_config_init_defaults(&c);
	c.log_dest = SHIM_LOG_TO_FILE;
	in_tmp(logf, "safe.log");
	in_tmp(link, "link.log");
	in_tmp(target, "target.file");
	in_tmp(fifo, "fifo.log");

	mask = umask(0);
	CHECK_STR(open_captured(&c, logf), "", "a new log file is opened");
	umask(mask);
	CHECK(stat(logf, &st) == 0 && (st.st_mode & 07777) == 0600,
	      "... created with mode 0600 even under umask 0 (%o)",
	      (unsigned int)(st.st_mode & 07777));
	CHECK(sink_fd(logf) >= 0 &&
	      (fcntl(sink_fd(logf), F_GETFL) & O_NONBLOCK) == 0,
	      "... held without O_NONBLOCK");

	write_text(target, "");
	remove(link);
	CHECK(symlink(target, link) == 0, "made a symbolic link");
	CHECK_STR(open_captured(&c, link), refused(link, "a symbolic link (not "
		  "followed)"), "a symbolic link as the log file: refused, "
		  "stderr instead");
	CHECK_STR(read_text(target), "", "... its target untouched");
	CHECK(sink_fd(target) < 0, "... and not held");

	/* A reader on the FIFO: an open that followed it would not block. */
	remove(fifo);
	CHECK(mkfifo(fifo, 0600) == 0, "made a FIFO");
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	CHECK_STR(open_captured(&c, fifo), refused(fifo, "not a regular file"),
	      "a FIFO as the log file: refused");
	close(rd);
	CHECK_STR(open_captured(&c, fifo), refused(fifo, "not a regular file"),
	      "... also without a reader, at once");
	CHECK_STR(open_captured(&c, "/dev/null"), refused("/dev/null",
		  "not a regular file"), "a device as the log file: refused");

	if (geteuid() == 0) {
		/* Root appends to nobody's file only if nobody could make it. */
		fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0666);
		CHECK(fd >= 0 && fchown(fd, 65534, 65534) == 0,
		      "made a file owned by nobody");
		close(fd);
		CHECK_STR(open_captured(&c, target), refused(target, "owned by "
			  "another user (only the process's own user's files "
			  "and root's are used)"), "another user's file: "
			  "refused");
		CHECK_STR(read_text(target), "", "... left empty");
		CHECK(chown(target, 0, 0) == 0, "gave it to root");
		CHECK_STR(open_captured(&c, target), "", "root's file: used");
	} else {
		/* Without root no file of another user can be made. */
		fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		close(fd);
		CHECK_STR(open_captured(&c, target), "", "our own file: used");
	}
	shim_log_close();
	shim_config_free(&c);
}

int
main(void)
{
	fixture_init();
	test_log();
	test_file_safety();
	fixture_done();
	return check_done();
}
