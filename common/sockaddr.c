/*
 * Printable socket addresses and peer keys (see sockaddr.h).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "common/sockaddr.h"

void
sa_format_addr(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *addr = NULL;

	if (sa->sa_family == AF_INET)
		addr = &((const struct sockaddr_in *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6)
		addr = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (!addr || !inet_ntop(sa->sa_family, addr, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

void
sa_format(const struct sockaddr *sa, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];

	sa_format_addr(sa, addr, sizeof(addr));
	snprintf(buf, len, "%s port %u", addr,
		 sa->sa_family == AF_INET || sa->sa_family == AF_INET6 ?
		 sa_port(sa) : 0u);
}

bool
peer_key_from(struct peer_key *key, const struct sockaddr *sa)
{
	memset(key, 0, sizeof(*key));
	if (!sa)
		return false;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

		key->family = AF_INET;
		key->port = ntohs(sin->sin_port);
		memcpy(key->addr, &sin->sin_addr, 4);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

		key->family = AF_INET6;
		key->port = ntohs(sin6->sin6_port);
		memcpy(key->addr, &sin6->sin6_addr, 16);
		return true;
	}
	return false;
}

void
peer_key_unmap(struct peer_key *key)
{
	struct in6_addr a;

	if (key->family != AF_INET6)
		return;
	memcpy(&a, key->addr, sizeof(a));
	if (!IN6_IS_ADDR_V4MAPPED(&a))
		return;
	key->family = AF_INET;
	memmove(key->addr, key->addr + 12, 4);
	memset(key->addr + 4, 0, 12);
}
