/*
 * Socket addresses for the tests, from text: an IPv4 or IPv6 address and
 * a port (in host order).
 *
 *   in4("10.0.0.1", 2049)      a struct sockaddr_in
 *   in6("fd77::1", 20049)      a struct sockaddr_in6
 *   sa("fd77::1", 20049)       either, by the text, in a static buffer
 */
#ifndef TESTS_UNIT_ADDR_FIXTURE_H
#define TESTS_UNIT_ADDR_FIXTURE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static inline struct sockaddr_in
in4(const char *addr, uint16_t port)
{
	struct sockaddr_in sin;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(port);
	inet_pton(AF_INET, addr, &sin.sin_addr);
	return sin;
}

static inline struct sockaddr_in6
in6(const char *addr, uint16_t port)
{
	struct sockaddr_in6 sin6;

	memset(&sin6, 0, sizeof(sin6));
	sin6.sin6_family = AF_INET6;
	sin6.sin6_port = htons(port);
	inet_pton(AF_INET6, addr, &sin6.sin6_addr);
	return sin6;
}

/* Valid until the next call; a bad address bails the test run out. */
static inline const struct sockaddr *
sa(const char *addr, uint16_t port)
{
	static struct sockaddr_storage ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
	} else {
		printf("Bail out! bad test address %s\n", addr);
		exit(1);
	}
	return (const struct sockaddr *)&ss;
}

#endif
