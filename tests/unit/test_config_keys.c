/*
 * Unit tests of config/: parsing, environment, search order, rules, port
 * maps and the logging sink.  argv[1] is rpcrdma-shim.conf(5), checked to
 * document every key and variable.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <config.h>	/* generated: SHIM_DEFAULT_* */
#include "check.h"
#include "common/log.h"
#include "config/shim_config.h"

#define CHECK_STR(got, want, ...)                                         \
	do {                                                              \
		const char *g_ = (got), *w_ = (want);                     \
		int same_ = g_ && w_ && !strcmp(g_, w_);                  \
		CHECK(same_, __VA_ARGS__);                                \
		if (!same_)                                               \
			printf("#   got  '%s'\n#   want '%s'\n",          \
			       g_ ? g_ : "(null)", w_ ? w_ : "(null)");   \
	} while (0)

#define SKIP(...)                                                         \
	do {                                                              \
		printf("ok %u - ", ++check_n);                            \
		printf(__VA_ARGS__);                                      \
		printf(" # SKIP\n");                                      \
	} while (0)

static char tmp[1024];	/* short enough for every path built in it */
static char conf_path[PATH_MAX];

/* ---- helpers ------------------------------------------------------------ */

static const char *
in_tmp(char *buf, const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmp, rel);
	return buf;
}

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		printf("Bail out! cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static char *
read_text(const char *path)
{
	static char buf[1 << 20];
	size_t n = 0;
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Parse text as a whole file into a fresh *cfg; returns the error count. */
static int
parse_text(struct shim_config *cfg, const char *text)
{
	write_text(conf_path, text);
	shim_config_init_defaults(cfg);
	return shim_config_parse_file(cfg, conf_path);
}

static int
parse_env1(struct shim_config *cfg, const char *entry)
{
	char *envp[] = { (char *)entry, NULL };

	return shim_config_parse_env(cfg, envp);
}

static const char *
msg(const struct shim_config *cfg, size_t i)
{
	return i < cfg->nmsgs ? cfg->msgs[i].text : "(no message)";
}

/* "<conf_path>:<tail>" */
static const char *
at_conf(const char *tail)
{
	static char buf[PATH_MAX + 4096];

	snprintf(buf, sizeof(buf), "%s:%s", conf_path, tail);
	return buf;
}

static const struct sockaddr *
sa(const char *addr, uint16_t port)
{
	static struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
	} else {
		printf("Bail out! bad test address %s\n", addr);
		exit(1);
	}
	return (const struct sockaddr *)&ss;
}

static enum shim_action
cli(const struct shim_config *cfg, uint32_t prog, uint32_t vers,
    const char *addr, uint16_t port)
{
	return shim_config_client_action(cfg, prog, vers,
					 addr ? sa(addr, port) : NULL, NULL);
}

static enum shim_action
srv(const struct shim_config *cfg, const char *addr, uint16_t port)
{
	return shim_config_server_action(cfg, sa(addr, port), NULL);
}

static uint64_t
field(const struct shim_config *cfg, size_t off, size_t size)
{
	const unsigned char *p = (const unsigned char *)cfg + off;
	uint8_t u8;
	uint32_t u32;
	uint64_t u64;

	switch (size) {
	case 1:
		memcpy(&u8, p, 1);
		return u8;
	case 4:
		memcpy(&u32, p, 4);
		return u32;
	default:
		memcpy(&u64, p, 8);
		return u64;
	}
}

#define FLD(name) offsetof(struct shim_config, name), \
	sizeof(((struct shim_config *)0)->name)

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

/*
 * Every RPCRDMA_SHIM_* variable read: SHIM_CONFIG_ENV_FILE, then one per
 * key, named by the library; NULL-terminated.
 */
static const char *const *
env_names(void)
{
	static char names[64][SHIM_CONFIG_ENV_NAME_MAX];
	static const char *list[65];
	size_t n = 0;

	list[n++] = SHIM_CONFIG_ENV_FILE;
	for (size_t i = 0; shim_config_keys[i].name && n < 64; i++, n++)
		list[n] = shim_config_env_name(&shim_config_keys[i], names[n],
					       sizeof(names[n]));
	list[n] = NULL;
	return list;
}

static bool
rpc_name_known(const char *name)
{
	struct rpcent ent, *res = NULL;
	char buf[1024];

	return !getrpcbyname_r(name, &ent, buf, sizeof(buf), &res) && res;
}

/* ---- defaults and names ----------------------------------------------- */

static void
test_defaults(void)
{
	struct shim_config c;

	shim_config_init_defaults(&c);
	CHECK(c.enable, "default enable = yes");
	CHECK_EQ_U(c.mode, SHIM_MODE_PREFER_RDMA, "default mode = prefer-rdma");
	CHECK_EQ_U(c.inline_send, SHIM_DEFAULT_INLINE_SIZE, "default inline_send");
	CHECK_EQ_U(c.inline_recv, SHIM_DEFAULT_INLINE_SIZE, "default inline_recv");
	CHECK_EQ_U(c.credits, 32, "default credits = 32");
	CHECK_EQ_U(c.connect_timeout_ms, SHIM_DEFAULT_CONNECT_TIMEOUT_MS,
		   "default connect_timeout");
	CHECK_EQ_U(c.negative_cache_s, 60, "default negative_cache = 60");
	CHECK_EQ_U(c.max_reply, 64u << 20, "default max_reply = 64M");
	CHECK_EQ_U(c.max_call, 1u << 30, "default max_call = 1G");
	CHECK(c.remote_invalidate, "default remote_invalidate = yes");
	CHECK_EQ_U(c.log_level, SHIM_LOG_INFO, "default log_level = info");
	CHECK_EQ_U(c.log_dest, SHIM_LOG_TO_STDERR, "default log = stderr");
	CHECK(!c.bad && c.n_errors == 0 && c.nrules == 0 && c.nport_maps == 0 &&
	      c.source[0] == '\0', "defaults: clean, no rules, no source");
	shim_config_free(&c);

	CHECK_STR(shim_config_mode_name(SHIM_MODE_REQUIRE_RDMA), "require-rdma",
		  "mode name");
	CHECK_STR(shim_config_action_name(SHIM_ACTION_TCP), "tcp", "action name");
	CHECK_STR(shim_config_log_level_name(SHIM_LOG_WARN), "warn",
		  "log level name");
}

static void
test_names(const char *man_path)
{
	const char *const *shim_config_env_names = env_names();
	size_t nkeys = 0, nenv = 0;
	bool all = true;
	char *man;

	while (shim_config_keys[nkeys].name)
		nkeys++;
	while (shim_config_env_names[nenv])
		nenv++;
	CHECK_EQ_U(nkeys, 15, "15 keys");
	CHECK_EQ_U(nenv, nkeys + 1, "one variable per key plus the file");
	CHECK_STR(shim_config_env_names[0], "RPCRDMA_SHIM_CONFIG",
		  "RPCRDMA_SHIM_CONFIG comes first");
	for (size_t i = 0; i < nkeys; i++) {
		char want[64];
		size_t j;

		snprintf(want, sizeof(want), "RPCRDMA_SHIM_%s",
			 shim_config_keys[i].name);
		for (j = strlen("RPCRDMA_SHIM_"); want[j]; j++)
			want[j] = (char)toupper((unsigned char)want[j]);
		for (j = 1; j < nenv && strcmp(shim_config_env_names[j], want); j++)
			;
		if (j == nenv) {
			printf("# no variable %s\n", want);
			all = false;
		}
	}
	CHECK(all, "every key has its RPCRDMA_SHIM_<KEY> variable");

	if (!man_path) {
		SKIP("man page: no path given");
		return;
	}
	man = strdup(read_text(man_path));
	CHECK(man && strstr(man, ".TH RPCRDMA-SHIM.CONF 5"), "man page %s read",
	      man_path);
	all = true;
	for (size_t i = 0; man && i < nkeys; i++) {
		char want[64];

		snprintf(want, sizeof(want), ".BI \"%s = \"",
			 shim_config_keys[i].name);
		if (!strstr(man, want)) {
			printf("# man page lacks %s\n", want);
			all = false;
		}
	}
	CHECK(all, "the man page has an entry for every key");
	all = true;
	for (size_t i = 0; man && i < nenv; i++) {
		if (!strstr(man, shim_config_env_names[i])) {
			printf("# man page lacks %s\n", shim_config_env_names[i]);
			all = false;
		}
	}
	CHECK(all, "the man page names every environment variable");
	free(man);
}

/* ---- file syntax -------------------------------------------------------- */

struct ok_case {
	const char *line;
	size_t off, size;
	uint64_t want;
};

static const struct ok_case ok_cases[] = {
	{ "enable = no", FLD(enable), 0 },
	{ "enable = yes", FLD(enable), 1 },
	{ "enable = false", FLD(enable), 0 },
	{ "enable = true", FLD(enable), 1 },
	{ "enable = off", FLD(enable), 0 },
	{ "enable = on", FLD(enable), 1 },
	{ "enable = 0", FLD(enable), 0 },
	{ "enable = 1", FLD(enable), 1 },
	{ "enable = NO", FLD(enable), 0 },
	{ "mode = require-rdma", FLD(mode), SHIM_MODE_REQUIRE_RDMA },
	{ "mode = tcp-only", FLD(mode), SHIM_MODE_TCP_ONLY },
	{ "mode = prefer-rdma", FLD(mode), SHIM_MODE_PREFER_RDMA },
	{ "mode = TCP-Only", FLD(mode), SHIM_MODE_TCP_ONLY },
	{ "inline_send = 1024", FLD(inline_send), 1024 },
	{ "inline_send = 262144", FLD(inline_send), 262144 },
	{ "inline_send = 8K", FLD(inline_send), 8192 },
	{ "inline_send = 8k", FLD(inline_send), 8192 },
	{ "inline_send = 16KiB", FLD(inline_send), 16384 },
	{ "inline_send = 2 K", FLD(inline_send), 2048 },
	{ "inline_send = 256K", FLD(inline_send), 262144 },
	{ "inline_send = 1K", FLD(inline_send), 1024 },
	{ "inline_recv = 1024", FLD(inline_recv), 1024 },
	{ "inline_recv = 256KiB", FLD(inline_recv), 262144 },
	{ "inline_recv = 3072", FLD(inline_recv), 3072 },
	{ "credits = 1", FLD(credits), 1 },
	{ "credits = 1024", FLD(credits), 1024 },
	{ "credits = 0128", FLD(credits), 128 },
	{ "connect_timeout = 100", FLD(connect_timeout_ms), 100 },
	{ "connect_timeout = 600000", FLD(connect_timeout_ms), 600000 },
	{ "connect_timeout = 250ms", FLD(connect_timeout_ms), 250 },
	{ "connect_timeout = 5s", FLD(connect_timeout_ms), 5000 },
	{ "connect_timeout = 600s", FLD(connect_timeout_ms), 600000 },
	{ "connect_timeout = 1 S", FLD(connect_timeout_ms), 1000 },
	{ "negative_cache = 0", FLD(negative_cache_s), 0 },
	{ "negative_cache = 86400", FLD(negative_cache_s), 86400 },
	{ "negative_cache = 30s", FLD(negative_cache_s), 30 },
	{ "negative_cache = 10m", FLD(negative_cache_s), 600 },
	{ "negative_cache = 1440m", FLD(negative_cache_s), 86400 },
	{ "max_reply = 4096", FLD(max_reply), 4096 },
	{ "max_reply = 4K", FLD(max_reply), 4096 },
	{ "max_reply = 1G", FLD(max_reply), 1u << 30 },
	{ "max_reply = 1GiB", FLD(max_reply), 1u << 30 },
	{ "max_reply = 1024MiB", FLD(max_reply), 1u << 30 },
	{ "max_reply = 3M", FLD(max_reply), 3u << 20 },
	{ "max_reply = 100000", FLD(max_reply), 100000 },
	{ "max_call = 4KiB", FLD(max_call), 4096 },
	{ "max_call = 1g", FLD(max_call), 1u << 30 },
	{ "write_chunk = 0", FLD(write_chunk), 0 },
	{ "write_chunk = 1M", FLD(write_chunk), 1u << 20 },
	{ "write_chunk = 1G", FLD(write_chunk), 1u << 30 },
	{ "max_call = 512m", FLD(max_call), 512u << 20 },
	{ "remote_invalidate = no", FLD(remote_invalidate), 0 },
	{ "remote_invalidate = on", FLD(remote_invalidate), 1 },
	{ "log_level = error", FLD(log_level), SHIM_LOG_ERROR },
	{ "log_level = warn", FLD(log_level), SHIM_LOG_WARN },
	{ "log_level = info", FLD(log_level), SHIM_LOG_INFO },
	{ "log_level = debug", FLD(log_level), SHIM_LOG_DEBUG },
	{ "log_level = DEBUG", FLD(log_level), SHIM_LOG_DEBUG },
	{ "log = syslog", FLD(log_dest), SHIM_LOG_TO_SYSLOG },
	{ "log = stderr", FLD(log_dest), SHIM_LOG_TO_STDERR },
	{ "log = /var/log/rpcrdma-shim.log", FLD(log_dest), SHIM_LOG_TO_FILE },
};

static void
test_valid_values(void)
{
	struct shim_config c;

	for (size_t i = 0; i < sizeof(ok_cases) / sizeof(ok_cases[0]); i++) {
		const struct ok_case *k = &ok_cases[i];
		int errs = parse_text(&c, k->line);
		uint64_t got = field(&c, k->off, k->size);

		CHECK(errs == 0 && !c.bad && got == k->want,
		      "'%s' gives %llu", k->line, (unsigned long long)k->want);
		if (errs || got != k->want)
			printf("#   errors %d (%s), got %llu\n", errs, msg(&c, 0),
			       (unsigned long long)got);
		shim_config_free(&c);
	}

	parse_text(&c, "log = /var/log/rpcrdma-shim.log\n");
	CHECK_STR(c.log_path, "/var/log/rpcrdma-shim.log", "log path kept");
	CHECK_STR(c.source, conf_path, "source names the file read");
	shim_config_free(&c);
}

struct bad_case {
	const char *line;
	const char *tail;	/* the message after "<file>:1: " */
	size_t off, size;	/* a field that must keep its default */
};

#define INLINE_RANGE "must be a multiple of 1024 from 1024 to 262144"
#define INLINE_SYNTAX INLINE_RANGE " (bytes, optional suffix K or KiB)"
#define TIMEOUT_RANGE "must be from 100 to 600000 milliseconds"
#define CACHE_RANGE "must be from 0 to 86400 seconds"
#define MAX_RANGE "must be from 4096 (4K) to 1073741824 (1G) bytes"
#define BOOL_ALLOWED "must be yes or no (or true/false, on/off, 1/0)"
#define RULE_ALLOWED "must be rdma or tcp, then any of: program P[,P...], " \
	"version V[-W], address A[/LEN], port N"
#define PORT_MAP_ALLOWED "must be TCP:RDMA, two ports from 1 to 65535"

static const struct bad_case bad_cases[] = {
	{ "enable = maybe", "1: enable = maybe: " BOOL_ALLOWED, FLD(enable) },
	{ "enable =", "1: enable = \"\": " BOOL_ALLOWED, FLD(enable) },
	{ "mode = fast", "1: mode = fast: must be prefer-rdma, require-rdma "
	  "or tcp-only", FLD(mode) },
	{ "mode = require_rdma", "1: mode = require_rdma: must be prefer-rdma, "
	  "require-rdma or tcp-only", FLD(mode) },
	{ "inline_send = 1000", "1: inline_send = 1000: " INLINE_RANGE,
	  FLD(inline_send) },
	{ "inline_send = 0", "1: inline_send = 0: " INLINE_RANGE,
	  FLD(inline_send) },
	{ "inline_send = 512", "1: inline_send = 512: " INLINE_RANGE,
	  FLD(inline_send) },
	{ "inline_send = 263168", "1: inline_send = 263168: " INLINE_RANGE,
	  FLD(inline_send) },
	{ "inline_send = 257K", "1: inline_send = 257K: " INLINE_RANGE,
	  FLD(inline_send) },
	{ "inline_send = 1M", "1: inline_send = 1M: " INLINE_SYNTAX,
	  FLD(inline_send) },
	{ "inline_send = 8KB", "1: inline_send = 8KB: " INLINE_SYNTAX,
	  FLD(inline_send) },
	{ "inline_send = -1024", "1: inline_send = -1024: " INLINE_SYNTAX,
	  FLD(inline_send) },
	{ "inline_send = 0x400", "1: inline_send = 0x400: " INLINE_SYNTAX,
	  FLD(inline_send) },
	{ "inline_send =", "1: inline_send = \"\": " INLINE_SYNTAX,
	  FLD(inline_send) },
	{ "inline_recv = 1500", "1: inline_recv = 1500: " INLINE_RANGE,
	  FLD(inline_recv) },
	{ "inline_recv = 300K", "1: inline_recv = 300K: " INLINE_RANGE,
	  FLD(inline_recv) },
	{ "credits = 0", "1: credits = 0: must be from 1 to 1024", FLD(credits) },
	{ "credits = 1025", "1: credits = 1025: must be from 1 to 1024",
	  FLD(credits) },
	{ "credits = many", "1: credits = many: must be from 1 to 1024",
	  FLD(credits) },
	{ "credits = 1K", "1: credits = 1K: must be from 1 to 1024",
	  FLD(credits) },
	{ "credits = 99999999999999999999999", "1: credits = "
	  "99999999999999999999999: must be from 1 to 1024", FLD(credits) },
	{ "connect_timeout = 99", "1: connect_timeout = 99: " TIMEOUT_RANGE,
	  FLD(connect_timeout_ms) },
	{ "connect_timeout = 600001", "1: connect_timeout = 600001: "
	  TIMEOUT_RANGE, FLD(connect_timeout_ms) },
	{ "connect_timeout = 601s", "1: connect_timeout = 601s: " TIMEOUT_RANGE,
	  FLD(connect_timeout_ms) },
	{ "connect_timeout = 0.5s", "1: connect_timeout = 0.5s: " TIMEOUT_RANGE
	  " (optional suffix ms or s)", FLD(connect_timeout_ms) },
	{ "connect_timeout = 1m", "1: connect_timeout = 1m: " TIMEOUT_RANGE
	  " (optional suffix ms or s)", FLD(connect_timeout_ms) },
	{ "negative_cache = 86401", "1: negative_cache = 86401: " CACHE_RANGE,
	  FLD(negative_cache_s) },
	{ "negative_cache = 1441m", "1: negative_cache = 1441m: " CACHE_RANGE,
	  FLD(negative_cache_s) },
	{ "negative_cache = 1h", "1: negative_cache = 1h: " CACHE_RANGE
	  " (optional suffix s or m)", FLD(negative_cache_s) },
	{ "negative_cache = -1", "1: negative_cache = -1: " CACHE_RANGE
	  " (optional suffix s or m)", FLD(negative_cache_s) },
	{ "max_reply = 4095", "1: max_reply = 4095: " MAX_RANGE, FLD(max_reply) },
	{ "max_reply = 3K", "1: max_reply = 3K: " MAX_RANGE, FLD(max_reply) },
	{ "max_reply = 2G", "1: max_reply = 2G: " MAX_RANGE, FLD(max_reply) },
	{ "max_reply = 1025M", "1: max_reply = 1025M: " MAX_RANGE,
	  FLD(max_reply) },
	{ "max_reply = 99999999999999G", "1: max_reply = 99999999999999G: "
	  MAX_RANGE, FLD(max_reply) },
	{ "max_reply = 1T", "1: max_reply = 1T: " MAX_RANGE " (optional suffix "
	  "K, M, G, KiB, MiB or GiB)", FLD(max_reply) },
	{ "max_call = 1K", "1: max_call = 1K: " MAX_RANGE, FLD(max_call) },
	{ "max_call = 4 MB", "1: max_call = 4 MB: " MAX_RANGE " (optional "
	  "suffix K, M, G, KiB, MiB or GiB)", FLD(max_call) },
	{ "remote_invalidate = sometimes", "1: remote_invalidate = sometimes: "
	  BOOL_ALLOWED, FLD(remote_invalidate) },
	{ "log_level = verbose", "1: log_level = verbose: must be error, warn, "
	  "info or debug", FLD(log_level) },
	{ "log_level = warning", "1: log_level = warning: must be error, warn, "
	  "info or debug", FLD(log_level) },
	{ "log = shim.log", "1: log = shim.log: must be stderr, syslog or an "
	  "absolute file path", FLD(log_dest) },
	{ "Inline_Send = 1000", "1: Inline_Send = 1000: " INLINE_RANGE,
	  FLD(inline_send) },
	{ "port_map = 2049", "1: port_map = 2049: " PORT_MAP_ALLOWED,
	  FLD(nport_maps) },
	{ "port_map = 0:20049", "1: port_map = 0:20049: " PORT_MAP_ALLOWED,
	  FLD(nport_maps) },
	{ "port_map = 2049:65536", "1: port_map = 2049:65536: "
	  PORT_MAP_ALLOWED, FLD(nport_maps) },
	{ "port_map = nfs:nfsrdma", "1: port_map = nfs:nfsrdma: "
	  PORT_MAP_ALLOWED, FLD(nport_maps) },
	{ "port_map = 2049:20049:1", "1: port_map = 2049:20049:1: "
	  PORT_MAP_ALLOWED, FLD(nport_maps) },
	{ "port_map = 2049:", "1: port_map = 2049:: " PORT_MAP_ALLOWED,
	  FLD(nport_maps) },
	{ "rule =", "1: rule = \"\": " RULE_ALLOWED, FLD(nrules) },
	{ "rule = udp", "1: rule = udp: " RULE_ALLOWED, FLD(nrules) },
	{ "rule = program 100003", "1: rule = program 100003: " RULE_ALLOWED,
	  FLD(nrules) },
	{ "rule = tcp host 10.0.0.1", "1: rule = tcp host 10.0.0.1: unknown "
	  "criterion 'host' (program, version, address or port)", FLD(nrules) },
	{ "rule = tcp program", "1: rule = tcp program: 'program' needs a value",
	  FLD(nrules) },
	{ "rule = tcp program no-such-program-x", "1: rule = tcp program "
	  "no-such-program-x: program 'no-such-program-x' is neither a number "
	  "nor a name in /etc/rpc", FLD(nrules) },
	{ "rule = tcp program 1,,2", "1: rule = tcp program 1,,2: program list "
	  "'1,,2' has an empty entry", FLD(nrules) },
	{ "rule = tcp program 4294967296", "1: rule = tcp program 4294967296: "
	  "program '4294967296' is neither a number nor a name in /etc/rpc",
	  FLD(nrules) },
	{ "rule = tcp program 1 program 2", "1: rule = tcp program 1 program 2: "
	  "'program' given twice", FLD(nrules) },
	{ "rule = tcp version 4-2", "1: rule = tcp version 4-2: version '4-2' "
	  "must be V or V-W, numbers with V <= W", FLD(nrules) },
	{ "rule = tcp version three", "1: rule = tcp version three: version "
	  "'three' must be V or V-W, numbers with V <= W", FLD(nrules) },
	{ "rule = tcp address 10.0.0.0/33", "1: rule = tcp address 10.0.0.0/33: "
	  "address '10.0.0.0/33' must be an IPv4 or IPv6 address with an "
	  "optional /LEN (up to 32 or 128)", FLD(nrules) },
	{ "rule = tcp address 300.1.1.1", "1: rule = tcp address 300.1.1.1: "
	  "address '300.1.1.1' must be an IPv4 or IPv6 address with an "
	  "optional /LEN (up to 32 or 128)", FLD(nrules) },
	{ "rule = tcp address fe80::/129", "1: rule = tcp address fe80::/129: "
	  "address 'fe80::/129' must be an IPv4 or IPv6 address with an "
	  "optional /LEN (up to 32 or 128)", FLD(nrules) },
	{ "rule = tcp port 0", "1: rule = tcp port 0: port '0' must be from 1 "
	  "to 65535", FLD(nrules) },
	{ "rule = tcp port 65536", "1: rule = tcp port 65536: port '65536' must "
	  "be from 1 to 65535", FLD(nrules) },
	{ "rule = tcp port 1 port 2", "1: rule = tcp port 1 port 2: 'port' "
	  "given twice", FLD(nrules) },
	{ "just some words", "1: just some words: not a 'key = value' line",
	  FLD(nrules) },
	{ "= 5", "1: = 5: missing the key before '='", FLD(nrules) },
	{ "credit = 5", "1: credit = 5: unknown key (known: enable, mode, "
	  "inline_send, inline_recv, credits, connect_timeout, negative_cache, "
	  "max_reply, max_call, write_chunk, remote_invalidate, log_level, log, "
	  "rule, port_map)", FLD(credits) },
	{ "write_chunk = 2G", "1: write_chunk = 2G: must be from 0 (none) to "
	  "1073741824 (1G) bytes", FLD(write_chunk) },
};

static void
test_bad_values(void)
{
	struct shim_config c, d;

	shim_config_init_defaults(&d);
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *k = &bad_cases[i];
		int errs = parse_text(&c, k->line);

		CHECK(errs == 1 && c.bad && c.n_errors == 1 && c.nmsgs == 1 &&
		      c.msgs[0].level == SHIM_LOG_ERROR &&
		      !strcmp(msg(&c, 0), at_conf(k->tail)) &&
		      field(&c, k->off, k->size) == field(&d, k->off, k->size),
		      "'%s': one error, value unchanged", k->line);
		if (errs != 1 || strcmp(msg(&c, 0), at_conf(k->tail)))
			printf("#   errors %d\n#   got  '%s'\n#   want '%s'\n",
			       errs, msg(&c, 0), at_conf(k->tail));
		shim_config_free(&c);
	}
}

static void
test_syntax(void)
{
	struct shim_config c;
	int errs;

	errs = parse_text(&c,
		"# a comment line\n"
		"\n"
		"   \t\n"
		"credits = 8   # eight, after a value\n"
		"  CONNECT_TIMEOUT=2s\n"
		"Mode\t=\ttcp-only\t\n"
		"inline_send = 8K\r\n"
		"  # indented comment = not a key\n"
		"max_call=1M#no space before the comment\n");
	CHECK(errs == 0 && !c.bad, "comments, blanks, spaces, CRLF, case: no error");
	CHECK_EQ_U(c.credits, 8, "value before a comment");
	CHECK_EQ_U(c.connect_timeout_ms, 2000, "key in upper case, no spaces");
	CHECK_EQ_U(c.mode, SHIM_MODE_TCP_ONLY, "tabs around tokens");
	CHECK_EQ_U(c.inline_send, 8192, "CRLF line end");
	CHECK_EQ_U(c.max_call, 1u << 20, "comment right after a value");
	shim_config_free(&c);

	errs = parse_text(&c, "credits = 8\ncredits = 16\n");
	CHECK(errs == 0 && c.credits == 16, "a later line overrides an earlier one");
	shim_config_free(&c);

	errs = parse_text(&c, "\xef\xbb\xbf" "credits = 9\n");
	CHECK(errs == 0 && c.credits == 9, "a UTF-8 byte order mark is skipped");
	shim_config_free(&c);

	errs = parse_text(&c, "credits = 9");
	CHECK(errs == 0 && c.credits == 9, "last line without a newline");
	shim_config_free(&c);

	errs = parse_text(&c, "");
	CHECK(errs == 0 && !c.bad, "an empty file is fine");
	shim_config_free(&c);
}

static void
test_many_errors(void)
{
	struct shim_config c;
	char big[64 * 100];
	size_t off = 0;
	int errs;

	errs = parse_text(&c,
		"credits = 16\n"
		"mode = fast\n"
		"inline_send = 1000\n"
		"# fine\n"
		"inline_recv = 8K\n"
		"bogus\n"
		"colour = blue\n"
		"rule = tcp port 2049\n");
	CHECK_EQ_U(errs, 4, "four bad lines, four errors");
	CHECK(c.bad && c.n_errors == 4 && c.nmsgs == 4, "config marked bad, "
	      "every message kept");
	CHECK_STR(msg(&c, 0), at_conf("2: mode = fast: must be prefer-rdma, "
		  "require-rdma or tcp-only"), "first message: line 2");
	CHECK_STR(msg(&c, 1), at_conf("3: inline_send = 1000: " INLINE_RANGE),
		  "second message: line 3");
	CHECK_STR(msg(&c, 2), at_conf("6: bogus: not a 'key = value' line"),
		  "third message: line 6");
	CHECK(!strncmp(msg(&c, 3), at_conf("7: colour = blue: unknown key"),
		       strlen(at_conf("7: colour = blue: unknown key"))),
	      "fourth message: line 7");
	CHECK(c.credits == 16 && c.inline_recv == 8192 && c.nrules == 1,
	      "good lines around bad ones still apply");
	CHECK_EQ_U(c.mode, SHIM_MODE_PREFER_RDMA, "a bad mode leaves the default");
	shim_config_free(&c);

	for (int i = 0; i < 100; i++)
		off += (size_t)snprintf(big + off, sizeof(big) - off,
					"credits = %d\n", 2000 + i);
	errs = parse_text(&c, big);
	CHECK(errs == 100 && c.n_errors == 100, "100 errors counted");
	CHECK(c.nmsgs == SHIM_CONFIG_MAX_MESSAGES &&
	      c.msgs_dropped == 100 - SHIM_CONFIG_MAX_MESSAGES,
	      "%d messages kept, the rest counted", SHIM_CONFIG_MAX_MESSAGES);
	shim_config_free(&c);
	CHECK(c.msgs == NULL && c.nmsgs == 0 && c.credits == 32,
	      "free leaves the defaults");

	shim_config_init_defaults(&c);
	errs = shim_config_parse_file(&c, in_tmp(big, "no-such.conf"));
	CHECK(errs == 1 && c.bad, "parse_file of a missing file is an error");
	snprintf(big, sizeof(big), "%s/no-such.conf: cannot open: No such file "
		 "or directory", tmp);
	CHECK_STR(msg(&c, 0), big, "its message");
	shim_config_free(&c);

	shim_config_init_defaults(&c);
	errs = shim_config_parse_file(&c, tmp);
	snprintf(big, sizeof(big), "%s: is a directory", tmp);
	CHECK(errs == 1 && c.bad, "a directory is an error");
	CHECK_STR(msg(&c, 0), big, "its message");
	shim_config_free(&c);

	{
		FILE *f = fopen(conf_path, "w");

		fwrite("credits = 4\0junk\ncredits = 5\n", 1, 29, f);
		fclose(f);
	}
	shim_config_init_defaults(&c);
	errs = shim_config_parse_file(&c, conf_path);
	CHECK(errs == 1 && c.credits == 5, "a NUL byte spoils only its line");
	CHECK_STR(msg(&c, 0), at_conf("1: the line holds a NUL byte (not a text "
		  "file?)"), "its message");
	shim_config_free(&c);
}

/* ---- environment -------------------------------------------------------- */

struct env_case {
	const char *entry;
	size_t off, size;
	uint64_t want;
};

static const struct env_case env_cases[] = {
	{ "RPCRDMA_SHIM_ENABLE=no", FLD(enable), 0 },
	{ "RPCRDMA_SHIM_MODE=tcp-only", FLD(mode), SHIM_MODE_TCP_ONLY },
	{ "RPCRDMA_SHIM_INLINE_SEND=8K", FLD(inline_send), 8192 },
	{ "RPCRDMA_SHIM_INLINE_RECV= 16KiB ", FLD(inline_recv), 16384 },
	{ "RPCRDMA_SHIM_CREDITS=64", FLD(credits), 64 },
	{ "RPCRDMA_SHIM_CONNECT_TIMEOUT=2s", FLD(connect_timeout_ms), 2000 },
	{ "RPCRDMA_SHIM_NEGATIVE_CACHE=5m", FLD(negative_cache_s), 300 },
	{ "RPCRDMA_SHIM_MAX_REPLY=1M", FLD(max_reply), 1u << 20 },
	{ "RPCRDMA_SHIM_MAX_CALL=2G", FLD(max_reply), 64u << 20 },
	{ "RPCRDMA_SHIM_MAX_CALL=1G", FLD(max_call), 1u << 30 },
	{ "RPCRDMA_SHIM_WRITE_CHUNK=2M", FLD(write_chunk), 2u << 20 },
	{ "RPCRDMA_SHIM_REMOTE_INVALIDATE=off", FLD(remote_invalidate), 0 },
	{ "RPCRDMA_SHIM_LOG_LEVEL=debug", FLD(log_level), SHIM_LOG_DEBUG },
	{ "RPCRDMA_SHIM_LOG=syslog", FLD(log_dest), SHIM_LOG_TO_SYSLOG },
	{ "RPCRDMA_SHIM_RULE=tcp program 100003; rdma address 10.0.0.0/8;",
	  FLD(nrules), 2 },
	{ "RPCRDMA_SHIM_PORT_MAP=2049:20049, 111:1111", FLD(nport_maps), 2 },
	{ "RPCRDMA_SHIM_CONFIG=/nowhere", FLD(n_errors), 0 },
	{ "RPCRDMA_SHIM_CREDITS=", FLD(credits), 32 },
	{ "PATH=/usr/bin", FLD(n_errors), 0 },
	{ "RPCRDMA_SHIMX=1", FLD(n_errors), 0 },
};

static void
test_env(void)
{
	struct shim_config c;
	int errs;

	for (size_t i = 0; i < sizeof(env_cases) / sizeof(env_cases[0]); i++) {
		const struct env_case *k = &env_cases[i];
		uint64_t got;

		shim_config_init_defaults(&c);
		errs = parse_env1(&c, k->entry);
		got = field(&c, k->off, k->size);
		CHECK(got == k->want && (errs == 0) == !strstr(k->entry, "=2G"),
		      "env %s gives %llu", k->entry, (unsigned long long)k->want);
		if (got != k->want)
			printf("#   got %llu (%s)\n", (unsigned long long)got,
			       msg(&c, 0));
		shim_config_free(&c);
	}

	/* The environment wins over the file, whichever is parsed first. */
	parse_text(&c, "credits = 8\nmode = require-rdma\n");
	parse_env1(&c, "RPCRDMA_SHIM_CREDITS=64");
	CHECK(c.credits == 64 && c.mode == SHIM_MODE_REQUIRE_RDMA,
	      "env after file: env wins, other keys from the file");
	shim_config_free(&c);

	shim_config_init_defaults(&c);
	parse_env1(&c, "RPCRDMA_SHIM_CREDITS=64");
	write_text(conf_path, "credits = 8\ncredits = 0\n");
	errs = shim_config_parse_file(&c, conf_path);
	CHECK_EQ_U(c.credits, 64, "env before file: env still wins");
	CHECK(errs == 1 && !strcmp(msg(&c, 0), at_conf("2: credits = 0: must be "
	      "from 1 to 1024")), "a bad file value is reported even when the "
	      "environment sets the key");
	shim_config_free(&c);

	parse_text(&c, "mode = tcp-only\n");
	errs = parse_env1(&c, "RPCRDMA_SHIM_MODE=fastest");
	CHECK(errs == 1 && c.bad && c.mode == SHIM_MODE_TCP_ONLY,
	      "a bad mode in the environment keeps the earlier one");
	CHECK_STR(msg(&c, 0), "environment: RPCRDMA_SHIM_MODE=fastest: must be "
		  "prefer-rdma, require-rdma or tcp-only", "its message");
	shim_config_free(&c);

	shim_config_init_defaults(&c);
	errs = parse_env1(&c, "RPCRDMA_SHIM_CREDITS=0");
	CHECK(errs == 1 && c.bad && c.credits == 32, "env credits=0: error");
	CHECK_STR(msg(&c, 0), "environment: RPCRDMA_SHIM_CREDITS=0: must be from "
		  "1 to 1024", "env message names the variable and the value");
	shim_config_free(&c);

	shim_config_init_defaults(&c);
	errs = parse_env1(&c, "RPCRDMA_SHIM_INLINE_SEND=1000");
	CHECK_STR(msg(&c, 0), "environment: RPCRDMA_SHIM_INLINE_SEND=1000: "
		  INLINE_RANGE, "env inline_send=1000 message");
	shim_config_free(&c);

	shim_config_init_defaults(&c);
	errs = parse_env1(&c, "RPCRDMA_SHIM_CREDIT=5");
	CHECK(errs == 1 && c.bad, "unknown RPCRDMA_SHIM_ variable: error");
	CHECK(!strncmp(msg(&c, 0), "environment: RPCRDMA_SHIM_CREDIT=5: unknown "
		       "variable (known: RPCRDMA_SHIM_CONFIG, RPCRDMA_SHIM_ENABLE, ",
		       strlen("environment: RPCRDMA_SHIM_CREDIT=5: unknown "
			      "variable (known: RPCRDMA_SHIM_CONFIG, "
			      "RPCRDMA_SHIM_ENABLE, ")) &&
	      strstr(msg(&c, 0), " RPCRDMA_SHIM_CREDITS,") &&
	      strstr(msg(&c, 0), "RPCRDMA_SHIM_PORT_MAP)"),
	      "its message lists the known names");
	shim_config_free(&c);

	shim_config_init_defaults(&c);
	errs = parse_env1(&c, "RPCRDMA_SHIM_credits=5");
	CHECK(errs == 1 && c.credits == 32, "variable names are upper case only");
	shim_config_free(&c);

	shim_config_init_defaults(&c);
	{
		char *envp[] = { "RPCRDMA_SHIM_CREDITS=7", "HOME=/x",
				 "RPCRDMA_SHIM_CREDITS=9", NULL };

		errs = shim_config_parse_env(&c, envp);
	}
	CHECK(errs == 0 && c.credits == 7, "a repeated variable: the first "
	      "counts, as for getenv");
	shim_config_free(&c);

	shim_config_init_defaults(&c);
	errs = parse_env1(&c, "RPCRDMA_SHIM_RULE=tcp port 0;rdma; tcp bogus");
	CHECK(errs == 2 && c.nrules == 1 && c.rules[0].action == SHIM_ACTION_RDMA,
	      "env rule list: bad items reported, good ones kept");
	CHECK_STR(msg(&c, 0), "environment: RPCRDMA_SHIM_RULE=tcp port 0: port "
		  "'0' must be from 1 to 65535", "env rule message names the item");
	CHECK_STR(c.rules[0].origin, "environment", "env rule origin");
	shim_config_free(&c);

	shim_config_init_defaults(&c);
	errs = parse_env1(&c, "RPCRDMA_SHIM_PORT_MAP=2049:20049,111");
	CHECK(errs == 1 && c.nport_maps == 1, "env port map list: bad item "
	      "reported, good one kept");
	CHECK_STR(msg(&c, 0), "environment: RPCRDMA_SHIM_PORT_MAP=111: "
		  PORT_MAP_ALLOWED, "env port map message names the item");
	shim_config_free(&c);

	/* Lists: the environment's go first, whichever is parsed first. */
	for (int order = 0; order < 2; order++) {
		const struct shim_rule *why = NULL;

		shim_config_init_defaults(&c);
		write_text(conf_path, "rule = rdma address 10.0.0.0/8\n"
			   "port_map = 2049:20049\n");
		if (order)
			shim_config_parse_file(&c, conf_path);
		parse_env1(&c, "RPCRDMA_SHIM_RULE=tcp address 10.1.0.0/16; "
			   "tcp port 9");
		parse_env1(&c, "RPCRDMA_SHIM_PORT_MAP=2049:30049");
		if (!order)
			shim_config_parse_file(&c, conf_path);
		CHECK(c.nrules == 3 && !strcmp(c.rules[0].origin, "environment") &&
		      !strcmp(c.rules[1].text, "tcp port 9") &&
		      !strcmp(c.rules[2].origin, at_conf("1")),
		      "env rules before file rules (env parsed %s)",
		      order ? "second" : "first");
		CHECK(shim_config_client_action(&c, 100003, 3, sa("10.1.2.3", 2049),
						&why) == SHIM_ACTION_TCP &&
		      why == &c.rules[0], "env rule wins by first match (%s)",
		      order ? "second" : "first");
		CHECK_EQ_U(shim_config_rdma_port(&c, 2049), 30049,
			   "env port map wins (%s)", order ? "second" : "first");
		shim_config_free(&c);
	}
}

/* ---- rules and port maps --------------------------------------------------- */

static void
test_rules_basic(void)
{
	struct shim_config c;
	const struct shim_rule *why = NULL;

	shim_config_init_defaults(&c);
	CHECK(shim_config_client_action(&c, 100003, 3, sa("10.0.0.1", 2049), &why) ==
	      SHIM_ACTION_RDMA && why && !strcmp(why->origin, "default") &&
	      !strcmp(why->text, "rdma"), "no rules: rdma, by the default rule");
	CHECK(shim_config_client_action(&c, 100000, 4, sa("10.0.0.1", 111), &why) ==
	      SHIM_ACTION_TCP && why && !strcmp(why->origin, "built-in") &&
	      !strcmp(why->text, "tcp program 100000"),
	      "rpcbind: tcp, by the built-in rule");
	CHECK_EQ_U(cli(&c, 100000, 2, NULL, 0), SHIM_ACTION_TCP,
		   "rpcbind without a peer address: tcp");
	CHECK(shim_config_server_action(&c, sa("0.0.0.0", 111), &why) ==
	      SHIM_ACTION_RDMA && !strcmp(why->origin, "default"),
	      "server on port 111: the built-in program rule does not apply");
	CHECK_EQ_U(shim_config_client_action(&c, 1, 1, NULL, NULL),
		   SHIM_ACTION_RDMA, "why may be NULL");
	shim_config_free(&c);

	parse_text(&c, "rule = rdma program 100000\n");
	CHECK(shim_config_client_action(&c, 100000, 4, sa("10.0.0.1", 111), &why) ==
	      SHIM_ACTION_RDMA && why == &c.rules[0] &&
	      !strcmp(why->origin, at_conf("1")) &&
	      !strcmp(why->text, "rdma program 100000"),
	      "a user rule overrides the built-in rpcbind rule");
	shim_config_free(&c);

	parse_text(&c, "rule = rdma address 10.0.0.0/8\n");
	CHECK_EQ_U(cli(&c, 100000, 4, "10.1.1.1", 111), SHIM_ACTION_RDMA,
		   "a broader user rule also comes before the built-in one");
	CHECK_EQ_U(cli(&c, 100000, 4, "192.168.1.1", 111), SHIM_ACTION_TCP,
		   "outside it, the built-in rule still keeps rpcbind on tcp");
	shim_config_free(&c);

	parse_text(&c, "rule = tcp\n");
	CHECK_EQ_U(cli(&c, 100003, 3, "10.1.1.1", 2049), SHIM_ACTION_TCP,
		   "a rule without criteria matches everything");
	CHECK_EQ_U(srv(&c, "::", 2049), SHIM_ACTION_TCP,
		   "... on the server side too");
	shim_config_free(&c);

	parse_text(&c, "rule = rdma address 10.0.0.0/8\n"
		       "rule = tcp address 10.1.0.0/16\n");
	CHECK(shim_config_client_action(&c, 100003, 3, sa("10.1.1.1", 2049), &why) ==
	      SHIM_ACTION_RDMA && why == &c.rules[0], "first match wins");
	shim_config_free(&c);

	parse_text(&c, "rule = tcp address 10.1.0.0/16\n"
		       "rule = rdma address 10.0.0.0/8\n"
		       "rule = tcp\n");
	CHECK_EQ_U(cli(&c, 100003, 3, "10.1.1.1", 2049), SHIM_ACTION_TCP,
		   "ordered rules: the narrow one first");
	CHECK_EQ_U(cli(&c, 100003, 3, "10.2.1.1", 2049), SHIM_ACTION_RDMA,
		   "ordered rules: the second");
	CHECK_EQ_U(cli(&c, 100003, 3, "11.0.0.1", 2049), SHIM_ACTION_TCP,
		   "ordered rules: the catch-all");
	shim_config_free(&c);
}

static void
test_rules_criteria(void)
{
	struct shim_config c;
	int errs;

	errs = parse_text(&c, "rule = tcp program 100003,100005\n");
	CHECK(errs == 0 && c.nrules == 1 && c.rules[0].nprogs == 2,
	      "program list parsed");
	CHECK_EQ_U(cli(&c, 100005, 3, "10.0.0.1", 635), SHIM_ACTION_TCP,
		   "program list: second entry matches");
	CHECK_EQ_U(cli(&c, 100021, 4, "10.0.0.1", 4045), SHIM_ACTION_RDMA,
		   "program list: others do not");
	shim_config_free(&c);

	errs = parse_text(&c, "rule = tcp program 100003 , 100005,  100021\n");
	CHECK(errs == 0 && c.rules[0].nprogs == 3 && c.rules[0].progs[2] == 100021,
	      "program list with spaces around commas");
	CHECK_STR(c.rules[0].text, "tcp program 100003 , 100005,  100021",
		  "rule text kept as written");
	shim_config_free(&c);

	errs = parse_text(&c, "rule = tcp program 0x186A3\n");
	CHECK(errs == 0 && c.rules[0].progs[0] == 100003, "program in hex");
	shim_config_free(&c);

	if (rpc_name_known("nfs") && rpc_name_known("mountd") &&
	    rpc_name_known("portmapper")) {
		errs = parse_text(&c, "rule = tcp program nfs,mountd\n"
				      "rule = rdma program portmapper\n");
		CHECK(errs == 0 && c.rules[0].progs[0] == 100003 &&
		      c.rules[0].progs[1] == 100005, "program names from /etc/rpc");
		CHECK_EQ_U(cli(&c, 100005, 3, "10.0.0.1", 635), SHIM_ACTION_TCP,
			   "program by name matches");
		CHECK_EQ_U(cli(&c, 100000, 4, "10.0.0.1", 111), SHIM_ACTION_RDMA,
			   "portmapper by name overrides the built-in rule");
		shim_config_free(&c);
	} else {
		SKIP("program names from /etc/rpc: no /etc/rpc entries");
		SKIP("program by name matches");
		SKIP("portmapper by name overrides the built-in rule");
	}

	errs = parse_text(&c, "rule = tcp program 100003 version 2-3\n"
			      "rule = rdma version 4\n"
			      "rule = tcp\n");
	CHECK(errs == 0 && c.rules[0].has_vers && c.rules[0].vers_min == 2 &&
	      c.rules[0].vers_max == 3, "version range parsed");
	CHECK_EQ_U(cli(&c, 100003, 2, "10.0.0.1", 2049), SHIM_ACTION_TCP,
		   "version range: low end");
	CHECK_EQ_U(cli(&c, 100003, 3, "10.0.0.1", 2049), SHIM_ACTION_TCP,
		   "version range: high end");
	CHECK_EQ_U(cli(&c, 100003, 4, "10.0.0.1", 2049), SHIM_ACTION_RDMA,
		   "single version");
	CHECK_EQ_U(cli(&c, 100003, 1, "10.0.0.1", 2049), SHIM_ACTION_TCP,
		   "outside both: the catch-all");
	shim_config_free(&c);

	parse_text(&c, "rule = tcp address 192.168.0.0/16\n"
		       "rule = tcp address 172.16.0.0/12\n"
		       "rule = tcp address 10.9.8.7\n"
		       "rule = tcp address fd00::/8\n"
		       "rule = tcp address 2001:db8::1\n");
	CHECK_EQ_U(cli(&c, 1, 1, "192.168.5.5", 1), SHIM_ACTION_TCP,
		   "IPv4 /16: inside");
	CHECK_EQ_U(cli(&c, 1, 1, "192.169.0.1", 1), SHIM_ACTION_RDMA,
		   "IPv4 /16: outside");
	CHECK_EQ_U(cli(&c, 1, 1, "172.31.255.255", 1), SHIM_ACTION_TCP,
		   "IPv4 /12: last address inside");
	CHECK_EQ_U(cli(&c, 1, 1, "172.32.0.0", 1), SHIM_ACTION_RDMA,
		   "IPv4 /12: first address outside");
	CHECK_EQ_U(cli(&c, 1, 1, "10.9.8.7", 1), SHIM_ACTION_TCP,
		   "IPv4 without a length: that host");
	CHECK_EQ_U(cli(&c, 1, 1, "10.9.8.6", 1), SHIM_ACTION_RDMA,
		   "IPv4 without a length: not its neighbour");
	CHECK_EQ_U(cli(&c, 1, 1, "fd12:3456::1", 1), SHIM_ACTION_TCP,
		   "IPv6 /8: inside");
	CHECK_EQ_U(cli(&c, 1, 1, "fe80::1", 1), SHIM_ACTION_RDMA,
		   "IPv6 /8: outside");
	CHECK_EQ_U(cli(&c, 1, 1, "2001:db8::1", 1), SHIM_ACTION_TCP,
		   "IPv6 without a length: that host");
	CHECK_EQ_U(cli(&c, 1, 1, "2001:db8::2", 1), SHIM_ACTION_RDMA,
		   "IPv6 without a length: not another");
	CHECK_EQ_U(cli(&c, 1, 1, "::ffff:192.168.1.1", 1), SHIM_ACTION_TCP,
		   "an IPv4-mapped peer matches an IPv4 rule");
	CHECK_EQ_U(cli(&c, 1, 1, NULL, 0), SHIM_ACTION_RDMA,
		   "no peer address: address rules do not match");
	shim_config_free(&c);

	parse_text(&c, "rule = tcp address ::ffff:10.0.0.0/104\n"
		       "rule = tcp address 0.0.0.0/0\n");
	CHECK(c.rules[0].family == AF_INET && c.rules[0].prefix_len == 8,
	      "an IPv4-mapped rule is kept as IPv4 /8");
	CHECK_EQ_U(cli(&c, 1, 1, "10.1.1.1", 1), SHIM_ACTION_TCP,
		   "... and matches an IPv4 peer");
	CHECK_EQ_U(cli(&c, 1, 1, "8.8.8.8", 1), SHIM_ACTION_TCP,
		   "0.0.0.0/0 matches every IPv4 peer");
	CHECK_EQ_U(cli(&c, 1, 1, "fe80::1", 1), SHIM_ACTION_RDMA,
		   "... but no IPv6 peer");
	shim_config_free(&c);

	parse_text(&c, "rule = tcp port 2049\n");
	CHECK_EQ_U(cli(&c, 1, 1, "10.0.0.1", 2049), SHIM_ACTION_TCP, "port matches");
	CHECK_EQ_U(cli(&c, 1, 1, "fe80::1", 2049), SHIM_ACTION_TCP,
		   "port matches over IPv6");
	CHECK_EQ_U(cli(&c, 1, 1, "10.0.0.1", 2050), SHIM_ACTION_RDMA,
		   "other port does not");
	shim_config_free(&c);

	errs = parse_text(&c, "rule = TCP Port 2049 address 10.0.0.0/8 "
			      "PROGRAM 100003 version 3\n");
	CHECK(errs == 0, "criteria in any order and any case");
	CHECK_EQ_U(cli(&c, 100003, 3, "10.0.0.1", 2049), SHIM_ACTION_TCP,
		   "combined: all criteria match");
	CHECK_EQ_U(cli(&c, 100005, 3, "10.0.0.1", 2049), SHIM_ACTION_RDMA,
		   "combined: other program");
	CHECK_EQ_U(cli(&c, 100003, 4, "10.0.0.1", 2049), SHIM_ACTION_RDMA,
		   "combined: other version");
	CHECK_EQ_U(cli(&c, 100003, 3, "11.0.0.1", 2049), SHIM_ACTION_RDMA,
		   "combined: other address");
	CHECK_EQ_U(cli(&c, 100003, 3, "10.0.0.1", 2050), SHIM_ACTION_RDMA,
		   "combined: other port");
	shim_config_free(&c);
}

static void
test_rules_server(void)
{
	struct shim_config c;
	const struct shim_rule *why = NULL;

	parse_text(&c, "rule = tcp program 100003\n"
		       "rule = tcp version 3\n"
		       "rule = rdma program 100003 port 2049\n"
		       "rule = tcp address 127.0.0.0/8\n"
		       "rule = tcp port 111\n");
	CHECK(shim_config_server_action(&c, sa("0.0.0.0", 2049), &why) ==
	      SHIM_ACTION_RDMA && !strcmp(why->origin, "default"),
	      "server: program and version rules are skipped");
	CHECK(shim_config_server_action(&c, sa("127.0.0.1", 2049), &why) ==
	      SHIM_ACTION_TCP && why == &c.rules[3],
	      "server: an address rule matches the local address");
	CHECK(shim_config_server_action(&c, sa("::", 111), &why) ==
	      SHIM_ACTION_TCP && why == &c.rules[4],
	      "server: a port rule matches the local port");
	CHECK_EQ_U(shim_config_server_action(&c, NULL, NULL), SHIM_ACTION_RDMA,
		   "server without a local address: only plain rules apply");
	CHECK_EQ_U(cli(&c, 100003, 4, "10.0.0.1", 2049), SHIM_ACTION_TCP,
		   "the same rules on the client side do match programs");
	shim_config_free(&c);
}

static void
test_port_map(void)
{
	struct shim_config c;
	int errs;

	shim_config_init_defaults(&c);
	CHECK_EQ_U(shim_config_rdma_port(&c, 2049), 2049,
		   "no map: the same port");
	shim_config_free(&c);

	errs = parse_text(&c, "port_map = 2049:20049\n"
			      "port_map = 111 : 1111\n"
			      "port_map = 2049:30049\n"
			      "port_map = 65535:1\n");
	CHECK(errs == 0 && c.nport_maps == 4, "four maps parsed");
	CHECK_EQ_U(shim_config_rdma_port(&c, 2049), 20049, "2049 maps to 20049");
	CHECK_EQ_U(shim_config_rdma_port(&c, 111), 1111,
		   "spaces around the colon");
	CHECK_EQ_U(shim_config_rdma_port(&c, 65535), 1, "boundary ports");
	CHECK_EQ_U(shim_config_rdma_port(&c, 20049), 20049,
		   "an unmapped port stays");
	shim_config_free(&c);
}

/* ---- search order -------------------------------------------------------- */

static void
test_search(void)
{
	char p[PATH_MAX], q[PATH_MAX], etc[PATH_MAX], want[PATH_MAX * 2];
	struct shim_config c;
	int errs;

	mkdir(in_tmp(p, "xdg"), 0755);
	mkdir(in_tmp(p, "xdg/rpcrdma-shim"), 0755);
	mkdir(in_tmp(p, "home"), 0755);
	mkdir(in_tmp(p, "home/.config"), 0755);
	mkdir(in_tmp(p, "home/.config/rpcrdma-shim"), 0755);
	mkdir(in_tmp(etc, "etc"), 0755);
	write_text(in_tmp(p, "explicit.conf"), "credits = 1\n");
	write_text(in_tmp(p, "xdg/rpcrdma-shim/prog.conf"), "credits = 2\n");
	write_text(in_tmp(p, "home/.config/rpcrdma-shim/prog.conf"),
		   "credits = 3\n");
	write_text(in_tmp(p, "etc/prog.conf"), "credits = 4\n");
	write_text(in_tmp(p, "etc/default.conf"),
		   "credits = 5\nmode = tcp-only\n");

	setenv("RPCRDMA_SHIM_CONFIG", in_tmp(p, "explicit.conf"), 1);
	setenv("XDG_CONFIG_HOME", in_tmp(q, "xdg"), 1);
	setenv("HOME", in_tmp(q, "home"), 1);

	errs = shim_config_load_dir(&c, "prog", etc);
	CHECK(errs == 0 && c.credits == 1 && !strcmp(c.source, p),
	      "1: RPCRDMA_SHIM_CONFIG first");
	CHECK_EQ_U(c.mode, SHIM_MODE_PREFER_RDMA, "only one file is read");
	shim_config_free(&c);

	unsetenv("RPCRDMA_SHIM_CONFIG");
	errs = shim_config_load_dir(&c, "prog", etc);
	CHECK(errs == 0 && c.credits == 2 &&
	      !strcmp(c.source, in_tmp(p, "xdg/rpcrdma-shim/prog.conf")),
	      "2: $XDG_CONFIG_HOME/rpcrdma-shim/<prog>.conf");
	shim_config_free(&c);

	unsetenv("XDG_CONFIG_HOME");
	errs = shim_config_load_dir(&c, "prog", etc);
	CHECK(errs == 0 && c.credits == 3 &&
	      !strcmp(c.source, in_tmp(p, "home/.config/rpcrdma-shim/prog.conf")),
	      "2: XDG_CONFIG_HOME unset: $HOME/.config");
	shim_config_free(&c);

	setenv("XDG_CONFIG_HOME", "xdg", 1);
	errs = shim_config_load_dir(&c, "prog", etc);
	CHECK(errs == 0 && c.credits == 3,
	      "2: a relative XDG_CONFIG_HOME is ignored");
	shim_config_free(&c);

	unsetenv("XDG_CONFIG_HOME");
	remove(in_tmp(p, "home/.config/rpcrdma-shim/prog.conf"));
	errs = shim_config_load_dir(&c, "prog", etc);
	CHECK(errs == 0 && c.credits == 4 &&
	      !strcmp(c.source, in_tmp(p, "etc/prog.conf")),
	      "3: <sysdir>/<prog>.conf");
	shim_config_free(&c);

	errs = shim_config_load_dir(&c, "other", etc);
	CHECK(errs == 0 && c.credits == 5 && c.mode == SHIM_MODE_TCP_ONLY &&
	      !strcmp(c.source, in_tmp(p, "etc/default.conf")),
	      "4: <sysdir>/default.conf for another program");
	shim_config_free(&c);

	errs = shim_config_load_dir(&c, "../etc/prog", etc);
	CHECK(errs == 0 && c.credits == 5,
	      "a program name with a slash skips the per-program files");
	shim_config_free(&c);

	errs = shim_config_load_dir(&c, NULL, etc);
	CHECK(errs == 0 && c.credits == 5, "no program name: default.conf");
	shim_config_free(&c);

	setenv("RPCRDMA_SHIM_CONFIG", in_tmp(p, "missing.conf"), 1);
	errs = shim_config_load_dir(&c, "prog", etc);
	snprintf(want, sizeof(want), "environment: RPCRDMA_SHIM_CONFIG=%s: no "
		 "such file; searching the usual places", p);
	CHECK(errs == 0 && !c.bad && c.nmsgs == 1 &&
	      c.msgs[0].level == SHIM_LOG_WARN && c.credits == 4,
	      "a missing RPCRDMA_SHIM_CONFIG: one warning, the search goes on");
	CHECK_STR(msg(&c, 0), want, "the warning");
	shim_config_free(&c);
	unsetenv("RPCRDMA_SHIM_CONFIG");

	setenv("RPCRDMA_SHIM_CREDITS", "7", 1);
	setenv("RPCRDMA_SHIM_RULE", "tcp port 9", 1);
	errs = shim_config_load_dir(&c, "prog", etc);
	CHECK(errs == 0 && c.credits == 7 && c.nrules == 1,
	      "load applies the real environment over the file");
	shim_config_free(&c);
	unsetenv("RPCRDMA_SHIM_CREDITS");
	unsetenv("RPCRDMA_SHIM_RULE");

	setenv("RPCRDMA_SHIM_CREDIT", "7", 1);
	errs = shim_config_load_dir(&c, "prog", etc);
	CHECK(errs == 1 && c.bad, "load reports an unknown variable");
	shim_config_free(&c);
	unsetenv("RPCRDMA_SHIM_CREDIT");

	remove(in_tmp(p, "etc/prog.conf"));
	remove(in_tmp(p, "etc/default.conf"));
	errs = shim_config_load_dir(&c, "prog", etc);
	CHECK(errs == 0 && !c.bad && c.nmsgs == 0 && c.source[0] == '\0' &&
	      c.credits == 32, "no file anywhere: defaults, not an error");
	shim_config_free(&c);

	mkdir(in_tmp(p, "etc/prog.conf"), 0755);
	write_text(in_tmp(q, "etc/default.conf"), "credits = 5\n");
	errs = shim_config_load_dir(&c, "prog", etc);
	snprintf(want, sizeof(want), "%s: is a directory", p);
	CHECK(errs == 1 && c.bad && c.credits == 32 && !strcmp(c.source, p),
	      "a file that exists but cannot be read stops the search, as an "
	      "error");
	CHECK_STR(msg(&c, 0), want, "its message");
	shim_config_free(&c);

	write_text(in_tmp(p, "etc/bad.conf"), "credits = 0\ninline_send = 3\n");
	errs = shim_config_load_dir(&c, "bad", etc);
	CHECK(errs == 2 && c.bad && c.nmsgs == 2, "a bad file: config bad, "
	      "every message kept");
	shim_config_free(&c);

	errs = shim_config_load(&c, "rpcrdma-shim-test-no-such-program");
	CHECK(c.source[0] == '\0' || !strncmp(c.source, SHIM_CONFIG_SYSDIR "/",
					      strlen(SHIM_CONFIG_SYSDIR) + 1),
	      "shim_config_load searches " SHIM_CONFIG_SYSDIR);
	shim_config_free(&c);
}

/* ---- logging ------------------------------------------------------------ */

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

	/* The application closes our descriptor and reuses the number. */
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
	shim_log(SHIM_LOG_INFO, "still mine");
	CHECK(fd2 == fd && read_text(other)[0] == '\0',
	      "a reused descriptor is left alone");
	snprintf(want, sizeof(want), "%sstill mine\n", pre);
	CHECK_STR(read_text(logf), want, "... and the file is reopened");
	shim_log_open(&c, "tprog");
	CHECK(fcntl(fd2, F_GETFD) >= 0, "reopening the sink does not close the "
	      "application's descriptor");
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

int
main(int argc, char **argv)
{
	const char *base = getenv("TMPDIR");

	if (!base || !*base)
		base = "/tmp";
	snprintf(tmp, sizeof(tmp), "%s/rpcrdma-shim-config.XXXXXX", base);
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp %s: %s\n", tmp, strerror(errno));
		return 1;
	}
	/* Resolved, so paths compare equal to /proc/self/fd links. */
	{
		char *real = realpath(tmp, NULL);

		if (real) {
			snprintf(tmp, sizeof(tmp), "%s", real);
			free(real);
		}
	}
	snprintf(conf_path, sizeof(conf_path), "%s/t.conf", tmp);
	for (const char *const *name = env_names(); *name; name++)
		unsetenv(*name);

	test_defaults();
	test_names(argc > 1 ? argv[1] : NULL);
	test_valid_values();
	test_bad_values();
	test_syntax();
	test_many_errors();
	test_env();
	test_rules_basic();
	test_rules_criteria();
	test_rules_server();
	test_port_map();
	test_search();
	test_log();

	nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return check_done();
}
