/*
 * A peer as a hash key: address family, address and port, zero-padded so
 * that equal peers compare equal bytewise (uthash HASH_FIND on the key).
 */
#ifndef SHIM_PEER_H
#define SHIM_PEER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

struct peer_key {
	uint16_t family;	/* AF_INET, AF_INET6; 0 matches every peer */
	uint16_t port;		/* host order */
	uint8_t addr[16];
};

/* Fill key from a sockaddr; false when it is neither IPv4 nor IPv6. */
bool peer_key_from(struct peer_key *key, const struct sockaddr *sa);

/* "10.0.0.1 port 2049" or "fd00::1 port 2049". */
void peer_format(const struct sockaddr *sa, char *buf, size_t len);

#endif
