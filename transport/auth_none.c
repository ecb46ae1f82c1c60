/* AUTH_NONE without libtirpc's lock (auth_none.h). */
#include "auth_none.h"

/*
 * RFC 5531 s8.1: flavor AUTH_NONE (0) with an empty body, for the
 * credential and for the verifier: four zero words on the wire.
 */
static const char none_wire[4 * BYTES_PER_XDR_UNIT];

static void
none_nextverf(AUTH *auth)
{
	(void)auth;
}

static int
none_marshal(AUTH *auth, XDR *xdrs)
{
	(void)auth;
	return XDR_PUTBYTES(xdrs, none_wire, sizeof(none_wire));
}

/* The server's verifier is not checked, as libtirpc's AUTH_NONE. */
static int
none_validate(AUTH *auth, struct opaque_auth *verf)
{
	(void)auth;
	(void)verf;
	return TRUE;
}

/* Nothing to refresh: an AUTH_ERROR reply ends the call. */
static int
none_refresh(AUTH *auth, void *msg)
{
	(void)auth;
	(void)msg;
	return FALSE;
}

/* The handle is a constant: auth_destroy() leaves it as it was. */
static void
none_destroy(AUTH *auth)
{
	(void)auth;
}

/* No integrity or privacy: the arguments and results as they are. */
static int
none_wrap(AUTH *auth, XDR *xdrs, xdrproc_t proc, caddr_t where)
{
	(void)auth;
	return proc(xdrs, where);
}

static struct auth_ops none_ops = {
	.ah_nextverf = none_nextverf,
	.ah_marshal = none_marshal,
	.ah_validate = none_validate,
	.ah_refresh = none_refresh,
	.ah_destroy = none_destroy,
	.ah_wrap = none_wrap,
	.ah_unwrap = none_wrap,
};

static AUTH none_auth = {
	.ah_cred = { .oa_flavor = AUTH_NONE },
	.ah_verf = { .oa_flavor = AUTH_NONE },
	.ah_ops = &none_ops,
};

AUTH *
rpcrdma_authnone(void)
{
	return &none_auth;
}
