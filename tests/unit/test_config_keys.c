/*
 * Unit tests of config/keys.c: the key table, defaults, names, and every
 * key's values, good and bad.  argv[1] is rpcrdma-shim.conf(5), checked to
 * document every key and variable; argv[2] is tools/rpcrdma-run.in, whose
 * -e must accept exactly the keys of the table.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <config.h>	/* generated: SHIM_DEFAULT_* */
#include "check.h"
#include "config_fixture.h"

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
	CHECK_EQ_U(c.max_reply, 1u << 20, "default max_reply = 1M");
	CHECK_EQ_U(c.max_call, 4u << 20, "default max_call = 4M");
	CHECK_EQ_U(c.max_pinned, 0, "default max_pinned = 0 (from ulimit -l)");
	CHECK(c.remote_invalidate, "default remote_invalidate = yes");
	CHECK_EQ_U(c.defer_wait_ms, 5000, "default defer_wait = 5s");
	CHECK_EQ_U(c.rpcrdma_version, SHIM_RPCRDMA_AUTO,
		   "default rpcrdma_version = auto");
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
	const char *const *env = env_names();
	size_t nkeys = 0, nenv = 0;
	bool all = true;
	char *man;

	while (shim_config_keys[nkeys].name)
		nkeys++;
	while (env[nenv])
		nenv++;
	CHECK_EQ_U(nkeys, 21, "21 keys");
	CHECK_EQ_U(nenv, nkeys + 1, "one variable per key plus the file");
	CHECK_STR(env[0], "RPCRDMA_SHIM_CONFIG",
		  "RPCRDMA_SHIM_CONFIG comes first");
	for (size_t i = 0; i < nkeys; i++) {
		char want[64];
		size_t j;

		snprintf(want, sizeof(want), "RPCRDMA_SHIM_%s",
			 shim_config_keys[i].name);
		for (j = strlen("RPCRDMA_SHIM_"); want[j]; j++)
			want[j] = (char)toupper((unsigned char)want[j]);
		for (j = 1; j < nenv && strcmp(env[j], want); j++)
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
		if (!strstr(man, env[i])) {
			printf("# man page lacks %s\n", env[i]);
			all = false;
		}
	}
	CHECK(all, "the man page names every environment variable");
	free(man);
}

/*
 * The table itself: every key says what it does in one line, and every
 * default, written as a value, is accepted and gives itself back.
 */
static void
test_table(void)
{
	bool docs = true, defaults = true;

	for (const struct shim_config_key *k = shim_config_keys; k->name; k++) {
		struct shim_config c, d;
		char line[128];
		int errs;

		if (!k->doc || !*k->doc || strchr(k->doc, '\n')) {
			printf("# %s: no one-line description\n", k->name);
			docs = false;
		}
		switch (k->type) {
		case SHIM_KEY_BOOL:
			snprintf(line, sizeof(line), "%s = %s", k->name,
				 k->def ? "yes" : "no");
			break;
		case SHIM_KEY_CHOICE:
			snprintf(line, sizeof(line), "%s = %s", k->name,
				 k->choices[k->def]);
			break;
		case SHIM_KEY_NUMBER:
			snprintf(line, sizeof(line), "%s = %llu", k->name,
				 (unsigned long long)k->def);
			break;
		case SHIM_KEY_LOG:
			snprintf(line, sizeof(line), "%s = stderr", k->name);
			break;
		case SHIM_KEY_PROGS:
			snprintf(line, sizeof(line), "%s = none", k->name);
			break;
		case SHIM_KEY_RULE:
		case SHIM_KEY_PORT_MAP:
			continue;
		}
		shim_config_init_defaults(&d);
		errs = parse_text(&c, line);
		if (errs || field(&c, k->off, k->size) != k->def ||
		    field(&d, k->off, k->size) != k->def) {
			printf("# '%s': %d errors (%s)\n", line, errs, msg(&c, 0));
			defaults = false;
		}
		shim_config_free(&c);
		shim_config_free(&d);
	}
	CHECK(docs, "every key has a one-line description");
	CHECK(defaults, "every default is an allowed value of its key");
}

/* ---- values -------------------------------------------------------------- */

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
	{ "max_pinned = 0", FLD(max_pinned), 0 },
	{ "max_pinned = 6M", FLD(max_pinned), 6u << 20 },
	{ "max_pinned = 1024G", FLD(max_pinned), 1ull << 40 },
	{ "remote_invalidate = no", FLD(remote_invalidate), 0 },
	{ "remote_invalidate = on", FLD(remote_invalidate), 1 },
	{ "poll_us = 0", FLD(poll_us), 0 },
	{ "poll_us = 250", FLD(poll_us), 250 },
	{ "poll_us = 250us", FLD(poll_us), 250 },
	{ "poll_us = 2ms", FLD(poll_us), 2000 },
	{ "poll_us = 100000", FLD(poll_us), 100000 },
	{ "defer_wait = 0", FLD(defer_wait_ms), 0 },
	{ "defer_wait = 250", FLD(defer_wait_ms), 250 },
	{ "defer_wait = 2s", FLD(defer_wait_ms), 2000 },
	{ "defer_wait = 600000ms", FLD(defer_wait_ms), 600000 },
	{ "no_placement = none", FLD(n_no_placement), 0 },
	{ "rpcrdma_version = 1", FLD(rpcrdma_version), SHIM_RPCRDMA_V1 },
	{ "rpcrdma_version = 2", FLD(rpcrdma_version), SHIM_RPCRDMA_V2 },
	{ "rpcrdma_version = auto", FLD(rpcrdma_version), SHIM_RPCRDMA_AUTO },
	{ "rpcrdma_version = AUTO", FLD(rpcrdma_version), SHIM_RPCRDMA_AUTO },
	{ "no_placement = nfs", FLD(n_no_placement), 1 },
	{ "no_placement = 100003, 0x20000099,7", FLD(n_no_placement), 3 },
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

	parse_text(&c, "no_placement = nfs, 0x20000099\n");
	CHECK(c.n_no_placement == 2 && c.no_placement[0] == 100003 &&
	      c.no_placement[1] == 0x20000099, "no_placement: nfs is 100003, hex read");
	shim_config_free(&c);

	parse_text(&c, "log = /var/log/rpcrdma-shim.log\n");
	CHECK_STR(c.log_path, "/var/log/rpcrdma-shim.log", "log path kept");
	CHECK_STR(c.source, conf_path, "source names the file read");
	shim_config_free(&c);
}

#define PROGS_ALLOWED "must be none or up to 16 RPC program numbers (or nfs), separated by commas"

struct bad_case {
	const char *line;
	const char *tail;	/* the message after "<file>:1: " */
	size_t off, size;	/* a field that must keep its default */
};

static const struct bad_case bad_cases[] = {
	{ "enable = maybe", "1: enable = maybe: " BOOL_ALLOWED, FLD(enable) },
	{ "no_placement = 0", "1: no_placement = 0: " PROGS_ALLOWED,
	  FLD(n_no_placement) },
	{ "no_placement = nfs,", "1: no_placement = nfs,: " PROGS_ALLOWED,
	  FLD(n_no_placement) },
	{ "no_placement = nfsd", "1: no_placement = nfsd: " PROGS_ALLOWED,
	  FLD(n_no_placement) },
	{ "no_placement = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
	  "1: no_placement = 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17: "
	  PROGS_ALLOWED, FLD(n_no_placement) },
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
	{ "rpcrdma_version = 3", "1: rpcrdma_version = 3: must be 1, 2 or auto",
	  FLD(rpcrdma_version) },
	{ "rpcrdma_version = v2", "1: rpcrdma_version = v2: must be 1, 2 or "
	  "auto", FLD(rpcrdma_version) },
	{ "rpcrdma_version = 0", "1: rpcrdma_version = 0: must be 1, 2 or auto",
	  FLD(rpcrdma_version) },
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
	  "inline_send, inline_recv, credits, connect_timeout, negative_cache, upgrade, "
	  "max_reply, max_call, write_chunk, max_pinned, remote_invalidate, poll_us, "
	  "defer_wait, no_placement, rpcrdma_version, log_level, log, rule, port_map)",
	  FLD(credits) },
	{ "max_pinned = 1025G", "1: max_pinned = 1025G: must be 0 (from ulimit "
	  "-l) or a size up to 1099511627776 (1024G) bytes", FLD(max_pinned) },
	{ "write_chunk = 2G", "1: write_chunk = 2G: must be from 0 (none) to "
	  "1073741824 (1G) bytes", FLD(write_chunk) },
	{ "poll_us = 1s", "1: poll_us = 1s: must be from 0 to 100000 "
	  "microseconds (optional suffix us or ms)", FLD(poll_us) },
	{ "poll_us = 100001", "1: poll_us = 100001: must be from 0 to 100000 "
	  "microseconds", FLD(poll_us) },
	{ "defer_wait = 601s", "1: defer_wait = 601s: must be from 0 to 600000 "
	  "milliseconds", FLD(defer_wait_ms) },
	{ "defer_wait = 1m", "1: defer_wait = 1m: must be from 0 to 600000 "
	  "milliseconds (optional suffix ms or s)", FLD(defer_wait_ms) },
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

/* Whether name stands in list as a whole word (blank separated). */
static bool
has_word(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || isspace((unsigned char)p[-1])) &&
		    (!p[n] || isspace((unsigned char)p[n])))
			return true;
	return false;
}

/* rpcrdma-run's keys=(...) list: every key of the table, plus config. */
static void
test_run_keys(const char *run_path)
{
	const char *text, *start, *end;
	char list[1024];
	bool all = true;

	if (!run_path) {
		SKIP("rpcrdma-run: no path given");
		return;
	}
	text = read_text(run_path);
	start = text ? strstr(text, "\nkeys=(") : NULL;
	end = start ? strchr(start, ')') : NULL;
	CHECK(start && end && (size_t)(end - start) < sizeof(list),
	      "rpcrdma-run %s has its keys=(...) list", run_path);
	if (!start || !end || (size_t)(end - start) >= sizeof(list))
		return;
	start += strlen("\nkeys=(");
	memcpy(list, start, (size_t)(end - start));
	list[end - start] = '\0';
	for (const struct shim_config_key *k = shim_config_keys; k->name; k++) {
		if (!has_word(list, k->name)) {
			printf("# rpcrdma-run -e lacks %s\n", k->name);
			all = false;
		}
	}
	CHECK(all, "rpcrdma-run -e accepts every key");
	for (char *w = strtok(list, " \t\n"); w; w = strtok(NULL, " \t\n")) {
		const struct shim_config_key *k = shim_config_keys;

		while (k->name && strcmp(k->name, w))
			k++;
		if (strcmp(w, "config") && !k->name) {
			printf("# rpcrdma-run -e knows %s, the shim does not\n", w);
			all = false;
		}
	}
	CHECK(all, "rpcrdma-run -e accepts no key the shim does not know");
}

int
main(int argc, char **argv)
{
	fixture_init();
	test_defaults();
	test_names(argc > 1 ? argv[1] : NULL);
	test_run_keys(argc > 2 ? argv[2] : NULL);
	test_table();
	test_valid_values();
	test_bad_values();
	fixture_done();
	return check_done();
}
