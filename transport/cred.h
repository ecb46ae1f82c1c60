/*
 * RDMA descriptors across credential changes and fork().
 *
 * The kernel lets write() reach /dev/infiniband/rdma_cm and uverbs
 * descriptors only from the very credential object that opened them
 * (ib_safe_file_access: filp->f_cred == current_cred()).  Any set*id call
 * makes a new object, and so does fork() for the child.  ioctl(), read(),
 * poll() and mmap() are not checked.  With rdma-core 44 every verbs
 * command but the provider's doorbell goes through ioctl(); every RDMA-CM
 * command is a write().  So:
 *
 *  - verbs: a refused write() of a posting command on a verbs descriptor
 *    of ours is made again as the same command through the uverbs ioctl
 *    that carries write() commands (UVERBS_METHOD_INVOKE_WRITE), which
 *    libibverbs itself uses for every other command;
 *  - RDMA-CM: the ids of a channel whose writes are refused move, with
 *    the kernel's MIGRATE_ID command, to a new channel opened under the
 *    caller's credentials, which takes the old one's descriptor number
 *    (dup3), so nothing that holds the number or the librdmacm channel
 *    sees a change.  MIGRATE_ID is written to the new channel and only
 *    names the old one, so the check passes.  The ids' kernel handles are
 *    read from the commands that create them as they pass through write().
 *
 * fork(): a child's transports were made by the parent.  cred_gen() counts
 * the forks this process descends from; a transport remembers it, and one
 * made in an earlier generation is the parent's (it is only abandoned,
 * never torn down: its queue pair and memory are the parent's).  A listener
 * is the exception: a child that serves it takes its id over (cm_adopt).
 */
#ifndef TRANSPORT_CRED_H
#define TRANSPORT_CRED_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/rdma_cma.h>

/* ------------------------------------------------------------------ */
/* write() as the interposed hook sees it                              */
/* ------------------------------------------------------------------ */

extern unsigned int cred_nredirect;	/* verbs descriptors refused once */
extern unsigned int cred_capturing;	/* threads reading a CM command */

/* True when writes to fd go straight to cred_write_refused(). */
bool cred_write_redirected_slow(int fd);

static inline bool
cred_write_redirected(int fd)
{
	return __atomic_load_n(&cred_nredirect, __ATOMIC_RELAXED) &&
	       cred_write_redirected_slow(fd);
}

/*
 * A write() to a verbs descriptor whose doorbells go through ioctl now:
 * *done when buf was one (the return is write()'s), else the caller
 * writes it as usual.
 */
ssize_t cred_write_redirect(int fd, const void *buf, size_t len, bool *done);

/*
 * A write() the kernel refused with EACCES: a posting command on a verbs
 * descriptor of ours goes through ioctl(); anything else fails as the
 * kernel said.  Returns what write() returns, errno set on failure.
 */
ssize_t cred_write_refused(int fd, const void *buf, size_t len);

/* A write() that went through: a command the caller waits to read. */
void cred_write_seen_slow(int fd, const void *buf, size_t len, ssize_t ret);

static inline void
cred_write_seen(int fd, const void *buf, size_t len, ssize_t ret)
{
	if (__atomic_load_n(&cred_capturing, __ATOMIC_RELAXED))
		cred_write_seen_slow(fd, buf, len, ret);
}

/* fd is the command descriptor of a verbs context the shim uses. */
void cred_verbs_fd(int fd);

/* ------------------------------------------------------------------ */
/* fork()                                                              */
/* ------------------------------------------------------------------ */

extern unsigned int cred_fork_gen;

/* The forks this process descends from (0 in the process that loaded us). */
static inline unsigned int
cred_gen(void)
{
	return __atomic_load_n(&cred_fork_gen, __ATOMIC_RELAXED);
}

/*
 * fork(): the prepare, parent and child handlers (shim/fork.c registers
 * them): the id registry's lock is held across it; the child counts one
 * more generation.
 */
void cred_fork_prepare(void);
void cred_fork_parent(void);
void cred_fork_child(void);

/* ------------------------------------------------------------------ */
/* RDMA-CM ids                                                         */
/* ------------------------------------------------------------------ */

/*
 * rdma_create_id() on ch (RDMA_PS_TCP), the new id registered with its
 * kernel handle.  Returns 0 or -errno.
 */
int cm_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
		 void *context);

/*
 * rdma_get_cm_event() on ch; the id of a CONNECT_REQUEST is registered.
 * A refused channel is rebuilt and asked again.  Returns 0 or -1 with
 * errno, as rdma_get_cm_event().
 */
int cm_get_event(struct rdma_event_channel *ch, struct rdma_cm_event **ev);

/*
 * rdma_destroy_id() and the registry entry; a refused channel is rebuilt
 * and asked again.  An adopted id (cm_adopt) is destroyed by its handle
 * and its librdmacm memory left.  Returns 0 or -errno.
 */
int cm_destroy_id(struct rdma_cm_id *id);

/*
 * After a librdmacm call on ch failed: true when it failed because the
 * kernel refused the caller's credentials and ch was rebuilt for them, so
 * the call can be made again.  errno is kept when false.
 */
bool cm_refused(struct rdma_event_channel *ch);

/*
 * Move every id of this generation registered on ch to a new channel
 * file opened under the caller's credentials, in ch's descriptor.
 * Returns 0 or -errno (ch unchanged).
 */
int cm_rebuild(struct rdma_event_channel *ch);

/*
 * In a child: take id (a listener made before the fork, on ch) over into
 * a channel of this process, in ch's descriptor; the other ids of ch are
 * the parent's and are forgotten.  Returns 0, or -EINVAL when another
 * process took it first, or another -errno.
 */
int cm_adopt(struct rdma_event_channel *ch, struct rdma_cm_id *id);

/* ch is going away without its ids being destroyed: forget them. */
void cm_forget(struct rdma_event_channel *ch);

#endif
