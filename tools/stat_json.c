/*
 * rpcrdma-stat: everything as one JSON document (-j); the format is in
 * rpcrdma-stat(1).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <arpa/inet.h>

#include "common/reason.h"
#include "config/shim_config.h"
#include "stat.h"

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
	    (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD. */
static void
json_str(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;

	putchar('"');
	while (*c) {
		size_t n;

		if (*c == '"' || *c == '\\') {
			printf("\\%c", *c++);
		} else if (*c < 0x20 || *c == 0x7f) {
			printf("\\u%04x", *c++);
		} else if ((n = utf8_len(c)) > 0) {
			fwrite(c, 1, n, stdout);
			c += n;
		} else {
			fputs("\\ufffd", stdout);
			c++;
		}
	}
	putchar('"');
}

static void
json_endpoint(const char *key, const struct shim_stats_addr *a)
{
	char host[INET6_ADDRSTRLEN];

	printf("          \"%s\": ", key);
	if (!addr_text(a, host, sizeof(host))) {
		printf("null,\n");
		return;
	}
	printf("{\"family\": \"%s\", \"address\": \"%s\", \"port\": %u},\n",
	       a->family == AF_INET6 ? "inet6" : "inet", host, a->port);
}

static void
json_u64(const char *key, uint64_t v, bool more)
{
	printf("          \"%s\": %" PRIu64 "%s\n", key, v, more ? "," : "");
}

/* A number, or null where it does not apply. */
static void
json_opt(const char *key, bool applies, uint64_t v)
{
	if (applies)
		json_u64(key, v, true);
	else
		printf("          \"%s\": null,\n", key);
}

static void
json_bool_opt(const char *key, bool applies, bool v)
{
	printf("          \"%s\": %s,\n", key,
	       !applies ? "null" : v ? "true" : "false");
}

static void
json_transport(const struct shim_stats_conn *s, bool more)
{
	bool client = s->role == SHIM_STATS_CLIENT;
	bool rdma_conn = is_rdma(s) && s->role != SHIM_STATS_LISTENER;
	bool listener = s->role == SHIM_STATS_LISTENER;

	printf("        {\n");
	printf("          \"role\": \"%s\",\n", role_name(s->role));
	printf("          \"transport\": \"%s\",\n", is_rdma(s) ? "rdma" : "tcp");
	json_endpoint("local", &s->local);
	json_endpoint("peer", &s->peer);
	json_opt("program", client, s->prog);
	json_opt("version", client, s->vers);
	printf("          \"reason\": ");
	if (is_rdma(s))
		printf("null,\n");
	else
		printf("\"%s\",\n", reason_token(s->reason));
	json_opt("rdma_port", listener && is_rdma(s), s->rdma_port);
	json_opt("inline_send", rdma_conn, s->inline_send);
	json_opt("inline_recv", rdma_conn, s->inline_recv);
	json_opt("credits", rdma_conn, s->credits);
	json_bool_opt("remote_invalidate", rdma_conn, s->rinv);
	json_bool_opt("peer_private_data", rdma_conn, s->peer_pdata);
	json_opt("rpcrdma_version", rdma_conn && s->rpcrdma_vers,
		 s->rpcrdma_vers);
	json_u64("created", s->created, true);
	json_u64("calls", s->calls, true);
	json_u64("errors", s->errors, true);
	json_u64("timeouts", s->timeouts, true);
	json_u64("bytes_out", s->bytes_out, true);
	json_u64("bytes_in", s->bytes_in, true);
	json_u64("long_out", s->long_out, true);
	json_u64("long_in", s->long_in, true);
	json_u64("rdma_errors", s->rdma_errors, true);
	json_u64("connections", s->connections, true);
	json_u64("read_chunk_bytes", s->read_chunk_bytes, true);
	json_u64("write_chunk_bytes", s->write_chunk_bytes, true);
	json_u64("reply_chunk_bytes", s->reply_chunk_bytes, true);
	json_u64("send_inv", s->send_inv, true);
	json_u64("dropped", s->dropped, true);
	json_u64("poll_missed", s->poll_missed, true);
	json_u64("poll_skipped", s->poll_skipped, false);
	printf("        }%s\n", more ? "," : "");
}

void
print_json(struct procs *ps)
{
	unsigned int *idx = xcalloc(SHIM_STATS_SLOTS, sizeof(*idx));

	printf("{\n  \"format\": 1,\n  \"processes\": [");
	for (size_t i = 0; i < ps->n; i++) {
		struct proc *p = ps->v[i];
		size_t n = live_slots(p, idx);
		bool first = true;

		printf("%s\n    {\n", i ? "," : "");
		printf("      \"pid\": %d,\n", (int)p->f.pid);
		printf("      \"uid\": %" PRIu32 ",\n", p->f.uid);
		printf("      \"program\": ");
		json_str(p->prog);
		printf(",\n      \"started\": %" PRIu64 ",\n", p->f.started);
		printf("      \"config\": ");
		if (p->config[0])
			json_str(p->config);
		else
			printf("null");
		printf(",\n      \"config_errors\": %s,\n",
		       p->f.bad_config ? "true" : "false");
		printf("      \"mode\": \"%s\",\n",
		       shim_config_mode_name((enum shim_mode)p->f.mode));
		printf("      \"rdma_transports\": %" PRIu64 ",\n",
		       p->f.rdma_transports);
		printf("      \"pinned\": {\"used\": %" PRIu64 ", \"total\": %" PRIu64
		       ", \"peak\": %" PRIu64 ", \"refused\": %" PRIu64 "},\n",
		       p->f.pinned_used, p->f.pinned_total, p->f.pinned_peak,
		       p->f.pinned_refused);
		printf("      \"fallbacks\": {");
		for (unsigned int r = RDMA_FAIL_NO_DEVICE; r < RDMA_FAIL_MAX &&
		     r < SHIM_STATS_REASONS; r++) {
			printf("%s\"%s\": %" PRIu64, first ? "" : ", ",
			       reason_token(r), p->f.fallbacks[r]);
			first = false;
		}
		printf("},\n      \"transports\": [%s", n ? "\n" : "");
		for (size_t k = 0; k < n; k++)
			json_transport(&p->f.slots[idx[k]], k + 1 < n);
		printf("%s]\n    }", n ? "      " : "");
	}
	printf("%s]\n}\n", ps->n ? "\n  " : "");
	free(idx);
}
