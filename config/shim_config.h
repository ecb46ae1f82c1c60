/*
 * rpcrdma-shim: per-program configuration (see rpcrdma-shim.conf(5)).
 *
 * Pure C, no RDMA.  A configuration is built once, at start-up:
 *
 *	struct shim_config cfg;
 *
 *	shim_config_load(&cfg, program_invocation_short_name);
 *	shim_log_open(&cfg, program_invocation_short_name);
 *	shim_log_config_messages(&cfg);
 *
 * and is only read afterwards, so any thread may query it without a lock.
 *
 * The parser never prints: every problem becomes one message kept in the
 * object (see struct shim_config_msg), and a configuration with an error
 * is marked bad.  What the fields mean for the caller (the query functions
 * below never look at enable, mode or bad):
 *
 *	!enable                  pass everything to libtirpc untouched
 *	bad, mode != REQUIRE     pass everything to libtirpc untouched (TCP)
 *	bad, mode == REQUIRE     client and server creates fail
 *	mode == TCP_ONLY         TCP; RDMA is never tried
 *	otherwise                the rules choose per transport; where they
 *	                         choose RDMA and it fails, PREFER falls back to
 *	                         TCP and REQUIRE fails the create.  A rule that
 *	                         chooses TCP is obeyed in every mode.
 */
#ifndef CONFIG_SHIM_CONFIG_H
#define CONFIG_SHIM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/log.h"

/* Where the system-wide files live; the search order is in shim_config_load. */
#define SHIM_CONFIG_SYSDIR "/etc/rpcrdma-shim"
/* Every key KEY is also read from the environment as RPCRDMA_SHIM_<KEY>. */
#define SHIM_CONFIG_ENV_PREFIX "RPCRDMA_SHIM_"
/* Names an explicit file; the only RPCRDMA_SHIM_ variable that is no key. */
#define SHIM_CONFIG_ENV_FILE "RPCRDMA_SHIM_CONFIG"

/* Longest path kept for the file read and for log = <path>. */
#define SHIM_CONFIG_PATH_MAX 4096
/* Messages kept; further ones are only counted (a wrong file can be huge). */
#define SHIM_CONFIG_MAX_MESSAGES 64

enum shim_mode {
	SHIM_MODE_PREFER_RDMA,	/* try RDMA, fall back to TCP */
	SHIM_MODE_REQUIRE_RDMA,	/* try RDMA, fail rather than use TCP */
	SHIM_MODE_TCP_ONLY,	/* never try RDMA */
};

/* How a client moves to RDMA: behind TCP calls, or before its first call. */
enum shim_upgrade {
	SHIM_UPGRADE_BACKGROUND,
	SHIM_UPGRADE_WAIT,
};

/*
 * rpcrdma_version: the RPC-over-RDMA versions offered and accepted
 * (draft-cel-nfsv4-rpcrdma-version-two-01 s5).  Values are the indices
 * of the names "1", "2", "auto".
 */
enum shim_rpcrdma_version {
	SHIM_RPCRDMA_V1,	/* Version One only; a server answers ERR_VERS 1..1 */
	SHIM_RPCRDMA_V2,	/* offer Version Two on every connection */
	SHIM_RPCRDMA_AUTO,	/* offer it once per peer, remember Version One ones */
};

enum shim_action {
	SHIM_ACTION_RDMA,
	SHIM_ACTION_TCP,
};

/*
 * One "rule = <rdma|tcp> [program P[,P...]] [version V|V-W]
 * [address A[/LEN]] [port N]".  Criteria are ANDed; a rule without any
 * matches everything.  IPv4-mapped IPv6 addresses are kept (and matched)
 * as IPv4.  Ports are TCP ports, before any port_map.
 */
struct shim_rule {
	enum shim_action action;
	uint32_t *progs;	/* nprogs program numbers; none: any */
	size_t nprogs;
	bool has_vers;
	uint32_t vers_min, vers_max;
	bool has_addr;
	sa_family_t family;	/* AF_INET or AF_INET6 */
	uint8_t addr[16];	/* network order; 4 bytes for AF_INET */
	unsigned int prefix_len;
	bool has_port;
	uint16_t port;
	char *text;		/* the rule as written, e.g. "tcp program 100000" */
	char *origin;		/* "<file>:<line>", "environment", "built-in", "default" */
};

/* NFS's TCP port and its RDMA port (RFC 8166 s6, IANA). */
#define SHIM_NFS_TCP_PORT 2049
#define SHIM_NFS_RDMA_PORT 20049

/* Programs a "no_placement" list holds at most. */
#define SHIM_CONFIG_PROGS_MAX 16

/* "port_map = TCP:RDMA". */
struct shim_port_map {
	uint16_t tcp_port;
	uint16_t rdma_port;
};

struct shim_config_msg {
	enum shim_log_level level;	/* SHIM_LOG_ERROR or SHIM_LOG_WARN */
	/*
	 * "<file>:<line>: <key> = <value>: <what is allowed>" or
	 * "environment: RPCRDMA_SHIM_<KEY>=<value>: <what is allowed>";
	 * no "rpcrdma-shim:" prefix (the logger adds its own) and no newline.
	 */
	char *text;
};

struct shim_config {
	bool enable;
	enum shim_mode mode;
	uint32_t inline_send;		/* bytes */
	uint32_t inline_recv;		/* bytes */
	uint32_t credits;
	uint32_t connect_timeout_ms;
	uint32_t negative_cache_s;	/* 0: no negative cache */
	enum shim_upgrade upgrade;
	uint64_t max_reply;		/* bytes */
	uint64_t max_call;		/* bytes */
	uint64_t write_chunk;		/* bytes of Write chunk offered, 0: none */
	uint64_t max_pinned;		/* registered bytes, 0: from RLIMIT_MEMLOCK */
	bool remote_invalidate;
	uint32_t poll_us;		/* busy polling before a sleep, 0: none */
	uint32_t defer_wait_ms;		/* server: a late reply holds the next call */
	/* Programs whose results are never placed in Write chunks. */
	uint32_t n_no_placement;
	uint32_t no_placement[SHIM_CONFIG_PROGS_MAX];
	enum shim_rpcrdma_version rpcrdma_version;
	enum shim_log_level log_level;
	enum shim_log_dest log_dest;
	char log_path[SHIM_CONFIG_PATH_MAX];	/* for SHIM_LOG_TO_FILE */

	/* User rules, environment ones first; the built-ins are not here. */
	struct shim_rule *rules;
	size_t nrules;
	/* Port maps, environment ones first; the first for a TCP port wins. */
	struct shim_port_map *port_maps;
	size_t nport_maps;

	char source[SHIM_CONFIG_PATH_MAX];	/* the file read, or "" */
	bool bad;			/* at least one error */
	unsigned int n_errors;		/* every error, kept or not */
	struct shim_config_msg *msgs;	/* errors and warnings, in order */
	size_t nmsgs;			/* at most SHIM_CONFIG_MAX_MESSAGES */
	size_t msgs_dropped;		/* messages beyond that, only counted */

	/* Private bookkeeping of the parser. */
	size_t env_rules_, env_port_maps_;	/* how many come from the environment */
	uint32_t env_keys_;			/* keys set by the environment */
};

/* How a key's value is written. */
enum shim_key_type {
	SHIM_KEY_BOOL,		/* yes/no, true/false, on/off, 1/0 */
	SHIM_KEY_CHOICE,	/* one of the names in choices */
	SHIM_KEY_NUMBER,	/* a number, an optional unit suffix, a range */
	SHIM_KEY_LOG,		/* stderr, syslog or an absolute file path */
	SHIM_KEY_RULE,		/* one rule; repeatable */
	SHIM_KEY_PORT_MAP,	/* TCP:RDMA; repeatable */
	SHIM_KEY_PROGS,		/* none, or a list of RPC program numbers */
};

struct shim_config_unit;	/* a suffix and its multiplier (config/keys.c) */

/*
 * One key of rpcrdma-shim.conf(5).  Its environment variable is
 * SHIM_CONFIG_ENV_PREFIX followed by the name in capitals
 * (shim_config_env_name).  A single-valued key lives in the field of
 * struct shim_config at off (size bytes); rules and port maps go to
 * their lists.
 */
struct shim_config_key {
	const char *name;		/* as written in a file: "inline_send" */
	enum shim_key_type type;
	size_t off, size;		/* the field; single-valued keys */
	uint64_t def;			/* the default; single-valued keys */
	uint64_t min, max, multiple;	/* SHIM_KEY_NUMBER: what is allowed */
	const struct shim_config_unit *units;	/* SHIM_KEY_NUMBER: suffixes */
	const char *const *choices;	/* SHIM_KEY_CHOICE: names by value, NULL-ended */
	const char *range;		/* the message for a bad value */
	const char *unit;		/* added when the value is no number at all */
	const char *doc;		/* one line: what the key does */
};

/* Every key, in documentation order; the last entry has no name. */
extern const struct shim_config_key shim_config_keys[];

/* Room for any variable name shim_config_env_name writes. */
#define SHIM_CONFIG_ENV_NAME_MAX 64

/* "RPCRDMA_SHIM_<KEY>" for key into buf (of len bytes); returns buf. */
const char *shim_config_env_name(const struct shim_config_key *key,
				 char *buf, size_t len);

/* The defaults of rpcrdma-shim.conf(5); nothing allocated. */
void shim_config_init_defaults(struct shim_config *cfg);

/*
 * Initialize *cfg with the defaults, read the first file that exists of
 *
 *   1. $RPCRDMA_SHIM_CONFIG (missing: one warning, the search goes on)
 *   2. ${XDG_CONFIG_HOME:-$HOME/.config}/rpcrdma-shim/<progname>.conf
 *   3. SHIM_CONFIG_SYSDIR/<progname>.conf
 *   4. SHIM_CONFIG_SYSDIR/default.conf
 *
 * then apply the RPCRDMA_SHIM_* environment.  Steps 2 and 3 are skipped
 * when progname is NULL, empty, "." or "..", or contains a '/'.  Every
 * variable is read with secure_getenv(): a setuid or setgid program reads
 * files 3 and 4 only.  No file at all is not an error.  Returns the number
 * of errors (cfg->n_errors); *cfg must be released with shim_config_free.
 */
int shim_config_load(struct shim_config *cfg, const char *progname);

/* As shim_config_load, with sysdir in place of SHIM_CONFIG_SYSDIR. */
int shim_config_load_dir(struct shim_config *cfg, const char *progname,
			 const char *sysdir);

/*
 * Parse one file into *cfg (already initialized) and record it as the
 * source.  A file that cannot be read is an error here.  Keys the
 * environment has set keep their value.  Returns the errors found.
 */
int shim_config_parse_file(struct shim_config *cfg, const char *path);

/*
 * Apply the RPCRDMA_SHIM_* entries of envp ("NAME=value", NULL-terminated;
 * other names are ignored, an empty value counts as unset).  The
 * environment wins over any file whichever is parsed first, and its rules
 * and port maps go before the file's.  Returns the errors found.
 */
int shim_config_parse_env(struct shim_config *cfg, char *const *envp);

/*
 * What a client create for prog/vers to peer should use: the first user
 * rule that matches, else the built-in "tcp program 100000" (rpcbind),
 * else the default "rdma".  *why (if why is not NULL) is set to the rule
 * that decided; it is never NULL and lives as long as *cfg.  peer may be
 * NULL or of another family: then address and port criteria do not match.
 */
enum shim_action shim_config_client_action(const struct shim_config *cfg,
					   uint32_t prog, uint32_t vers,
					   const struct sockaddr *peer,
					   const struct shim_rule **why);

/*
 * The same for a server listening on local (a wildcard listener has the
 * address 0.0.0.0 or ::).  The server cannot know programs when it
 * listens, so every rule with a program or version criterion is skipped,
 * the built-in rpcbind rule included: the first of the remaining rules
 * (address, port or no criteria) that matches decides, else "rdma".
 */
enum shim_action shim_config_server_action(const struct shim_config *cfg,
					   const struct sockaddr *local,
					   const struct shim_rule **why);

/*
 * The RDMA port for a TCP port: the first port_map for it, else 20049 for
 * NFS's 2049 (RFC 8166 s6, IANA's NFS/RDMA port), else the same.
 */
uint16_t shim_config_rdma_port(const struct shim_config *cfg,
			       uint16_t tcp_port);

/* "prefer-rdma", "rdma", "warn", ... as written in the file. */
const char *shim_config_mode_name(enum shim_mode mode);
const char *shim_config_action_name(enum shim_action action);
const char *shim_config_log_level_name(enum shim_log_level level);

/* Release what *cfg holds and leave the defaults in it. */
void shim_config_free(struct shim_config *cfg);

/*
 * Set the log sink (common/log.h) up from cfg's log_level and log (NULL:
 * the defaults).  progname is the name in every line (NULL:
 * program_invocation_short_name).  A file that cannot be opened gives one
 * warning on stderr, and stderr is used instead.
 */
void shim_log_open(const struct shim_config *cfg, const char *progname);

/*
 * Log the messages a configuration keeps, each at its level, and how many
 * more were only counted; then, at debug level, the file that was read.
 */
void shim_log_config_messages(const struct shim_config *cfg);

#endif
