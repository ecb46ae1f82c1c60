/*
 * rdma-peer, the late-many serve case: a slow server.  The replies to the
 * run's first --held calls (whichever connections they came on) are held
 * back; the first call a connection sends after those is answered only
 * once every reply held for that connection went out, each through its
 * call's Reply chunk when it offered one, as Linux's server sends every
 * reply.  By then the client has timed out on them: their late replies
 * must land in memory it still exposes (a failed RDMA Write here is what
 * makes a kernel server close the connection).  Replies held for a
 * connection that closes are reported lost.
 */
#include <stdio.h>
#include <string.h>

#include "serve.h"

#define PEER_MAX_LATE 32

static struct {
	unsigned int conn;
	struct held_reply r;
} lates[PEER_MAX_LATE];
static unsigned int nlates, held_total;

bool
late_many_hold(struct server *s, struct pconn *c, const uint8_t *payload,
	       size_t plen)
{
	struct held_reply *hr;

	if (held_total >= s->o->held || nlates == PEER_MAX_LATE)
		return false;
	hr = &lates[nlates].r;
	if (!keep_reply(hr, c, payload, plen))
		return false;
	lates[nlates++].conn = c->number;
	held_total++;
	return true;
}

/* Take entry i out of the table, keeping the order of the others. */
static void
late_remove(unsigned int i)
{
	memmove(&lates[i], &lates[i + 1], (nlates - i - 1) * sizeof(lates[0]));
	nlates--;
}

void
late_many_due(struct server *s, struct pconn *c)
{
	unsigned int i = 0;

	if (held_total < s->o->held)
		return;		/* this call is held too */
	while (i < nlates && !c->dead) {
		if (lates[i].conn != c->number) {
			i++;
			continue;
		}
		c->held = lates[i].r;
		late_remove(i);
		send_held(s, c);
	}
}

void
late_many_closed(struct pconn *c)
{
	unsigned int i = 0;

	while (i < nlates) {
		if (lates[i].conn != c->number) {
			i++;
			continue;
		}
		out("reply_lost conn=%u xid=0x%08x reason=disconnected",
		    c->number, lates[i].r.hdr.xid);
		late_remove(i);
	}
}
