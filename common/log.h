/*
 * rpcrdma-shim: the logging sink.
 *
 * Every line reads "rpcrdma-shim[<prog>:<pid>]: <message>", with "error: "
 * or "warning: " before the message at those levels.  Lines go to stderr,
 * to a file (opened O_APPEND | O_CLOEXEC) or to syslog (LOG_USER, without
 * openlog(): the application's ident and options stay as they are).
 *
 * Thread-safe.  Each line is one write(2) (or one syslog(3) call); the
 * application's stdio buffers are never used.  Until shim_log_setup is
 * called, lines go to stderr at the default level (info).  The
 * configuration sets the sink up with shim_log_open (config/shim_config.h).
 */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

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

/* Longest log file path kept. */
#define SHIM_LOG_PATH_MAX 4096

/*
 * Write lines up to level to dest (path: the file of SHIM_LOG_TO_FILE).
 * progname is the name in every line (NULL: program_invocation_short_name).
 * May be called again; the previous file is closed.  Returns 0, or the
 * errno of a file that cannot be opened: then lines go to stderr, and the
 * caller says so.
 */
int shim_log_setup(enum shim_log_level level, enum shim_log_dest dest,
		   const char *path, const char *progname);

/* Back to stderr at the default level; closes a log file. */
void shim_log_close(void);

/* Whether a message at level would be written (cheap: no lock). */
bool shim_log_enabled(enum shim_log_level level);

/* One line; a trailing newline in fmt is not doubled. */
void shim_log(enum shim_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* fork(): the sink's lock is held across it (shim/fork.c). */
void shim_log_fork_lock(void);
void shim_log_fork_unlock(void);

#endif
