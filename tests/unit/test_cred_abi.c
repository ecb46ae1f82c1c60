/*
 * The kernel ABI helpers of transport/cred_abi.c: the uverbs ioctl that a
 * refused doorbell becomes (attributes, lengths, which commands), the
 * probe for the driver id, and the RDMA-CM answers read in passing.
 * Kernel headers only, as cred_abi.c.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_cm.h>

#include "check.h"
#include "cred_abi.h"

/* A legacy write() command: header, then a request of len octets. */
struct cmd_buf {
	struct ib_uverbs_cmd_hdr hdr;
	uint8_t req[64];
};

static size_t
make_cmd(struct cmd_buf *c, uint32_t command, size_t req_len, size_t resp_len,
	 const void *resp)
{
	uint64_t r = (uint64_t)(uintptr_t)resp;

	memset(c, 0, sizeof(*c));
	c->hdr.command = command;
	c->hdr.in_words = (uint16_t)((sizeof(c->hdr) + req_len) / 4);
	c->hdr.out_words = (uint16_t)(resp_len / 4);
	memcpy(c->req, &r, sizeof(r));
	memset(c->req + sizeof(r), 0x5a, req_len - sizeof(r));
	return sizeof(c->hdr) + req_len;
}

static void
test_doorbell(void)
{
	struct ib_uverbs_post_send_resp resp;
	struct cred_invoke inv;
	struct ib_uverbs_ioctl_hdr *h = cred_invoke_hdr(&inv);
	struct cmd_buf c;
	size_t len;
	uint64_t v;

	/* rxe's doorbell: POST_SEND with no work request, 24 octets, a response. */
	len = make_cmd(&c, IB_USER_VERBS_CMD_POST_SEND, 24, sizeof(resp), &resp);
	CHECK(cred_invoke_encode(&c, len, &inv) == 0, "POST_SEND is taken");
	CHECK_EQ_U(h->object_id, UVERBS_OBJECT_DEVICE, "the device object");
	CHECK_EQ_U(h->method_id, UVERBS_METHOD_INVOKE_WRITE, "the method that carries write() commands");
	CHECK_EQ_U(h->num_attrs, 3, "three attributes");
	CHECK_EQ_U(h->length, sizeof(*h) + 3 * sizeof(h->attrs[0]), "the header's length");
	CHECK(h->reserved1 == 0 && h->reserved2 == 0 && h->driver_id == 0,
	      "reserved words zero, the driver id left to the caller");

	CHECK_EQ_U(h->attrs[0].attr_id, UVERBS_ATTR_WRITE_CMD, "first the command number");
	CHECK_EQ_U(h->attrs[0].len, 8, "as a 64-bit constant");
	memcpy(&v, &h->attrs[0].data, sizeof(v));
	CHECK_EQ_U(v, IB_USER_VERBS_CMD_POST_SEND, "the number");
	CHECK_EQ_U(h->attrs[1].attr_id, UVERBS_ATTR_CORE_IN, "then the request");
	CHECK_EQ_U(h->attrs[1].len, 24, "all of it after the header");
	CHECK_EQ_U(h->attrs[1].data, (uintptr_t)c.req, "by address");
	CHECK_EQ_U(h->attrs[2].attr_id, UVERBS_ATTR_CORE_OUT, "then the response");
	CHECK_EQ_U(h->attrs[2].len, sizeof(resp), "of out_words");
	CHECK_EQ_U(h->attrs[2].data, (uintptr_t)&resp, "where the request said");
	CHECK((h->attrs[0].flags & h->attrs[1].flags & h->attrs[2].flags) ==
	      UVERBS_ATTR_F_MANDATORY, "every attribute mandatory");

	/* REQ_NOTIFY_CQ: 8 octets, no response: the request goes by value. */
	memset(&c, 0, sizeof(c));
	c.hdr.command = IB_USER_VERBS_CMD_REQ_NOTIFY_CQ;
	c.hdr.in_words = 4;
	c.req[0] = 7;
	CHECK(cred_invoke_encode(&c, 16, &inv) == 0, "REQ_NOTIFY_CQ is taken");
	CHECK_EQ_U(h->num_attrs, 2, "no response attribute");
	CHECK_EQ_U(h->attrs[1].len, 8, "8 octets");
	CHECK(memcmp(&h->attrs[1].data, c.req, 8) == 0, "in the attribute itself");

	len = make_cmd(&c, IB_USER_VERBS_CMD_POST_RECV, 24, 4, &resp);
	CHECK(cred_invoke_encode(&c, len, &inv) == 0, "POST_RECV is taken");
	len = make_cmd(&c, IB_USER_VERBS_CMD_POST_SRQ_RECV, 24, 4, &resp);
	CHECK(cred_invoke_encode(&c, len, &inv) == 0, "POST_SRQ_RECV is taken");
}

static void
test_refused(void)
{
	struct ib_uverbs_post_send_resp resp;
	struct cred_invoke inv;
	struct cmd_buf c;
	size_t len;

	len = make_cmd(&c, IB_USER_VERBS_CMD_REG_MR, 40, 24, &resp);
	CHECK(cred_invoke_encode(&c, len, &inv) == -EINVAL,
	      "REG_MR is not a doorbell (it carries driver data)");
	len = make_cmd(&c, IB_USER_VERBS_CMD_MODIFY_QP, 40, 0, &resp);
	CHECK(cred_invoke_encode(&c, len, &inv) == -EINVAL, "neither is MODIFY_QP");
	len = make_cmd(&c, IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_CMD_POST_SEND,
		       24, 4, &resp);
	CHECK(cred_invoke_encode(&c, len, &inv) == -EINVAL, "an extended command is not taken");
	len = make_cmd(&c, IB_USER_VERBS_CMD_POST_SEND, 24, 4, &resp);
	CHECK(cred_invoke_encode(&c, len - 4, &inv) == -EINVAL,
	      "a length other than in_words says");
	CHECK(cred_invoke_encode(&c, 4, &inv) == -EINVAL, "shorter than a header");
	c.hdr.in_words = 2;
	CHECK(cred_invoke_encode(&c, 8, &inv) == -EINVAL, "a header alone");
}

static void
test_probe(void)
{
	struct cred_invoke inv;
	struct ib_uverbs_ioctl_hdr *h = cred_invoke_hdr(&inv);
	uint64_t v;

	cred_invoke_probe(&inv, 17);
	CHECK(h->object_id == UVERBS_OBJECT_DEVICE &&
	      h->method_id == UVERBS_METHOD_INVOKE_WRITE, "the probe carries a write() command");
	CHECK_EQ_U(h->num_attrs, 1, "its number only: no request, which the kernel turns down");
	memcpy(&v, &h->attrs[0].data, sizeof(v));
	CHECK_EQ_U(v, IB_USER_VERBS_CMD_QUERY_DEVICE, "QUERY_DEVICE, which runs nothing without one");
	CHECK_EQ_U(h->driver_id, 17, "naming the driver id tried");
	CHECK_EQ_U(h->length, sizeof(*h) + sizeof(h->attrs[0]), "its length");
}

static void
test_ucma(void)
{
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		union {
			struct rdma_ucm_create_id create;
			struct rdma_ucm_get_event get;
			struct rdma_ucm_destroy_id destroy;
		};
	} c;
	struct rdma_ucm_create_id_resp cr = { .id = 42 };
	struct rdma_ucm_event_resp er = { .id = 7, .event = 4 };
	struct cred_ucma_seen seen;

	memset(&c, 0, sizeof(c));
	c.hdr.cmd = RDMA_USER_CM_CMD_CREATE_ID;
	c.hdr.in = sizeof(c.create);
	c.hdr.out = sizeof(cr);
	c.create.response = (uintptr_t)&cr;
	CHECK(cred_ucma_response(&c, sizeof(c.hdr) + sizeof(c.create), &seen) == 0 &&
	      seen.cmd == cred_ucma_cmd_create_id() && seen.handle == 42,
	      "CREATE_ID: the new id's handle");
	CHECK(cred_ucma_response(&c, sizeof(c.hdr) + 8, &seen) == -EINVAL,
	      "CREATE_ID cut short is not read");

	memset(&c, 0, sizeof(c));
	c.hdr.cmd = RDMA_USER_CM_CMD_GET_EVENT;
	c.hdr.in = sizeof(c.get);
	c.hdr.out = sizeof(er);
	c.get.response = (uintptr_t)&er;
	CHECK(cred_ucma_response(&c, sizeof(c.hdr) + sizeof(c.get), &seen) == 0 &&
	      seen.cmd == cred_ucma_cmd_get_event() && seen.handle == 7 && seen.event == 4,
	      "GET_EVENT: the event and its id's handle");
	c.hdr.out = 8;
	CHECK(cred_ucma_response(&c, sizeof(c.hdr) + sizeof(c.get), &seen) == -EINVAL,
	      "an answer too short to hold the event is not read");

	memset(&c, 0, sizeof(c));
	c.hdr.cmd = RDMA_USER_CM_CMD_DESTROY_ID;
	c.hdr.in = sizeof(c.destroy);
	CHECK(cred_ucma_response(&c, sizeof(c.hdr) + sizeof(c.destroy), &seen) == -EINVAL,
	      "other commands are not read");
	CHECK(cred_ucma_response(&c, 4, &seen) == -EINVAL, "nor a partial header");
}

int
main(void)
{
	test_doorbell();
	test_refused();
	test_probe();
	test_ucma();
	return check_done();
}
