/*
 * The keys of rpcrdma-shim.conf(5) in one table, the parsers of their
 * values, and the defaults.
 *
 * A key is one row: its name (the environment variable is derived from
 * it), the type of its value, the field it sets, its default, what is
 * allowed and the units accepted, and one line saying what it does.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <config.h>	/* generated: SHIM_DEFAULT_* */
#include "config/internal.h"

/* ---- units ----------------------------------------------------------- */

struct shim_config_unit {
	const char *suffix;	/* compared without case; "" is no suffix */
	uint64_t mult;
};

static const struct shim_config_unit units_none[] = {
	{ "", 1 }, { NULL, 0 },
};
static const struct shim_config_unit units_kib[] = {
	{ "", 1 }, { "k", 1024 }, { "kib", 1024 }, { NULL, 0 },
};
static const struct shim_config_unit units_bytes[] = {
	{ "", 1 },
	{ "k", 1ull << 10 }, { "kib", 1ull << 10 },
	{ "m", 1ull << 20 }, { "mib", 1ull << 20 },
	{ "g", 1ull << 30 }, { "gib", 1ull << 30 },
	{ NULL, 0 },
};
static const struct shim_config_unit units_ms[] = {
	{ "", 1 }, { "ms", 1 }, { "s", 1000 }, { NULL, 0 },
};
static const struct shim_config_unit units_us[] = {
	{ "", 1 }, { "us", 1 }, { "ms", 1000 }, { NULL, 0 },
};
static const struct shim_config_unit units_s[] = {
	{ "", 1 }, { "s", 1 }, { "m", 60 }, { NULL, 0 },
};

/* ---- the table ------------------------------------------------------- */

/* By value: enum shim_mode, enum shim_log_level. */
static const char *const mode_names[] = {
	"prefer-rdma", "require-rdma", "tcp-only", NULL,
};
static const char *const upgrade_names[] = {
	"background", "wait", NULL,
};
static const char *const rpcrdma_version_names[] = {
	"1", "2", "auto", NULL,
};
static const char *const log_level_names[] = {
	"error", "warn", "info", "debug", NULL,
};

#define FIELD(f) .off = offsetof(struct shim_config, f), \
	.size = sizeof(((struct shim_config *)0)->f)

#define BOOL_RANGE "must be yes or no (or true/false, on/off, 1/0)"
#define BYTES_UNIT "(optional suffix K, M, G, KiB, MiB or GiB)"

#define INLINE_SIZE .units = units_kib, .min = 1024, .max = 262144,	\
	.multiple = 1024,						\
	.range = "must be a multiple of 1024 from 1024 to 262144",	\
	.unit = "(bytes, optional suffix K or KiB)"

#define MESSAGE_SIZE .units = units_bytes, .min = 4096, .max = 1ull << 30, \
	.range = "must be from 4096 (4K) to 1073741824 (1G) bytes",	\
	.unit = BYTES_UNIT

/*
 * In the order of rpcrdma-shim.conf(5).  Rules and port maps say what is
 * allowed themselves (config/rules.c).
 */
const struct shim_config_key shim_config_keys[] = {
	{ .name = "enable", .type = SHIM_KEY_BOOL, FIELD(enable),
	  .def = true, .range = BOOL_RANGE,
	  .doc = "no: every call goes to libtirpc untouched" },
	{ .name = "mode", .type = SHIM_KEY_CHOICE, FIELD(mode),
	  .def = SHIM_MODE_PREFER_RDMA, .choices = mode_names,
	  .range = "must be prefer-rdma, require-rdma or tcp-only",
	  .doc = "where rules choose RDMA: fall back to TCP, fail, or never try" },
	{ .name = "inline_send", .type = SHIM_KEY_NUMBER, FIELD(inline_send),
	  .def = SHIM_DEFAULT_INLINE_SIZE, INLINE_SIZE,
	  .doc = "largest message sent in one Send without chunks (RFC 8797)" },
	{ .name = "inline_recv", .type = SHIM_KEY_NUMBER, FIELD(inline_recv),
	  .def = SHIM_DEFAULT_INLINE_SIZE, INLINE_SIZE,
	  .doc = "largest message received in one Send without chunks (RFC 8797)" },
	{ .name = "credits", .type = SHIM_KEY_NUMBER, FIELD(credits),
	  .def = 32, .units = units_none, .min = 1, .max = 1024,
	  .range = "must be from 1 to 1024",
	  .doc = "receives a server posts and grants, and a client asks for" },
	{ .name = "connect_timeout", .type = SHIM_KEY_NUMBER,
	  FIELD(connect_timeout_ms), .def = SHIM_DEFAULT_CONNECT_TIMEOUT_MS,
	  .units = units_ms, .min = 100, .max = 600000,
	  .range = "must be from 100 to 600000 milliseconds",
	  .unit = "(optional suffix ms or s)",
	  .doc = "how long RDMA connection setup may take" },
	{ .name = "negative_cache", .type = SHIM_KEY_NUMBER,
	  FIELD(negative_cache_s), .def = 60, .units = units_s,
	  .min = 0, .max = 86400,
	  .range = "must be from 0 to 86400 seconds",
	  .unit = "(optional suffix s or m)",
	  .doc = "how long a peer RDMA failed for goes straight to TCP (0: off)" },
	{ .name = "upgrade", .type = SHIM_KEY_CHOICE, FIELD(upgrade),
	  .def = SHIM_UPGRADE_BACKGROUND, .choices = upgrade_names,
	  .range = "must be background or wait",
	  .doc = "background: calls use TCP while RDMA is set up; wait: the create waits for it" },
	/*
	 * max_reply is registered for every call in flight; max_call only
	 * bounds a call.  1M: the largest NFS READ or READDIR reply, with
	 * room for the RPC header on top (EP_MSG_HDR_SLACK).
	 */
	{ .name = "max_reply", .type = SHIM_KEY_NUMBER, FIELD(max_reply),
	  .def = 1ull << 20, MESSAGE_SIZE,
	  .doc = "the Reply chunk a call offers when its reply may not fit inline: the largest reply accepted" },
	{ .name = "max_call", .type = SHIM_KEY_NUMBER, FIELD(max_call),
	  .def = 4ull << 20, MESSAGE_SIZE,
	  .doc = "the largest call a server accepts" },
	{ .name = "write_chunk", .type = SHIM_KEY_NUMBER, FIELD(write_chunk),
	  .def = 0, .units = units_bytes, .min = 0, .max = 1ull << 30,
	  .range = "must be from 0 (none) to 1073741824 (1G) bytes",
	  .unit = BYTES_UNIT,
	  .doc = "the Write chunk every call offers (0: none)" },
	{ .name = "max_pinned", .type = SHIM_KEY_NUMBER, FIELD(max_pinned),
	  .def = 0, .units = units_bytes, .min = 0, .max = 1ull << 40,
	  .range = "must be 0 (from ulimit -l) or a size up to 1099511627776 (1024G) bytes",
	  .unit = BYTES_UNIT,
	  .doc = "registered memory the process may use for RDMA (0: 3/4 of ulimit -l)" },
	{ .name = "remote_invalidate", .type = SHIM_KEY_BOOL,
	  FIELD(remote_invalidate), .def = true, .range = BOOL_RANGE,
	  .doc = "allow Send With Invalidate (RFC 8797) where it is safe" },
	/*
	 * 200 us: measured on soft-RoCE under emulation, a polled NULL round
	 * trip is about 105 us and a client's or server's work between a
	 * reply and its next call adds more; 100 us missed half of them
	 * (each miss costs a sleep and a wakeup), 200 us almost none, and
	 * longer bought little more for the CPU it may burn.
	 */
	{ .name = "poll_us", .type = SHIM_KEY_NUMBER, FIELD(poll_us),
	  .def = 200, .units = units_us, .min = 0, .max = 100000,
	  .range = "must be from 0 to 100000 microseconds",
	  .unit = "(optional suffix us or ms)",
	  .doc = "how long a wait polls for completions before sleeping (0: sleep at once)" },
	/*
	 * 5 s: a worker's reply normally comes long before; a procedure the
	 * program never answers costs each listener this once
	 * (transport/svc_rdma_hold.c).
	 */
	{ .name = "defer_wait", .type = SHIM_KEY_NUMBER,
	  FIELD(defer_wait_ms), .def = 5000, .units = units_ms,
	  .min = 0, .max = 600000,
	  .range = "must be from 0 to 600000 milliseconds",
	  .unit = "(optional suffix ms or s)",
	  .doc = "server: how long a call answered after its dispatch keeps its client's next call waiting (0: not at all)" },
	{ .name = "no_placement", .type = SHIM_KEY_PROGS,
	  FIELD(n_no_placement), .def = 0,
	  .range = "must be none or up to 16 RPC program numbers (or nfs), separated by commas",
	  .doc = "programs whose results are never placed in Write chunks" },
	/*
	 * auto: Version Two costs nothing measurable against Version One,
	 * and a Version One server one round trip once per process
	 * (README.md, "Version Two against Version One").
	 */
	{ .name = "rpcrdma_version", .type = SHIM_KEY_CHOICE,
	  FIELD(rpcrdma_version), .def = SHIM_RPCRDMA_AUTO,
	  .choices = rpcrdma_version_names,
	  .range = "must be 1, 2 or auto",
	  .doc = "RPC-over-RDMA Version Two: 1 never, 2 offered on every connection, auto once per peer" },
	{ .name = "log_level", .type = SHIM_KEY_CHOICE, FIELD(log_level),
	  .def = SHIM_LOG_INFO, .choices = log_level_names,
	  .range = "must be error, warn, info or debug",
	  .doc = "the least severe messages logged" },
	{ .name = "log", .type = SHIM_KEY_LOG, FIELD(log_dest),
	  .def = SHIM_LOG_TO_STDERR,
	  .range = "must be stderr, syslog or an absolute file path",
	  .doc = "where messages go: stderr, syslog or a file" },
	{ .name = "rule", .type = SHIM_KEY_RULE,
	  .doc = "TCP or RDMA for the connections it matches; first match wins" },
	{ .name = "port_map", .type = SHIM_KEY_PORT_MAP,
	  .doc = "the RDMA port of the service on a TCP port" },
	{ .name = NULL },
};

#define NKEYS (sizeof(shim_config_keys) / sizeof(shim_config_keys[0]) - 1)

_Static_assert(NKEYS <= 32, "env_keys_ has a bit per key");
/* Fields are stored by size: bool in 1 byte, enums in 4. */
_Static_assert(sizeof(bool) == 1, "bool fields are one byte");
_Static_assert(sizeof(enum shim_mode) == sizeof(uint32_t) &&
	       sizeof(enum shim_log_level) == sizeof(uint32_t) &&
	       sizeof(enum shim_rpcrdma_version) == sizeof(uint32_t) &&
	       sizeof(enum shim_log_dest) == sizeof(uint32_t),
	       "enum fields are four bytes");

static bool
is_list(const struct shim_config_key *key)
{
	return key->type == SHIM_KEY_RULE || key->type == SHIM_KEY_PORT_MAP;
}

/* Set key's field to v. */
static void
store(struct shim_config *cfg, const struct shim_config_key *key, uint64_t v)
{
	unsigned char *field = (unsigned char *)cfg + key->off;
	uint32_t v32 = (uint32_t)v;
	uint8_t v8 = (uint8_t)v;

	switch (key->size) {
	case sizeof(v8):
		memcpy(field, &v8, sizeof(v8));
		break;
	case sizeof(v32):
		memcpy(field, &v32, sizeof(v32));
		break;
	case sizeof(v):
		memcpy(field, &v, sizeof(v));
		break;
	}
}

/* ---- names ----------------------------------------------------------- */

const char *
shim_config_env_name(const struct shim_config_key *key, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", SHIM_CONFIG_ENV_PREFIX, key->name);
	for (char *p = buf; *p; p++)
		*p = (char)toupper((unsigned char)*p);
	return buf;
}

const struct shim_config_key *
config_key_by_name(const char *name)
{
	for (const struct shim_config_key *k = shim_config_keys; k->name; k++)
		if (!strcasecmp(name, k->name))
			return k;
	return NULL;
}

/* Whether suffix is name in capitals, exactly. */
static bool
is_env_suffix(const char *name, const char *suffix)
{
	for (; *name && *suffix; name++, suffix++)
		if (toupper((unsigned char)*name) != *suffix)
			return false;
	return !*name && !*suffix;
}

const struct shim_config_key *
config_key_by_env(const char *suffix)
{
	for (const struct shim_config_key *k = shim_config_keys; k->name; k++)
		if (is_env_suffix(k->name, suffix))
			return k;
	return NULL;
}

const char *
config_known_names(char *buf, size_t len, bool env)
{
	char var[SHIM_CONFIG_ENV_NAME_MAX];
	size_t off = 0;

	buf[0] = '\0';
	if (env)
		off = (size_t)snprintf(buf, len, "%s", SHIM_CONFIG_ENV_FILE);
	for (const struct shim_config_key *k = shim_config_keys;
	     k->name && off < len; k++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					off ? ", " : "", env ?
					shim_config_env_name(k, var, sizeof(var)) :
					k->name);
	return buf;
}

uint32_t
config_key_bit(const struct shim_config_key *key)
{
	return 1u << (key - shim_config_keys);
}

const char *
shim_config_mode_name(enum shim_mode mode)
{
	return (unsigned int)mode <= SHIM_MODE_TCP_ONLY ? mode_names[mode] : "?";
}

const char *
shim_config_log_level_name(enum shim_log_level level)
{
	return (unsigned int)level <= SHIM_LOG_DEBUG ? log_level_names[level] : "?";
}

/* ---- value parsers --------------------------------------------------- */

char *
config_trim(char *s)
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

bool
config_parse_u32(const char *s, bool hex, uint32_t max, uint32_t *out)
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

enum { NUM_OK, NUM_SYNTAX, NUM_RANGE };

/* Decimal digits, optional spaces, one of units' suffixes. */
static int
parse_scaled(const char *s, const struct shim_config_unit *units,
	     uint64_t *out)
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
	for (const struct shim_config_unit *u = units; u->suffix; u++) {
		if (strcasecmp(s, u->suffix))
			continue;
		if (big || v > UINT64_MAX / u->mult)
			return NUM_RANGE;
		*out = v * u->mult;
		return NUM_OK;
	}
	return NUM_SYNTAX;
}

/* A SHIM_KEY_NUMBER value. */
static const char *
set_number(struct shim_config *cfg, const struct shim_config_key *key,
	   const char *value, char *why, size_t whylen)
{
	uint64_t v;
	int rc;

	rc = parse_scaled(value, key->units, &v);
	if (rc == NUM_SYNTAX && key->unit) {
		snprintf(why, whylen, "%s %s", key->range, key->unit);
		return why;
	}
	if (rc != NUM_OK || v < key->min || v > key->max ||
	    (key->multiple && v % key->multiple))
		return key->range;
	store(cfg, key, v);
	return NULL;
}

/* "log = stderr | syslog | /path". */
static const char *
set_log(struct shim_config *cfg, const struct shim_config_key *key,
	const char *value)
{
	if (!strcasecmp(value, "stderr")) {
		store(cfg, key, SHIM_LOG_TO_STDERR);
	} else if (!strcasecmp(value, "syslog")) {
		store(cfg, key, SHIM_LOG_TO_SYSLOG);
	} else if (value[0] == '/' && strlen(value) < sizeof(cfg->log_path)) {
		store(cfg, key, SHIM_LOG_TO_FILE);
		strcpy(cfg->log_path, value);
	} else {
		return key->range;
	}
	return NULL;
}

/* "no_placement = none | prog[,prog...]": numbers, or nfs for 100003. */
static const char *
set_progs(struct shim_config *cfg, const struct shim_config_key *key,
	  const char *value)
{
	uint32_t progs[SHIM_CONFIG_PROGS_MAX];
	uint32_t n = 0;
	const char *p = value;
	char *end;

	if (!strcasecmp(value, "none")) {
		store(cfg, key, 0);
		return NULL;
	}
	for (;;) {
		unsigned long long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncasecmp(p, "nfs", 3) && !isalnum((unsigned char)p[3])) {
			v = 100003;
			end = (char *)p + 3;
		} else {
			if (!isdigit((unsigned char)*p))
				return key->range;
			errno = 0;
			v = strtoull(p, &end, 0);
			if (errno || v == 0 || v > UINT32_MAX)
				return key->range;
		}
		if (n == SHIM_CONFIG_PROGS_MAX)
			return key->range;
		progs[n++] = (uint32_t)v;
		p = end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (*p++ != ',')
			return key->range;
	}
	memcpy(cfg->no_placement, progs, n * sizeof(progs[0]));
	store(cfg, key, n);
	return NULL;
}

const char *
config_key_set(struct shim_config *cfg, const struct shim_config_key *key,
	       const char *value, char *why, size_t whylen)
{
	bool b;

	switch (key->type) {
	case SHIM_KEY_BOOL:
		if (!parse_bool(value, &b))
			return key->range;
		store(cfg, key, b);
		return NULL;
	case SHIM_KEY_CHOICE:
		for (uint64_t v = 0; key->choices[v]; v++) {
			if (!strcasecmp(value, key->choices[v])) {
				store(cfg, key, v);
				return NULL;
			}
		}
		return key->range;
	case SHIM_KEY_NUMBER:
		return set_number(cfg, key, value, why, whylen);
	case SHIM_KEY_LOG:
		return set_log(cfg, key, value);
	case SHIM_KEY_PROGS:
		return set_progs(cfg, key, value);
	case SHIM_KEY_RULE:
	case SHIM_KEY_PORT_MAP:
		break;
	}
	return "not a single-valued key";
}

void
shim_config_init_defaults(struct shim_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (const struct shim_config_key *k = shim_config_keys; k->name; k++)
		if (!is_list(k))
			store(cfg, k, k->def);
}
