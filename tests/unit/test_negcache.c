/*
 * The negative cache (shim/negcache.c): peers that failed RDMA recently,
 * with time stepped by hand through negcache_add_at/negcache_lookup_at.
 * The cache is one table per process: each test uses its own peers and
 * its own stretch of time, the no-device wildcard comes last.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/un.h>

#include "addr_fixture.h"
#include "check.h"
#include "negcache.h"

#define SA(p) ((const struct sockaddr *)(p))

/* Lookup at now; why is RDMA_FAIL_MAX when nothing was found. */
static enum rdma_fail
found(const void *peer, time_t now)
{
	enum rdma_fail why = RDMA_FAIL_MAX;

	if (!negcache_lookup_at(SA(peer), &why, now))
		return RDMA_FAIL_MAX;
	return why;
}

static void
test_add_lookup(void)
{
	struct sockaddr_in a = in4("10.77.0.2", 20049);
	struct sockaddr_in a_other_port = in4("10.77.0.2", 20050);
	struct sockaddr_in b = in4("10.77.0.3", 20049);
	struct sockaddr_in6 c = in6("fd77::2", 20049);

	CHECK_EQ_U(found(&a, 100), RDMA_FAIL_MAX, "an empty cache holds nothing");
	negcache_add_at(SA(&a), RDMA_FAIL_REFUSED, 60, 100);
	CHECK_EQ_U(found(&a, 100), RDMA_FAIL_REFUSED, "the peer added is found, with its reason");
	CHECK_EQ_U(found(&a_other_port, 100), RDMA_FAIL_MAX,
		   "the same address on another port is another peer");
	CHECK_EQ_U(found(&b, 100), RDMA_FAIL_MAX, "another address is not found");

	negcache_add_at(SA(&c), RDMA_FAIL_TIMEOUT, 60, 100);
	CHECK_EQ_U(found(&c, 110), RDMA_FAIL_TIMEOUT, "an IPv6 peer is found");
	CHECK_EQ_U(found(&a, 110), RDMA_FAIL_REFUSED, "the IPv4 peer is still there");

	/* Added again: the new reason, and the time counts from now. */
	negcache_add_at(SA(&a), RDMA_FAIL_UNREACHABLE, 60, 150);
	CHECK_EQ_U(found(&a, 200), RDMA_FAIL_UNREACHABLE,
		   "adding a peer again replaces its reason and renews it");
	CHECK_EQ_U(found(&c, 200), RDMA_FAIL_MAX, "the other peer expired meanwhile");
}

static void
test_expiry(void)
{
	struct sockaddr_in p = in4("10.77.0.20", 111);
	struct sockaddr_in q = in4("10.77.0.21", 111);

	negcache_add_at(SA(&p), RDMA_FAIL_TIMEOUT, 60, 1000);
	CHECK_EQ_U(found(&p, 1000), RDMA_FAIL_TIMEOUT, "found when added");
	CHECK_EQ_U(found(&p, 1059), RDMA_FAIL_TIMEOUT, "found 59 s later (ttl 60)");
	CHECK_EQ_U(found(&p, 1060), RDMA_FAIL_MAX, "gone 60 s later");
	/* An expired entry is dropped, not only hidden. */
	CHECK_EQ_U(found(&p, 1001), RDMA_FAIL_MAX,
		   "an expired entry was removed on lookup (not found at an earlier time)");

	negcache_add_at(SA(&q), RDMA_FAIL_NOT_RDMA, 1, 2000);
	CHECK_EQ_U(found(&q, 2000), RDMA_FAIL_NOT_RDMA, "ttl 1: found in the same second");
	CHECK_EQ_U(found(&q, 2001), RDMA_FAIL_MAX, "ttl 1: gone a second later");

	negcache_add_at(SA(&q), RDMA_FAIL_REFUSED, 0, 3000);
	CHECK_EQ_U(found(&q, 3000), RDMA_FAIL_MAX, "ttl 0 (negative_cache = 0) caches nothing");
}

static void
test_uncacheable(void)
{
	static const struct {
		enum rdma_fail why;
		bool cached;
	} reasons[] = {
		{ RDMA_FAIL_NOT_RDMA, true },
		{ RDMA_FAIL_REFUSED, true },
		{ RDMA_FAIL_UNREACHABLE, true },
		{ RDMA_FAIL_TIMEOUT, true },
		/* Memory: the next client would not have it either. */
		{ RDMA_FAIL_MEMLOCK, true },
		/* Other local trouble says nothing about the peer. */
		{ RDMA_FAIL_NONE, false },
		{ RDMA_FAIL_ERROR, false },
		/* Not outcomes of an attempt. */
		{ RDMA_FAIL_NEGCACHE, false },
		{ RDMA_FAIL_CONFIG, false },
	};
	struct sockaddr_un local;
	enum rdma_fail why;
	size_t i;

	for (i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		struct sockaddr_in p = in4("10.77.0.30", (uint16_t)(700 + i));

		negcache_add_at(SA(&p), reasons[i].why, 60, 4000);
		CHECK_EQ_U(found(&p, 4001), reasons[i].cached ? reasons[i].why : RDMA_FAIL_MAX,
			   "reason %s is %s", rdma_fail_token(reasons[i].why),
			   reasons[i].cached ? "cached" : "not cached");
	}

	/* Not an IP peer: nothing to key it by. */
	memset(&local, 0, sizeof(local));
	local.sun_family = AF_UNIX;
	negcache_add_at(SA(&local), RDMA_FAIL_REFUSED, 60, 4000);
	CHECK(!negcache_lookup_at(SA(&local), &why, 4001),
	      "an AF_UNIX peer is neither cached nor found");
}

/* 10.1.x.y, one address per i. */
static struct sockaddr_in
peer_n(unsigned int i)
{
	char text[32];

	snprintf(text, sizeof(text), "10.1.%u.%u", i / 256, i % 256);
	return in4(text, 2049);
}

/* Peers never looked up again do not stay: adding one sweeps them. */
static void
test_sweep(void)
{
	struct sockaddr_in p, late = in4("10.77.0.50", 2049);

	for (unsigned int i = 0; i < 100; i++) {
		p = peer_n(i);
		negcache_add_at(SA(&p), RDMA_FAIL_REFUSED, 10, 4100);
	}
	CHECK_EQ_U(negcache_size(), 100, "100 peers added when the earlier "
		   "tests' entries had expired: 100 entries");
	negcache_add_at(SA(&late), RDMA_FAIL_REFUSED, 10, 4200);
	CHECK_EQ_U(negcache_size(), 1, "adding a peer after they expired drops "
		   "all of them, unlooked-up");
	CHECK_EQ_U(found(&late, 4200), RDMA_FAIL_REFUSED, "... and holds the "
		   "new one");
}

/* Full: the entry that would expire first goes. */
static void
test_bound(void)
{
	struct sockaddr_in p;
	unsigned int n = NEGCACHE_MAX + 10, gone = 0, held = 0;

	for (unsigned int i = 0; i < n; i++) {
		p = peer_n(i);
		negcache_add_at(SA(&p), RDMA_FAIL_TIMEOUT, 600 + i, 4300);
	}
	CHECK_EQ_U(negcache_size(), NEGCACHE_MAX, "%u peers added: the table "
		   "holds NEGCACHE_MAX (%u)", n, NEGCACHE_MAX);
	for (unsigned int i = 0; i < n; i++) {
		p = peer_n(i);
		if (i < 10)
			gone += found(&p, 4301) == RDMA_FAIL_MAX;
		else
			held += found(&p, 4301) == RDMA_FAIL_TIMEOUT;
	}
	CHECK_EQ_U(gone, 10, "the 10 that would expire first were dropped");
	CHECK_EQ_U(held, NEGCACHE_MAX, "the others are all held");

	p = peer_n(n - 1);
	negcache_add_at(SA(&p), RDMA_FAIL_REFUSED, 60, 4302);
	CHECK_EQ_U(negcache_size(), NEGCACHE_MAX, "renewing a peer held takes "
		   "no room");
	CHECK_EQ_U(found(&p, 4302), RDMA_FAIL_REFUSED, "... and renews it");
}

/* Last: while it lasts, the wildcard answers for every peer. */
static void
test_no_device_wildcard(void)
{
	struct sockaddr_in a = in4("10.77.0.40", 2049);
	struct sockaddr_in b = in4("192.0.2.1", 111);
	struct sockaddr_in6 c = in6("fd77::40", 20049);
	struct sockaddr_in known = in4("10.77.0.41", 2049);
	struct sockaddr_un local;
	enum rdma_fail why = RDMA_FAIL_MAX;

	negcache_add_at(SA(&known), RDMA_FAIL_REFUSED, 600, 5000);
	negcache_add_at(SA(&a), RDMA_FAIL_NO_DEVICE, 60, 5000);
	CHECK_EQ_U(found(&a, 5001), RDMA_FAIL_NO_DEVICE, "no device: the peer it failed for");
	CHECK_EQ_U(found(&b, 5001), RDMA_FAIL_NO_DEVICE, "no device: any other IPv4 peer");
	CHECK_EQ_U(found(&c, 5001), RDMA_FAIL_NO_DEVICE, "no device: any IPv6 peer");
	CHECK_EQ_U(found(&known, 5001), RDMA_FAIL_NO_DEVICE,
		   "no device answers before a peer's own entry");
	memset(&local, 0, sizeof(local));
	local.sun_family = AF_UNIX;
	CHECK(negcache_lookup_at(SA(&local), &why, 5001) && why == RDMA_FAIL_NO_DEVICE,
	      "no device: even a peer without an IP address");

	CHECK_EQ_U(found(&b, 5060), RDMA_FAIL_MAX, "the wildcard expires like any entry");
	CHECK_EQ_U(found(&known, 5060), RDMA_FAIL_REFUSED,
		   "then the peer's own entry shows again");
}

int
main(void)
{
	test_add_lookup();
	test_expiry();
	test_uncacheable();
	test_sweep();
	test_bound();
	test_no_device_wildcard();
	return check_done();
}
