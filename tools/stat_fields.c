/*
 * rpcrdma-stat: what the fields of a statistics file say, as text.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/socket.h>

#include "common/reason.h"
#include "stat.h"

const char *
role_name(uint32_t role)
{
	switch (role) {
	case SHIM_STATS_CLIENT:
		return "client";
	case SHIM_STATS_LISTENER:
		return "listener";
	case SHIM_STATS_SERVER:
		return "server";
	}
	return "?";
}

/* Listeners first, then their connections, then clients. */
static int
role_rank(uint32_t role)
{
	switch (role) {
	case SHIM_STATS_LISTENER:
		return 0;
	case SHIM_STATS_SERVER:
		return 1;
	default:
		return 2;
	}
}

bool
is_rdma(const struct shim_stats_conn *s)
{
	return s->transport == SHIM_STATS_RDMA;
}

const char *
reason_token(uint32_t reason)
{
	return rdma_fail_token((enum rdma_fail)reason);
}

/* The address without the port; false when there is none. */
bool
addr_text(const struct shim_stats_addr *a, char *buf, size_t len)
{
	if (a->family == AF_INET)
		return inet_ntop(AF_INET, a->addr, buf, (socklen_t)len) != NULL;
	if (a->family == AF_INET6)
		return inet_ntop(AF_INET6, a->addr, buf, (socklen_t)len) != NULL;
	return false;
}

/* "10.0.0.1:2049", "[fd00::1]:2049" or "-". */
void
endpoint_text(const struct shim_stats_addr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (!addr_text(a, host, sizeof(host)))
		snprintf(buf, len, "-");
	else if (a->family == AF_INET6)
		snprintf(buf, len, "[%s]:%u", host, a->port);
	else
		snprintf(buf, len, "%s:%u", host, a->port);
}

/* 1023, 1.5K, 12K, 3.2M: powers of 1024, as ls -h. */
void
bytes_text(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double d = (double)v;
	int u = -1;

	if (v < 1024) {
		snprintf(buf, len, "%" PRIu64, v);
		return;
	}
	while (d >= 1024 && u < (int)sizeof(units) - 2) {
		d /= 1024;
		u++;
	}
	if (d < 10)
		snprintf(buf, len, "%.1f%c", d, units[u]);
	else
		snprintf(buf, len, "%.0f%c", d, units[u]);
}

/* Control characters would break the table; show them as '?'. */
const char *
printable(char *s)
{
	for (char *c = s; *c; c++)
		if (iscntrl((unsigned char)*c))
			*c = '?';
	return s;
}

/* The live slots of p in display order (indices into p->f.slots). */
size_t
live_slots(const struct proc *p, unsigned int *idx)
{
	size_t n = 0;

	for (int rank = 0; rank < 3; rank++)
		for (unsigned int i = 0; i < p->f.nslots; i++) {
			const struct shim_stats_conn *s = &p->f.slots[i];

			if (s->state == SHIM_STATS_LIVE && role_rank(s->role) == rank)
				idx[n++] = i;
		}
	return n;
}
