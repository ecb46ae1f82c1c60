/*
 * Upper Layer Bindings (RFC 8166 s6): what the transport must know of the
 * programs it carries to place their data directly and to size the chunks
 * of a call.
 *
 * For NFS versions 2, 3 and 4.x (RFC 8267) a table says, for each
 * procedure (and, inside an NFSv4 COMPOUND, each operation), how large
 * its reply can be and which result item is eligible for direct data
 * placement: the data of READ and the pathname of READLINK (RFC 8267 s4.1,
 * s4.2, s5.2).  Every other program follows the convention two shims keep
 * between themselves: no reply size is known (the client offers a Reply
 * chunk of max_reply), and when the client offers a Write chunk the first
 * variable-length opaque result of at least one octet goes there.
 * Placement can be turned off per program (ulb_set_no_placement): neither
 * side then offers or uses a Write chunk for it.
 *
 * Pure functions over encoded XDR: no device, no allocation.  The lengths
 * read from a message are checked against its size before use.
 */
#ifndef TRANSPORT_ULB_H
#define TRANSPORT_ULB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ULB_PROG_NFS 100003u
/* RFC 8166 s6 (and IANA): the NFS/RDMA port. */
#define ULB_NFS_RDMA_PORT 20049u

/* The result item a procedure's reply may have placed in a Write chunk. */
enum ulb_item {
	ULB_ITEM_NONE,		/* nothing is DDP-eligible */
	ULB_ITEM_READ,		/* file data of a READ (NFS) */
	ULB_ITEM_READLINK,	/* pathname of a READLINK (NFS) */
	ULB_ITEM_FIRST_OPAQUE,	/* the shim-to-shim convention */
};

/* What the bindings say of one call, read from its encoded message. */
struct ulb_call {
	uint32_t prog, vers, proc;
	bool known;		/* a binding of this table describes it */
	bool placement;		/* placement is allowed for the program */
	/*
	 * The largest reply message (RPC header and verifier included), 0
	 * when it is not known; without the DDP item when 'item' names one.
	 */
	uint64_t max_reply;
	enum ulb_item item;	/* the DDP-eligible result */
	uint32_t item_max;	/* its largest length, 0: unknown */
};

/*
 * Octets an accepted reply's RPC header may take: xid, message type,
 * reply and accept status, a verifier of up to MAX_AUTH_BYTES, and an
 * RPCSEC_GSS integrity or privacy wrapping around the results.
 */
#define ULB_REPLY_HDR_MAX (24u + 400u + 424u)

/*
 * Read the encoded call msg (from its XID) and fill *c.  Returns 0, or
 * -EBADMSG when msg is not an RPC call.  A call the tables do not
 * describe (another program, an NFS procedure or operation they do not
 * know) gets known == false or max_reply == 0, never an error.
 */
int ulb_parse_call(const uint8_t *msg, size_t len, struct ulb_call *c);

/*
 * Where the results of an encoded reply start (after an accepted,
 * successful reply header), or -1 when it has none.  An RPCSEC_GSS
 * verifier also gives -1: wrapped results are never placed.
 */
long ulb_results_offset(const uint8_t *msg, size_t len);

/*
 * Whether the opaque item whose length word is the last four octets of
 * res[0..len) (the results encoded or decoded so far) is the call's
 * DDP-eligible item, of item_len octets.  For ULB_ITEM_FIRST_OPAQUE
 * every item answers true: the caller takes the first.
 */
bool ulb_is_item(const struct ulb_call *c, const uint8_t *res, size_t len,
		 uint32_t item_len);

/*
 * The chunks a call offers (RFC 8166 s5.3.2, s5.3.3), from what the
 * binding says of it and the connection's limits.
 */
struct ulb_limits {
	uint64_t max_reply;	/* the largest Reply chunk (max_reply + slack) */
	uint64_t write_chunk;	/* the convention's Write chunk, 0: none */
	uint32_t inline_recv;	/* the largest reply received inline */
	uint32_t seg_max;	/* the largest segment the peer accepts */
};

struct ulb_chunks {
	uint64_t reply_len;	/* Reply chunk octets, 0: none */
	uint64_t write_len;	/* Write chunk octets, 0: none */
	uint32_t seg;		/* segment size for both */
};

/*
 * Linux svcrdma before 5.11 answers ERR_CHUNK to a Read or Reply chunk
 * segment above (RPCSVC_MAXPAGES + 2) pages and a Write chunk segment
 * above RPCSVC_MAXPAGES pages (259 pages: 1 MiB + 20 KiB and 1 MiB + 12
 * KiB with 4 KiB pages): segments of 1 MiB + 12 KiB pass both.  So the
 * Reply chunk a call offers for results of unknown size (max_reply, 1
 * MiB by default, and room for the RPC header) is one segment, not two,
 * and 16 octets more of the call fit inline.  At most ULB_CHUNK_SEGS
 * segments per chunk (the Linux client's own bound): a larger chunk gets
 * larger segments, in multiples of 4 KiB.
 */
#define ULB_SEG_MAX ((uint32_t)259 << 12)
#define ULB_SEG_MIN ((uint32_t)64 << 10)
#define ULB_CHUNK_SEGS 16u

void ulb_chunks(const struct ulb_call *c, const struct ulb_limits *l,
		struct ulb_chunks *out);
/* The segment size for a chunk of len octets, seg_max preferred. */
uint32_t ulb_seg_size(uint64_t len, uint32_t seg_max);
/* Octets of an inline reply's transport header echoing a Write chunk of nsegs. */
uint32_t ulb_reply_hdr_len(unsigned int write_segs);

/*
 * Turn direct placement off for these programs (the configuration's
 * no_placement list), or back on for all with n == 0.  The list is
 * copied; at most ULB_NO_PLACEMENT_MAX programs.
 */
#define ULB_NO_PLACEMENT_MAX 16
void ulb_set_no_placement(const uint32_t *progs, size_t n);
bool ulb_placement(uint32_t prog);

#endif
