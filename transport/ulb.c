/*
 * Upper Layer Bindings (see ulb.h): NFS versions 2, 3 (RFC 8267 s4) and
 * 4.x (s5), table-driven; the shim-to-shim convention for the rest.
 *
 * Reply sizes are the XDR sizes of the results as RFC 1094, RFC 1813 and
 * RFC 7530/8881 define them, largest arm of each union (an NFSv3 fattr3
 * is 84 octets, a post_op_attr 88, wcc_data 116, a file handle at most 64
 * octets in v3 and 128 in v4; NFSv2's fattr 68 and fhandle 32).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "ulb.h"

#define RPCSEC_GSS_FLAVOR 6u
#define AUTH_BYTES_MAX 400u

/* A bounds-checked XDR reader; once past the end, everything fails. */
struct rd {
	const uint8_t *p;
	size_t len, pos;
	bool bad;
};

static uint32_t
rd_u32(struct rd *r)
{
	uint32_t v;

	if (r->bad || r->len - r->pos < 4) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p + r->pos, 4);
	r->pos += 4;
	return ntohl(v);
}

static void
rd_skip(struct rd *r, size_t n)
{
	if (r->bad || r->len - r->pos < n)
		r->bad = true;
	else
		r->pos += n;
}

/* A variable-length opaque of at most max octets, with its pad. */
static void
rd_opaque(struct rd *r, uint32_t max)
{
	uint32_t n = rd_u32(r);

	if (n > max)
		r->bad = true;
	rd_skip(r, ((size_t)n + 3) & ~(size_t)3);
}

/* ------------------------------------------------------------------ */
/* The tables                                                          */
/* ------------------------------------------------------------------ */

/* How a procedure's reply is sized. */
enum ulb_size {
	SZ_FIXED,		/* 'results' octets */
	SZ_READ,		/* results + the count argument (the item) */
	SZ_READLINK,		/* results + a path of 'item_max' (the item) */
	SZ_DIR,			/* results + the count argument */
	SZ_COMPOUND,		/* NFSv4: per operation */
};

struct ulb_proc {
	enum ulb_size size;
	uint32_t results;	/* fixed part of the results, octets */
	uint32_t count_at;	/* SZ_READ, SZ_DIR: argument word offset after the fh */
	uint32_t item_max;	/* SZ_READLINK: the longest path */
};

#define FIXED(n) { SZ_FIXED, (n), 0, 0 }

/* RFC 1094 s2.2: fattr 68, fhandle 32; READ offset, count; READDIR cookie, count. */
static const struct ulb_proc nfs2_procs[] = {
	[0] = FIXED(0),			/* NULL */
	[1] = FIXED(4 + 68),		/* GETATTR */
	[2] = FIXED(4 + 68),		/* SETATTR */
	[3] = FIXED(0),			/* ROOT */
	[4] = FIXED(4 + 32 + 68),	/* LOOKUP */
	[5] = { SZ_READLINK, 4, 0, 1024 },
	[6] = { SZ_READ, 4 + 68, 4, 0 },
	[7] = FIXED(0),			/* WRITECACHE */
	[8] = FIXED(4 + 68),		/* WRITE */
	[9] = FIXED(4 + 32 + 68),	/* CREATE */
	[10] = FIXED(4), [11] = FIXED(4), [12] = FIXED(4), [13] = FIXED(4),
	[14] = FIXED(4 + 32 + 68),	/* MKDIR */
	[15] = FIXED(4),		/* RMDIR */
	[16] = { SZ_DIR, 4 + 8, 4, 0 },	/* READDIR: entries, eof */
	[17] = FIXED(4 + 20),		/* STATFS */
};

/*
 * RFC 1813 s3.3: post_op_attr 88, wcc_data 116, post_op_fh3 72.
 * READ3args: fh, offset(8), count; READDIR3args: fh, cookie(8),
 * cookieverf(8), count; READDIRPLUS3args: ..., dircount, maxcount.
 */
static const struct ulb_proc nfs3_procs[] = {
	[0] = FIXED(0),			/* NULL */
	[1] = FIXED(4 + 84),		/* GETATTR */
	[2] = FIXED(4 + 116),		/* SETATTR */
	[3] = FIXED(4 + 68 + 88 + 88),	/* LOOKUP */
	[4] = FIXED(4 + 88 + 4),	/* ACCESS */
	[5] = { SZ_READLINK, 4 + 88, 0, 4096 },
	[6] = { SZ_READ, 4 + 88 + 4 + 4, 8, 0 },
	[7] = FIXED(4 + 116 + 4 + 4 + 8),	/* WRITE */
	[8] = FIXED(4 + 72 + 88 + 116),	/* CREATE */
	[9] = FIXED(4 + 72 + 88 + 116),	/* MKDIR */
	[10] = FIXED(4 + 72 + 88 + 116),	/* SYMLINK */
	[11] = FIXED(4 + 72 + 88 + 116),	/* MKNOD */
	[12] = FIXED(4 + 116),		/* REMOVE */
	[13] = FIXED(4 + 116),		/* RMDIR */
	[14] = FIXED(4 + 116 + 116),	/* RENAME */
	[15] = FIXED(4 + 88 + 116),	/* LINK */
	[16] = { SZ_DIR, 4 + 88 + 8 + 8, 16, 0 },	/* READDIR */
	[17] = { SZ_DIR, 4 + 88 + 8 + 8, 20, 0 },	/* READDIRPLUS: maxcount */
	[18] = FIXED(4 + 88 + 48 + 4),	/* FSSTAT */
	[19] = FIXED(4 + 88 + 48),	/* FSINFO */
	[20] = FIXED(4 + 88 + 24),	/* PATHCONF */
	[21] = FIXED(4 + 116 + 8),	/* COMMIT */
};

static const struct ulb_proc nfs4_procs[] = {
	[0] = FIXED(0),			/* NULL */
	[1] = { SZ_COMPOUND, 0, 0, 0 },
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const struct ulb_proc *
ulb_proc(uint32_t prog, uint32_t vers, uint32_t proc)
{
	if (prog != ULB_PROG_NFS)
		return NULL;
	if (vers == 2 && proc < NELEM(nfs2_procs))
		return &nfs2_procs[proc];
	if (vers == 3 && proc < NELEM(nfs3_procs))
		return &nfs3_procs[proc];
	if (vers == 4 && proc < NELEM(nfs4_procs))
		return &nfs4_procs[proc];
	return NULL;
}

/*
 * NFSv4 operations (RFC 8881 s18): the octets of their arguments to skip
 * in a call, and of their results after the status when it is NFS4_OK.
 * ARG_OPAQUE/RES_OPAQUE: one opaque of at most 'max'; ARG_BITMAP: a
 * bitmap4; RES_UNKNOWN: no bound (GETATTR's attributes).
 */
enum { V4_FIXED, V4_OPAQUE, V4_BITMAP, V4_UNKNOWN };

struct ulb_op {
	uint32_t op;
	uint8_t arg_kind;
	uint32_t arg_len;	/* V4_FIXED octets, or V4_OPAQUE max */
	uint8_t res_kind;
	uint32_t res_len;	/* V4_FIXED octets, or V4_OPAQUE max */
	enum ulb_item item;
};

static const struct ulb_op nfs4_ops[] = {
	{ 3, V4_FIXED, 4, V4_FIXED, 8, ULB_ITEM_NONE },		/* ACCESS */
	{ 9, V4_BITMAP, 0, V4_UNKNOWN, 0, ULB_ITEM_NONE },	/* GETATTR */
	{ 10, V4_FIXED, 0, V4_OPAQUE, 128, ULB_ITEM_NONE },	/* GETFH */
	{ 15, V4_OPAQUE, 4096, V4_FIXED, 0, ULB_ITEM_NONE },	/* LOOKUP */
	{ 16, V4_FIXED, 0, V4_FIXED, 0, ULB_ITEM_NONE },	/* LOOKUPP */
	{ 22, V4_OPAQUE, 128, V4_FIXED, 0, ULB_ITEM_NONE },	/* PUTFH */
	{ 23, V4_FIXED, 0, V4_FIXED, 0, ULB_ITEM_NONE },	/* PUTPUBFH */
	{ 24, V4_FIXED, 0, V4_FIXED, 0, ULB_ITEM_NONE },	/* PUTROOTFH */
	/* READ: stateid, offset, count; eof, then the data (the item). */
	{ 25, V4_FIXED, 28, V4_FIXED, 4, ULB_ITEM_READ },
	{ 27, V4_FIXED, 0, V4_FIXED, 0, ULB_ITEM_READLINK },	/* READLINK */
	{ 31, V4_FIXED, 0, V4_FIXED, 0, ULB_ITEM_NONE },	/* RESTOREFH */
	{ 32, V4_FIXED, 0, V4_FIXED, 0, ULB_ITEM_NONE },	/* SAVEFH */
	/* SEQUENCE: sessionid, sequenceid, slotid, highest slotid, cachethis. */
	{ 53, V4_FIXED, 32, V4_FIXED, 36, ULB_ITEM_NONE },
};

static const struct ulb_op *
ulb_op(uint32_t op)
{
	size_t i;

	for (i = 0; i < NELEM(nfs4_ops); i++)
		if (nfs4_ops[i].op == op)
			return &nfs4_ops[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Placement per program                                               */
/* ------------------------------------------------------------------ */

static uint32_t no_placement[ULB_NO_PLACEMENT_MAX];
static size_t n_no_placement;

void
ulb_set_no_placement(const uint32_t *progs, size_t n)
{
	if (n > ULB_NO_PLACEMENT_MAX)
		n = ULB_NO_PLACEMENT_MAX;
	if (n)	/* progs may be NULL for none */
		memcpy(no_placement, progs, n * sizeof(*progs));
	n_no_placement = n;
}

bool
ulb_placement(uint32_t prog)
{
	size_t i;

	for (i = 0; i < n_no_placement; i++)
		if (no_placement[i] == prog)
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* Calls                                                               */
/* ------------------------------------------------------------------ */

/* The reply header a call of this credential flavor may get back. */
static uint32_t
reply_hdr_max(uint32_t flavor)
{
	/* xid, type, reply stat, verifier, accept stat; GSS wraps the results. */
	uint32_t n = 24 + AUTH_BYTES_MAX;

	if (flavor == RPCSEC_GSS_FLAVOR)
		n += 8 + 16 + AUTH_BYTES_MAX;
	return n;
}

/* NFSv4 COMPOUND4args after the RPC header: size its reply, find its item. */
static void
ulb_compound(struct rd *r, struct ulb_call *c, uint64_t hdr)
{
	uint32_t taglen, n, i;
	uint64_t total;

	taglen = rd_u32(r);
	rd_skip(r, ((size_t)taglen + 3) & ~(size_t)3);
	(void)rd_u32(r);		/* minorversion */
	n = rd_u32(r);
	if (r->bad || taglen > 4096)
		return;
	/* status, tag, count of results */
	total = hdr + 4 + 4 + ((taglen + 3u) & ~3u) + 4;
	for (i = 0; i < n && !r->bad; i++) {
		const struct ulb_op *op = ulb_op(rd_u32(r));

		if (!op)
			return;			/* size unknown, item as found */
		total += 8;			/* resop, status */
		switch (op->arg_kind) {
		case V4_FIXED:
			if (op->item == ULB_ITEM_READ) {
				rd_skip(r, 24);
				if (c->item == ULB_ITEM_NONE) {
					c->item = ULB_ITEM_READ;
					c->item_max = rd_u32(r);
				} else {
					total += 4 + ((rd_u32(r) + 3ull) & ~3ull);
				}
			} else {
				rd_skip(r, op->arg_len);
			}
			break;
		case V4_OPAQUE:
			rd_opaque(r, op->arg_len);
			break;
		case V4_BITMAP:
			rd_skip(r, (size_t)rd_u32(r) * 4);
			break;
		}
		if (op->item == ULB_ITEM_READLINK) {
			if (c->item == ULB_ITEM_NONE) {
				c->item = ULB_ITEM_READLINK;
				c->item_max = 4096;
			} else {
				total += 4 + 4096;
			}
		}
		if (op->res_kind == V4_UNKNOWN)
			return;
		total += op->res_kind == V4_OPAQUE ? 4 + op->res_len : op->res_len;
		if (op->item != ULB_ITEM_NONE)
			total += 4;		/* the item's length word */
	}
	if (!r->bad)
		c->max_reply = total;
}

/* Fill c->max_reply and the item from the NFS arguments at r. */
static void
ulb_nfs_args(struct rd *r, struct ulb_call *c, const struct ulb_proc *p,
	     uint32_t flavor)
{
	uint64_t hdr = reply_hdr_max(flavor);
	uint32_t count;

	switch (p->size) {
	case SZ_FIXED:
		c->max_reply = hdr + p->results;
		return;
	case SZ_READLINK:
		c->item = ULB_ITEM_READLINK;
		c->item_max = p->item_max;
		c->max_reply = hdr + p->results + 4;
		return;
	case SZ_COMPOUND:
		ulb_compound(r, c, hdr);
		return;
	case SZ_READ:
	case SZ_DIR:
		break;
	}
	/* The file handle first: fixed 32 octets in v2, an opaque in v3. */
	if (c->vers == 2)
		rd_skip(r, 32);
	else
		rd_opaque(r, 64);
	rd_skip(r, p->count_at);
	count = rd_u32(r);
	if (r->bad)
		return;
	if (p->size == SZ_READ) {
		c->item = ULB_ITEM_READ;
		c->item_max = count;
		c->max_reply = hdr + p->results + 4;
	} else {
		c->max_reply = hdr + p->results + (uint64_t)count;
	}
}

int
ulb_parse_call(const uint8_t *msg, size_t len, struct ulb_call *c)
{
	struct rd r = { .p = msg, .len = len };
	const struct ulb_proc *p;
	uint32_t flavor;

	memset(c, 0, sizeof(*c));
	(void)rd_u32(&r);			/* xid */
	if (rd_u32(&r) != 0 || rd_u32(&r) != 2)	/* CALL, RPC version 2 */
		return -EBADMSG;
	c->prog = rd_u32(&r);
	c->vers = rd_u32(&r);
	c->proc = rd_u32(&r);
	flavor = rd_u32(&r);			/* credential */
	rd_opaque(&r, AUTH_BYTES_MAX);
	(void)rd_u32(&r);			/* verifier */
	rd_opaque(&r, AUTH_BYTES_MAX);
	if (r.bad)
		return -EBADMSG;
	c->placement = ulb_placement(c->prog);
	p = ulb_proc(c->prog, c->vers, c->proc);
	if (!p) {
		c->item = ULB_ITEM_FIRST_OPAQUE;
		return 0;
	}
	c->known = true;
	/* Arguments wrapped by RPCSEC_GSS integrity or privacy: not read. */
	if (flavor == RPCSEC_GSS_FLAVOR && p->size != SZ_FIXED)
		return 0;
	ulb_nfs_args(&r, c, p, flavor);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Replies                                                             */
/* ------------------------------------------------------------------ */

long
ulb_results_offset(const uint8_t *msg, size_t len)
{
	struct rd r = { .p = msg, .len = len };
	uint32_t flavor;

	(void)rd_u32(&r);			/* xid */
	if (rd_u32(&r) != 1 || rd_u32(&r) != 0)	/* REPLY, MSG_ACCEPTED */
		return -1;
	flavor = rd_u32(&r);
	rd_opaque(&r, AUTH_BYTES_MAX);
	if (rd_u32(&r) != 0 || r.bad || flavor == RPCSEC_GSS_FLAVOR)
		return -1;			/* not SUCCESS */
	return (long)r.pos;
}

/* Offset of the item's length word in NFSv4 COMPOUND4res, or -1. */
static long
ulb_compound_item(struct rd *r)
{
	uint32_t n, i;

	if (rd_u32(r) != 0)			/* status */
		return -1;
	rd_opaque(r, 4096);			/* tag */
	n = rd_u32(r);
	for (i = 0; i < n && !r->bad; i++) {
		const struct ulb_op *op = ulb_op(rd_u32(r));

		if (!op || rd_u32(r) != 0)
			return -1;
		if (op->item == ULB_ITEM_READ) {
			rd_skip(r, 4);		/* eof */
			return r->bad ? -1 : (long)r->pos;
		}
		if (op->item == ULB_ITEM_READLINK)
			return r->bad ? -1 : (long)r->pos;
		switch (op->res_kind) {
		case V4_FIXED:
			rd_skip(r, op->res_len);
			break;
		case V4_OPAQUE:
			rd_opaque(r, op->res_len);
			break;
		default:
			/* fattr4: a bitmap, then the attributes as an opaque. */
			rd_skip(r, (size_t)rd_u32(r) * 4);
			rd_opaque(r, UINT32_MAX);
			break;
		}
	}
	return -1;
}

/* Offset of the item's length word in NFSv2/v3 results, or -1. */
static long
ulb_nfs23_item(struct rd *r, const struct ulb_call *c)
{
	if (rd_u32(r) != 0)			/* status: NFS_OK */
		return -1;
	if (c->vers == 2) {
		if (c->item == ULB_ITEM_READ)
			rd_skip(r, 68);		/* fattr */
	} else {
		if (rd_u32(r))			/* post_op_attr */
			rd_skip(r, 84);
		if (c->item == ULB_ITEM_READ)
			rd_skip(r, 8);		/* count, eof */
	}
	return r->bad ? -1 : (long)r->pos;
}

bool
ulb_is_item(const struct ulb_call *c, const uint8_t *res, size_t len,
	    uint32_t item_len)
{
	struct rd r = { .p = res, .len = len };
	uint32_t word;
	long at;

	if (!c->placement || c->item == ULB_ITEM_NONE || len < 4)
		return false;
	if (c->item == ULB_ITEM_FIRST_OPAQUE)
		return !c->known;
	at = c->vers == 4 ? ulb_compound_item(&r) : ulb_nfs23_item(&r, c);
	if (at < 0 || (size_t)at + 4 != len)
		return false;
	memcpy(&word, res + at, 4);
	return ntohl(word) == item_len;
}

/* ------------------------------------------------------------------ */
/* Chunk sizes                                                         */
/* ------------------------------------------------------------------ */

uint32_t
ulb_seg_size(uint64_t len, uint32_t seg_max)
{
	uint64_t seg;

	if (len <= (uint64_t)seg_max * ULB_CHUNK_SEGS)
		return seg_max;
	seg = (len + ULB_CHUNK_SEGS - 1) / ULB_CHUNK_SEGS;
	seg = (seg + 4095) & ~(uint64_t)4095;
	return seg > UINT32_MAX ? UINT32_MAX & ~4095u : (uint32_t)seg;
}

uint32_t
ulb_reply_hdr_len(unsigned int write_segs)
{
	/* prefix, empty Read list, Write list, no Reply chunk (s5.7) */
	uint32_t n = 16 + 4 + 4 + 4;

	if (write_segs)
		n += 8 + 16 * write_segs;
	return n;
}

static unsigned int
nsegs(uint64_t len, uint32_t seg)
{
	return (unsigned int)((len + seg - 1) / seg);
}

void
ulb_chunks(const struct ulb_call *c, const struct ulb_limits *l,
	   struct ulb_chunks *out)
{
	uint64_t item = 0, need, room;
	unsigned int wsegs = 0;

	memset(out, 0, sizeof(*out));
	out->seg = l->seg_max;
	/* s5.3.2: a Write chunk only for a DDP-eligible result. */
	if (c->placement && c->item == ULB_ITEM_FIRST_OPAQUE && !c->known)
		out->write_len = l->write_chunk;
	if (c->known && c->item != ULB_ITEM_NONE &&
	    c->item != ULB_ITEM_FIRST_OPAQUE)
		item = ((uint64_t)c->item_max + 3) & ~(uint64_t)3;
	if (item > l->max_reply)
		item = l->max_reply;
	need = c->max_reply ? c->max_reply + item : 0;
	/* A reply that fits inline with its item needs neither chunk. */
	if (c->placement && item &&
	    (!need || need > l->inline_recv - ulb_reply_hdr_len(0))) {
		out->write_len = item;
		if (need)
			need -= item;
	}
	if (out->write_len) {
		wsegs = nsegs(out->write_len,
			      ulb_seg_size(out->write_len, l->seg_max));
		out->seg = ulb_seg_size(out->write_len, l->seg_max);
	}
	/* s5.3.3: a Reply chunk only when the reply may not fit inline. */
	room = l->inline_recv > ulb_reply_hdr_len(wsegs) ?
	       l->inline_recv - ulb_reply_hdr_len(wsegs) : 0;
	if (!need || need > room) {
		out->reply_len = need && need < l->max_reply ? need : l->max_reply;
		if (ulb_seg_size(out->reply_len, l->seg_max) > out->seg)
			out->seg = ulb_seg_size(out->reply_len, l->seg_max);
	}
}
