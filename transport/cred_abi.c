/*
 * Kernel ABI helpers for cred.c (cred_abi.h): the uverbs ioctl that
 * carries a write() command, and the few RDMA-CM commands read or written
 * here.  Only kernel headers: librdmacm's rdma_cma.h redefines their names.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_cm.h>

#include "cred_abi.h"

/* ------------------------------------------------------------------ */
/* uverbs: a write() command through ioctl                             */
/* ------------------------------------------------------------------ */

/* The commands providers write as doorbells; none carries driver data. */
static int
doorbell_cmd(uint32_t cmd)
{
	return cmd == IB_USER_VERBS_CMD_POST_SEND ||
	       cmd == IB_USER_VERBS_CMD_POST_RECV ||
	       cmd == IB_USER_VERBS_CMD_POST_SRQ_RECV ||
	       cmd == IB_USER_VERBS_CMD_REQ_NOTIFY_CQ;
}

static void
attr_set(struct ib_uverbs_attr *a, uint16_t id, const void *data, size_t len,
	 int by_value)
{
	memset(a, 0, sizeof(*a));
	a->attr_id = id;
	a->len = (uint16_t)len;
	a->flags = UVERBS_ATTR_F_MANDATORY;
	/* The kernel takes up to 8 octets of an input in the word itself. */
	if (by_value)
		memcpy(&a->data, data, len);
	else
		a->data = (uint64_t)(uintptr_t)data;
}

/*
 * A legacy command is a header { command, in_words, out_words } and the
 * request; a request with a response starts with the response's address.
 * The ioctl takes the command number, the request after the header as
 * the core input and the response buffer as the core output, as
 * libibverbs sends every other write() command.
 */
int
cred_invoke_encode(const void *buf, size_t len, struct cred_invoke *out)
{
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ioctl_hdr *ih;
	const uint8_t *req = (const uint8_t *)buf + sizeof(hdr);
	size_t in_len, out_len;
	uint64_t cmd, resp;
	unsigned int n = 0;

	if (len < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	if ((hdr.command & IB_USER_VERBS_CMD_FLAG_EXTENDED) ||
	    !doorbell_cmd(hdr.command) || (size_t)hdr.in_words * 4 != len)
		return -EINVAL;
	in_len = len - sizeof(hdr);
	out_len = (size_t)hdr.out_words * 4;
	if (!in_len || in_len > UINT16_MAX || out_len > UINT16_MAX ||
	    (out_len && in_len < sizeof(resp)))
		return -EINVAL;

	memset(out, 0, sizeof(*out));
	ih = cred_invoke_hdr(out);
	cmd = hdr.command;
	attr_set(&ih->attrs[n++], UVERBS_ATTR_WRITE_CMD, &cmd, sizeof(cmd), 1);
	attr_set(&ih->attrs[n++], UVERBS_ATTR_CORE_IN, req, in_len,
		 in_len <= sizeof(uint64_t));
	if (out_len) {
		memcpy(&resp, req, sizeof(resp));
		attr_set(&ih->attrs[n++], UVERBS_ATTR_CORE_OUT,
			 (const void *)(uintptr_t)resp, out_len, 0);
	}
	ih->object_id = UVERBS_OBJECT_DEVICE;
	ih->method_id = UVERBS_METHOD_INVOKE_WRITE;
	ih->num_attrs = (uint16_t)n;
	ih->length = (uint16_t)(sizeof(*ih) + n * sizeof(ih->attrs[0]));
	return 0;
}

void
cred_invoke_probe(struct cred_invoke *out, uint32_t driver_id)
{
	struct ib_uverbs_ioctl_hdr *ih;
	uint64_t cmd = IB_USER_VERBS_CMD_QUERY_DEVICE;

	memset(out, 0, sizeof(*out));
	ih = cred_invoke_hdr(out);
	attr_set(&ih->attrs[0], UVERBS_ATTR_WRITE_CMD, &cmd, sizeof(cmd), 1);
	ih->object_id = UVERBS_OBJECT_DEVICE;
	ih->method_id = UVERBS_METHOD_INVOKE_WRITE;
	ih->num_attrs = 1;
	ih->driver_id = driver_id;
	ih->length = (uint16_t)(sizeof(*ih) + sizeof(ih->attrs[0]));
}

/* ------------------------------------------------------------------ */
/* RDMA-CM                                                             */
/* ------------------------------------------------------------------ */

uint32_t
cred_ucma_cmd_create_id(void)
{
	return RDMA_USER_CM_CMD_CREATE_ID;
}

uint32_t
cred_ucma_cmd_get_event(void)
{
	return RDMA_USER_CM_CMD_GET_EVENT;
}

/* The command's body of size octets after the header, or NULL. */
static const void *
ucma_body(const void *buf, size_t len, size_t size)
{
	struct rdma_ucm_cmd_hdr hdr;

	if (len < sizeof(hdr) + size)
		return NULL;
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.in < size)
		return NULL;
	return (const uint8_t *)buf + sizeof(hdr);
}

int
cred_ucma_response(const void *buf, size_t len, struct cred_ucma_seen *seen)
{
	struct rdma_ucm_cmd_hdr hdr;
	uint64_t resp;

	if (len < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, buf, sizeof(hdr));
	memset(seen, 0, sizeof(*seen));
	seen->cmd = hdr.cmd;
	if (hdr.cmd == RDMA_USER_CM_CMD_CREATE_ID) {
		struct rdma_ucm_create_id c;
		struct rdma_ucm_create_id_resp r;
		const void *body = ucma_body(buf, len, sizeof(c));

		if (!body || hdr.out < sizeof(r))
			return -EINVAL;
		memcpy(&c, body, sizeof(c));
		resp = c.response;
		memcpy(&r, (const void *)(uintptr_t)resp, sizeof(r));
		seen->handle = r.id;
		return 0;
	}
	if (hdr.cmd == RDMA_USER_CM_CMD_GET_EVENT) {
		struct rdma_ucm_get_event c;
		struct rdma_ucm_event_resp r;
		const void *body = ucma_body(buf, len, sizeof(c));

		/* The head of the answer: uid, id, event. */
		if (!body || hdr.out < offsetof(struct rdma_ucm_event_resp, status))
			return -EINVAL;
		memcpy(&c, body, sizeof(c));
		resp = c.response;
		memcpy(&r, (const void *)(uintptr_t)resp,
		       offsetof(struct rdma_ucm_event_resp, status));
		seen->handle = r.id;
		seen->event = r.event;
		return 0;
	}
	return -EINVAL;
}

/* Write one RDMA-CM command; 0 or -errno. */
static int
ucma_write(int fd, const void *cmd, size_t len)
{
	ssize_t n = write(fd, cmd, len);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -ENODATA;
}

int
cred_ucma_migrate(int newfd, int oldfd, uint32_t handle)
{
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		struct rdma_ucm_migrate_id body;
	} c;
	struct rdma_ucm_migrate_resp r;

	memset(&c, 0, sizeof(c));
	c.hdr.cmd = RDMA_USER_CM_CMD_MIGRATE_ID;
	c.hdr.in = sizeof(c.body);
	c.hdr.out = sizeof(r);
	c.body.response = (uint64_t)(uintptr_t)&r;
	c.body.id = handle;
	c.body.fd = (uint32_t)oldfd;
	return ucma_write(newfd, &c, sizeof(c));
}

int
cred_ucma_destroy(int fd, uint32_t handle)
{
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		struct rdma_ucm_destroy_id body;
	} c;
	struct rdma_ucm_destroy_id_resp r;

	memset(&c, 0, sizeof(c));
	c.hdr.cmd = RDMA_USER_CM_CMD_DESTROY_ID;
	c.hdr.in = sizeof(c.body);
	c.hdr.out = sizeof(r);
	c.body.response = (uint64_t)(uintptr_t)&r;
	c.body.id = handle;
	return ucma_write(fd, &c, sizeof(c));
}
