/*
 * What the parts of the configuration parser share; not for users of
 * config/ (they include config/shim_config.h).
 *
 *	shim_config.c	messages, release, the log sink set-up
 *	keys.c		the key table, value parsers, defaults
 *	file.c		file syntax and the search order
 *	env.c		the RPCRDMA_SHIM_* environment
 *	rules.c		rules, port maps, and matching them
 */
#ifndef CONFIG_INTERNAL_H
#define CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/shim_config.h"

/* Where a value came from: a file line, or the environment (file NULL). */
struct where {
	const char *file;
	unsigned int line;
	const char *name;	/* the key or the variable, as written */
	const char *value;
};

/* ---- shim_config.c: messages kept in the object ---------------------- */

/* One error: the configuration is bad. */
void config_fail(struct shim_config *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* One warning. */
void config_warn(struct shim_config *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * "<file>:<line>: <key> = <value>: <why>", or for the environment
 * "environment: <VAR>=<value>: <why>".
 */
void config_fail_at(struct shim_config *cfg, const struct where *w,
		    const char *why);

/* ---- keys.c ---------------------------------------------------------- */

/* s without leading and trailing white space (cut in place). */
char *config_trim(char *s);

/*
 * An unsigned number: decimal, or hexadecimal after 0x when hex is allowed.
 * False for anything else, or above max.
 */
bool config_parse_u32(const char *s, bool hex, uint32_t max, uint32_t *out);

/* The key named so in a file (any case), or NULL. */
const struct shim_config_key *config_key_by_name(const char *name);

/* The key of the variable RPCRDMA_SHIM_<suffix> (capitals only), or NULL. */
const struct shim_config_key *config_key_by_env(const char *suffix);

/* The keys as known in a file ("enable, mode, ..."), or every variable read. */
const char *config_known_names(char *buf, size_t len, bool env);

/*
 * Store value for a single-valued key into *cfg.  NULL when stored, else
 * what is allowed (*cfg unchanged), possibly written into why.
 */
const char *config_key_set(struct shim_config *cfg,
			   const struct shim_config_key *key, const char *value,
			   char *why, size_t whylen);

/* The bit of key in cfg->env_keys_. */
uint32_t config_key_bit(const struct shim_config_key *key);

/* ---- file.c --------------------------------------------------------- */

/*
 * Parse the lines of f as the file path (named in messages, recorded as
 * the source); no check of the file itself (the fuzz harness feeds it
 * memory).
 */
void config_parse_stream(struct shim_config *cfg, FILE *f, const char *path);

/* ---- env.c ----------------------------------------------------------- */

/*
 * Apply the RPCRDMA_SHIM_* entries of envp; secure: only those
 * secure_getenv() would show.  Returns the errors found.
 */
int config_parse_env_list(struct shim_config *cfg, char *const *envp,
			  bool secure);

/* ---- rules.c --------------------------------------------------------- */

/* Parse one rule or port map and add it: the environment's go first. */
void config_add_rule(struct shim_config *cfg, const struct where *w,
		     const char *text);
void config_add_port_map(struct shim_config *cfg, const struct where *w,
			 const char *text);

/* Free what a rule holds (not the built-in ones). */
void config_rule_release(struct shim_rule *r);

#endif
