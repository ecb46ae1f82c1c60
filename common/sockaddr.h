/*
 * IPv4 and IPv6 socket addresses: size, port, a printable form, and a
 * fixed-size key for hash tables.
 */
#ifndef COMMON_SOCKADDR_H
#define COMMON_SOCKADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The size of an AF_INET or AF_INET6 address (AF_INET's for others). */
static inline socklen_t
sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

/* The port, in host order. */
static inline uint16_t
sa_port(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET6 ?
		     ((const struct sockaddr_in6 *)sa)->sin6_port :
		     ((const struct sockaddr_in *)sa)->sin_port);
}

static inline void
sa_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

/*
 * A peer as a hash key: address family, address and port, zero-padded so
 * that equal peers compare equal bytewise (uthash HASH_FIND on the key).
 */
struct peer_key {
	uint16_t family;	/* AF_INET, AF_INET6; 0: none */
	uint16_t port;		/* host order */
	uint8_t addr[16];	/* network order; 4 bytes for AF_INET */
};

/*
 * Fill key from sa; false, and key all zero, when sa is NULL or neither
 * IPv4 nor IPv6.
 */
bool peer_key_from(struct peer_key *key, const struct sockaddr *sa);

/* An IPv4-mapped IPv6 key (::ffff:a.b.c.d) becomes the IPv4 one. */
void peer_key_unmap(struct peer_key *key);

/* The address alone ("10.0.0.1", "fd00::1"), or "?" for other families. */
void sa_format_addr(const struct sockaddr *sa, char *buf, size_t len);

/* "10.0.0.1 port 2049": how the log names a peer. */
void sa_format(const struct sockaddr *sa, char *buf, size_t len);

#endif
