/*
 * Unit tests of config/env.c: RPCRDMA_SHIM_* variables, alone and with a
 * file.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "config_fixture.h"

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
	{ "RPCRDMA_SHIM_MAX_CALL=2G", FLD(max_reply), 1u << 20 },
	{ "RPCRDMA_SHIM_MAX_CALL=1G", FLD(max_call), 1u << 30 },
	{ "RPCRDMA_SHIM_WRITE_CHUNK=2M", FLD(write_chunk), 2u << 20 },
	{ "RPCRDMA_SHIM_MAX_PINNED=12M", FLD(max_pinned), 12u << 20 },
	{ "RPCRDMA_SHIM_REMOTE_INVALIDATE=off", FLD(remote_invalidate), 0 },
	{ "RPCRDMA_SHIM_POLL_US=0", FLD(poll_us), 0 },
	{ "RPCRDMA_SHIM_POLL_US=1ms", FLD(poll_us), 1000 },
	{ "RPCRDMA_SHIM_DEFER_WAIT=300ms", FLD(defer_wait_ms), 300 },
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

int
main(void)
{
	fixture_init();
	test_env();
	fixture_done();
	return check_done();
}
