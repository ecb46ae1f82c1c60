/*
 * Rules and port maps: parsing them (from a file line or an item of the
 * environment's list) and matching a transport against them.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/sockaddr.h"
#include "config/internal.h"

#define RPCBIND_PROG 100000u

/* ---- parsing --------------------------------------------------------- */

#define RULE_SYNTAX "must be rdma or tcp, then any of: program P[,P...], " \
	"version V[-W], address A[/LEN], port N"

static bool
parse_program(const char *s, uint32_t *prog)
{
	struct rpcent ent, *res = NULL;
	char buf[1024];

	if (isdigit((unsigned char)*s))
		return config_parse_u32(s, true, UINT32_MAX, prog);
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
	if (!config_parse_u32(buf, true, UINT32_MAX, &r->vers_min))
		return false;
	r->vers_max = r->vers_min;
	if (dash && !config_parse_u32(dash + 1, true, UINT32_MAX, &r->vers_max))
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
	if (slash && !config_parse_u32(slash + 1, false, max, &r->prefix_len))
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
			if (!config_parse_u32(val, false, 65535, &port) || port == 0) {
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

void
config_rule_release(struct shim_rule *r)
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

void
config_add_rule(struct shim_config *cfg, const struct where *w,
		const char *text)
{
	char why[512];
	struct shim_rule r = { 0 }, *rules;
	const char *err;
	size_t at;

	err = parse_rule(text, &r, why, sizeof(why));
	if (err) {
		config_rule_release(&r);
		config_fail_at(cfg, w, err);
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
		config_rule_release(&r);
		config_fail_at(cfg, w, "out of memory");
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

void
config_add_port_map(struct shim_config *cfg, const struct where *w,
		    const char *text)
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
	if (!config_parse_u32(config_trim(buf), false, 65535, &tcp) || !tcp ||
	    !config_parse_u32(config_trim(colon + 1), false, 65535, &rdma) || !rdma)
		goto bad;
	m.tcp_port = (uint16_t)tcp;
	m.rdma_port = (uint16_t)rdma;
	maps = realloc(cfg->port_maps, (cfg->nport_maps + 1) * sizeof(*maps));
	if (!maps) {
		config_fail_at(cfg, w, "out of memory");
		return;
	}
	cfg->port_maps = maps;
	at = w->file ? cfg->nport_maps : cfg->env_port_maps_++;
	memmove(&maps[at + 1], &maps[at], (cfg->nport_maps - at) * sizeof(*maps));
	maps[at] = m;
	cfg->nport_maps++;
	return;
bad:
	config_fail_at(cfg, w, PORT_MAP_SYNTAX);
}

/* ---- matching -------------------------------------------------------- */

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
	/*
	 * RFC 8166 s6: NFS over RDMA has its own port, where the kernel's
	 * client (mount -o proto=rdma without port=) and server go.
	 */
	if (tcp_port == SHIM_NFS_TCP_PORT)
		return SHIM_NFS_RDMA_PORT;
	return tcp_port;
}

const char *
shim_config_action_name(enum shim_action action)
{
	return action == SHIM_ACTION_RDMA ? "rdma" : "tcp";
}
