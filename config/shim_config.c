/*
 * Per-program configuration: the object itself.  Parsing is in keys.c
 * (values), file.c (files and their search), env.c (the environment) and
 * rules.c (rules and port maps); see config/internal.h.
 *
 * A file is lines of "key = value"; every key also comes from the
 * environment as RPCRDMA_SHIM_<KEY>.  Each bad line or variable gives one
 * message "<where>: <key> = <value>: <what is allowed>" kept in the object;
 * nothing is printed while parsing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"

/* ---- messages -------------------------------------------------------- */

static void
add_msg(struct shim_config *cfg, enum shim_log_level level, const char *fmt,
	va_list ap) __attribute__((format(printf, 3, 0)));

static void
add_msg(struct shim_config *cfg, enum shim_log_level level, const char *fmt,
	va_list ap)
{
	char *text;

	if (!cfg->msgs)
		cfg->msgs = calloc(SHIM_CONFIG_MAX_MESSAGES, sizeof(*cfg->msgs));
	if (!cfg->msgs || cfg->nmsgs >= SHIM_CONFIG_MAX_MESSAGES ||
	    vasprintf(&text, fmt, ap) < 0) {
		cfg->msgs_dropped++;
		return;
	}
	cfg->msgs[cfg->nmsgs].level = level;
	cfg->msgs[cfg->nmsgs].text = text;
	cfg->nmsgs++;
}

void
config_fail(struct shim_config *cfg, const char *fmt, ...)
{
	va_list ap;

	cfg->bad = true;
	cfg->n_errors++;
	va_start(ap, fmt);
	add_msg(cfg, SHIM_LOG_ERROR, fmt, ap);
	va_end(ap);
}

void
config_warn(struct shim_config *cfg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_msg(cfg, SHIM_LOG_WARN, fmt, ap);
	va_end(ap);
}

void
config_fail_at(struct shim_config *cfg, const struct where *w, const char *why)
{
	if (w->file)
		config_fail(cfg, "%s:%u: %s = %s: %s", w->file, w->line,
			    w->name, *w->value ? w->value : "\"\"", why);
	else
		config_fail(cfg, "environment: %s=%s: %s", w->name, w->value,
			    why);
}

/* ---- lifetime and the log sink --------------------------------------- */

_Static_assert(SHIM_CONFIG_PATH_MAX <= SHIM_LOG_PATH_MAX,
	       "the sink keeps every log path the configuration accepts");

void
shim_log_open(const struct shim_config *cfg, const char *progname)
{
	int err;

	if (!cfg) {
		shim_log_setup(SHIM_LOG_INFO, SHIM_LOG_TO_STDERR, NULL, progname);
		return;
	}
	err = shim_log_setup(cfg->log_level, cfg->log_dest, cfg->log_path,
			     progname);
	if (err)
		shim_log(SHIM_LOG_WARN, "log = %s: cannot open: %s; logging to "
			 "stderr", cfg->log_path, shim_log_strerror(err));
}

void
shim_log_config_messages(const struct shim_config *cfg)
{
	for (size_t i = 0; i < cfg->nmsgs; i++)
		shim_log(cfg->msgs[i].level, "%s", cfg->msgs[i].text);
	if (cfg->msgs_dropped)
		shim_log(SHIM_LOG_ERROR, "%zu more configuration messages not "
			 "shown", cfg->msgs_dropped);
	if (cfg->source[0])
		shim_log(SHIM_LOG_DEBUG, "configuration read from %s",
			 cfg->source);
	else
		shim_log(SHIM_LOG_DEBUG, "no configuration file; defaults and "
			 "environment only");
}

void
shim_config_free(struct shim_config *cfg)
{
	for (size_t i = 0; i < cfg->nrules; i++)
		config_rule_release(&cfg->rules[i]);
	free(cfg->rules);
	free(cfg->port_maps);
	for (size_t i = 0; i < cfg->nmsgs; i++)
		free(cfg->msgs[i].text);
	free(cfg->msgs);
	shim_config_init_defaults(cfg);
}
