/*
 * Unit tests of config/rules.c: rules and port maps, and which rule
 * decides for a client and for a server.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "config_fixture.h"

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
	CHECK_EQ_U(shim_config_rdma_port(&c, 2050), 2050,
		   "no map: the same port");
	CHECK_EQ_U(shim_config_rdma_port(&c, 2049), 20049,
		   "no map: NFS's 2049 goes to 20049 (RFC 8166 s6)");
	shim_config_free(&c);

	errs = parse_text(&c, "port_map = 2049:2049\n");
	CHECK(errs == 0 && shim_config_rdma_port(&c, 2049) == 2049,
	      "a map for 2049 overrides NFS's RDMA port");
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

int
main(void)
{
	fixture_init();
	test_rules_basic();
	test_rules_criteria();
	test_rules_server();
	test_port_map();
	fixture_done();
	return check_done();
}
