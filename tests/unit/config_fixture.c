/*
 * The configuration tests' shared helpers (see config_fixture.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "config_fixture.h"

char tmp[1024];	/* short enough for every path built in it */
char conf_path[PATH_MAX];

const char *
in_tmp(char *buf, const char *rel)
{
	snprintf(buf, PATH_MAX, "%s/%s", tmp, rel);
	return buf;
}

void
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

char *
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

int
parse_text(struct shim_config *cfg, const char *text)
{
	write_text(conf_path, text);
	shim_config_init_defaults(cfg);
	return shim_config_parse_file(cfg, conf_path);
}

int
parse_env1(struct shim_config *cfg, const char *entry)
{
	char *envp[] = { (char *)entry, NULL };

	return shim_config_parse_env(cfg, envp);
}

const char *
msg(const struct shim_config *cfg, size_t i)
{
	return i < cfg->nmsgs ? cfg->msgs[i].text : "(no message)";
}

const char *
at_conf(const char *tail)
{
	static char buf[PATH_MAX + 4096];

	snprintf(buf, sizeof(buf), "%s:%s", conf_path, tail);
	return buf;
}

enum shim_action
cli(const struct shim_config *cfg, uint32_t prog, uint32_t vers,
    const char *addr, uint16_t port)
{
	return shim_config_client_action(cfg, prog, vers,
					 addr ? sa(addr, port) : NULL, NULL);
}

enum shim_action
srv(const struct shim_config *cfg, const char *addr, uint16_t port)
{
	return shim_config_server_action(cfg, sa(addr, port), NULL);
}

uint64_t
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

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

const char *const *
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

bool
rpc_name_known(const char *name)
{
	struct rpcent ent, *res = NULL;
	char buf[1024];

	return !getrpcbyname_r(name, &ent, buf, sizeof(buf), &res) && res;
}

void
fixture_init(void)
{
	const char *base = getenv("TMPDIR");

	if (!base || !*base)
		base = "/tmp";
	snprintf(tmp, sizeof(tmp), "%s/rpcrdma-shim-config.XXXXXX", base);
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp %s: %s\n", tmp, strerror(errno));
		exit(1);
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
}

void
fixture_done(void)
{
	nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
