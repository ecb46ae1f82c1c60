/*
 * fork() generations (forkgen.h).
 */
#include <pthread.h>

#include "common/forkgen.h"

static unsigned int gen;
static pthread_once_t gen_once = PTHREAD_ONCE_INIT;

static void
gen_child(void)
{
	__atomic_add_fetch(&gen, 1, __ATOMIC_RELAXED);
}

static void
gen_register(void)
{
	/*
	 * Should it fail (no memory), no child is told from its parent:
	 * what it inherited passes for its own.
	 */
	(void)pthread_atfork(NULL, NULL, gen_child);
}

unsigned int
fork_gen(void)
{
	(void)pthread_once(&gen_once, gen_register);
	return __atomic_load_n(&gen, __ATOMIC_RELAXED);
}
