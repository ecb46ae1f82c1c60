/*
 * A very small TAP producer for the unit tests (meson protocol 'tap').
 *
 *   CHECK(expr, "what")          one test point
 *   CHECK_EQ_U(a, b, "what")     unsigned comparison, prints both on failure
 *   return check_done();         prints the plan, exit status 1 on failure
 */
#ifndef TESTS_UNIT_CHECK_H
#define TESTS_UNIT_CHECK_H

#include <stdio.h>

static unsigned int check_n, check_failed;

#define CHECK(expr, ...)                                                  \
	do {                                                              \
		int ok_ = !!(expr);                                       \
		printf("%s %u - ", ok_ ? "ok" : "not ok", ++check_n);     \
		printf(__VA_ARGS__);                                      \
		printf("\n");                                             \
		if (!ok_) {                                               \
			check_failed++;                                   \
			printf("# %s:%d: %s\n", __FILE__, __LINE__, #expr); \
		}                                                         \
	} while (0)

#define CHECK_EQ_U(a, b, ...)                                             \
	do {                                                              \
		unsigned long long a_ = (unsigned long long)(a);          \
		unsigned long long b_ = (unsigned long long)(b);          \
		CHECK(a_ == b_, __VA_ARGS__);                             \
		if (a_ != b_)                                             \
			printf("#   got %llu (0x%llx), want %llu (0x%llx)\n", \
			       a_, a_, b_, b_);                           \
	} while (0)

static inline int
check_done(void)
{
	printf("1..%u\n", check_n);
	return check_failed ? 1 : 0;
}

#endif
