/*
 * rdma-peer's nfs4read case: one NFSv4.1 READ COMPOUND (nfs4_read.h) of
 * N octets, run with --prog 100003 --vers 4 against nfs4-read-server
 * under the shim (or any NFSv4.1 server knowing the session id sent).
 * With +write the call offers a Write chunk of N octets: the server must
 * place the READ data there and nothing else, the SEQUENCE result (its
 * 16-octet session id) staying inline (RFC 8267 s5; RFC 8166 s4.4.6).
 */
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "nfs4_read.h"
#include "pattern.h"

static struct nfs4_read_args nfs4_args;
static struct nfs4_read_res nfs4_res;

/* The session id and tag sent: fixed, checked when echoed. */
static const uint8_t nfs4_sessionid[NFS4_SESSIONID_SIZE] = {
	0x53, 0x45, 0x53, 0x53, 0x49, 0x4f, 0x4e, 0x2d,
	0x49, 0x44, 0x2d, 0x31, 0x36, 0x4f, 0x43, 0x54,
};
static const char nfs4_tag[] = "rdma-peer-read";

bool
nfs4_case_call(const struct pcase *pc, uint32_t xid, struct call_io *io,
	       uint32_t *rpc_proc)
{
	struct nfs4_read_args *a = &nfs4_args;

	memset(a, 0, sizeof(*a));
	memcpy(a->tag, nfs4_tag, sizeof(nfs4_tag) - 1);
	a->taglen = sizeof(nfs4_tag) - 1;
	a->minorversion = 1;
	memcpy(a->sessionid, nfs4_sessionid, sizeof(a->sessionid));
	a->seqid = xid;
	a->slotid = 3;
	a->highest_slotid = 7;
	a->fhlen = 32;
	memset(a->fh, 0x66, a->fhlen);
	a->offset = (uint64_t)xid << 12;
	a->count = pc->num;

	free(nfs4_res.data);
	memset(&nfs4_res, 0, sizeof(nfs4_res));
	io->xargs = XDRPROC(xdr_nfs4_read_args);
	io->args = a;
	io->xres = XDRPROC(xdr_nfs4_read_res);
	io->res = &nfs4_res;
	*rpc_proc = NFS4_PROC_COMPOUND;
	return true;
}

const char *
nfs4_case_check(const struct pcase *pc, const struct call_io *io)
{
	const struct nfs4_read_res *r = io->res;
	const struct nfs4_read_args *a = io->args;

	if (r->status || r->taglen != a->taglen ||
	    memcmp(r->tag, a->tag, a->taglen))
		return "mismatch";
	if (memcmp(r->sessionid, a->sessionid, sizeof(r->sessionid)) ||
	    r->seqid != a->seqid || r->slotid != a->slotid)
		return "sequence_mismatch";
	if (r->datalen != pc->num ||
	    pattern_check(r->data, r->datalen, nfs4_read_seed(a->offset)) != pc->num)
		return "read_data_mismatch";
	return "ok";
}
