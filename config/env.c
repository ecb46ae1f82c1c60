/*
 * The environment: RPCRDMA_SHIM_<KEY> for every key, which wins over the
 * file whichever is parsed first; rules and port maps come as lists.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/internal.h"

/* "RPCRDMA_SHIM_RULE=r1; r2" and "RPCRDMA_SHIM_PORT_MAP=m1,m2". */
static void
apply_env_list(struct shim_config *cfg, const struct shim_config_key *key,
	       struct where *w)
{
	bool rule = key->type == SHIM_KEY_RULE;
	char *copy = strdup(w->value), *item, *save = NULL;

	if (!copy) {
		config_fail_at(cfg, w, "out of memory");
		return;
	}
	for (item = strtok_r(copy, rule ? ";" : ",", &save); item;
	     item = strtok_r(NULL, rule ? ";" : ",", &save)) {
		item = config_trim(item);
		if (!*item)
			continue;
		w->value = item;
		if (rule)
			config_add_rule(cfg, w, item);
		else
			config_add_port_map(cfg, w, item);
	}
	free(copy);
}

static void
apply_env(struct shim_config *cfg, const char *name, const char *value)
{
	const struct shim_config_key *key;
	struct where w = { .name = name, .value = value };
	char why[640], list[600];
	const char *err;
	char *copy;

	key = config_key_by_env(name + strlen(SHIM_CONFIG_ENV_PREFIX));
	if (!key) {
		snprintf(why, sizeof(why), "unknown variable (known: %s)",
			 config_known_names(list, sizeof(list), true));
		config_fail_at(cfg, &w, why);
		return;
	}
	if (key->type == SHIM_KEY_RULE || key->type == SHIM_KEY_PORT_MAP) {
		apply_env_list(cfg, key, &w);
		return;
	}
	copy = strdup(value);
	if (!copy) {
		config_fail_at(cfg, &w, "out of memory");
		return;
	}
	err = config_key_set(cfg, key, config_trim(copy), why, sizeof(why));
	if (err)
		config_fail_at(cfg, &w, err);
	else
		cfg->env_keys_ |= config_key_bit(key);
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

int
config_parse_env_list(struct shim_config *cfg, char *const *envp, bool secure)
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
	return config_parse_env_list(cfg, envp, false);
}
