/*
 * The NFSv4.1 READ COMPOUND of nfs4_read.h, encoded and decoded with
 * libtirpc's XDR primitives (RFC 4506).
 */
#include "nfs4_read.h"

/* An operation number that must be op (decode) or is written (encode). */
static bool_t
xdr_op(XDR *xdrs, uint32_t op)
{
	uint32_t v = op;

	return xdr_uint32_t(xdrs, &v) && v == op;
}

static bool_t
xdr_tag(XDR *xdrs, char *tag, u_int *len)
{
	char *p = tag;

	return xdr_bytes(xdrs, &p, len, NFS4_TAG_MAX);
}

/* sessionid4: opaque[16], a fixed-size item (no length word). */
static bool_t
xdr_sessionid(XDR *xdrs, uint8_t *sid)
{
	return xdr_opaque(xdrs, (char *)sid, NFS4_SESSIONID_SIZE);
}

bool_t
xdr_nfs4_read_args(XDR *xdrs, struct nfs4_read_args *a)
{
	uint32_t nops = 3;
	char *fh = a->fh;

	return xdr_tag(xdrs, a->tag, &a->taglen) &&
	       xdr_uint32_t(xdrs, &a->minorversion) &&
	       xdr_uint32_t(xdrs, &nops) && nops == 3 &&
	       /* SEQUENCE4args */
	       xdr_op(xdrs, NFS4_OP_SEQUENCE) &&
	       xdr_sessionid(xdrs, a->sessionid) &&
	       xdr_uint32_t(xdrs, &a->seqid) &&
	       xdr_uint32_t(xdrs, &a->slotid) &&
	       xdr_uint32_t(xdrs, &a->highest_slotid) &&
	       xdr_bool(xdrs, &a->cachethis) &&
	       /* PUTFH4args */
	       xdr_op(xdrs, NFS4_OP_PUTFH) &&
	       xdr_bytes(xdrs, &fh, &a->fhlen, NFS4_FH_MAX) &&
	       /* READ4args */
	       xdr_op(xdrs, NFS4_OP_READ) &&
	       xdr_uint32_t(xdrs, &a->stateid_seqid) &&
	       xdr_opaque(xdrs, a->stateid_other, sizeof(a->stateid_other)) &&
	       xdr_uint64_t(xdrs, &a->offset) &&
	       xdr_uint32_t(xdrs, &a->count);
}

bool_t
xdr_nfs4_read_res(XDR *xdrs, struct nfs4_read_res *r)
{
	uint32_t nres = 3;

	if (!xdr_uint32_t(xdrs, &r->status) ||
	    !xdr_tag(xdrs, r->tag, &r->taglen) ||
	    !xdr_uint32_t(xdrs, &nres) || nres != 3)
		return FALSE;
	/* SEQUENCE4res, NFS4_OK */
	if (!xdr_op(xdrs, NFS4_OP_SEQUENCE) || !xdr_op(xdrs, 0) ||
	    !xdr_sessionid(xdrs, r->sessionid) ||
	    !xdr_uint32_t(xdrs, &r->seqid) ||
	    !xdr_uint32_t(xdrs, &r->slotid) ||
	    !xdr_uint32_t(xdrs, &r->highest_slotid) ||
	    !xdr_uint32_t(xdrs, &r->target_highest_slotid) ||
	    !xdr_uint32_t(xdrs, &r->status_flags))
		return FALSE;
	/* PUTFH4res */
	if (!xdr_op(xdrs, NFS4_OP_PUTFH) ||
	    !xdr_uint32_t(xdrs, &r->putfh_status) || r->putfh_status)
		return FALSE;
	/* READ4res: NFS4_OK, then READ4resok (eof, data<>) */
	return xdr_op(xdrs, NFS4_OP_READ) &&
	       xdr_uint32_t(xdrs, &r->read_status) && r->read_status == 0 &&
	       xdr_bool(xdrs, &r->eof) &&
	       xdr_bytes(xdrs, &r->data, &r->datalen, NFS4_READ_MAX);
}

uint64_t
nfs4_read_seed(uint64_t offset)
{
	return 0x4e46533400000000ull ^ offset;
}
