/*
 * A thread stopped inside libtirpc's AUTH_NONE marshal, which holds
 * libtirpc's process-wide AUTH_NONE lock for it, until told to go on: a
 * fork() taken meanwhile leaves that lock held in the child for good
 * (transport/auth_none.h).  rpctest-client -F and tests/unit use it.
 */
#ifndef TESTS_PROGRAMS_AUTHNONE_PARK_H
#define TESTS_PROGRAMS_AUTHNONE_PARK_H

/* 0 once the thread is inside the marshal, -1 when it cannot be. */
int authnone_park_begin(void);
/* Let it go on, and wait for it. */
void authnone_park_end(void);

#endif
