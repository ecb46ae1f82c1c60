/*
 * Robustness of the decoders against hostile input: a few hundred
 * thousand random and mutated transport headers of each version through
 * rpcrdma_hdr_decode() and rpcrdma2_hdr_decode() (and the version peek),
 * and random private data through rpcrdma_cmp_decode() compared with a
 * naive reference search.
 *
 * Every input sits right before a guard page, so an over-read faults.
 * Each result must honour the decoder's contract:
 *   - fewer than 16 octets: -EMSGSIZE; otherwise the prefix fields are
 *     the first four words, and the peek gives the first two;
 *   - a version other than the decoder's (1 or 2): -EPROTONOSUPPORT;
 *   - otherwise 0 or -EBADMSG; when 0, the header lies inside the input,
 *     respects the limits, groups into Read chunks, has only values its
 *     XDR allows (procedure, direction, error code, optinfo length), and
 *     re-encodes to exactly the octets it was decoded from.
 *
 * RPCRDMA_ROBUST_SEED and RPCRDMA_ROBUST_ITERS override the defaults.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cmp_reference.h"
#include "guardbuf.h"
#include "rnd.h"
#include "pvtdata.h"
#include "rpcrdma2_xdr.h"
#include "rpcrdma_xdr.h"

#define MAX_INPUT 8192

static struct guardbuf gb;
static struct rpcrdma_hdr hdr, again;
static struct rpcrdma2_hdr hdr2, again2;

static uint32_t
rnd_below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

/* Values a hostile or buggy peer is likely to put in a word. */
static uint32_t
interesting_word(void)
{
	static const uint32_t words[] = {
		0, 1, 2, 3, 4, 5, 8, 16, 63, 64, 65, 0x7fffffff, 0x80000000,
		0xfffffffc, 0xfffffffe, 0xffffffff, 0x10000000, 0x10000001,
	};

	switch (rnd_below(3)) {
	case 0:
		return words[rnd_below(sizeof(words) / sizeof(words[0]))];
	case 1:
		return rnd_below(80);
	default:
		return rnd();
	}
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

static void
set32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static struct rpcrdma_segment
rnd_seg(void)
{
	struct rpcrdma_segment s = {
		.handle = rnd(),
		.length = rnd_below(4) ? rnd_below(65536) : rnd(),
		.offset = (uint64_t)rnd() << 32 | rnd(),
	};
	return s;
}

/*
 * Random valid chunk lists into the list fields of h (zeroed before);
 * nomsg: with a chunk that can carry an RDMA_NOMSG's message.
 */
static void
gen_lists(struct rpcrdma_hdr *h, bool nomsg)
{
	unsigned int i, j, n;
	uint32_t pos = 0;

	n = rnd_below(8) ? rnd_below(6) : rnd_below(RPCRDMA1_MAX_READ_SEGS + 1);
	if (rnd_below(3) == 0)
		pos = 0;
	else
		pos = 4 * rnd_below(64);
	for (i = 0; i < n; i++) {
		if (i && rnd_below(2))
			pos += 4 * (1 + rnd_below(1000));
		h->reads[i].position = pos;
		h->reads[i].target = rnd_seg();
	}
	h->nreads = n;

	n = rnd_below(4) ? rnd_below(4) : rnd_below(RPCRDMA1_MAX_WRITE_CHUNKS + 1);
	for (i = 0; i < n; i++) {
		unsigned int m = rnd_below(5);

		if (h->nwsegs + m > RPCRDMA1_MAX_WRITE_SEGS)
			m = RPCRDMA1_MAX_WRITE_SEGS - h->nwsegs;
		h->writes[i].first = h->nwsegs;
		h->writes[i].nsegs = m;
		for (j = 0; j < m; j++)
			h->wsegs[h->nwsegs++] = rnd_seg();
	}
	h->nwrites = n;

	h->has_reply = rnd_below(2);
	if (h->has_reply) {
		h->nreply = rnd_below(8) ? rnd_below(5) :
					   rnd_below(RPCRDMA1_MAX_REPLY_SEGS + 1);
		for (i = 0; i < h->nreply; i++)
			h->reply[i] = rnd_seg();
	}
	if (nomsg && !rpcrdma_nomsg_has_payload_chunk(h))
		h->has_reply = true;
}

/* A random valid Version One header, encoded; returns its length. */
static size_t
gen_valid(uint8_t *buf, size_t cap)
{
	static struct rpcrdma_hdr h;
	ssize_t len;

	memset(&h, 0, sizeof(h));
	h.xid = rnd();
	h.vers = RPCRDMA1_VERSION;
	h.credits = interesting_word();
	switch (rnd_below(8)) {
	case 0:
		h.proc = RDMA_ERROR;
		h.err = rnd_below(2) ? RDMA_ERR_VERS : RDMA_ERR_BADHEADER;
		h.vers_low = rnd_below(3);
		h.vers_high = h.vers_low + rnd_below(3);
		if (rnd_below(4) == 0)
			h.vers = interesting_word();
		break;
	case 1:
	case 2:
		h.proc = RDMA_NOMSG;
		gen_lists(&h, true);
		break;
	default:
		h.proc = RDMA_MSG;
		gen_lists(&h, false);
		break;
	}
	len = rpcrdma_hdr_encode(buf, cap, &h);
	if (len <= 0) {
		printf("# gen_valid: encode failed: %zd\n", len);
		exit(99);
	}
	return (size_t)len;
}

/* A random valid Version Two header, encoded; returns its length. */
static size_t
gen_valid2(uint8_t *buf, size_t cap)
{
	static struct rpcrdma2_hdr h;
	static uint8_t info[RPCRDMA2_MAX_OPTINFO];
	static const uint32_t errs[] = {
		RDMA2_ERR_VERS, RDMA2_ERR_BAD_HEADER, RDMA2_ERR_INVALID_OPTION,
	};
	uint32_t i;
	ssize_t len;

	memset(&h, 0, sizeof(h));
	h.xid = rnd();
	h.vers = RPCRDMA2_VERSION;
	h.credits = interesting_word();
	h.direction = rnd_below(2);
	switch (rnd_below(8)) {
	case 0:
		h.proc = RDMA2_ERROR;
		h.err = errs[rnd_below(3)];
		h.vers_low = rnd_below(3);
		h.vers_high = h.vers_low + rnd_below(3);
		break;
	case 1:
	case 2:
		h.proc = RDMA2_OPTIONAL;
		h.opttype = interesting_word();
		h.optlen = rnd_below(8) ? rnd_below(64) :
					  rnd_below(RPCRDMA2_MAX_OPTINFO + 1);
		for (i = 0; i < h.optlen; i++)
			info[i] = (uint8_t)rnd();
		h.optinfo = info;
		break;
	case 3:
		h.proc = RDMA2_NOMSG;
		gen_lists(&h.chunks, true);
		break;
	default:
		h.proc = RDMA2_MSG;
		gen_lists(&h.chunks, false);
		break;
	}
	len = rpcrdma2_hdr_encode(buf, cap, &h);
	if (len <= 0) {
		printf("# gen_valid2: encode failed: %zd\n", len);
		exit(99);
	}
	return (size_t)len;
}

/* Mutations of a valid header, in place; returns the new length. */
static size_t
mutate(uint8_t *buf, size_t len, size_t cap)
{
	size_t words = len / 4, i, k;

	switch (rnd_below(6)) {
	case 0:		/* bit flips */
		for (k = 1 + rnd_below(8); k && len; k--)
			buf[rnd_below((uint32_t)len)] ^=
				(uint8_t)(1u << rnd_below(8));
		return len;
	case 1:		/* truncation */
		return rnd_below((uint32_t)len + 1);
	case 2:		/* word replacement */
		for (k = 1 + rnd_below(3); k && words; k--) {
			i = rnd_below((uint32_t)words);
			switch (rnd_below(4)) {
			case 0:
				set32(buf + 4 * i, 0);
				break;
			case 1:
				set32(buf + 4 * i, 1);
				break;
			case 2:
				set32(buf + 4 * i, 0xffffffff);
				break;
			default:
				set32(buf + 4 * i, interesting_word());
				break;
			}
		}
		return len;
	case 3:		/* word insertion */
		if (len + 4 > cap)
			return len;
		i = 4 * rnd_below((uint32_t)words + 1);
		memmove(buf + i + 4, buf + i, len - i);
		set32(buf + i, interesting_word());
		return len + 4;
	case 4:		/* word deletion */
		if (!words)
			return len;
		i = 4 * rnd_below((uint32_t)words);
		memmove(buf + i, buf + i + 4, len - i - 4);
		return len - 4;
	default:	/* trailing octets, as a payload would be */
		k = rnd_below(64);
		if (len + k > cap)
			return len;
		for (i = 0; i < k; i++)
			buf[len + i] = (uint8_t)rnd();
		return len + k;
	}
}

/* A plausible prefix of version vers followed by interesting words. */
static size_t
gen_words(uint8_t *buf, size_t cap, uint32_t vers)
{
	size_t n = 4 + rnd_below(128), i;

	if (n * 4 > cap)
		n = cap / 4;
	for (i = 0; i < n; i++)
		set32(buf + 4 * i, interesting_word());
	set32(buf + 4, rnd_below(16) ? vers : interesting_word());
	set32(buf + 12, rnd_below(16) ? rnd_below(7) : interesting_word());
	return n * 4 - (rnd_below(4) ? 0 : rnd_below(4));
}

static size_t
gen_bytes(uint8_t *buf, size_t cap)
{
	size_t n = rnd_below(256), i;

	if (n > cap)
		n = cap;
	for (i = 0; i < n; i++)
		buf[i] = (uint8_t)rnd();
	return n;
}

struct tally {
	unsigned long accepted, emsgsize, eproto, ebadmsg;
	unsigned long violations;
	unsigned long reencode_mismatch;
	unsigned long valid_rejected;
};

static void
violation(struct tally *t, const char *what, const uint8_t *buf, size_t len)
{
	size_t i;

	if (t->violations++ < 5) {
		printf("# violation: %s (len %zu):", what, len);
		for (i = 0; i < len && i < 64; i++)
			printf(" %02x", buf[i]);
		printf("\n");
	}
}

/* The list fields of h as the decoders leave them. */
static bool
layout_ok(const struct rpcrdma_hdr *h, bool nomsg)
{
	struct rpcrdma_read_chunk c[RPCRDMA1_MAX_READ_SEGS];
	unsigned int i, next = 0;
	int n;

	if (h->nreads > RPCRDMA1_MAX_READ_SEGS ||
	    h->nwrites > RPCRDMA1_MAX_WRITE_CHUNKS ||
	    h->nwsegs > RPCRDMA1_MAX_WRITE_SEGS ||
	    h->nreply > RPCRDMA1_MAX_REPLY_SEGS ||
	    (!h->has_reply && h->nreply))
		return false;
	for (i = 0; i < h->nwrites; i++) {
		if (h->writes[i].first != next)
			return false;
		next += h->writes[i].nsegs;
	}
	if (next != h->nwsegs)
		return false;
	n = rpcrdma_read_chunks(h, c, RPCRDMA1_MAX_READ_SEGS);
	if (n < 0)
		return false;
	for (i = 1; i < (unsigned int)n; i++)
		if (c[i].position <= c[i - 1].position)
			return false;
	if (nomsg && !h->has_reply && !(n > 0 && c[0].position == 0))
		return false;
	return true;
}

/* What a decoder returned and the prefix fields and hdrlen it set. */
struct decoded {
	int rc;
	uint32_t xid, vers, credits, proc;
	size_t hdrlen;
};

/*
 * The contract both decoders share, for an input holding the prefix: the
 * prefix fields are its first four words; a version other than vers gives
 * -EPROTONOSUPPORT; anything else 0 or -EBADMSG; an accepted header lies
 * inside the input.  Tallies the outcome, and says whether the header was
 * accepted (its version's own checks follow).
 */
static bool
check_decoded(struct tally *t, const uint8_t *src, size_t len, bool valid,
	      const struct decoded *d, uint32_t vers)
{
	if (d->xid != get32(src) || d->vers != get32(src + 4) ||
	    d->credits != get32(src + 8) || d->proc != get32(src + 12))
		violation(t, "prefix fields", src, len);
	if (d->vers != vers) {
		t->eproto++;
		if (d->rc != -EPROTONOSUPPORT)
			violation(t, "bad version not -EPROTONOSUPPORT", src,
				  len);
		return false;
	}
	if (d->rc == -EBADMSG) {
		t->ebadmsg++;
		if (valid)
			t->valid_rejected++;
		return false;
	}
	if (d->rc != 0) {
		violation(t, "unexpected return code", src, len);
		return false;
	}
	t->accepted++;
	if (d->hdrlen > len || d->hdrlen % 4 ||
	    d->hdrlen < RPCRDMA1_PREFIX_LEN + 4)
		violation(t, "hdrlen", src, len);
	return true;
}

static void
check_header(struct tally *t, const uint8_t *src, size_t len, bool valid)
{
	static uint8_t out[MAX_INPUT];
	const uint8_t *buf = guardbuf_place(&gb, src, len);
	struct decoded d;
	ssize_t n;
	int rc;

	rc = rpcrdma_hdr_decode(buf, len, &hdr);
	if (len < RPCRDMA1_PREFIX_LEN) {
		t->emsgsize++;
		if (rc != -EMSGSIZE)
			violation(t, "short input not -EMSGSIZE", src, len);
		return;
	}
	d = (struct decoded){ rc, hdr.xid, hdr.vers, hdr.credits, hdr.proc,
			      hdr.hdrlen };
	if (!check_decoded(t, src, len, valid, &d, RPCRDMA1_VERSION))
		return;
	if (hdr.proc != RDMA_MSG && hdr.proc != RDMA_NOMSG &&
	    hdr.proc != RDMA_ERROR)
		violation(t, "accepted a reserved procedure", src, len);
	if (hdr.proc == RDMA_ERROR && hdr.err != RDMA_ERR_VERS &&
	    hdr.err != RDMA_ERR_BADHEADER)
		violation(t, "accepted an unknown error code", src, len);
	if (hdr.proc != RDMA_ERROR && !layout_ok(&hdr, hdr.proc == RDMA_NOMSG))
		violation(t, "decoded layout", src, len);

	n = rpcrdma_hdr_encode(out, sizeof(out), &hdr);
	if (n < 0 || (size_t)n != hdr.hdrlen || memcmp(out, src, (size_t)n))
		t->reencode_mismatch++;
	else if (rpcrdma_hdr_decode(out, (size_t)n, &again) != 0)
		t->reencode_mismatch++;
}

/* What rpcrdma2_hdr_decode() accepted has only values its XDR allows. */
static bool
values_ok2(const struct rpcrdma2_hdr *h, const uint8_t *buf, size_t len)
{
	switch (h->proc) {
	case RDMA2_MSG:
	case RDMA2_NOMSG:
		return h->direction <= RDMA2_DIR_REPLY &&
		       layout_ok(&h->chunks, h->proc == RDMA2_NOMSG);
	case RDMA2_ERROR:
		return h->direction == RDMA2_DIR_REPLY &&
		       h->err >= RDMA2_ERR_VERS &&
		       h->err <= RDMA2_ERR_INVALID_OPTION &&
		       (h->err != RDMA2_ERR_VERS || h->vers_low <= h->vers_high);
	case RDMA2_OPTIONAL:
		return h->direction <= RDMA2_DIR_REPLY &&
		       h->optlen <= RPCRDMA2_MAX_OPTINFO &&
		       h->optinfo >= buf + RPCRDMA2_OPTIONAL_HDR_MIN &&
		       h->optinfo + h->optlen <= buf + len;
	default:
		return false;
	}
}

static void
check_header2(struct tally *t, const uint8_t *src, size_t len, bool valid)
{
	static uint8_t out[MAX_INPUT];
	const uint8_t *buf = guardbuf_place(&gb, src, len);
	uint32_t xid = 0, vers = 0;
	struct decoded d;
	ssize_t n;
	int rc, peek;

	rc = rpcrdma2_hdr_decode(buf, len, &hdr2);
	peek = rpcrdma_peek_version(buf, len, &xid, &vers);
	if (len < RPCRDMA2_PREFIX_LEN) {
		t->emsgsize++;
		if (rc != -EMSGSIZE || peek != -EMSGSIZE)
			violation(t, "short input not -EMSGSIZE", src, len);
		return;
	}
	if (peek != 0 || xid != hdr2.xid || vers != hdr2.vers)
		violation(t, "peek disagrees with the prefix", src, len);
	d = (struct decoded){ rc, hdr2.xid, hdr2.vers, hdr2.credits, hdr2.proc,
			      hdr2.hdrlen };
	if (!check_decoded(t, src, len, valid, &d, RPCRDMA2_VERSION))
		return;
	if (!values_ok2(&hdr2, buf, len))
		violation(t, "decoded values", src, len);
	if (rpcrdma_hdr_decode(buf, len, &hdr) != -EPROTONOSUPPORT)
		violation(t, "Version One decoder accepted it too", src, len);

	n = rpcrdma2_hdr_encode(out, sizeof(out), &hdr2);
	if (n < 0 || (size_t)n != hdr2.hdrlen || memcmp(out, src, (size_t)n))
		t->reencode_mismatch++;
	else if (rpcrdma2_hdr_decode(out, (size_t)n, &again2) != 0)
		t->reencode_mismatch++;
}

static unsigned long
check_pvtdata(unsigned long iters, unsigned long *found)
{
	static const uint8_t id[4] = { 0xf6, 0xab, 0x0e, 0x18 };
	static const uint8_t versions[] = { 0, 1, 1, 1, 2, 0xff };
	uint8_t buf[64];
	struct rpcrdma_cm_pdata got, want;
	unsigned long i, bad = 0;
	size_t len, k, n, off;
	bool r1, r2;

	for (i = 0; i < iters; i++) {
		len = rnd_below(sizeof(buf) + 1);
		for (k = 0; k < len; k++)
			buf[k] = (uint8_t)(rnd_below(4) ? rnd() : 0xf6);
		for (n = rnd_below(4); n && len >= 4; n--) {
			off = rnd_below((uint32_t)(len - 3));
			memcpy(buf + off, id, 4);
			if (off + 4 < len)
				buf[off + 4] = versions[rnd_below(sizeof(versions))];
		}
		r1 = rpcrdma_cmp_decode(guardbuf_place(&gb, buf, len), len,
					&got);
		r2 = cmp_reference(buf, len, &want);
		*found += r2;
		if (r1 != r2 || got.remote_inv != want.remote_inv ||
		    got.send_size != want.send_size ||
		    got.recv_size != want.recv_size)
			bad++;
	}
	return bad;
}

/* One version's decoder: its generator and its contract check. */
struct version_run {
	uint32_t vers;
	size_t (*gen_valid)(uint8_t *buf, size_t cap);
	void (*check)(struct tally *t, const uint8_t *src, size_t len,
		      bool valid);
};

static void
run_version(const struct version_run *v, unsigned long iters)
{
	static uint8_t buf[MAX_INPUT];
	struct tally valid = { 0 }, mutated = { 0 }, random = { 0 };
	unsigned long i;
	size_t len;

	for (i = 0; i < iters; i++) {
		switch (i % 4) {
		case 0:
			len = v->gen_valid(buf, sizeof(buf));
			v->check(&valid, buf, len, true);
			break;
		case 1:
		case 2:
			len = v->gen_valid(buf, sizeof(buf));
			len = mutate(buf, len, sizeof(buf));
			if (rnd_below(3) == 0)
				len = mutate(buf, len, sizeof(buf));
			v->check(&mutated, buf, len, false);
			break;
		default:
			if (rnd_below(4))
				len = gen_words(buf, sizeof(buf), v->vers);
			else
				len = gen_bytes(buf, sizeof(buf));
			v->check(&random, buf, len, false);
			break;
		}
	}

	printf("# version %u valid:   %lu accepted, %lu RDMA_ERROR of another"
	       " version, %lu otherwise rejected\n", v->vers, valid.accepted,
	       valid.eproto, valid.emsgsize + valid.ebadmsg);
	printf("# version %u mutated: %lu accepted, %lu -EMSGSIZE,"
	       " %lu -EPROTONOSUPPORT, %lu -EBADMSG\n", v->vers,
	       mutated.accepted, mutated.emsgsize, mutated.eproto,
	       mutated.ebadmsg);
	printf("# version %u random:  %lu accepted, %lu -EMSGSIZE,"
	       " %lu -EPROTONOSUPPORT, %lu -EBADMSG\n", v->vers,
	       random.accepted, random.emsgsize, random.eproto,
	       random.ebadmsg);

	CHECK(valid.violations == 0 && valid.valid_rejected == 0 &&
	      valid.emsgsize == 0 && valid.reencode_mismatch == 0,
	      "%lu valid version %u headers: all accepted, all re-encode "
	      "exactly", valid.accepted, v->vers);
	CHECK(mutated.violations == 0, "version %u, mutated headers: every "
	      "result within the decoder's contract", v->vers);
	CHECK(mutated.reencode_mismatch == 0, "version %u, mutated headers: "
	      "every accepted one re-encodes exactly", v->vers);
	CHECK(mutated.accepted > 0 && mutated.ebadmsg > 0 && mutated.eproto > 0,
	      "version %u, mutated headers reach acceptance and both error "
	      "paths", v->vers);
	CHECK(random.violations == 0 && random.reencode_mismatch == 0,
	      "version %u, random headers: every result within the decoder's "
	      "contract", v->vers);
	CHECK(random.accepted > 0, "version %u, random headers: some are "
	      "accepted (the generator reaches deep)", v->vers);
}

int
main(void)
{
	static const struct version_run versions[] = {
		{ RPCRDMA1_VERSION, gen_valid, check_header },
		{ RPCRDMA2_VERSION, gen_valid2, check_header2 },
	};
	unsigned long iters = 400000, pv_bad, pv_found = 0;
	const char *env;
	uint64_t seed = 0x5eed0fc0dec5eedull;
	unsigned int v;

	env = getenv("RPCRDMA_ROBUST_SEED");
	if (env)
		seed = strtoull(env, NULL, 0);
	env = getenv("RPCRDMA_ROBUST_ITERS");
	if (env)
		iters = strtoul(env, NULL, 0);
	rnd_seed(seed);
	printf("# seed 0x%" PRIx64 ", %lu iterations per version\n", seed,
	       iters);

	guardbuf_init(&gb, MAX_INPUT);
	for (v = 0; v < sizeof(versions) / sizeof(versions[0]); v++)
		run_version(&versions[v], iters);

	pv_bad = check_pvtdata(iters / 2, &pv_found);
	printf("# private data: %lu buffers, %lu with a usable message\n",
	       iters / 2, pv_found);
	CHECK(pv_bad == 0, "private data: decoder agrees with the reference "
	      "search on every buffer");
	CHECK(pv_found > 0 && pv_found < iters / 2,
	      "private data: both outcomes exercised");

	guardbuf_free(&gb);
	return check_done();
}
