/*
 * A buffer that ends right before an inaccessible page, for the decoder
 * and encoder tests: reading or writing one octet past the data faults,
 * with or without a sanitizer.
 *
 *   struct guardbuf g;
 *   guardbuf_init(&g, 65536);
 *   uint8_t *p = guardbuf_place(&g, src, len);   (p + len is the guard)
 *   guardbuf_free(&g);
 */
#ifndef TESTS_UNIT_GUARDBUF_H
#define TESTS_UNIT_GUARDBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct guardbuf {
	uint8_t *map;
	size_t maplen;
	size_t cap;
};

static inline void
guardbuf_init(struct guardbuf *g, size_t cap)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	g->cap = (cap + page - 1) / page * page;
	g->maplen = g->cap + page;
	g->map = mmap(NULL, g->maplen, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->map == MAP_FAILED ||
	    mprotect(g->map + g->cap, page, PROT_NONE)) {
		perror("guardbuf");
		exit(99);
	}
}

/* Room for len octets ending at the guard page; contents undefined. */
static inline uint8_t *
guardbuf_tail(struct guardbuf *g, size_t len)
{
	if (len > g->cap) {
		fprintf(stderr, "guardbuf: %zu > %zu\n", len, g->cap);
		exit(99);
	}
	return g->map + g->cap - len;
}

/* A copy of src[0..len) ending at the guard page. */
static inline uint8_t *
guardbuf_place(struct guardbuf *g, const void *src, size_t len)
{
	uint8_t *p = guardbuf_tail(g, len);

	if (len)
		memcpy(p, src, len);
	return p;
}

static inline void
guardbuf_free(struct guardbuf *g)
{
	munmap(g->map, g->maplen);
	g->map = NULL;
}

#endif
