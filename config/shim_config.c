/*
 * Per-program configuration: search, parse, environment, rule matching.
 *
 * A file is lines of "key = value"; every key also comes from the
 * environment as RPCRDMA_SHIM_<KEY>.  Each bad line or variable gives one
 * message "<where>: <key> = <value>: <what is allowed>" kept in the object;
 * nothing is printed here.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <config.h>	/* generated: SHIM_DEFAULT_* */
#include "common/sockaddr.h"
#include "config/shim_config.h"

#define RPCBIND_PROG 100000u

enum key_id {
	K_ENABLE,
	K_MODE,
	K_INLINE_SEND,
	K_INLINE_RECV,
	K_CREDITS,
	K_CONNECT_TIMEOUT,
	K_NEGATIVE_CACHE,
	K_MAX_REPLY,
	K_MAX_CALL,
	K_WRITE_CHUNK,
	K_REMOTE_INVALIDATE,
	K_LOG_LEVEL,
	K_LOG,
	K_RULE,
	K_PORT_MAP,
	K_COUNT
};

const char *const shim_config_keys[] = {
	[K_ENABLE] = "enable",
	[K_MODE] = "mode",
	[K_INLINE_SEND] = "inline_send",
	[K_INLINE_RECV] = "inline_recv",
	[K_CREDITS] = "credits",
	[K_CONNECT_TIMEOUT] = "connect_timeout",
	[K_NEGATIVE_CACHE] = "negative_cache",
	[K_MAX_REPLY] = "max_reply",
	[K_MAX_CALL] = "max_call",
	[K_WRITE_CHUNK] = "write_chunk",
	[K_REMOTE_INVALIDATE] = "remote_invalidate",
	[K_LOG_LEVEL] = "log_level",
	[K_LOG] = "log",
	[K_RULE] = "rule",
	[K_PORT_MAP] = "port_map",
	[K_COUNT] = NULL,
};

const char *const shim_config_env_names[] = {
	SHIM_CONFIG_ENV_FILE,
	"RPCRDMA_SHIM_ENABLE",
	"RPCRDMA_SHIM_MODE",
	"RPCRDMA_SHIM_INLINE_SEND",
	"RPCRDMA_SHIM_INLINE_RECV",
	"RPCRDMA_SHIM_CREDITS",
	"RPCRDMA_SHIM_CONNECT_TIMEOUT",
	"RPCRDMA_SHIM_NEGATIVE_CACHE",
	"RPCRDMA_SHIM_MAX_REPLY",
	"RPCRDMA_SHIM_MAX_CALL",
	"RPCRDMA_SHIM_WRITE_CHUNK",
	"RPCRDMA_SHIM_REMOTE_INVALIDATE",
	"RPCRDMA_SHIM_LOG_LEVEL",
	"RPCRDMA_SHIM_LOG",
	"RPCRDMA_SHIM_RULE",
	"RPCRDMA_SHIM_PORT_MAP",
	NULL,
};

/* The file first, then one variable per key in key order (apply_env uses it). */
_Static_assert(K_COUNT <= 32, "env_keys_ has a bit per key");
_Static_assert(sizeof(shim_config_env_names) / sizeof(shim_config_env_names[0]) ==
	       K_COUNT + 2, "one environment name per key");

/* Where a value came from: a file line, or the environment (file NULL). */
struct where {
	const char *file;
	unsigned int line;
	const char *name;	/* the key or the variable, as written */
	const char *value;
};

/* ---- messages ---------------------------------------------------------- */

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

static void
fail(struct shim_config *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
fail(struct shim_config *cfg, const char *fmt, ...)
{
	va_list ap;

	cfg->bad = true;
	cfg->n_errors++;
	va_start(ap, fmt);
	add_msg(cfg, SHIM_LOG_ERROR, fmt, ap);
	va_end(ap);
}

static void
warn(struct shim_config *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void
warn(struct shim_config *cfg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_msg(cfg, SHIM_LOG_WARN, fmt, ap);
	va_end(ap);
}

/* "<file>:<line>: <key> = <value>: <why>" or "environment: <VAR>=<value>: <why>". */
static void
fail_at(struct shim_config *cfg, const struct where *w, const char *why)
{
	if (w->file)
		fail(cfg, "%s:%u: %s = %s: %s", w->file, w->line, w->name,
		     *w->value ? w->value : "\"\"", why);
	else
		fail(cfg, "environment: %s=%s: %s", w->name, w->value, why);
}

static void
fail_oom(struct shim_config *cfg, const struct where *w)
{
	fail_at(cfg, w, "out of memory");
}

/* ---- small parsers ------------------------------------------------------ */

static char *
trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static bool
parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return true;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return true;
		}
	}
	return false;
}

/*
 * An unsigned number: decimal, or hexadecimal after 0x when hex is allowed.
 * Returns false for anything else, or above max.
 */
static bool
parse_u32(const char *s, bool hex, uint32_t max, uint32_t *out)
{
	unsigned int base = 10;
	uint64_t v = 0;

	if (hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned int d;

		if (isdigit((unsigned char)*s))
			d = (unsigned int)(*s - '0');
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = (unsigned int)(tolower((unsigned char)*s) - 'a' + 10);
		else
			return false;
		v = v * base + d;
		if (v > max)
			return false;
	}
	*out = (uint32_t)v;
	return true;
}

struct unit {
	const char *suffix;	/* compared without case; "" is no suffix */
	uint64_t mult;
};

static const struct unit units_none[] = {
	{ "", 1 }, { NULL, 0 },
};
static const struct unit units_kib[] = {
	{ "", 1 }, { "k", 1024 }, { "kib", 1024 }, { NULL, 0 },
};
static const struct unit units_bytes[] = {
	{ "", 1 },
	{ "k", 1ull << 10 }, { "kib", 1ull << 10 },
	{ "m", 1ull << 20 }, { "mib", 1ull << 20 },
	{ "g", 1ull << 30 }, { "gib", 1ull << 30 },
	{ NULL, 0 },
};
static const struct unit units_ms[] = {
	{ "", 1 }, { "ms", 1 }, { "s", 1000 }, { NULL, 0 },
};
static const struct unit units_s[] = {
	{ "", 1 }, { "s", 1 }, { "m", 60 }, { NULL, 0 },
};

enum { NUM_OK, NUM_SYNTAX, NUM_RANGE };

/* Decimal digits, optional spaces, one of units' suffixes. */
static int
parse_scaled(const char *s, const struct unit *units, uint64_t *out)
{
	uint64_t v = 0;
	bool big = false;

	if (!isdigit((unsigned char)*s))
		return NUM_SYNTAX;
	for (; isdigit((unsigned char)*s); s++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			big = true;
		else
			v = v * 10 + d;
	}
	while (isspace((unsigned char)*s))
		s++;
	for (const struct unit *u = units; u->suffix; u++) {
		if (strcasecmp(s, u->suffix))
			continue;
		if (big || v > UINT64_MAX / u->mult)
			return NUM_RANGE;
		*out = v * u->mult;
		return NUM_OK;
	}
	return NUM_SYNTAX;
}

struct num_spec {
	const struct unit *units;
	uint64_t min, max, multiple;
	const char *range;	/* what is allowed */
	const char *syntax;	/* added when the value is no number at all */
};

static const struct num_spec spec_inline = {
	units_kib, 1024, 262144, 1024,
	"must be a multiple of 1024 from 1024 to 262144",
	"(bytes, optional suffix K or KiB)",
};
static const struct num_spec spec_credits = {
	units_none, 1, 1024, 1, "must be from 1 to 1024", NULL,
};
static const struct num_spec spec_connect_timeout = {
	units_ms, 100, 600000, 1,
	"must be from 100 to 600000 milliseconds",
	"(optional suffix ms or s)",
};
static const struct num_spec spec_negative_cache = {
	units_s, 0, 86400, 1,
	"must be from 0 to 86400 seconds",
	"(optional suffix s or m)",
};
static const struct num_spec spec_write_chunk = {
	units_bytes, 0, 1ull << 30, 1,
	"must be from 0 (none) to 1073741824 (1G) bytes",
	"(optional suffix K, M, G, KiB, MiB or GiB)",
};
static const struct num_spec spec_max_msg = {
	units_bytes, 4096, 1ull << 30, 1,
	"must be from 4096 (4K) to 1073741824 (1G) bytes",
	"(optional suffix K, M, G, KiB, MiB or GiB)",
};

/* NULL when value is fine (stored in *out), else what is allowed. */
static const char *
parse_num(const struct num_spec *spec, const char *value, uint64_t *out,
	  char *why, size_t whylen)
{
	uint64_t v;
	int rc;

	rc = parse_scaled(value, spec->units, &v);
	if (rc == NUM_SYNTAX && spec->syntax) {
		snprintf(why, whylen, "%s %s", spec->range, spec->syntax);
		return why;
	}
	if (rc != NUM_OK || v < spec->min || v > spec->max ||
	    v % spec->multiple)
		return spec->range;
	*out = v;
	return NULL;
}

/* ---- rules ---------------------------------------------------------------- */

#define RULE_SYNTAX "must be rdma or tcp, then any of: program P[,P...], " \
	"version V[-W], address A[/LEN], port N"

static bool
parse_program(const char *s, uint32_t *prog)
{
	struct rpcent ent, *res = NULL;
	char buf[1024];

	if (isdigit((unsigned char)*s))
		return parse_u32(s, true, UINT32_MAX, prog);
	if (getrpcbyname_r(s, &ent, buf, sizeof(buf), &res) || !res)
		return false;
	*prog = (uint32_t)res->r_number;
	return true;
}

static const char *
parse_programs(struct shim_rule *r, char *list, char *why, size_t whylen)
{
	size_t n = 1;
	char *item, *save = NULL;

	for (const char *p = list; *p; p++)
		n += *p == ',';
	r->progs = calloc(n, sizeof(*r->progs));
	if (!r->progs)
		return "out of memory";
	if (list[0] == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,")) {
		snprintf(why, whylen, "program list '%s' has an empty entry", list);
		return why;
	}
	for (item = strtok_r(list, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		if (!parse_program(item, &r->progs[r->nprogs])) {
			snprintf(why, whylen, "program '%s' is neither a number "
				 "nor a name in /etc/rpc", item);
			return why;
		}
		r->nprogs++;
	}
	return NULL;
}

static bool
parse_version(const char *s, struct shim_rule *r)
{
	char buf[32];
	char *dash;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (!parse_u32(buf, true, UINT32_MAX, &r->vers_min))
		return false;
	r->vers_max = r->vers_min;
	if (dash && !parse_u32(dash + 1, true, UINT32_MAX, &r->vers_max))
		return false;
	return r->vers_min <= r->vers_max;
}

static bool
parse_address(const char *s, struct shim_rule *r)
{
	static const uint8_t v4mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
	};
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash;
	unsigned int max;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	if (inet_pton(AF_INET, buf, r->addr) == 1) {
		r->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf, r->addr) == 1) {
		r->family = AF_INET6;
		max = 128;
	} else {
		return false;
	}
	r->prefix_len = max;
	if (slash && !parse_u32(slash + 1, false, max, &r->prefix_len))
		return false;
	if (r->family == AF_INET6 && r->prefix_len >= 96 &&
	    !memcmp(r->addr, v4mapped, sizeof(v4mapped))) {
		memmove(r->addr, r->addr + 12, 4);
		memset(r->addr + 4, 0, 12);
		r->family = AF_INET;
		r->prefix_len -= 96;
	}
	return true;
}

static const char *
parse_criteria(struct shim_rule *r, char **tok, size_t ntok, char *why,
	       size_t whylen)
{
	size_t i = 1;

	if (ntok == 0)
		return RULE_SYNTAX;
	if (!strcasecmp(tok[0], "rdma"))
		r->action = SHIM_ACTION_RDMA;
	else if (!strcasecmp(tok[0], "tcp"))
		r->action = SHIM_ACTION_TCP;
	else
		return RULE_SYNTAX;

	while (i < ntok) {
		const char *crit = tok[i++];
		const char *err = NULL;
		char *val;

		if (strcasecmp(crit, "program") && strcasecmp(crit, "version") &&
		    strcasecmp(crit, "address") && strcasecmp(crit, "port")) {
			snprintf(why, whylen, "unknown criterion '%s' (program, "
				 "version, address or port)", crit);
			return why;
		}
		if (i == ntok) {
			snprintf(why, whylen, "'%s' needs a value", crit);
			return why;
		}
		val = tok[i++];
		if (!strcasecmp(crit, "program")) {
			/* "program 1, 2 ,3": the list may be split by spaces. */
			while (i < ntok && (val[strlen(val) - 1] == ',' ||
					    tok[i][0] == ',')) {
				memmove(val + strlen(val), tok[i], strlen(tok[i]) + 1);
				i++;
			}
			if (r->progs)
				goto twice;
			err = parse_programs(r, val, why, whylen);
		} else if (!strcasecmp(crit, "version")) {
			if (r->has_vers)
				goto twice;
			r->has_vers = true;
			if (!parse_version(val, r)) {
				snprintf(why, whylen, "version '%s' must be V or "
					 "V-W, numbers with V <= W", val);
				err = why;
			}
		} else if (!strcasecmp(crit, "address")) {
			if (r->has_addr)
				goto twice;
			r->has_addr = true;
			if (!parse_address(val, r)) {
				snprintf(why, whylen, "address '%s' must be an "
					 "IPv4 or IPv6 address with an optional "
					 "/LEN (up to 32 or 128)", val);
				err = why;
			}
		} else {
			uint32_t port;

			if (r->has_port)
				goto twice;
			r->has_port = true;
			if (!parse_u32(val, false, 65535, &port) || port == 0) {
				snprintf(why, whylen, "port '%s' must be from 1 "
					 "to 65535", val);
				err = why;
			}
			r->port = (uint16_t)port;
		}
		if (err)
			return err;
		continue;
twice:
		snprintf(why, whylen, "'%s' given twice", crit);
		return why;
	}
	return NULL;
}

static void
rule_release(struct shim_rule *r)
{
	free(r->progs);
	free(r->text);
	free(r->origin);
	memset(r, 0, sizeof(*r));
}

/*
 * Parse "<rdma|tcp> criteria..." into *r.  The tokens are joined back in
 * place (the program list), so they live in one copy of the text.
 */
static const char *
parse_rule(const char *text, struct shim_rule *r, char *why, size_t whylen)
{
	size_t len = strlen(text), ntok = 0;
	char *copy = strdup(text);
	char **tok = calloc(len / 2 + 1, sizeof(*tok));
	char *save = NULL;
	const char *err;

	if (!copy || !tok) {
		free(copy);
		free(tok);
		return "out of memory";
	}
	/* Every token is at least one character and one separator. */
	for (char *t = strtok_r(copy, " \t\r\n\v\f", &save); t;
	     t = strtok_r(NULL, " \t\r\n\v\f", &save))
		tok[ntok++] = t;
	err = parse_criteria(r, tok, ntok, why, whylen);
	free(tok);
	free(copy);
	return err;
}

static void
add_rule(struct shim_config *cfg, const struct where *w, const char *text)
{
	char why[512];
	struct shim_rule r = { 0 }, *rules;
	const char *err;
	size_t at;

	err = parse_rule(text, &r, why, sizeof(why));
	if (err) {
		rule_release(&r);
		fail_at(cfg, w, err);
		return;
	}
	r.text = strdup(text);
	if (w->file) {
		if (asprintf(&r.origin, "%s:%u", w->file, w->line) < 0)
			r.origin = NULL;
	} else {
		r.origin = strdup("environment");
	}
	rules = realloc(cfg->rules, (cfg->nrules + 1) * sizeof(*rules));
	if (!r.text || !r.origin || !rules) {
		if (rules)
			cfg->rules = rules;
		rule_release(&r);
		fail_oom(cfg, w);
		return;
	}
	cfg->rules = rules;
	/* The environment's rules go before the file's. */
	at = w->file ? cfg->nrules : cfg->env_rules_++;
	memmove(&rules[at + 1], &rules[at], (cfg->nrules - at) * sizeof(*rules));
	rules[at] = r;
	cfg->nrules++;
}

#define PORT_MAP_SYNTAX "must be TCP:RDMA, two ports from 1 to 65535"

static void
add_port_map(struct shim_config *cfg, const struct where *w, const char *text)
{
	struct shim_port_map m, *maps;
	char buf[32];
	char *colon;
	uint32_t tcp, rdma;
	size_t at;

	if (strlen(text) >= sizeof(buf))
		goto bad;
	strcpy(buf, text);
	colon = strchr(buf, ':');
	if (!colon)
		goto bad;
	*colon = '\0';
	if (!parse_u32(trim(buf), false, 65535, &tcp) || !tcp ||
	    !parse_u32(trim(colon + 1), false, 65535, &rdma) || !rdma)
		goto bad;
	m.tcp_port = (uint16_t)tcp;
	m.rdma_port = (uint16_t)rdma;
	maps = realloc(cfg->port_maps, (cfg->nport_maps + 1) * sizeof(*maps));
	if (!maps) {
		fail_oom(cfg, w);
		return;
	}
	cfg->port_maps = maps;
	at = w->file ? cfg->nport_maps : cfg->env_port_maps_++;
	memmove(&maps[at + 1], &maps[at], (cfg->nport_maps - at) * sizeof(*maps));
	maps[at] = m;
	cfg->nport_maps++;
	return;
bad:
	fail_at(cfg, w, PORT_MAP_SYNTAX);
}

/* ---- keys ------------------------------------------------------------- */

/*
 * Store value for a single-valued key into *cfg.  NULL when stored,
 * else what is allowed (*cfg unchanged).
 */
static const char *
set_scalar(struct shim_config *cfg, enum key_id key, const char *value,
	   char *why, size_t whylen)
{
	const char *err;
	uint64_t v = 0;
	bool b;

	switch (key) {
	case K_ENABLE:
	case K_REMOTE_INVALIDATE:
		if (!parse_bool(value, &b))
			return "must be yes or no (or true/false, on/off, 1/0)";
		if (key == K_ENABLE)
			cfg->enable = b;
		else
			cfg->remote_invalidate = b;
		return NULL;
	case K_MODE:
		for (int m = SHIM_MODE_PREFER_RDMA; m <= SHIM_MODE_TCP_ONLY; m++) {
			if (!strcasecmp(value, shim_config_mode_name(m))) {
				cfg->mode = (enum shim_mode)m;
				return NULL;
			}
		}
		return "must be prefer-rdma, require-rdma or tcp-only";
	case K_LOG_LEVEL:
		for (int l = SHIM_LOG_ERROR; l <= SHIM_LOG_DEBUG; l++) {
			if (!strcasecmp(value, shim_config_log_level_name(l))) {
				cfg->log_level = (enum shim_log_level)l;
				return NULL;
			}
		}
		return "must be error, warn, info or debug";
	case K_LOG:
		if (!strcasecmp(value, "stderr")) {
			cfg->log_dest = SHIM_LOG_TO_STDERR;
		} else if (!strcasecmp(value, "syslog")) {
			cfg->log_dest = SHIM_LOG_TO_SYSLOG;
		} else if (value[0] == '/' &&
			   strlen(value) < sizeof(cfg->log_path)) {
			cfg->log_dest = SHIM_LOG_TO_FILE;
			strcpy(cfg->log_path, value);
		} else {
			return "must be stderr, syslog or an absolute file path";
		}
		return NULL;
	case K_INLINE_SEND:
	case K_INLINE_RECV:
		err = parse_num(&spec_inline, value, &v, why, whylen);
		if (!err && key == K_INLINE_SEND)
			cfg->inline_send = (uint32_t)v;
		else if (!err)
			cfg->inline_recv = (uint32_t)v;
		return err;
	case K_CREDITS:
		err = parse_num(&spec_credits, value, &v, why, whylen);
		if (!err)
			cfg->credits = (uint32_t)v;
		return err;
	case K_CONNECT_TIMEOUT:
		err = parse_num(&spec_connect_timeout, value, &v, why, whylen);
		if (!err)
			cfg->connect_timeout_ms = (uint32_t)v;
		return err;
	case K_NEGATIVE_CACHE:
		err = parse_num(&spec_negative_cache, value, &v, why, whylen);
		if (!err)
			cfg->negative_cache_s = (uint32_t)v;
		return err;
	case K_MAX_REPLY:
	case K_MAX_CALL:
		err = parse_num(&spec_max_msg, value, &v, why, whylen);
		if (!err && key == K_MAX_REPLY)
			cfg->max_reply = v;
		else if (!err)
			cfg->max_call = v;
		return err;
	case K_WRITE_CHUNK:
		err = parse_num(&spec_write_chunk, value, &v, why, whylen);
		if (!err)
			cfg->write_chunk = v;
		return err;
	case K_RULE:
	case K_PORT_MAP:
	case K_COUNT:
		break;
	}
	return "not a single-valued key";
}

/*
 * Apply one value from a file.  A key the environment has set is still
 * checked (so mistakes show) but keeps the environment's value.
 */
static void
apply_file_value(struct shim_config *cfg, enum key_id key,
		 const struct where *w)
{
	char why[256];
	const char *err;

	if (key == K_RULE) {
		add_rule(cfg, w, w->value);
		return;
	}
	if (key == K_PORT_MAP) {
		add_port_map(cfg, w, w->value);
		return;
	}
	if (cfg->env_keys_ & (1u << key)) {
		struct shim_config scratch = *cfg;

		err = set_scalar(&scratch, key, w->value, why, sizeof(why));
	} else {
		err = set_scalar(cfg, key, w->value, why, sizeof(why));
	}
	if (err)
		fail_at(cfg, w, err);
}

static int
find_key(const char *name)
{
	for (int k = 0; k < K_COUNT; k++)
		if (!strcasecmp(name, shim_config_keys[k]))
			return k;
	return -1;
}

static const char *
known_keys(char *buf, size_t len, const char *const *names)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; names[i] && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i ? ", " : "", names[i]);
	return buf;
}

/* ---- files ------------------------------------------------------------ */

static void
parse_line(struct shim_config *cfg, const char *path, unsigned int lineno,
	   char *line)
{
	struct where w = { .file = path, .line = lineno };
	char *hash, *eq, *key;
	int k;

	hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	line = trim(line);
	if (!*line)
		return;
	eq = strchr(line, '=');
	if (!eq) {
		fail(cfg, "%s:%u: %s: not a 'key = value' line", path, lineno,
		     line);
		return;
	}
	*eq = '\0';
	key = trim(line);
	w.name = key;
	w.value = trim(eq + 1);
	if (!*key) {
		fail(cfg, "%s:%u: = %s: missing the key before '='", path,
		     lineno, w.value);
		return;
	}
	k = find_key(key);
	if (k < 0) {
		char why[512], list[400];

		snprintf(why, sizeof(why), "unknown key (known: %s)",
			 known_keys(list, sizeof(list), shim_config_keys));
		fail_at(cfg, &w, why);
		return;
	}
	apply_file_value(cfg, (enum key_id)k, &w);
}

static void
parse_stream(struct shim_config *cfg, FILE *f, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	ssize_t n;

	snprintf(cfg->source, sizeof(cfg->source), "%s", path);
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *p = line;

		lineno++;
		/* A UTF-8 byte order mark some editors write. */
		if (lineno == 1 && !strncmp(p, "\xef\xbb\xbf", 3))
			p += 3;
		if ((size_t)n != strlen(line)) {
			fail(cfg, "%s:%u: the line holds a NUL byte (not a text "
			     "file?)", path, lineno);
			continue;
		}
		parse_line(cfg, path, lineno, p);
	}
	if (ferror(f))
		fail(cfg, "%s: read error: %s", path, strerror(errno));
	free(line);
}

/*
 * Parse path if it exists.  Returns false when there is no such file (the
 * search goes on); any other failure to read it is an error.
 */
static bool
try_file(struct shim_config *cfg, const char *path)
{
	struct stat st;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT || errno == ENOTDIR)
			return false;
		/*
		 * A directory on the way that this process may not search (a
		 * daemon that dropped privileges keeps $HOME): the file cannot
		 * be seen, which is as good as absent.  A file that can be
		 * seen but not read is an error.
		 */
		if (errno == EACCES && stat(path, &st) < 0)
			return false;
		snprintf(cfg->source, sizeof(cfg->source), "%s", path);
		fail(cfg, "%s: cannot open: %s", path, strerror(errno));
		return true;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(cfg->source, sizeof(cfg->source), "%s", path);
		fail(cfg, "%s: is a directory", path);
	} else {
		parse_stream(cfg, f, path);
	}
	fclose(f);
	return true;
}

int
shim_config_parse_file(struct shim_config *cfg, const char *path)
{
	unsigned int before = cfg->n_errors;

	if (!try_file(cfg, path)) {
		snprintf(cfg->source, sizeof(cfg->source), "%s", path);
		fail(cfg, "%s: cannot open: %s", path, strerror(ENOENT));
	}
	return (int)(cfg->n_errors - before);
}

/* ---- environment -------------------------------------------------------- */

/* "RPCRDMA_SHIM_RULE=r1; r2" and "RPCRDMA_SHIM_PORT_MAP=m1,m2". */
static void
apply_env_list(struct shim_config *cfg, enum key_id key, struct where *w)
{
	char *copy = strdup(w->value), *item, *save = NULL;

	if (!copy) {
		fail_oom(cfg, w);
		return;
	}
	for (item = strtok_r(copy, key == K_RULE ? ";" : ",", &save); item;
	     item = strtok_r(NULL, key == K_RULE ? ";" : ",", &save)) {
		item = trim(item);
		if (!*item)
			continue;
		w->value = item;
		if (key == K_RULE)
			add_rule(cfg, w, item);
		else
			add_port_map(cfg, w, item);
	}
	free(copy);
}

static void
apply_env(struct shim_config *cfg, const char *name, const char *value)
{
	const char *suffix = name + strlen(SHIM_CONFIG_ENV_PREFIX);
	struct where w = { .name = name, .value = value };
	char why[512], list[450];
	const char *err;
	char *copy;
	int k;

	for (k = 0; k < K_COUNT; k++)
		if (!strcmp(shim_config_env_names[k + 1] +
			    strlen(SHIM_CONFIG_ENV_PREFIX), suffix))
			break;
	if (k == K_COUNT) {
		snprintf(why, sizeof(why), "unknown variable (known: %s)",
			 known_keys(list, sizeof(list), shim_config_env_names));
		fail_at(cfg, &w, why);
		return;
	}
	if (k == K_RULE || k == K_PORT_MAP) {
		apply_env_list(cfg, (enum key_id)k, &w);
		return;
	}
	copy = strdup(value);
	if (!copy) {
		fail_oom(cfg, &w);
		return;
	}
	err = set_scalar(cfg, (enum key_id)k, trim(copy), why, sizeof(why));
	if (err)
		fail_at(cfg, &w, err);
	else
		cfg->env_keys_ |= 1u << k;
	free(copy);
}

/* Whether envp[i]'s name appeared before it (the first one counts, as for getenv). */
static bool
env_seen_before(char *const *envp, size_t i, size_t namelen)
{
	for (size_t j = 0; j < i; j++)
		if (!strncmp(envp[j], envp[i], namelen + 1))
			return true;
	return false;
}

static int
parse_env_list(struct shim_config *cfg, char *const *envp, bool secure)
{
	size_t plen = strlen(SHIM_CONFIG_ENV_PREFIX);
	unsigned int before = cfg->n_errors;

	for (size_t i = 0; envp && envp[i]; i++) {
		const char *eq = strchr(envp[i], '=');
		size_t namelen;
		char *name;

		if (strncmp(envp[i], SHIM_CONFIG_ENV_PREFIX, plen) || !eq)
			continue;
		namelen = (size_t)(eq - envp[i]);
		if (env_seen_before(envp, i, namelen) || !eq[1])
			continue;
		name = strndup(envp[i], namelen);
		if (!name) {
			cfg->bad = true;
			cfg->n_errors++;
			break;
		}
		/* Under AT_SECURE secure_getenv hides every variable. */
		if (strcmp(name, SHIM_CONFIG_ENV_FILE) &&
		    (!secure || secure_getenv(name)))
			apply_env(cfg, name, eq + 1);
		free(name);
	}
	return (int)(cfg->n_errors - before);
}

int
shim_config_parse_env(struct shim_config *cfg, char *const *envp)
{
	return parse_env_list(cfg, envp, false);
}

/* ---- search ----------------------------------------------------------- */

static bool
try_filef(struct shim_config *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static bool
try_filef(struct shim_config *cfg, const char *fmt, ...)
{
	va_list ap;
	char *path;
	bool found;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&path, fmt, ap);
	va_end(ap);
	if (rc < 0) {
		cfg->bad = true;
		cfg->n_errors++;
		return false;
	}
	found = try_file(cfg, path);
	free(path);
	return found;
}

static bool
progname_usable(const char *progname)
{
	return progname && *progname && strcmp(progname, ".") &&
	       strcmp(progname, "..") && !strchr(progname, '/');
}

int
shim_config_load_dir(struct shim_config *cfg, const char *progname,
		     const char *sysdir)
{
	bool per_prog = progname_usable(progname);
	const char *explicit = secure_getenv(SHIM_CONFIG_ENV_FILE);
	const char *xdg = secure_getenv("XDG_CONFIG_HOME");
	const char *home = secure_getenv("HOME");
	bool found = false;

	shim_config_init_defaults(cfg);
	if (!sysdir)
		sysdir = SHIM_CONFIG_SYSDIR;

	if (explicit && *explicit) {
		found = try_file(cfg, explicit);
		if (!found)
			warn(cfg, "environment: %s=%s: no such file; searching "
			     "the usual places", SHIM_CONFIG_ENV_FILE, explicit);
	}
	/* The XDG spec: a relative XDG_CONFIG_HOME is ignored. */
	if (!found && per_prog && xdg && xdg[0] == '/')
		found = try_filef(cfg, "%s/rpcrdma-shim/%s.conf", xdg, progname);
	else if (!found && per_prog && home && *home)
		found = try_filef(cfg, "%s/.config/rpcrdma-shim/%s.conf", home,
				  progname);
	if (!found && per_prog)
		found = try_filef(cfg, "%s/%s.conf", sysdir, progname);
	if (!found)
		try_filef(cfg, "%s/default.conf", sysdir);

	parse_env_list(cfg, environ, true);
	return (int)cfg->n_errors;
}

int
shim_config_load(struct shim_config *cfg, const char *progname)
{
	return shim_config_load_dir(cfg, progname, SHIM_CONFIG_SYSDIR);
}

/* ---- queries -------------------------------------------------------------- */

static uint32_t rpcbind_progs[] = { RPCBIND_PROG };
static char rpcbind_text[] = "tcp program 100000";
static char builtin_origin[] = "built-in";
static char default_text[] = "rdma";
static char default_origin[] = "default";

static const struct shim_rule builtin_rpcbind = {
	.action = SHIM_ACTION_TCP,
	.progs = rpcbind_progs,
	.nprogs = 1,
	.text = rpcbind_text,
	.origin = builtin_origin,
};

static const struct shim_rule default_rule = {
	.action = SHIM_ACTION_RDMA,
	.text = default_text,
	.origin = default_origin,
};

static bool
prefix_match(const uint8_t *a, const uint8_t *b, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;
	uint8_t mask;

	if (memcmp(a, b, bytes))
		return false;
	if (!rest)
		return true;
	mask = (uint8_t)(0xff << (8 - rest));
	return (a[bytes] & mask) == (b[bytes] & mask);
}

static bool
rule_matches(const struct shim_rule *r, bool server, uint32_t prog,
	     uint32_t vers, const struct peer_key *na, bool have_addr)
{
	if (server && (r->nprogs || r->has_vers))
		return false;
	if (r->nprogs) {
		size_t i;

		for (i = 0; i < r->nprogs && r->progs[i] != prog; i++)
			;
		if (i == r->nprogs)
			return false;
	}
	if (r->has_vers && (vers < r->vers_min || vers > r->vers_max))
		return false;
	if (r->has_addr && (!have_addr || na->family != r->family ||
			    !prefix_match(na->addr, r->addr, r->prefix_len)))
		return false;
	if (r->has_port && (!have_addr || na->port != r->port))
		return false;
	return true;
}

static enum shim_action
decide(const struct shim_config *cfg, bool server, uint32_t prog,
       uint32_t vers, const struct sockaddr *sa, const struct shim_rule **why)
{
	const struct shim_rule *r = &default_rule;
	struct peer_key na;
	bool have_addr = peer_key_from(&na, sa);
	size_t i;

	/* Rules keep IPv4-mapped addresses as IPv4: peers are matched so. */
	peer_key_unmap(&na);

	for (i = 0; i < cfg->nrules; i++) {
		if (rule_matches(&cfg->rules[i], server, prog, vers, &na,
				 have_addr)) {
			r = &cfg->rules[i];
			break;
		}
	}
	if (i == cfg->nrules &&
	    rule_matches(&builtin_rpcbind, server, prog, vers, &na, have_addr))
		r = &builtin_rpcbind;
	if (why)
		*why = r;
	return r->action;
}

enum shim_action
shim_config_client_action(const struct shim_config *cfg, uint32_t prog,
			  uint32_t vers, const struct sockaddr *peer,
			  const struct shim_rule **why)
{
	return decide(cfg, false, prog, vers, peer, why);
}

enum shim_action
shim_config_server_action(const struct shim_config *cfg,
			  const struct sockaddr *local,
			  const struct shim_rule **why)
{
	return decide(cfg, true, 0, 0, local, why);
}

uint16_t
shim_config_rdma_port(const struct shim_config *cfg, uint16_t tcp_port)
{
	for (size_t i = 0; i < cfg->nport_maps; i++)
		if (cfg->port_maps[i].tcp_port == tcp_port)
			return cfg->port_maps[i].rdma_port;
	return tcp_port;
}

const char *
shim_config_mode_name(enum shim_mode mode)
{
	switch (mode) {
	case SHIM_MODE_PREFER_RDMA:
		return "prefer-rdma";
	case SHIM_MODE_REQUIRE_RDMA:
		return "require-rdma";
	case SHIM_MODE_TCP_ONLY:
		return "tcp-only";
	}
	return "?";
}

const char *
shim_config_action_name(enum shim_action action)
{
	return action == SHIM_ACTION_RDMA ? "rdma" : "tcp";
}

const char *
shim_config_log_level_name(enum shim_log_level level)
{
	switch (level) {
	case SHIM_LOG_ERROR:
		return "error";
	case SHIM_LOG_WARN:
		return "warn";
	case SHIM_LOG_INFO:
		return "info";
	case SHIM_LOG_DEBUG:
		return "debug";
	}
	return "?";
}

/* ---- lifetime --------------------------------------------------------- */

void
shim_config_init_defaults(struct shim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->enable = true;
	cfg->mode = SHIM_MODE_PREFER_RDMA;
	cfg->inline_send = SHIM_DEFAULT_INLINE_SIZE;
	cfg->inline_recv = SHIM_DEFAULT_INLINE_SIZE;
	cfg->credits = SHIM_CONFIG_DEFAULT_CREDITS;
	cfg->connect_timeout_ms = SHIM_DEFAULT_CONNECT_TIMEOUT_MS;
	cfg->negative_cache_s = SHIM_CONFIG_DEFAULT_NEGATIVE_CACHE_S;
	cfg->max_reply = SHIM_CONFIG_DEFAULT_MAX_REPLY;
	cfg->max_call = SHIM_CONFIG_DEFAULT_MAX_CALL;
	cfg->remote_invalidate = true;
	cfg->log_level = SHIM_LOG_INFO;
	cfg->log_dest = SHIM_LOG_TO_STDERR;
}

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
			 "stderr", cfg->log_path, strerror(err));
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
		rule_release(&cfg->rules[i]);
	free(cfg->rules);
	free(cfg->port_maps);
	for (size_t i = 0; i < cfg->nmsgs; i++)
		free(cfg->msgs[i].text);
	free(cfg->msgs);
	shim_config_init_defaults(cfg);
}
