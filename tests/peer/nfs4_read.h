/*
 * One NFSv4.1 READ COMPOUND (RFC 8881 s16.2; SEQUENCE s18.46, PUTFH
 * s18.19, READ s18.22) and its reply, as XDR routines over libtirpc's
 * primitives.  rdma-peer's nfs4read case sends it (call_nfs4.c) and
 * nfs4-read-server, a libtirpc program run under the shim, answers it:
 * the READ data is the one item of the reply a Write chunk may carry
 * (RFC 8267 s5), after the 16-octet session id of SEQUENCE.
 */
#ifndef RDMA_PEER_NFS4_READ_H
#define RDMA_PEER_NFS4_READ_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>

#define NFS4_PROG 100003u
#define NFS4_VERS 4u
#define NFS4_PROC_COMPOUND 1u

#define NFS4_OP_PUTFH 22u
#define NFS4_OP_READ 25u
#define NFS4_OP_SEQUENCE 53u

#define NFS4_SESSIONID_SIZE 16
#define NFS4_FH_MAX 128
#define NFS4_TAG_MAX 64
/* The largest READ the server answers. */
#define NFS4_READ_MAX (4u << 20)

struct nfs4_read_args {
	char tag[NFS4_TAG_MAX];
	u_int taglen;
	uint32_t minorversion;
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t seqid, slotid, highest_slotid;
	bool_t cachethis;
	char fh[NFS4_FH_MAX];
	u_int fhlen;
	uint32_t stateid_seqid;
	char stateid_other[12];
	uint64_t offset;
	uint32_t count;
};

struct nfs4_read_res {
	uint32_t status;
	char tag[NFS4_TAG_MAX];
	u_int taglen;
	uint8_t sessionid[NFS4_SESSIONID_SIZE];
	uint32_t seqid, slotid, highest_slotid, target_highest_slotid;
	uint32_t status_flags;
	uint32_t putfh_status;
	uint32_t read_status;
	bool_t eof;
	char *data;		/* decode: allocated when NULL */
	u_int datalen;
};

bool_t xdr_nfs4_read_args(XDR *xdrs, struct nfs4_read_args *a);
bool_t xdr_nfs4_read_res(XDR *xdrs, struct nfs4_read_res *r);

/* The file's octets at offset: a pattern both ends compute. */
uint64_t nfs4_read_seed(uint64_t offset);

#endif
