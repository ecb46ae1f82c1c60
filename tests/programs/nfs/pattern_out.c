/*
 * nfstest-pattern SEED SIZE: write SIZE bytes of the rpctest data pattern
 * for SEED (../pattern.h) to stdout, so that shell tests make files whose
 * every 8-byte word depends on its offset: a byte in the wrong place never
 * compares equal.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../pattern.h"

#define MAX_SIZE (1ULL << 30)

static unsigned long long
number(const char *s)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-') {
		fprintf(stderr, "nfstest-pattern: bad number: %s\n", s);
		exit(64);
	}
	return v;
}

int
main(int argc, char **argv)
{
	unsigned long long seed, size;
	unsigned char *buf;
	size_t done = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: nfstest-pattern SEED SIZE\n");
		return 64;
	}
	seed = number(argv[1]);
	size = number(argv[2]);
	if (size > MAX_SIZE) {
		fprintf(stderr, "nfstest-pattern: at most %llu bytes\n", MAX_SIZE);
		return 64;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		fprintf(stderr, "nfstest-pattern: cannot allocate %llu bytes\n", size);
		return 1;
	}
	pattern_fill(buf, size, seed);
	while (done < size) {
		ssize_t w = write(1, buf + done, size - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			fprintf(stderr, "nfstest-pattern: write: %s\n", strerror(errno));
			return 1;
		}
		done += (size_t)w;
	}
	free(buf);
	return 0;
}
