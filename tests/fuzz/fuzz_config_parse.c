/*
 * libFuzzer harness for the configuration parser (config/): the input as
 * a file, then its lines as environment entries; what was parsed is then
 * asked what every kind of transport would do.  Beyond crashes and
 * sanitizer reports it aborts when the object contradicts itself: bad
 * without an error or the other way round, an error without its message,
 * a message with a newline (the log adds its own), a decision without
 * the rule that made it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"
#include "fuzz.h"

#define MAX_ENV 64

static void
check(const struct shim_config *c)
{
	if (c->bad != (c->n_errors > 0))
		abort();
	if (c->nmsgs + c->msgs_dropped < c->n_errors ||
	    c->nmsgs > SHIM_CONFIG_MAX_MESSAGES)
		abort();
	for (size_t i = 0; i < c->nmsgs; i++)
		if (!c->msgs[i].text || strchr(c->msgs[i].text, '\n'))
			abort();
}

static void
decide(const struct shim_config *c)
{
	static const uint32_t progs[] = { 0, 100000, 100003, 100005, 0x20000099 };
	struct sockaddr_in v4 = { .sin_family = AF_INET, .sin_port = htons(2049) };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6, .sin6_port = htons(111) };
	const struct sockaddr *peers[] = { NULL, (const struct sockaddr *)&v4,
					   (const struct sockaddr *)&v6 };
	const struct shim_rule *why;

	inet_pton(AF_INET, "10.77.0.1", &v4.sin_addr);
	inet_pton(AF_INET6, "fd77::1", &v6.sin6_addr);
	for (size_t p = 0; p < sizeof(peers) / sizeof(peers[0]); p++) {
		for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
			why = NULL;
			shim_config_client_action(c, progs[i], 3, peers[p], &why);
			if (!why)
				abort();
		}
		why = NULL;
		shim_config_server_action(c, peers[p], &why);
		if (!why)
			abort();
	}
	shim_config_rdma_port(c, 2049);
	shim_config_rdma_port(c, 0);
}

/* The input's lines as "NAME=value" entries, at most MAX_ENV. */
static void
as_environment(char *text)
{
	char *envp[MAX_ENV + 1], *save = NULL, *line;
	struct shim_config c;
	size_t n = 0;

	for (line = strtok_r(text, "\n", &save); line && n < MAX_ENV;
	     line = strtok_r(NULL, "\n", &save))
		envp[n++] = line;
	envp[n] = NULL;
	shim_config_init_defaults(&c);
	config_parse_env_list(&c, envp, false);
	check(&c);
	decide(&c);
	shim_config_free(&c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shim_config c;
	char *text;
	FILE *f;

	/* fmemopen wants a writable buffer; the NUL ends the environment. */
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	shim_config_init_defaults(&c);
	f = size ? fmemopen(text, size, "r") : NULL;
	if (f) {
		config_parse_stream(&c, f, "fuzz.conf");
		fclose(f);
	}
	check(&c);
	decide(&c);
	shim_config_free(&c);

	as_environment(text);
	free(text);
	return 0;
}
