/*
 * The kernel ABI that cred.c needs below librdmacm and libibverbs: the
 * uverbs ioctl that carries a write() command, and the RDMA-CM commands
 * (rdma_user_cm.h) it reads or writes itself.  Kept apart because the
 * kernel's rdma_user_cm.h and librdmacm's rdma_cma.h define the same
 * names.  Pure but for the two commands that write to a descriptor.
 */
#ifndef TRANSPORT_CRED_ABI_H
#define TRANSPORT_CRED_ABI_H

#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_user_ioctl_cmds.h>

/* A uverbs ioctl carrying one write() command: a header, 3 attributes. */
struct cred_invoke {
	_Alignas(8) unsigned char raw[sizeof(struct ib_uverbs_ioctl_hdr) +
				      3 * sizeof(struct ib_uverbs_attr)];
};

static inline struct ib_uverbs_ioctl_hdr *
cred_invoke_hdr(struct cred_invoke *inv)
{
	return (struct ib_uverbs_ioctl_hdr *)(void *)inv->raw;
}

/*
 * The ioctl for the legacy write() command of len octets (its header
 * included) in buf.  Only the posting commands are taken (POST_SEND,
 * POST_RECV, POST_SRQ_RECV, REQ_NOTIFY_CQ: the doorbells providers ring
 * by write()): their whole request is the core part, with no driver data.
 * Returns 0, or -EINVAL for anything else (the header does not match len,
 * another or an extended command, a request too long for an attribute).
 */
int cred_invoke_encode(const void *buf, size_t len, struct cred_invoke *out);

/*
 * A harmless ioctl that tells whether driver_id is the device's: the
 * QUERY_DEVICE write command with no request, which the kernel turns
 * down with ENOSPC once it got past the header (EINVAL before).
 */
void cred_invoke_probe(struct cred_invoke *out, uint32_t driver_id);

/* Driver ids tried (enum rdma_driver_id has fewer). */
#define CRED_DRIVER_ID_MAX 64

/* What a captured RDMA-CM command gave back (cred_ucma_response). */
struct cred_ucma_seen {
	uint32_t cmd;		/* RDMA_USER_CM_CMD_* */
	uint32_t handle;	/* the id created, or the event's id */
	uint32_t event;		/* GET_EVENT: RDMA_CM_EVENT_* */
};

/*
 * buf (len octets) was written to an RDMA-CM descriptor and accepted:
 * for CREATE_ID and GET_EVENT, read the kernel's answer from the response
 * buffer the command names.  Returns 0 with *seen, or -EINVAL for another
 * command or a command that does not parse.
 */
int cred_ucma_response(const void *buf, size_t len,
		       struct cred_ucma_seen *seen);

/* The command numbers cred.c asks for. */
uint32_t cred_ucma_cmd_create_id(void);
uint32_t cred_ucma_cmd_get_event(void);

/*
 * MIGRATE_ID written to newfd: the id of handle, on the channel of oldfd,
 * moves to newfd's channel with its pending events.  Returns 0 or -errno.
 */
int cred_ucma_migrate(int newfd, int oldfd, uint32_t handle);

/* DESTROY_ID of handle, written to fd.  Returns 0 or -errno. */
int cred_ucma_destroy(int fd, uint32_t handle);

#endif
