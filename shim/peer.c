/*
 * Peer keys and printable peer addresses.
 */
#include <netinet/in.h>
#include <string.h>

#include "peer.h"

bool
peer_key_from(struct peer_key *key, const struct sockaddr *sa)
{
	memset(key, 0, sizeof(*key));
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
