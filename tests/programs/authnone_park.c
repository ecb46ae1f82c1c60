/* A thread stopped inside libtirpc's AUTH_NONE marshal (authnone_park.h). */
#include <pthread.h>
#include <unistd.h>

#include <rpc/rpc.h>

#include "authnone_park.h"

static int entered[2] = { -1, -1 }, go_on[2] = { -1, -1 };
static pthread_t parked;

/* An encode stream whose putbytes waits until authnone_park_end(). */
static bool_t
park_putbytes(XDR *x, const char *p, u_int len)
{
	char c = 0;

	(void)x;
	(void)p;
	(void)len;
	if (write(entered[1], &c, 1) != 1)
		return FALSE;
	return read(go_on[0], &c, 1) == 1;
}

static const struct xdr_ops park_ops = {
	.x_putbytes = park_putbytes,
};

static void *
park_thread(void *arg)
{
	XDR x = { .x_op = XDR_ENCODE, .x_ops = (struct xdr_ops *)&park_ops };

	(void)arg;
	/* libtirpc takes its AUTH_NONE lock around this putbytes. */
	AUTH_MARSHALL(authnone_create(), &x);
	return NULL;
}

int
authnone_park_begin(void)
{
	char c;

	if ((entered[0] < 0 && pipe(entered)) || (go_on[0] < 0 && pipe(go_on)) ||
	    pthread_create(&parked, NULL, park_thread, NULL))
		return -1;
	if (read(entered[0], &c, 1) != 1) {
		authnone_park_end();
		return -1;
	}
	return 0;
}

void
authnone_park_end(void)
{
	char c = 0;

	if (write(go_on[1], &c, 1) == 1)
		pthread_join(parked, NULL);
}
