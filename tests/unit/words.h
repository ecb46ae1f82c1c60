/*
 * Transport headers built word by word, for the codec tests' hand-written
 * and malformed cases, and the helpers that compare return codes.
 *
 *   struct words w;
 *   put_prefix(&w, xid, vers, proc);   (credits 32; starts w afresh)
 *   put(&w, 1), put_seg(&w, handle, length, offset);
 *   put_read_segs(&w, n, position), put_write_chunk(&w, n, handle)
 *   W(x), HLOO(h, l, hi, lo)           big-endian octets for arrays
 *   CHECK_ELEMENT(&gb, expr, full, name)   an element encoder's bounds
 */
#ifndef TESTS_UNIT_WORDS_H
#define TESTS_UNIT_WORDS_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "guardbuf.h"

#define CHECK_RC(got, want, ...)                                          \
	do {                                                              \
		long long g_ = (long long)(got), w_ = (long long)(want);  \
		CHECK(g_ == w_, __VA_ARGS__);                             \
		if (g_ != w_)                                             \
			printf("#   got %lld, want %lld\n", g_, w_);      \
	} while (0)

/*
 * An element encoder, expr, written with p and end (e.g.
 * rpcrdma_encode_segment(p, end, &s)), against every buffer of 0 to full
 * octets ending at the guard page of g: NULL under full octets, the end of
 * the buffer at full; then NULL in, NULL out (p and end NULL).  Two test
 * points.
 */
#define CHECK_ELEMENT(g, expr, full, name)                                \
	do {                                                              \
		unsigned int bad_ = 0;                                    \
		uint8_t *p, *end, *r_;                                    \
		size_t len_;                                              \
		for (len_ = 0; len_ <= (full); len_++) {                  \
			p = guardbuf_tail((g), len_);                     \
			end = p + len_;                                   \
			r_ = (expr);                                      \
			if (len_ < (full) ? r_ != NULL : r_ != end)       \
				bad_++;                                   \
		}                                                         \
		CHECK(bad_ == 0, "%s: NULL in every buffer under %d octets", \
		      name, (int)(full));                                 \
		p = end = NULL;                                           \
		CHECK((expr) == NULL, "%s: NULL in, NULL out", name);     \
	} while (0)

#define W(x)                                                              \
	(uint8_t)((uint32_t)(x) >> 24), (uint8_t)((uint32_t)(x) >> 16),   \
	(uint8_t)((uint32_t)(x) >> 8), (uint8_t)(uint32_t)(x)
#define HLOO(h, l, hi, lo) W(h), W(l), W(hi), W(lo)

struct words {
	uint8_t b[8192];
	size_t n;
};

static inline void
put(struct words *w, uint32_t v)
{
	w->b[w->n++] = (uint8_t)(v >> 24);
	w->b[w->n++] = (uint8_t)(v >> 16);
	w->b[w->n++] = (uint8_t)(v >> 8);
	w->b[w->n++] = (uint8_t)v;
}

static inline void
put_prefix(struct words *w, uint32_t xid, uint32_t vers, uint32_t proc)
{
	w->n = 0;
	put(w, xid);
	put(w, vers);
	put(w, 32);
	put(w, proc);
}

static inline void
put_seg(struct words *w, uint32_t handle, uint32_t length, uint64_t offset)
{
	put(w, handle);
	put(w, length);
	put(w, (uint32_t)(offset >> 32));
	put(w, (uint32_t)offset);
}

/*
 * The lists at and over the decoders' limits, the same octets in both
 * versions: segments of 4 octets at offset 0, handles counting up.
 */

/* n entries of a read list, all at position: { 1 PHLOO }, no terminator. */
static inline void
put_read_segs(struct words *w, unsigned int n, uint32_t position)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		put(w, 1);
		put(w, position);
		put_seg(w, i, 4, 0);
	}
}

/* A counted Write chunk (or a Reply chunk's body): N { HLOO }N. */
static inline void
put_write_chunk(struct words *w, unsigned int n, uint32_t handle)
{
	unsigned int i;

	put(w, n);
	for (i = 0; i < n; i++)
		put_seg(w, handle + i, 4, 0);
}

/* Empty read list, write list and reply chunk. */
static inline void
put_no_chunks(struct words *w)
{
	put(w, 0);
	put(w, 0);
	put(w, 0);
}

#endif
