/*
 * Unit tests of config/file.c: the syntax of a file, errors in it, and
 * the search order of the files.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "config_fixture.h"

/* ---- file syntax ---------------------------------------------------------- */

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

/* ---- whose file ---------------------------------------------------------- */

/* Load for "prog" with HOME at home and sysdir etc; message 0 or "". */
static const char *
load_home(struct shim_config *c, const char *home, const char *etc)
{
	setenv("HOME", home, 1);
	shim_config_load_dir(c, "prog", etc);
	return c->nmsgs ? c->msgs[0].text : "";
}

/*
 * Only a regular file of the process's own user or root's, that nobody
 * else may write, is read; any other found stops the search as an error.
 */
static void
test_trust(void)
{
	char home[PATH_MAX], etc[PATH_MAX], f[PATH_MAX], want[PATH_MAX * 3];
	char dir[PATH_MAX], secret[PATH_MAX];
	struct shim_config c;

	unsetenv("XDG_CONFIG_HOME");
	unsetenv("RPCRDMA_SHIM_CONFIG");
	mkdir(in_tmp(home, "h2"), 0755);
	mkdir(in_tmp(f, "h2/.config"), 0755);
	mkdir(in_tmp(f, "h2/.config/rpcrdma-shim"), 0755);
	mkdir(in_tmp(etc, "etc2"), 0755);
	write_text(in_tmp(f, "etc2/prog.conf"), "credits = 4\n");
	in_tmp(f, "h2/.config/rpcrdma-shim/prog.conf");

	write_text(f, "credits = 3\n");
	CHECK(chmod(f, 0600) == 0, "made the file 0600");
	CHECK_STR(load_home(&c, home, etc), "", "a file of our own, 0600: read");
	CHECK(c.credits == 3 && !c.bad, "... its value taken");
	shim_config_free(&c);

	CHECK(chmod(f, 0664) == 0, "made it 0664");
	snprintf(want, sizeof(want), "%s: not read: writable by its group (mode "
		 "0664; chmod go-w it)", f);
	CHECK_STR(load_home(&c, home, etc), want, "a file its group may write: "
		  "refused, named, and why");
	CHECK(c.bad && c.credits == 32 && !strcmp(c.source, f),
	      "... an error that stops the search (the next file not read)");
	shim_config_free(&c);

	CHECK(chmod(f, 0646) == 0, "made it 0646");
	snprintf(want, sizeof(want), "%s: not read: writable by others (mode "
		 "0646; chmod go-w it)", f);
	CHECK_STR(load_home(&c, home, etc), want, "a file others may write: "
		  "refused");
	shim_config_free(&c);

	CHECK(chmod(f, 0666) == 0, "made it 0666");
	snprintf(want, sizeof(want), "%s: not read: writable by its group and "
		 "others (mode 0666; chmod go-w it)", f);
	CHECK_STR(load_home(&c, home, etc), want, "0666: refused");
	shim_config_free(&c);

	setenv("RPCRDMA_SHIM_CONFIG", f, 1);
	shim_config_load_dir(&c, "prog", etc);
	CHECK(c.bad && c.credits == 32, "RPCRDMA_SHIM_CONFIG is checked "
	      "the same");
	shim_config_free(&c);
	unsetenv("RPCRDMA_SHIM_CONFIG");

	/* The directories on the way count too. */
	write_text(f, "credits = 3\n");
	CHECK(chmod(f, 0644) == 0, "made the file 0644 again");
	in_tmp(dir, "h2/.config/rpcrdma-shim");
	CHECK(chmod(dir, 0775) == 0, "made its directory 0775");
	snprintf(want, sizeof(want), "%s: not read: directory %s is writable by "
		 "its group (mode 0775)", f, dir);
	CHECK_STR(load_home(&c, home, etc), want, "a directory its group may "
		  "write: refused, named");
	CHECK(c.bad && c.credits == 32, "... nothing of it taken");
	shim_config_free(&c);
	CHECK(chmod(dir, 01777) == 0, "made it 1777, as /tmp");
	CHECK_STR(load_home(&c, home, etc), "", "a sticky directory: read (no "
		  "one else may replace our file there)");
	CHECK(c.credits == 3, "... its value taken");
	shim_config_free(&c);
	CHECK(chmod(dir, 0755) == 0, "made it 0755");

	/* A FIFO would block a reader until someone writes to it. */
	remove(f);
	CHECK(mkfifo(f, 0600) == 0, "made a FIFO in its place");
	snprintf(want, sizeof(want), "%s: not read: not a regular file", f);
	CHECK_STR(load_home(&c, home, etc), want, "a FIFO: refused at once");
	shim_config_free(&c);
	remove(f);

	if (geteuid() != 0) {
		SKIP("another user's file in $HOME (making one needs root)");
		SKIP("... and root's own file in its place");
		SKIP("a link to root's secret in another user's HOME");
		return;
	}
	/* A root process whose HOME is another user's (sudo -E, su -m). */
	write_text(f, "credits = 3\n");
	CHECK(chmod(f, 0644) == 0 && chown(f, 65534, 65534) == 0,
	      "gave the file to nobody");
	snprintf(want, sizeof(want), "%s: not read: owned by uid 65534, not by "
		 "this process's user (uid 0) or root", f);
	CHECK_STR(load_home(&c, home, etc), want, "root, another user's file in "
		  "$HOME: refused, named, and why");
	CHECK(c.bad && c.credits == 32, "... nothing of it taken");
	shim_config_free(&c);

	CHECK(chown(f, 0, 0) == 0, "gave it to root");
	CHECK_STR(load_home(&c, home, etc), "", "root's own file: read");
	CHECK(c.credits == 3, "... its value taken");
	shim_config_free(&c);
	remove(f);

	/*
	 * The user whose HOME it is links the file to one of root's secrets:
	 * read, its lines would come back one by one in the messages.
	 */
	write_text(in_tmp(secret, "secret"), "root:$y$j9T$secret:19000:0:99999:7:::\n");
	CHECK(chmod(secret, 0600) == 0 && symlink(secret, f) == 0,
	      "linked the file to a secret of root's");
	CHECK(chown(home, 65534, 65534) == 0, "gave the home directory to "
	      "nobody");
	snprintf(want, sizeof(want), "%s: not read: directory %s is owned by uid "
		 "65534, not by this process's user (uid 0) or root", f, home);
	CHECK_STR(load_home(&c, home, etc), want, "root, HOME another user's, "
		  "the file a link to root's secret: refused, named");
	CHECK(c.nmsgs == 1 && !strstr(c.msgs[0].text, "secret:"), "... and "
	      "nothing of the secret shown");
	shim_config_free(&c);
	remove(f);
	CHECK(chown(home, 0, 0) == 0, "gave the home directory back");
}

int
main(void)
{
	fixture_init();
	test_syntax();
	test_many_errors();
	test_search();
	test_trust();
	fixture_done();
	return check_done();
}
