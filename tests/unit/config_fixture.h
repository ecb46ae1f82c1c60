/*
 * What the configuration tests share: a scratch directory, files written
 * and read there, parsing a text as a whole file, socket addresses
 * (addr_fixture.h), and the fields of struct shim_config by offset.
 * Include after check.h.
 */
#ifndef TESTS_UNIT_CONFIG_FIXTURE_H
#define TESTS_UNIT_CONFIG_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "addr_fixture.h"
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

/* What is allowed, as the parser's messages say it. */
#define INLINE_RANGE "must be a multiple of 1024 from 1024 to 262144"
#define INLINE_SYNTAX INLINE_RANGE " (bytes, optional suffix K or KiB)"
#define TIMEOUT_RANGE "must be from 100 to 600000 milliseconds"
#define CACHE_RANGE "must be from 0 to 86400 seconds"
#define MAX_RANGE "must be from 4096 (4K) to 1073741824 (1G) bytes"
#define BOOL_ALLOWED "must be yes or no (or true/false, on/off, 1/0)"
#define RULE_ALLOWED "must be rdma or tcp, then any of: program P[,P...], " \
	"version V[-W], address A[/LEN], port N"
#define PORT_MAP_ALLOWED "must be TCP:RDMA, two ports from 1 to 65535"

/* A field of struct shim_config, for field(): its offset and size. */
#define FLD(name) offsetof(struct shim_config, name), \
	sizeof(((struct shim_config *)0)->name)

/* The scratch directory (resolved), and t.conf in it. */
extern char tmp[1024];
extern char conf_path[];

/*
 * Make the scratch directory under $TMPDIR and clear every RPCRDMA_SHIM_*
 * variable; fixture_done removes the directory again.
 */
void fixture_init(void);
void fixture_done(void);

/* tmp/rel into buf (PATH_MAX bytes); returns buf. */
const char *in_tmp(char *buf, const char *rel);
void write_text(const char *path, const char *text);
/* The file's text (up to 1 MiB, in a static buffer), "" if unreadable. */
char *read_text(const char *path);

/* Parse text as a whole file into a fresh *cfg; returns the error count. */
int parse_text(struct shim_config *cfg, const char *text);
/* Apply one "NAME=value" environment entry. */
int parse_env1(struct shim_config *cfg, const char *entry);
/* Message i, or "(no message)". */
const char *msg(const struct shim_config *cfg, size_t i);
/* "<conf_path>:<tail>" */
const char *at_conf(const char *tail);

/* The client's and the server's action; addr NULL: no address. */
enum shim_action cli(const struct shim_config *cfg, uint32_t prog,
		     uint32_t vers, const char *addr, uint16_t port);
enum shim_action srv(const struct shim_config *cfg, const char *addr,
		     uint16_t port);

/* The field at off of size bytes (1, 4 or 8), as a number. */
uint64_t field(const struct shim_config *cfg, size_t off, size_t size);

/*
 * Every RPCRDMA_SHIM_* variable read: SHIM_CONFIG_ENV_FILE, then one per
 * key, named by the library; NULL-terminated.
 */
const char *const *env_names(void);

/* Whether /etc/rpc knows name. */
bool rpc_name_known(const char *name);

#endif
