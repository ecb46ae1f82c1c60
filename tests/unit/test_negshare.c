/*
 * The negative cache shared between processes (shim/negshare.c): entries
 * written by one "process" found by the next, expiry and its bound, the
 * no-device wildcard, and every file or directory that must be ignored
 * (open to others, another user's, a symbolic link, a hard link, garbage
 * of any size), each in a fresh directory under $TMPDIR.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addr_fixture.h"
#include "check.h"
#include "negshare.h"

#define SA(p) ((const struct sockaddr *)(p))
#define NOW 1800000000

static char base[256];
static unsigned int ndirs;

/* A new directory path (not made) for one case. */
static const char *
fresh_dir(void)
{
	static char dir[300];

	snprintf(dir, sizeof(dir), "%s/d%u", base, ndirs++);
	return dir;
}

static const char *
file_of(const char *dir)
{
	static char path[400];

	snprintf(path, sizeof(path), "%s/%s", dir, NEGSHARE_FILE);
	return path;
}

/* What a lookup finds; RDMA_FAIL_MAX when nothing. */
static enum rdma_fail
found(const char *dir, const void *peer, unsigned int max_s, time_t now)
{
	struct negshare_hit hit;

	if (!negshare_lookup(dir, SA(peer), max_s, now, &hit))
		return RDMA_FAIL_MAX;
	return hit.why;
}

static off_t
size_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? st.st_size : -1;
}

static void
test_shared(void)
{
	const char *dir = fresh_dir();
	struct sockaddr_in a = in4("10.77.0.2", 20049);
	struct sockaddr_in a2 = in4("10.77.0.2", 20050);
	struct sockaddr_in6 c = in6("fd77::2", 20049);
	struct sockaddr_in z = in4("10.9.9.9", 1);
	struct negshare_hit hit;
	struct stat st;

	CHECK_EQ_U(found(dir, &a, 60, NOW), RDMA_FAIL_MAX, "no directory yet: nothing found");
	negshare_add(dir, SA(&a), RDMA_FAIL_TIMEOUT, 60, NOW);
	CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
	      "the directory is made, mode 0700");
	CHECK(stat(file_of(dir), &st) == 0 && (st.st_mode & 0777) == 0600,
	      "the file is made, mode 0600");
	CHECK(negshare_lookup(dir, SA(&a), 60, NOW + 10, &hit) &&
	      hit.why == RDMA_FAIL_TIMEOUT && hit.pid == getpid() &&
	      hit.expires == NOW + 60,
	      "the peer is found with its reason, its finder and its expiry");
	CHECK_EQ_U(found(dir, &a2, 60, NOW), RDMA_FAIL_MAX, "another port is another peer");
	negshare_add(dir, SA(&c), RDMA_FAIL_REFUSED, 60, NOW);
	CHECK_EQ_U(found(dir, &c, 60, NOW), RDMA_FAIL_REFUSED, "an IPv6 peer is found");
	CHECK_EQ_U(found(dir, &a, 60, NOW), RDMA_FAIL_TIMEOUT, "the first peer is still there");

	CHECK_EQ_U(found(dir, &a, 60, NOW + 60), RDMA_FAIL_MAX, "an entry expires");
	CHECK_EQ_U(found(dir, &c, 10, NOW), RDMA_FAIL_MAX,
		   "an entry beyond the reader's own negative_cache is not believed");
	CHECK_EQ_U(found(dir, &c, 0, NOW), RDMA_FAIL_MAX, "negative_cache 0: nothing is looked up");

	negshare_add(dir, SA(&a2), RDMA_FAIL_MEMLOCK, 60, NOW);
	CHECK_EQ_U(found(dir, &a2, 60, NOW), RDMA_FAIL_MAX,
		   "a memory failure is this process's: not shared");
	negshare_add(dir, SA(&a2), RDMA_FAIL_NO_DEVICE, 60, NOW);
	CHECK_EQ_U(found(dir, &z, 60, NOW), RDMA_FAIL_NO_DEVICE,
		   "no RDMA device holds for every peer");
}

static void
test_bounded(void)
{
	const char *dir = fresh_dir();
	struct sockaddr_in p;
	char addr[32];
	off_t size = -1;
	bool same = true;
	unsigned int i, held = 0;

	for (i = 0; i < 4 * NEGSHARE_SLOTS; i++) {
		snprintf(addr, sizeof(addr), "10.1.%u.%u", i / 200, i % 200 + 1);
		p = in4(addr, 2049);
		negshare_add(dir, SA(&p), RDMA_FAIL_REFUSED, 1000, NOW + (time_t)i);
		if (i == 0)
			size = size_of(file_of(dir));
		else if (size_of(file_of(dir)) != size)
			same = false;
	}
	CHECK(size > 0 && same, "the file keeps its size however many peers fail (%lld)",
	      (long long)size);
	for (i = 3 * NEGSHARE_SLOTS; i < 4 * NEGSHARE_SLOTS; i++) {
		snprintf(addr, sizeof(addr), "10.1.%u.%u", i / 200, i % 200 + 1);
		p = in4(addr, 2049);
		held += found(dir, &p, 1000, NOW + 4 * NEGSHARE_SLOTS) == RDMA_FAIL_REFUSED;
	}
	CHECK_EQ_U(held, NEGSHARE_SLOTS, "the latest peers are the ones kept");
}

/* A directory with a valid entry for a, then damaged by how. */
static const char *
dir_with_entry(const struct sockaddr_in *a)
{
	const char *dir = fresh_dir();

	negshare_add(dir, SA(a), RDMA_FAIL_TIMEOUT, 60, NOW);
	return dir;
}

static void
write_file(const char *path, const void *buf, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		perror(path);
	if (fd >= 0)
		close(fd);
	chmod(path, mode);
}

static void
test_garbage(void)
{
	struct sockaddr_in a = in4("10.77.0.5", 20049);
	char junk[5000];
	const char *dir;
	off_t size;
	unsigned int i;

	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)(i * 131 + 7);
	dir = dir_with_entry(&a);
	size = size_of(file_of(dir));
	write_file(file_of(dir), junk, (size_t)size, 0600);
	CHECK_EQ_U(found(dir, &a, 60, NOW), RDMA_FAIL_MAX, "garbage of the right size is not read");
	negshare_add(dir, SA(&a), RDMA_FAIL_REFUSED, 60, NOW);
	CHECK_EQ_U(found(dir, &a, 60, NOW), RDMA_FAIL_REFUSED, "the next failure replaces it");

	write_file(file_of(dir), junk, sizeof(junk), 0600);
	CHECK_EQ_U(found(dir, &a, 60, NOW), RDMA_FAIL_MAX, "a longer file is not read");
	negshare_add(dir, SA(&a), RDMA_FAIL_TIMEOUT, 60, NOW);
	CHECK(size_of(file_of(dir)) == size && found(dir, &a, 60, NOW) == RDMA_FAIL_TIMEOUT,
	      "and is replaced at its own size");
	write_file(file_of(dir), junk, 7, 0600);
	CHECK_EQ_U(found(dir, &a, 60, NOW), RDMA_FAIL_MAX, "a short file is not read");
}

/* The entry must not be found, nor may a failure change what is there. */
static void
check_ignored(const char *dir, const struct sockaddr_in *a, const char *what)
{
	struct sockaddr_in b = in4("10.77.0.99", 20049);

	CHECK_EQ_U(found(dir, a, 60, NOW), RDMA_FAIL_MAX, "%s: not read", what);
	negshare_add(dir, SA(&b), RDMA_FAIL_REFUSED, 60, NOW);
	CHECK_EQ_U(found(dir, &b, 60, NOW), RDMA_FAIL_MAX, "%s: not written", what);
}

static void
test_refused(void)
{
	struct sockaddr_in a = in4("10.77.0.6", 20049);
	char target[512], link_dir[512];
	const char *dir;
	struct stat st;

	dir = dir_with_entry(&a);
	chmod(file_of(dir), 0644);
	check_ignored(dir, &a, "a file others may read");
	CHECK(stat(file_of(dir), &st) == 0 && (st.st_mode & 0777) == 0644,
	      "its mode is left as it was");

	dir = dir_with_entry(&a);
	chmod(dir, 0755);
	check_ignored(dir, &a, "a directory others may read");

	dir = dir_with_entry(&a);
	snprintf(target, sizeof(target), "%s.target", file_of(dir));
	rename(file_of(dir), target);
	if (symlink(target, file_of(dir)) < 0)
		perror("symlink");
	check_ignored(dir, &a, "a symbolic link in place of the file");
	CHECK(lstat(file_of(dir), &st) == 0 && S_ISLNK(st.st_mode),
	      "the link is left as it was");

	dir = dir_with_entry(&a);
	snprintf(link_dir, sizeof(link_dir), "%s.link", dir);
	if (symlink(dir, link_dir) < 0)
		perror("symlink");
	check_ignored(link_dir, &a, "a symbolic link in place of the directory");

	dir = dir_with_entry(&a);
	snprintf(target, sizeof(target), "%s.hard", file_of(dir));
	if (link(file_of(dir), target) < 0)
		perror("link");
	check_ignored(dir, &a, "a file with a second hard link");

	dir = dir_with_entry(&a);
	unlink(file_of(dir));
	if (mkdir(file_of(dir), 0700) < 0)
		perror("mkdir");
	check_ignored(dir, &a, "a directory in place of the file");

	if (geteuid() == 0) {
		dir = dir_with_entry(&a);
		if (chown(file_of(dir), 65534, 65534) < 0)
			perror("chown");
		check_ignored(dir, &a, "a file of another user");
		dir = dir_with_entry(&a);
		if (chown(dir, 65534, 65534) < 0)
			perror("chown");
		check_ignored(dir, &a, "a directory of another user");
	} else {
		/* "/" is root's: not ours, whatever is below it. */
		check_ignored("/", &a, "a directory of another user");
	}
}

static void
test_dir_choice(void)
{
	char dir[256], want[256];

	setenv("XDG_RUNTIME_DIR", "/run/user/4242", 1);
	CHECK(negshare_dir(dir, sizeof(dir)) &&
	      strcmp(dir, "/run/user/4242/rpcrdma-shim") == 0,
	      "under $XDG_RUNTIME_DIR when it is set (%s)", dir);
	unsetenv("XDG_RUNTIME_DIR");
	snprintf(want, sizeof(want), "/run/user/%u", (unsigned)geteuid());
	if (access(want, F_OK) != 0) {
		snprintf(want, sizeof(want), "/tmp/rpcrdma-shim-%u", (unsigned)geteuid());
		CHECK(negshare_dir(dir, sizeof(dir)) && strcmp(dir, want) == 0,
		      "else, without /run/user/UID, in /tmp, named after the uid (%s)", dir);
	} else {
		strcat(want, "/rpcrdma-shim");
		CHECK(negshare_dir(dir, sizeof(dir)) && strcmp(dir, want) == 0,
		      "else under /run/user/UID (%s)", dir);
	}
	CHECK(!negshare_dir(dir, 8), "a buffer too small gives no directory");
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/test_negshare.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror(base);
		return 1;
	}
	test_shared();
	test_bounded();
	test_garbage();
	test_refused();
	test_dir_choice();
	nftw(base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return check_done();
}
