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

#endif
