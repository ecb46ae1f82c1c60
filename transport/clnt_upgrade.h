/*
 * A CLIENT that upgrades itself from TCP to RDMA (the Happy Eyeballs idea,
 * RFC 8305, applied to a transport upgrade): calls go over the TCP CLIENT
 * libtirpc made while an RDMA CLIENT is connected in a thread of its own;
 * once that is up, new calls go over RDMA, and calls in flight finish
 * where they started.  A process that ends first has paid nothing: the
 * attempt starts only with the program's second call, its thread is
 * detached and holds nothing that blocks exit.
 *
 * Pure libtirpc: the RDMA CLIENT comes from a callback (shim/route.c), so
 * that this lives in the preloaded library and the unit tests drive it with
 * CLIENTs of their own.
 */
#ifndef TRANSPORT_CLNT_UPGRADE_H
#define TRANSPORT_CLNT_UPGRADE_H

#include <stdbool.h>

#include <rpc/rpc.h>

struct clnt_upgrade_ops {
	/*
	 * In the attempt's thread: an RDMA CLIENT on fd, a duplicate of the
	 * TCP CLIENT's descriptor that the new CLIENT must close when it is
	 * destroyed (CLSET_FD_CLOSE), or NULL (fd closed then by the caller).
	 */
	CLIENT *(*connect)(void *arg, int fd);
	/*
	 * Optional, in the thread of the call that would start the attempt,
	 * under the CLIENT's lock: true when no attempt is to be made (the
	 * calls stay on TCP), e.g. a peer known to have failed a moment ago.
	 */
	bool (*skip)(void *arg);
	/* Once, when neither the CLIENT nor the attempt needs arg any more. */
	void (*release)(void *arg);
};

/*
 * The upgrading CLIENT around tcp, which it owns from now on; the attempt
 * starts when after_calls calls have begun (0: at once).  NULL when out
 * of memory, tcp untouched then.
 */
CLIENT *clnt_upgrade_create(CLIENT *tcp, unsigned int after_calls,
			    const struct clnt_upgrade_ops *ops, void *arg);

bool clnt_is_upgrade(const CLIENT *cl);

/* Where the calls of cl go now: the RDMA CLIENT once up, else NULL (tests). */
CLIENT *clnt_upgrade_rdma(CLIENT *cl);

/* Wait up to ms for the attempt to end; true when it has (tests). */
bool clnt_upgrade_settled(CLIENT *cl, int ms);

#endif
