/*
 * The process's budget of registered (pinned) memory.
 *
 * Every octet the transport registers with a device goes through
 * rdma_buf_alloc() (rdma_dev.c), which charges it here before
 * ibv_reg_mr(): a registration the budget cannot cover fails with
 * -ENOMEM at once, instead of the kernel refusing it (RLIMIT_MEMLOCK)
 * half-way through a connection or a call.  All CLIENTs and server
 * connections of the process share one budget; the numbers are published
 * in the statistics file (rpcrdma-stat shows used/total).
 *
 * The total is max_pinned from the configuration, or, when that is 0,
 * derived from RLIMIT_MEMLOCK (budget_default()).  Nothing here knows
 * about devices: the arithmetic is pure and unit-tested
 * (tests/unit/test_budget.c).
 */
#ifndef TRANSPORT_BUDGET_H
#define TRANSPORT_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The default total for a soft RLIMIT_MEMLOCK of limit octets
 * (UINT64_MAX: unlimited) and physical memory of ram octets.  A finite
 * limit that the kernel enforces (no CAP_IPC_LOCK) gives three quarters
 * of it: the kernel counts more than our buffers against the same limit
 * (queue memory some providers pin, other libraries' registrations).
 * Without an enforced limit a quarter of physical memory bounds it: pinned
 * pages cannot be swapped or reclaimed.  Whole pages, at least one.
 */
uint64_t budget_default(uint64_t limit, bool cap_ipc_lock, uint64_t ram,
			uint64_t page);

/*
 * Set the total once per process: total octets, or 0 for the default
 * from this process's limit.  Later calls change nothing and return the
 * total in force.
 */
uint64_t budget_setup(uint64_t total);

/* Take len octets; false (nothing taken) when they do not fit. */
bool budget_charge(uint64_t len);
void budget_release(uint64_t len);

uint64_t budget_total(void);
uint64_t budget_used(void);
/* Registrations refused so far (the statistics show them). */
uint64_t budget_refused(void);

/*
 * Credits for a new server connection (RFC 8166 s4.3.1: "the responder
 * MAY dynamically adjust the granted credit value ... to accommodate the
 * available resources in a shared receive queue").  left: octets the
 * budget can still give; keep: octets set aside for calls in progress;
 * cost: octets one credit needs; want: the configured credits; future:
 * connections the process may still accept, each of which must find one
 * credit.  One credit, plus an eighth of what is left beyond that, at
 * most want; 0 when not even one credit fits (the connection is refused).
 */
unsigned int budget_credits(uint64_t left, uint64_t keep, uint64_t cost,
			    unsigned int want, unsigned int future);

/* For the unit test: forget the total and the counters. */
void budget_reset(void);
/*
 * fork(): the child has none of its parent's registrations (they are not
 * mapped in it): its count starts from nothing, under the same total.
 */
void budget_fork_child(void);
/* fork(): the lock of the total's first setting, held across it. */
void budget_fork_lock(void);
void budget_fork_unlock(void);

#endif
