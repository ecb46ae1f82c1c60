/*
 * rpcrdma-shim: the logging sink.
 *
 * Every line reads "rpcrdma-shim[<prog>:<pid>]: <message>", with "error: "
 * or "warning: " before the message at those levels.  Lines go to stderr,
 * to a file or to syslog (LOG_USER, without
 * openlog(): the application's ident and options stay as they are).
 *
 * Thread-safe.  Each line is one write(2) (or one syslog(3) call); the
 * application's stdio buffers are never used.  Until shim_log_setup is
 * called, lines go to stderr at the default level (info).  The
 * configuration sets the sink up with shim_log_open (config/shim_config.h).
 */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>

/* Ordered: a message is shown when its level is <= the configured one. */
enum shim_log_level {
	SHIM_LOG_ERROR,
	SHIM_LOG_WARN,
	SHIM_LOG_INFO,
	SHIM_LOG_DEBUG,
};

enum shim_log_dest {
	SHIM_LOG_TO_STDERR,
	SHIM_LOG_TO_SYSLOG,
	SHIM_LOG_TO_FILE,
};

/* Longest log file path accepted. */
#define SHIM_LOG_PATH_MAX 4096

/* A log file refused after opening it (beyond any errno). */
#define SHIM_LOG_ERR_NOT_REGULAR 0x10000
#define SHIM_LOG_ERR_OWNER 0x10001

/*
 * Write lines up to level to dest (path: the file of SHIM_LOG_TO_FILE).
 * progname is the name in every line (NULL: program_invocation_short_name).
 *
 * The file is opened once, O_APPEND | O_CLOEXEC | O_NOFOLLOW, created with
 * mode 0600; it must be a regular file owned by the effective user or by
 * root.  Its descriptor is kept: if the program closes it (or reuses its
 * number), lines go to stderr, and the path is not opened again until
 * shim_log_setup is called again (which closes the previous file).
 *
 * Returns 0, or why the file cannot be used (an errno or SHIM_LOG_ERR_*,
 * see shim_log_strerror): then lines go to stderr, and the caller says so.
 */
int shim_log_setup(enum shim_log_level level, enum shim_log_dest dest,
		   const char *path, const char *progname);

/* The text for a shim_log_setup error. */
const char *shim_log_strerror(int err);

/* Back to stderr at the default level; closes a log file. */
void shim_log_close(void);

/* Whether a message at level would be written (cheap: no lock). */
bool shim_log_enabled(enum shim_log_level level);

/* One line; a trailing newline in fmt is not doubled. */
void shim_log(enum shim_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void shim_vlog(enum shim_log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* fork(): the sink's lock is held across it (shim/fork.c). */
void shim_log_fork_lock(void);
void shim_log_fork_unlock(void);

#endif
