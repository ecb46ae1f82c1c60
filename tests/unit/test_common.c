/*
 * Unit tests of common/: peer keys and printable addresses, the
 * bounded "log once per peer" table, fork() generations.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "addr_fixture.h"
#include "check.h"
#include "common/forkgen.h"
#include "common/log_once.h"
#include "common/sockaddr.h"

static struct peer_key
key_of(const char *addr, uint16_t port)
{
	struct peer_key k;

	peer_key_from(&k, sa(addr, port));
	return k;
}

static void
test_peer_key(void)
{
	static const uint8_t v4[16] = { 10, 0, 0, 1 };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct peer_key k, z;
	char buf[80];

	memset(&z, 0, sizeof(z));
	CHECK(peer_key_from(&k, sa("10.0.0.1", 2049)) && k.family == AF_INET &&
	      k.port == 2049 && !memcmp(k.addr, v4, 16),
	      "IPv4: family, port in host order, address then zeros");
	CHECK(peer_key_from(&k, sa("fd77::1", 20049)) && k.family == AF_INET6 &&
	      k.port == 20049 && k.addr[0] == 0xfd && k.addr[15] == 1,
	      "IPv6: family, port, 16 bytes");
	memset(&k, 0xa5, sizeof(k));
	CHECK(!peer_key_from(&k, NULL) && !memcmp(&k, &z, sizeof(k)),
	      "NULL: false, key all zero");
	memset(&k, 0xa5, sizeof(k));
	CHECK(!peer_key_from(&k, (struct sockaddr *)&sun) &&
	      !memcmp(&k, &z, sizeof(k)), "AF_UNIX: false, key all zero");

	{
		struct peer_key a = key_of("10.0.0.1", 1), b = key_of("10.0.0.1", 1);

		CHECK(!memcmp(&a, &b, sizeof(a)), "equal peers: equal bytes");
		b = key_of("10.0.0.1", 2);
		CHECK(memcmp(&a, &b, sizeof(a)), "another port: other bytes");
	}

	k = key_of("::ffff:10.0.0.1", 111);
	peer_key_unmap(&k);
	CHECK(k.family == AF_INET && k.port == 111 && !memcmp(k.addr, v4, 16),
	      "an IPv4-mapped key becomes the IPv4 one");
	k = key_of("fd77::1", 111);
	peer_key_unmap(&k);
	CHECK(k.family == AF_INET6 && k.addr[0] == 0xfd,
	      "another IPv6 key stays");

	sa_format(sa("10.77.0.1", 2049), buf, sizeof(buf));
	CHECK(!strcmp(buf, "10.77.0.1 port 2049"), "sa_format: '%s'", buf);
	sa_format(sa("fd77::1", 20049), buf, sizeof(buf));
	CHECK(!strcmp(buf, "fd77::1 port 20049"), "sa_format IPv6: '%s'", buf);
	sa_format((struct sockaddr *)&sun, buf, sizeof(buf));
	CHECK(!strcmp(buf, "? port 0"), "sa_format of another family: '%s'", buf);
}

static void
test_log_once(void)
{
	struct peer_key a = key_of("10.0.0.1", 2049), b = key_of("10.0.0.2", 2049);
	uint64_t t = 1000;
	unsigned int first = 0;

	CHECK(log_once_at(LOG_ONCE_DECISION, &a, 7, t), "first time: true");
	CHECK(!log_once_at(LOG_ONCE_DECISION, &a, 7, t + 1), "again: false");
	CHECK(log_once_at(LOG_ONCE_DECISION, &a, 8, t + 1), "another tag: true");
	CHECK(log_once_at(LOG_ONCE_DECISION, &b, 7, t + 1), "another peer: true");
	CHECK(log_once_at(LOG_ONCE_CONNECTION, &a, 7, t + 1),
	      "another kind: true");

	/* Seen again refreshes; not seen for the whole TTL expires. */
	t += LOG_ONCE_TTL_S - 1;
	CHECK(!log_once_at(LOG_ONCE_DECISION, &a, 7, t),
	      "just before the TTL: still known");
	CHECK(!log_once_at(LOG_ONCE_DECISION, &a, 7, t + LOG_ONCE_TTL_S - 1),
	      "seen again: its TTL starts over");
	CHECK(log_once_at(LOG_ONCE_DECISION, &b, 7, t + LOG_ONCE_TTL_S - 1),
	      "not seen for the TTL: new again");
	t += 2 * LOG_ONCE_TTL_S;
	CHECK(log_once_at(LOG_ONCE_DECISION, &a, 7, t),
	      "a whole TTL later: new again");

	/* Bounded: the entry seen longest ago goes first. */
	for (uint64_t i = 0; i < LOG_ONCE_MAX - 1; i++)
		first += log_once_at(LOG_ONCE_CONNECTION, &b, 1000 + i, t);
	CHECK_EQ_U(first, LOG_ONCE_MAX - 1, "%d other entries, all new",
		   LOG_ONCE_MAX - 1);
	CHECK(!log_once_at(LOG_ONCE_DECISION, &a, 7, t),
	      "a full table still knows its entries");
	CHECK(log_once_at(LOG_ONCE_CONNECTION, &b, 1, t),
	      "one more entry: still new");
	CHECK(log_once_at(LOG_ONCE_CONNECTION, &b, 1000, t),
	      "... and the one seen longest ago was dropped for it");
	CHECK(!log_once_at(LOG_ONCE_DECISION, &a, 7, t),
	      "an entry refreshed since is kept");
}

/* A child counts one generation more, its child two; the parent none. */
static void
test_fork_gen(void)
{
	unsigned int g = fork_gen();
	int status = -1;
	pid_t pid;

	CHECK_EQ_U(fork_gen(), g, "no fork, the same generation");
	/* Lines still buffered would be written by the children too. */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		pid_t grandchild;
		int st = -1;

		if (fork_gen() != g + 1)
			_exit(1);
		grandchild = fork();
		if (grandchild == 0)
			_exit(fork_gen() == g + 2 ? 0 : 2);
		if (grandchild < 0 || waitpid(grandchild, &st, 0) != grandchild)
			_exit(3);
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 4);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid, "the child ran");
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child and grandchild each one generation further (status %d)",
	      status);
	CHECK_EQ_U(fork_gen(), g, "the parent's stays");
}

int
main(void)
{
	test_peer_key();
	test_log_once();
	test_fork_gen();
	return check_done();
}
