/*
 * RDMA descriptors across credential changes and fork() (cred.h): verbs
 * doorbells refused to write() go through ioctl(); RDMA-CM ids move to a
 * channel of the caller's credentials; fork() generations.
 *
 * One lock, cred_lock, guards the verbs descriptors' table (read without
 * it) and the registry of RDMA-CM ids.  It is held across fork()
 * (cred_fork_prepare) and never around a call into librdmacm.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "cred.h"
#include "cred_abi.h"

/* Where librdmacm opens RDMA-CM (its netlink name for the device). */
#define CM_DEVICE "/dev/infiniband/rdma_cm"
/* Verbs contexts: one per device librdmacm opened. */
#define VERBS_MAX 16
/* A handle never seen (kernel handles are small indexes). */
#define NO_HANDLE UINT32_MAX

static pthread_mutex_t cred_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned int cred_fork_gen;

/* ------------------------------------------------------------------ */
/* Verbs: doorbells through ioctl                                      */
/* ------------------------------------------------------------------ */

struct verbs_fd {
	int fd;
	bool refused;		/* its doorbells go through ioctl now */
	int driver_id;		/* what its ioctls name, -1: not known yet */
};

static struct verbs_fd verbs_fds[VERBS_MAX];
static unsigned int nverbs;		/* entries published */
unsigned int cred_nredirect;

void
cred_verbs_fd(int fd)
{
	unsigned int i;

	if (fd < 0)
		return;
	pthread_mutex_lock(&cred_lock);
	for (i = 0; i < nverbs && verbs_fds[i].fd != fd; i++)
		;
	if (i == nverbs && i < VERBS_MAX) {
		verbs_fds[i].fd = fd;
		verbs_fds[i].refused = false;
		verbs_fds[i].driver_id = -1;
		__atomic_store_n(&nverbs, i + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&cred_lock);
}

/* Entries are only ever added: a lock-free scan is safe. */
static struct verbs_fd *
verbs_find(int fd)
{
	unsigned int i, n = __atomic_load_n(&nverbs, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (verbs_fds[i].fd == fd)
			return &verbs_fds[i];
	return NULL;
}

bool
cred_write_redirected_slow(int fd)
{
	struct verbs_fd *v = verbs_find(fd);

	return v && __atomic_load_n(&v->refused, __ATOMIC_RELAXED);
}

/*
 * The kernel takes a uverbs ioctl only when it names the device's driver
 * (enum rdma_driver_id), which libibverbs keeps to itself: ask once, with
 * a command the kernel turns down for its length before running it.
 */
static int
verbs_driver_id(struct verbs_fd *v)
{
	int id = __atomic_load_n(&v->driver_id, __ATOMIC_RELAXED);
	struct cred_invoke probe;

	if (id >= 0)
		return id;
	for (id = 0; id < CRED_DRIVER_ID_MAX; id++) {
		cred_invoke_probe(&probe, (uint32_t)id);
		if (ioctl(v->fd, RDMA_VERBS_IOCTL, cred_invoke_hdr(&probe)) < 0 &&
		    errno == ENOSPC) {
			__atomic_store_n(&v->driver_id, id, __ATOMIC_RELAXED);
			return id;
		}
	}
	return -1;
}

/*
 * A doorbell of ours through the uverbs ioctl: true with *ret when buf is
 * one (what write() would have returned), false when it is not.
 */
static bool
doorbell_ioctl(int fd, const void *buf, size_t len, ssize_t *ret)
{
	struct verbs_fd *v = verbs_find(fd);
	struct cred_invoke inv;
	int id;

	if (!v || cred_invoke_encode(buf, len, &inv))
		return false;
	id = verbs_driver_id(v);
	if (id < 0) {
		shim_log(SHIM_LOG_WARN,
			 "verbs descriptor %d: the kernel takes no uverbs ioctl from here: its doorbell stays refused",
			 fd);
		errno = EACCES;
		*ret = -1;
		return true;
	}
	cred_invoke_hdr(&inv)->driver_id = (uint32_t)id;
	if (ioctl(fd, RDMA_VERBS_IOCTL, cred_invoke_hdr(&inv))) {
		shim_log(SHIM_LOG_DEBUG, "verbs descriptor %d: doorbell ioctl: %s",
			 fd, strerror(errno));
		*ret = -1;
		return true;
	}
	*ret = (ssize_t)len;
	if (!__atomic_exchange_n(&v->refused, true, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&cred_nredirect, 1, __ATOMIC_RELAXED);
		shim_log(SHIM_LOG_DEBUG,
			 "verbs descriptor %d was opened under other credentials: its doorbells go through ioctl",
			 fd);
	}
	return true;
}

ssize_t
cred_write_redirect(int fd, const void *buf, size_t len, bool *done)
{
	ssize_t ret = -1;

	*done = doorbell_ioctl(fd, buf, len, &ret);
	return ret;
}

ssize_t
cred_write_refused(int fd, const void *buf, size_t len)
{
	ssize_t ret;

	if (doorbell_ioctl(fd, buf, len, &ret))
		return ret;
	errno = EACCES;
	return -1;
}

/* ------------------------------------------------------------------ */
/* RDMA-CM: handles seen in passing                                    */
/* ------------------------------------------------------------------ */

/* A command this thread is making through librdmacm, to read its answer. */
struct capture {
	int fd;
	uint32_t cmd;
	bool seen;
	struct cred_ucma_seen r;
	struct rdma_event_channel *ch;	/* GET_EVENT: its channel */
};

static void cm_claim_request(struct rdma_event_channel *ch, uint32_t handle);

static __thread struct capture *capture;
unsigned int cred_capturing;

static void
capture_begin(struct capture *c, int fd, uint32_t cmd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->cmd = cmd;
	capture = c;
	__atomic_add_fetch(&cred_capturing, 1, __ATOMIC_RELAXED);
}

static void
capture_end(void)
{
	capture = NULL;
	__atomic_sub_fetch(&cred_capturing, 1, __ATOMIC_RELAXED);
}

void
cred_write_seen_slow(int fd, const void *buf, size_t len, ssize_t ret)
{
	struct capture *c = capture;
	struct cred_ucma_seen s;

	if (!c || c->fd != fd || ret != (ssize_t)len)
		return;
	if (cred_ucma_response(buf, len, &s) == 0 && s.cmd == c->cmd) {
		c->r = s;
		c->seen = true;
		/* Before librdmacm queries the new connection's id. */
		if (c->ch && s.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			capture = NULL;
			cm_claim_request(c->ch, s.handle);
			capture = c;
		}
	}
}

/* ------------------------------------------------------------------ */
/* RDMA-CM: the registry of ids                                        */
/* ------------------------------------------------------------------ */

struct cm_entry {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	uint32_t handle;	/* NO_HANDLE: cannot be moved */
	unsigned int gen;	/* cred_gen() of the process that owns it */
	bool adopted;		/* taken over from a parent (cm_adopt) */
};

static struct cm_entry *cm_tab;		/* under cred_lock */
static size_t cm_n, cm_cap;

/*
 * A channel's former file, kept while connection requests that were
 * waiting on it when its ids moved may still come out of the new one: the
 * kernel made their ids on the former file (cm_claim_request).
 */
struct cm_stash {
	struct rdma_event_channel *ch;
	int fd;
};

#define CM_STASH_MAX 16
static struct cm_stash cm_stash[CM_STASH_MAX];	/* under cred_lock */
static unsigned int cm_nstash;

static void
cm_track(struct rdma_event_channel *ch, struct rdma_cm_id *id,
	 uint32_t handle)
{
	pthread_mutex_lock(&cred_lock);
	if (cm_n == cm_cap) {
		size_t cap = cm_cap ? cm_cap * 2 : 16;
		struct cm_entry *t = realloc(cm_tab, cap * sizeof(*t));

		if (!t) {
			pthread_mutex_unlock(&cred_lock);
			shim_log(SHIM_LOG_WARN,
				 "RDMA-CM: no memory to track an id: it cannot follow a change of credentials");
			return;
		}
		cm_tab = t;
		cm_cap = cap;
	}
	cm_tab[cm_n++] = (struct cm_entry){
		.ch = ch, .id = id, .handle = handle, .gen = cred_gen(),
	};
	pthread_mutex_unlock(&cred_lock);
	if (handle == NO_HANDLE)
		shim_log(SHIM_LOG_WARN,
			 "RDMA-CM: the kernel's handle of an id was not seen: it cannot follow a change of credentials");
}

/* The entry of id, or NULL.  Caller holds cred_lock. */
static struct cm_entry *
cm_find_locked(const struct rdma_cm_id *id)
{
	size_t i;

	for (i = 0; i < cm_n; i++)
		if (cm_tab[i].id == id)
			return &cm_tab[i];
	return NULL;
}

static void
cm_drop_locked(struct cm_entry *e)
{
	*e = cm_tab[--cm_n];
}

/* A new RDMA-CM file for the caller: the same device and flags as fd's. */
static int
cm_open_like(int fd)
{
	struct stat old, st;
	int nfd, fl;

	/* fstatat: the interposed fstat answers for stand-in sockets. */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fstatat(fd, "", &old, AT_EMPTY_PATH) < 0)
		return -errno;
	nfd = open(CM_DEVICE, O_RDWR | O_CLOEXEC | (fl & O_NONBLOCK));
	if (nfd < 0)
		return -errno;
	if (fstatat(nfd, "", &st, AT_EMPTY_PATH) < 0 || !S_ISCHR(st.st_mode) ||
	    st.st_rdev != old.st_rdev) {
		close(nfd);
		return -ENODEV;
	}
	return nfd;
}

/* Keep ch's current file open under another descriptor. */
static void
cm_stash_add(struct rdma_event_channel *ch)
{
	int keep = fcntl(ch->fd, F_DUPFD_CLOEXEC, 0);

	if (keep < 0)
		return;
	pthread_mutex_lock(&cred_lock);
	if (cm_nstash < CM_STASH_MAX) {
		cm_stash[cm_nstash++] = (struct cm_stash){ .ch = ch, .fd = keep };
		keep = -1;
	}
	pthread_mutex_unlock(&cred_lock);
	if (keep >= 0)
		close(keep);
}

/* ch's former files go: no request made on them is left to come out. */
static void
cm_stash_drop(struct rdma_event_channel *ch)
{
	int fds[CM_STASH_MAX];
	unsigned int i, n = 0;

	pthread_mutex_lock(&cred_lock);
	for (i = 0; i < cm_nstash; i++) {
		if (cm_stash[i].ch == ch) {
			fds[n++] = cm_stash[i].fd;
			cm_stash[i--] = cm_stash[--cm_nstash];
		}
	}
	pthread_mutex_unlock(&cred_lock);
	while (n)
		close(fds[--n]);
}

/*
 * A connection request came out of ch: when it was waiting on a former
 * file of ch, its new id is still there (the kernel made it on the
 * listener's file of the time): move it too, or librdmacm's first command
 * on it finds no such id and the client is refused.
 */
static void
cm_claim_request(struct rdma_event_channel *ch, uint32_t handle)
{
	unsigned int i;

	pthread_mutex_lock(&cred_lock);
	for (i = 0; i < cm_nstash; i++) {
		if (cm_stash[i].ch == ch &&
		    cred_ucma_migrate(ch->fd, cm_stash[i].fd, handle) == 0)
			break;
	}
	pthread_mutex_unlock(&cred_lock);
}

/*
 * nfd, holding the moved ids, takes ch's descriptor number; the former
 * file stays open (stashed) for the connection requests that waited on it.
 */
static void
cm_take_place(struct rdma_event_channel *ch, int nfd)
{
	cm_stash_add(ch);
	if (dup3(nfd, ch->fd, O_CLOEXEC) < 0) {
		/* Cannot happen for an open ch->fd; keep the ids reachable. */
		shim_log(SHIM_LOG_WARN, "RDMA-CM: dup3 onto descriptor %d: %s",
			 ch->fd, strerror(errno));
		ch->fd = nfd;
		return;
	}
	close(nfd);
}

int
cm_rebuild(struct rdma_event_channel *ch)
{
	unsigned int gen = cred_gen(), moved = 0, lost = 0;
	int nfd = cm_open_like(ch->fd);
	size_t i;

	if (nfd < 0) {
		shim_log(SHIM_LOG_WARN,
			 "RDMA-CM: cannot open " CM_DEVICE " under the new credentials: %s",
			 strerror(-nfd));
		return nfd;
	}
	pthread_mutex_lock(&cred_lock);
	for (i = 0; i < cm_n; i++) {
		struct cm_entry *e = &cm_tab[i];

		if (e->ch != ch || e->gen != gen)
			continue;
		if (e->handle != NO_HANDLE &&
		    cred_ucma_migrate(nfd, ch->fd, e->handle) == 0)
			moved++;
		else
			lost++;
	}
	pthread_mutex_unlock(&cred_lock);
	cm_take_place(ch, nfd);
	shim_log(lost ? SHIM_LOG_WARN : SHIM_LOG_DEBUG,
		 "RDMA-CM channel %d: the process's credentials changed; %u ids moved to a channel opened under the new ones%s",
		 ch->fd, moved, lost ? ", some could not be moved and are lost" : "");
	return 0;
}

bool
cm_refused(struct rdma_event_channel *ch)
{
	if (errno != EACCES)
		return false;
	if (!ch || cm_rebuild(ch)) {
		errno = EACCES;
		return false;
	}
	return true;
}

int
cm_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id,
	     void *context)
{
	struct capture c;
	int ret;

	capture_begin(&c, ch->fd, cred_ucma_cmd_create_id());
	ret = rdma_create_id(ch, id, context, RDMA_PS_TCP);
	capture_end();
	if (ret) {
		*id = NULL;
		return errno ? -errno : -EIO;
	}
	cm_track(ch, *id, c.seen ? c.r.handle : NO_HANDLE);
	return 0;
}

int
cm_get_event(struct rdma_event_channel *ch, struct rdma_cm_event **ev)
{
	bool again = true;
	struct capture c;
	int ret;

	for (;;) {
		capture_begin(&c, ch->fd, cred_ucma_cmd_get_event());
		c.ch = ch;
		ret = rdma_get_cm_event(ch, ev);
		capture_end();
		if (!ret || !again || !cm_refused(ch))
			break;
		again = false;
	}
	if (ret) {
		/* Drained: the requests of former files all came out. */
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			cm_stash_drop(ch);
			errno = EAGAIN;
		}
		return ret;
	}
	if ((*ev)->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		cm_track(ch, (*ev)->id,
			 c.seen && c.r.event == RDMA_CM_EVENT_CONNECT_REQUEST ?
			 c.r.handle : NO_HANDLE);
	return 0;
}

/* Destroy id as librdmacm would, or by handle when adopted. */
static int
cm_destroy_once(struct rdma_cm_id *id, bool adopted, uint32_t handle)
{
	if (adopted)
		return cred_ucma_destroy(id->channel->fd, handle);
	return rdma_destroy_id(id) ? -errno : 0;
}

int
cm_destroy_id(struct rdma_cm_id *id)
{
	struct rdma_event_channel *ch = id->channel;
	uint32_t handle = NO_HANDLE;
	bool adopted = false;
	struct cm_entry *e;
	int ret;

	pthread_mutex_lock(&cred_lock);
	e = cm_find_locked(id);
	if (e) {
		adopted = e->adopted;
		handle = e->handle;
	}
	pthread_mutex_unlock(&cred_lock);

	/*
	 * An adopted id's librdmacm count of events is the parent's: its
	 * rdma_destroy_id() could wait for events this process never saw.
	 * It goes by handle, and its small librdmacm record is left.
	 */
	ret = cm_destroy_once(id, adopted, handle);
	if (ret == -EACCES && ch && cm_rebuild(ch) == 0)
		ret = cm_destroy_once(id, adopted, handle);

	pthread_mutex_lock(&cred_lock);
	e = cm_find_locked(id);
	if (e)
		cm_drop_locked(e);
	pthread_mutex_unlock(&cred_lock);
	return ret;
}

int
cm_adopt(struct rdma_event_channel *ch, struct rdma_cm_id *id)
{
	unsigned int gen = cred_gen();
	struct cm_entry *e;
	int nfd, ret;
	size_t i;

	nfd = cm_open_like(ch->fd);
	if (nfd < 0)
		return nfd;
	pthread_mutex_lock(&cred_lock);
	e = cm_find_locked(id);
	if (!e || e->handle == NO_HANDLE)
		ret = -ENOENT;
	else
		ret = cred_ucma_migrate(nfd, ch->fd, e->handle);
	if (!ret) {
		e->gen = gen;
		e->adopted = true;
		/* The channel's other ids stay with the parent. */
		for (i = 0; i < cm_n; i++) {
			if (cm_tab[i].ch == ch && cm_tab[i].gen != gen)
				cm_drop_locked(&cm_tab[i--]);
		}
	}
	pthread_mutex_unlock(&cred_lock);
	if (ret) {
		close(nfd);
		return ret;
	}
	cm_take_place(ch, nfd);
	return 0;
}

void
cm_forget(struct rdma_event_channel *ch)
{
	size_t i;

	pthread_mutex_lock(&cred_lock);
	for (i = 0; i < cm_n; i++) {
		if (cm_tab[i].ch == ch)
			cm_drop_locked(&cm_tab[i--]);
	}
	pthread_mutex_unlock(&cred_lock);
	cm_stash_drop(ch);
}

/* ------------------------------------------------------------------ */
/* fork()                                                              */
/* ------------------------------------------------------------------ */

void
cred_fork_prepare(void)
{
	pthread_mutex_lock(&cred_lock);
}

void
cred_fork_parent(void)
{
	pthread_mutex_unlock(&cred_lock);
}

void
cred_fork_child(void)
{
	__atomic_add_fetch(&cred_fork_gen, 1, __ATOMIC_RELAXED);
	/* Threads that were reading a command did not come along. */
	__atomic_store_n(&cred_capturing, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cred_lock);
}
