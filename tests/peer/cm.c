/*
 * rdma-peer: RDMA-CM.  Events, the addresses given on the command line,
 * and the RFC 8797 private data exchanged in the connect and the accept.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "peer.h"

void
print_event(const struct rdma_cm_event *ev)
{
	if (verbose)
		out("cm_event=%s status=%d", rdma_event_str(ev->event), ev->status);
}

/* Next event on ch before the deadline: 0, or -ETIMEDOUT, -EINTR, -errno. */
int
wait_cm_event(struct rdma_event_channel *ch, int64_t deadline,
	      struct rdma_cm_event **ev)
{
	for (;;) {
		struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

		if (rdma_get_cm_event(ch, ev) == 0) {
			print_event(*ev);
			return 0;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (stop_signal)
			return -EINTR;
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, left_ms(deadline)) < 0 && errno != EINTR)
			return -errno;
	}
}

/* What this end advertises, or the Version One defaults (RFC 8797 s5.1). */
void
own_sizes(const struct opts *o, uint32_t *send, uint32_t *recv)
{
	if (o->pdata == PD_SIZES) {
		*send = rpcrdma_cmp_size_decode(rpcrdma_cmp_size_encode(o->pd.send_size));
		*recv = rpcrdma_cmp_size_decode(rpcrdma_cmp_size_encode(o->pd.recv_size));
	} else {
		*send = RPCRDMA1_INLINE_MIN;
		*recv = RPCRDMA1_INLINE_MIN;
	}
}

const char *
pdata_name(const struct opts *o, char *buf, size_t len)
{
	switch (o->pdata) {
	case PD_NONE:
		return "none";
	case PD_GARBAGE:
		return "garbage";
	case PD_BADVERSION:
		return "badversion";
	case PD_SIZES:
		break;
	}
	snprintf(buf, len, "%u:%u%s", o->pd.send_size, o->pd.recv_size,
		 o->pd.remote_inv ? ":R" : "");
	return buf;
}

/* The private data to send; returns its length (0: none). */
uint8_t
build_pdata(const struct opts *o, uint8_t buf[16])
{
	struct rpcrdma_cm_pdata pd = { .send_size = 8192, .recv_size = 8192 };
	unsigned int i;

	switch (o->pdata) {
	case PD_NONE:
		return 0;
	case PD_GARBAGE:
		/* No 0xf6 octet anywhere, so no format identifier either. */
		for (i = 0; i < 16; i++)
			buf[i] = (uint8_t)(0x11 * (i + 1)) & 0x7f;
		return 16;
	case PD_BADVERSION:
		rpcrdma_cmp_encode(buf, &pd);
		buf[4] = 2;
		return RPCRDMA1_CMP_LEN;
	case PD_SIZES:
		break;
	}
	rpcrdma_cmp_encode(buf, &o->pd);
	return RPCRDMA1_CMP_LEN;
}

/*
 * Report the private data received from the other end ("server" or
 * "client") and what it means: the RFC 8797 message at any offset
 * (s5.2), else the Version One defaults.  RoCE and InfiniBand pad the
 * private data with zeros, so its length says little.
 */
bool
report_pdata(const char *who, const void *data, uint8_t len,
	     struct rpcrdma_cm_pdata *pd)
{
	const uint8_t *p = data;
	size_t off;
	bool valid = rpcrdma_cmp_decode(data, len, pd);

	for (off = 0; p && off + RPCRDMA1_CMP_LEN <= len; off++) {
		if (get32(p + off) != RPCRDMA1_CMP_FORMAT_ID)
			continue;
		if (valid && p[off + 4] != RPCRDMA1_CMP_VERSION)
			continue;
		if (valid) {
			out("%s_pdata=present format=0x%08x version=%u send=%u recv=%u rinv=%d offset=%zu len=%u",
			    who, RPCRDMA1_CMP_FORMAT_ID, p[off + 4], pd->send_size,
			    pd->recv_size, pd->remote_inv, off, len);
			return true;
		}
		out("%s_pdata=unknown-version format=0x%08x version=%u send=%u recv=%u rinv=0 offset=%zu len=%u",
		    who, RPCRDMA1_CMP_FORMAT_ID, p[off + 4], pd->send_size,
		    pd->recv_size, off, len);
		return false;
	}
	out("%s_pdata=absent send=%u recv=%u rinv=0 len=%u", who, pd->send_size,
	    pd->recv_size, len);
	return false;
}

bool
make_sockaddr(const char *addr, unsigned int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints, *ai;
	char ps[8];
	int err;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(ps, sizeof(ps), "%u", port);
	err = getaddrinfo(addr, ps, &hints, &ai);
	if (err) {
		warnmsg("%s: %s", addr, gai_strerror(err));
		return false;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return true;
}
