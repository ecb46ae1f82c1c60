/*
 * rpcrdma-shim: the logging sink.
 *
 * Every line reads "rpcrdma-shim[<prog>:<pid>]: <message>", with "error: "
 * or "warning: " before the message at those levels.  Lines go to stderr,
 * to a file (opened O_APPEND | O_CLOEXEC) or to syslog (LOG_USER, without
 * openlog(): the application's ident and options stay as they are).
 *
 * Thread-safe.  Each line is one write(2) (or one syslog(3) call); the
 * application's stdio buffers are never used.  Until shim_log_open is
 * called, lines go to stderr at the default level (info).
 */
#ifndef CONFIG_LOG_H
#define CONFIG_LOG_H

#include <stdbool.h>

#include "config/config.h"

/*
 * Take level and destination from cfg (NULL: the defaults).  progname is
 * the name in every line (NULL: program_invocation_short_name).  May be
 * called again; the previous file is closed.  A file that cannot be opened
 * gives one warning on stderr, and stderr is used instead.
 */
void shim_log_open(const struct shim_config *cfg, const char *progname);

/* Back to stderr at the default level; closes a log file. */
void shim_log_close(void);

/* Whether a message at level would be written (cheap: no lock). */
bool shim_log_enabled(enum shim_log_level level);

/* One line; a trailing newline in fmt is not doubled. */
void shim_log(enum shim_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Log the messages a configuration keeps, each at its level, and how many
 * more were only counted; then, at debug level, the file that was read.
 */
void shim_log_config_messages(const struct shim_config *cfg);

#endif
