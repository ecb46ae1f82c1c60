/*
 * rpcrdma-stat: the table of transports, and the summary per process
 * (-s), in aligned columns.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/reason.h"
#include "config/shim_config.h"
#include "stat.h"

#define MAX_COLS 16

struct table {
	unsigned int ncols;
	const char *head[MAX_COLS];
	bool right[MAX_COLS];		/* right-aligned (numbers) */
	char **cells;			/* nrows * ncols */
	size_t nrows, cap;
};

static void
table_init(struct table *t, const char *const *head, const char *right)
{
	memset(t, 0, sizeof(*t));
	for (t->ncols = 0; head[t->ncols]; t->ncols++) {
		t->head[t->ncols] = head[t->ncols];
		t->right[t->ncols] = right[t->ncols] == 'r';
	}
}

/* Append a row; the caller fills each of its cells with a malloc()ed string. */
static char **
table_row(struct table *t)
{
	if (t->nrows == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->cells = xrealloc(t->cells, t->cap * t->ncols, sizeof(*t->cells));
	}
	memset(&t->cells[t->nrows * t->ncols], 0, t->ncols * sizeof(*t->cells));
	return &t->cells[t->nrows++ * t->ncols];
}

static void
table_print(struct table *t)
{
	size_t width[MAX_COLS];

	for (unsigned int c = 0; c < t->ncols; c++) {
		width[c] = strlen(t->head[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			size_t l = strlen(t->cells[r * t->ncols + c]);

			if (l > width[c])
				width[c] = l;
		}
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		for (unsigned int c = 0; c < t->ncols; c++) {
			const char *s = r ? t->cells[(r - 1) * t->ncols + c] :
					    t->head[c];
			bool last = c + 1 == t->ncols;

			if (t->right[c])
				printf("%*s", (int)width[c], s);
			else if (last)
				printf("%s", s);
			else
				printf("%-*s", (int)width[c], s);
			if (!last)
				fputs("  ", stdout);
		}
		putchar('\n');
	}
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
}

static char *
fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

static char *
fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	int rc;

	va_start(ap, f);
	rc = vasprintf(&s, f, ap);
	va_end(ap);
	if (rc < 0) {
		msg("out of memory");
		exit(1);
	}
	return s;
}

static char *
fmt_bytes(uint64_t v)
{
	char buf[32];

	bytes_text(v, buf, sizeof(buf));
	return xstrdup(buf);
}

/*
 * The inline thresholds in call/reply order, as the log lines give them:
 * a client sends calls, a server sends replies.
 */
static void
inline_call_reply(const struct shim_stats_conn *s, uint32_t *call,
		  uint32_t *reply)
{
	if (s->role == SHIM_STATS_SERVER) {
		*call = s->inline_recv;
		*reply = s->inline_send;
	} else {
		*call = s->inline_send;
		*reply = s->inline_recv;
	}
}

static char *
detail_text(const struct shim_stats_conn *s)
{
	char rd[32], wr[32], rp[32], vers[16] = "-";
	uint32_t call, reply;

	if (s->role == SHIM_STATS_LISTENER) {
		if (is_rdma(s))
			return fmt("rdma_port=%u connections=%" PRIu64,
				   s->rdma_port, s->connections);
		return fmt("reason=%s", reason_token(s->reason));
	}
	if (!is_rdma(s))
		return fmt("reason=%s", reason_token(s->reason));
	inline_call_reply(s, &call, &reply);
	bytes_text(s->read_chunk_bytes, rd, sizeof(rd));
	bytes_text(s->write_chunk_bytes, wr, sizeof(wr));
	bytes_text(s->reply_chunk_bytes, rp, sizeof(rp));
	if (s->rpcrdma_vers)
		snprintf(vers, sizeof(vers), "%" PRIu32, s->rpcrdma_vers);
	return fmt("inline=%" PRIu32 "/%" PRIu32 " credits=%" PRIu32
		   " R=%u pdata=%s long=%" PRIu64 "/%" PRIu64
		   " rdma_errors=%" PRIu64 " read_chunk=%s write_chunk=%s"
		   " reply_chunk=%s send_inv=%" PRIu64 " vers=%s dropped=%" PRIu64
		   " poll=%" PRIu64 "/%" PRIu64,
		   call, reply, s->credits, s->rinv ? 1u : 0u,
		   s->peer_pdata ? "yes" : "no", s->long_out, s->long_in,
		   s->rdma_errors, rd, wr, rp, s->send_inv, vers, s->dropped,
		   s->poll_missed, s->poll_skipped);
}

void
print_transports(struct procs *ps)
{
	static const char *const head[] = {
		"PID", "PROGRAM", "ROLE", "XPRT", "LOCAL", "PEER", "RPC",
		"CALLS", "ERRORS", "TIMEOUTS", "SENT", "RECEIVED", "DETAIL", NULL,
	};
	static const char right[] = "r      rrrrr ";
	unsigned int *idx = xcalloc(SHIM_STATS_SLOTS, sizeof(*idx));
	struct table t;

	table_init(&t, head, right);
	for (size_t i = 0; i < ps->n; i++) {
		struct proc *p = ps->v[i];
		size_t n = live_slots(p, idx);

		for (size_t k = 0; k < n; k++) {
			const struct shim_stats_conn *s = &p->f.slots[idx[k]];
			bool counted = s->role != SHIM_STATS_LISTENER;
			bool bytes = counted && is_rdma(s);
			char ep[INET6_ADDRSTRLEN + 16];
			char **row = table_row(&t);

			row[0] = fmt("%d", (int)p->f.pid);
			row[1] = xstrdup(printable(p->prog));
			row[2] = xstrdup(role_name(s->role));
			row[3] = xstrdup(is_rdma(s) ? "RDMA" : "TCP");
			endpoint_text(&s->local, ep, sizeof(ep));
			row[4] = xstrdup(ep);
			endpoint_text(&s->peer, ep, sizeof(ep));
			row[5] = xstrdup(ep);
			row[6] = s->role == SHIM_STATS_CLIENT ?
				 fmt("%" PRIu32 "/%" PRIu32, s->prog, s->vers) :
				 xstrdup("-");
			row[7] = counted ? fmt("%" PRIu64, s->calls) : xstrdup("-");
			row[8] = counted ? fmt("%" PRIu64, s->errors) : xstrdup("-");
			row[9] = counted ? fmt("%" PRIu64, s->timeouts) : xstrdup("-");
			row[10] = bytes ? fmt_bytes(s->bytes_out) : xstrdup("-");
			row[11] = bytes ? fmt_bytes(s->bytes_in) : xstrdup("-");
			row[12] = detail_text(s);
		}
	}
	table_print(&t);
	free(idx);
}

static uint64_t
fallback_total(const struct proc *p)
{
	uint64_t sum = 0;

	for (unsigned int r = RDMA_FAIL_NO_DEVICE; r < RDMA_FAIL_MAX &&
	     r < SHIM_STATS_REASONS; r++)
		sum += p->f.fallbacks[r];
	return sum;
}

static char *
fallbacks_text(const struct proc *p)
{
	char buf[512];
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int r = RDMA_FAIL_NO_DEVICE; r < RDMA_FAIL_MAX &&
	     r < SHIM_STATS_REASONS; r++) {
		if (!p->f.fallbacks[r] || off >= sizeof(buf))
			continue;
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s=%" PRIu64,
					off ? " " : "", reason_token(r),
					p->f.fallbacks[r]);
	}
	return xstrdup(off ? buf : "-");
}

/* Registered memory in use and the budget, "1.3M/6.0M"; "-" before any. */
static char *
pinned_text(const struct proc *p)
{
	char used[32], total[32];

	if (!p->f.pinned_total || !p->f.pinned_peak)
		return xstrdup("-");
	bytes_text(p->f.pinned_used, used, sizeof(used));
	bytes_text(p->f.pinned_total, total, sizeof(total));
	return fmt("%s/%s", used, total);
}

void
print_summary(struct procs *ps)
{
	static const char *const head[] = {
		"PID", "UID", "PROGRAM", "MODE", "LIVE", "RDMA", "TCP",
		"PINNED", "FALLBACKS", "CONFIG", NULL,
	};
	static const char right[] = "rr  rrrr  ";
	unsigned int *idx = xcalloc(SHIM_STATS_SLOTS, sizeof(*idx));
	struct table t;

	table_init(&t, head, right);
	for (size_t i = 0; i < ps->n; i++) {
		struct proc *p = ps->v[i];
		char **row = table_row(&t);

		row[0] = fmt("%d", (int)p->f.pid);
		row[1] = fmt("%" PRIu32, p->f.uid);
		row[2] = xstrdup(printable(p->prog));
		row[3] = xstrdup(shim_config_mode_name((enum shim_mode)p->f.mode));
		row[4] = fmt("%zu", live_slots(p, idx));
		row[5] = fmt("%" PRIu64, p->f.rdma_transports);
		row[6] = fmt("%" PRIu64, fallback_total(p));
		row[7] = pinned_text(p);
		row[8] = fallbacks_text(p);
		row[9] = fmt("%s%s", p->config[0] ? printable(p->config) : "-",
			     p->f.bad_config ? " (errors)" : "");
	}
	table_print(&t);
	free(idx);
}
