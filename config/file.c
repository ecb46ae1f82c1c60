/*
 * Configuration files: the syntax of a file (lines of "key = value",
 * comments, blanks) and the search for the one to read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/internal.h"

/* ---- syntax ---------------------------------------------------------- */

/*
 * Apply one value from a file.  A key the environment has set is still
 * checked (so mistakes show) but keeps the environment's value.
 */
static void
apply_file_value(struct shim_config *cfg, const struct shim_config_key *key,
		 const struct where *w)
{
	char why[256];
	const char *err;

	if (key->type == SHIM_KEY_RULE) {
		config_add_rule(cfg, w, w->value);
		return;
	}
	if (key->type == SHIM_KEY_PORT_MAP) {
		config_add_port_map(cfg, w, w->value);
		return;
	}
	if (cfg->env_keys_ & config_key_bit(key)) {
		struct shim_config scratch = *cfg;

		err = config_key_set(&scratch, key, w->value, why, sizeof(why));
	} else {
		err = config_key_set(cfg, key, w->value, why, sizeof(why));
	}
	if (err)
		config_fail_at(cfg, w, err);
}

static void
parse_line(struct shim_config *cfg, const char *path, unsigned int lineno,
	   char *line)
{
	const struct shim_config_key *k;
	struct where w = { .file = path, .line = lineno };
	char *hash, *eq, *key;

	hash = strchr(line, '#');
	if (hash)
		*hash = '\0';
	line = config_trim(line);
	if (!*line)
		return;
	eq = strchr(line, '=');
	if (!eq) {
		config_fail(cfg, "%s:%u: %s: not a 'key = value' line", path, lineno,
		     line);
		return;
	}
	*eq = '\0';
	key = config_trim(line);
	w.name = key;
	w.value = config_trim(eq + 1);
	if (!*key) {
		config_fail(cfg, "%s:%u: = %s: missing the key before '='", path,
		     lineno, w.value);
		return;
	}
	k = config_key_by_name(key);
	if (!k) {
		char why[512], list[400];

		snprintf(why, sizeof(why), "unknown key (known: %s)",
			 config_known_names(list, sizeof(list), false));
		config_fail_at(cfg, &w, why);
		return;
	}
	apply_file_value(cfg, k, &w);
}

void
config_parse_stream(struct shim_config *cfg, FILE *f, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned int lineno = 0;
	ssize_t n;

	snprintf(cfg->source, sizeof(cfg->source), "%s", path);
	while ((n = getline(&line, &cap, f)) >= 0) {
		char *p = line;

		lineno++;
		/* A UTF-8 byte order mark some editors write. */
		if (lineno == 1 && !strncmp(p, "\xef\xbb\xbf", 3))
			p += 3;
		if ((size_t)n != strlen(line)) {
			config_fail(cfg, "%s:%u: the line holds a NUL byte (not a text "
			     "file?)", path, lineno);
			continue;
		}
		parse_line(cfg, path, lineno, p);
	}
	if (ferror(f))
		config_fail(cfg, "%s: read error: %s", path, strerror(errno));
	free(line);
}

/*
 * Whether the file opened may be used, as ssh and sudo judge theirs: a
 * regular file owned by the process's (effective) user or by root, that
 * nobody else may write.  A root process (or one that gained privileges)
 * thereby ignores a file another user planted in $HOME or
 * $XDG_CONFIG_HOME; anyone ignores a file others could have changed.
 * Checked on the descriptor read, so the answer is about that file.
 */
static bool
file_trusted(struct shim_config *cfg, const char *path, const struct stat *st)
{
	uid_t me = geteuid();

	if (S_ISDIR(st->st_mode)) {
		config_fail(cfg, "%s: is a directory", path);
		return false;
	}
	if (!S_ISREG(st->st_mode)) {
		config_fail(cfg, "%s: not read: not a regular file", path);
		return false;
	}
	if (st->st_uid != me && st->st_uid != 0) {
		config_fail(cfg, "%s: not read: owned by uid %u, not by this "
			    "process's user (uid %u) or root", path,
			    (unsigned int)st->st_uid, (unsigned int)me);
		return false;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		config_fail(cfg, "%s: not read: writable by %s (mode %04o; "
			    "chmod go-w it)", path,
			    (st->st_mode & S_IWGRP) && (st->st_mode & S_IWOTH) ?
			    "its group and others" : st->st_mode & S_IWGRP ?
			    "its group" : "others",
			    (unsigned int)(st->st_mode & 07777));
		return false;
	}
	return true;
}

/*
 * Whether dir may hold a file we read: owned by the effective user or
 * root, and writable by nobody else, unless sticky (/tmp: others may add
 * names there, not replace ours; the kernel's protected_symlinks covers
 * links).  msg: what the path's error message says after "not read: ".
 */
static bool
dir_trusted(const char *dir, uid_t me, char *msg, size_t len)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return true;	/* the open that follows says why */
	if (st.st_uid != me && st.st_uid != 0) {
		snprintf(msg, len, "directory %s is owned by uid %u, not by this "
			 "process's user (uid %u) or root", dir,
			 (unsigned int)st.st_uid, (unsigned int)me);
		return false;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(msg, len, "directory %s is writable by %s (mode %04o)",
			 dir, st.st_mode & S_IWOTH ? "others" : "its group",
			 (unsigned int)(st.st_mode & 07777));
		return false;
	}
	return true;
}

/*
 * Every directory above path, as named (a symbolic link is judged by the
 * directory that holds it), up to the root: as ssh checks the way to its
 * files.  Whoever may change one of them could put any file of root's
 * there (a link to /etc/shadow) for a root process to report line by line.
 */
static bool
path_trusted(struct shim_config *cfg, const char *path)
{
	char msg[PATH_MAX + 128], *dir, *slash, cwd[PATH_MAX];
	bool ok = true;

	if (path[0] == '/') {
		dir = strdup(path);
	} else if (getcwd(cwd, sizeof(cwd))) {
		if (asprintf(&dir, "%s/%s", cwd, path) < 0)
			dir = NULL;
	} else {
		dir = NULL;
	}
	if (!dir) {
		config_fail(cfg, "%s: not read: %s", path, strerror(errno));
		return false;
	}
	while (ok && (slash = strrchr(dir, '/'))) {
		if (slash == dir) {
			dir[1] = '\0';
			ok = dir_trusted(dir, geteuid(), msg, sizeof(msg));
			break;
		}
		*slash = '\0';
		ok = dir_trusted(dir, geteuid(), msg, sizeof(msg));
	}
	free(dir);
	if (!ok)
		config_fail(cfg, "%s: not read: %s", path, msg);
	return ok;
}

/*
 * Parse path if it exists.  Returns false when there is no such file (the
 * search goes on); any other failure to read it, or a file not trusted,
 * is an error.  O_NONBLOCK: a FIFO is refused, not waited on.
 */
static bool
try_file(struct shim_config *cfg, const char *path)
{
	struct stat st;
	FILE *f;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return false;
		/*
		 * A directory on the way that this process may not search (a
		 * daemon that dropped privileges keeps $HOME): the file cannot
		 * be seen, which is as good as absent.  A file that can be
		 * seen but not read is an error.
		 */
		if (errno == EACCES && stat(path, &st) < 0)
			return false;
		snprintf(cfg->source, sizeof(cfg->source), "%s", path);
		config_fail(cfg, "%s: cannot open: %s", path, strerror(errno));
		return true;
	}
	snprintf(cfg->source, sizeof(cfg->source), "%s", path);
	if (!path_trusted(cfg, path)) {
		close(fd);
		return true;
	}
	if (fstat(fd, &st) < 0) {
		config_fail(cfg, "%s: cannot open: %s", path, strerror(errno));
		close(fd);
		return true;
	}
	if (!file_trusted(cfg, path, &st)) {
		close(fd);
		return true;
	}
	f = fdopen(fd, "r");
	if (!f) {
		config_fail(cfg, "%s: cannot open: %s", path, strerror(errno));
		close(fd);
		return true;
	}
	config_parse_stream(cfg, f, path);
	fclose(f);
	return true;
}

int
shim_config_parse_file(struct shim_config *cfg, const char *path)
{
	unsigned int before = cfg->n_errors;

	if (!try_file(cfg, path)) {
		snprintf(cfg->source, sizeof(cfg->source), "%s", path);
		config_fail(cfg, "%s: cannot open: %s", path, strerror(ENOENT));
	}
	return (int)(cfg->n_errors - before);
}

/* ---- search order ---------------------------------------------------- */

/*
 * The file named by the concatenation of the parts (NULL ends them): no
 * printf on the start-up path, whose code a short-lived program would
 * otherwise load and run for this alone.
 */
static bool
try_parts(struct shim_config *cfg, const char *const *parts)
{
	size_t len = 1, off = 0;
	char *path;
	bool found;

	for (size_t i = 0; parts[i]; i++)
		len += strlen(parts[i]);
	path = malloc(len);
	if (!path) {
		cfg->bad = true;
		cfg->n_errors++;
		return false;
	}
	for (size_t i = 0; parts[i]; i++) {
		size_t n = strlen(parts[i]);

		memcpy(path + off, parts[i], n);
		off += n;
	}
	path[off] = '\0';
	found = try_file(cfg, path);
	free(path);
	return found;
}

#define TRY_PATH(cfg, ...) try_parts(cfg, (const char *const[]){ __VA_ARGS__, NULL })

static bool
progname_usable(const char *progname)
{
	return progname && *progname && strcmp(progname, ".") &&
	       strcmp(progname, "..") && !strchr(progname, '/');
}

int
shim_config_load_dir(struct shim_config *cfg, const char *progname,
		     const char *sysdir)
{
	bool per_prog = progname_usable(progname);
	const char *explicit = secure_getenv(SHIM_CONFIG_ENV_FILE);
	const char *xdg = secure_getenv("XDG_CONFIG_HOME");
	const char *home = secure_getenv("HOME");
	bool found = false;

	shim_config_init_defaults(cfg);
	if (!sysdir)
		sysdir = SHIM_CONFIG_SYSDIR;

	if (explicit && *explicit) {
		found = try_file(cfg, explicit);
		if (!found)
			config_warn(cfg, "environment: %s=%s: no such file; searching "
			     "the usual places", SHIM_CONFIG_ENV_FILE, explicit);
	}
	/* The XDG spec: a relative XDG_CONFIG_HOME is ignored. */
	if (!found && per_prog && xdg && xdg[0] == '/')
		found = TRY_PATH(cfg, xdg, "/rpcrdma-shim/", progname, ".conf");
	else if (!found && per_prog && home && *home)
		found = TRY_PATH(cfg, home, "/.config/rpcrdma-shim/", progname,
				 ".conf");
	if (!found && per_prog)
		found = TRY_PATH(cfg, sysdir, "/", progname, ".conf");
	if (!found)
		TRY_PATH(cfg, sysdir, "/default.conf");

	config_parse_env_list(cfg, environ, true);
	return (int)cfg->n_errors;
}

int
shim_config_load(struct shim_config *cfg, const char *progname)
{
	return shim_config_load_dir(cfg, progname, SHIM_CONFIG_SYSDIR);
}
