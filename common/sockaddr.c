/*
 * Printable socket addresses (see sockaddr.h).
 */
#include <arpa/inet.h>
#include <stdio.h>

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
