/*
 * Stand-in descriptors answering socket calls as TCP sockets (sockfd.h).
 *
 * Options a program sets are kept per descriptor, after a scratch TCP
 * socket of the same family accepted them (so a bad value fails as it
 * would on a socket); options never set read as a fresh TCP socket's
 * defaults, from one reference socket per family.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sockaddr.h"
#include "sockfd.h"

/* Option values a program stored; larger ones are not kept. */
#define SOCKFD_OPT_MAX 32

struct sockfd_opt {
	struct sockfd_opt *next;
	int level, name;
	socklen_t len;
	unsigned char val[SOCKFD_OPT_MAX];
};

struct sockfd {
	struct sockaddr_storage local;
	struct sockaddr_storage peer;
	bool listening;
	struct sockfd_opt *opts;
};

static pthread_mutex_t sockfd_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sockfd **sockfd_tab;	/* by descriptor, under sockfd_lock */
static size_t sockfd_cap;
static unsigned int sockfd_count;	/* also read without the lock */
static int ref_fd[2] = { -1, -1 };	/* AF_INET, AF_INET6 */

/* fork(): held across it, so the child finds the table whole (shim/fork.c). */
void
sockfd_fork_lock(void)
{
	pthread_mutex_lock(&sockfd_lock);
}

void
sockfd_fork_unlock(void)
{
	pthread_mutex_unlock(&sockfd_lock);
}

static void
opts_free(struct sockfd_opt *o)
{
	while (o) {
		struct sockfd_opt *next = o->next;

		free(o);
		o = next;
	}
}

int
sockfd_add(int fd, const struct sockaddr *local, const struct sockaddr *peer)
{
	struct sockfd *s;

	if (fd < 0)
		return -EBADF;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(&s->local, local, sa_len(local));
	if (peer)
		memcpy(&s->peer, peer, sa_len(peer));
	s->listening = !peer;

	pthread_mutex_lock(&sockfd_lock);
	if ((size_t)fd >= sockfd_cap) {
		size_t cap = sockfd_cap ? sockfd_cap : 64;
		struct sockfd **tab;

		while (cap <= (size_t)fd)
			cap *= 2;
		tab = realloc(sockfd_tab, cap * sizeof(*tab));
		if (!tab) {
			pthread_mutex_unlock(&sockfd_lock);
			free(s);
			return -ENOMEM;
		}
		memset(tab + sockfd_cap, 0, (cap - sockfd_cap) * sizeof(*tab));
		sockfd_tab = tab;
		sockfd_cap = cap;
	}
	if (sockfd_tab[fd]) {
		/* The descriptor was closed behind our back and reused. */
		opts_free(sockfd_tab[fd]->opts);
		free(sockfd_tab[fd]);
	} else {
		__atomic_add_fetch(&sockfd_count, 1, __ATOMIC_RELEASE);
	}
	sockfd_tab[fd] = s;
	pthread_mutex_unlock(&sockfd_lock);
	return 0;
}

void
sockfd_set_local(int fd, const struct sockaddr *local)
{
	pthread_mutex_lock(&sockfd_lock);
	if (fd >= 0 && (size_t)fd < sockfd_cap && sockfd_tab[fd])
		memcpy(&sockfd_tab[fd]->local, local, sa_len(local));
	pthread_mutex_unlock(&sockfd_lock);
}

void
sockfd_del(int fd)
{
	struct sockfd *s = NULL;

	pthread_mutex_lock(&sockfd_lock);
	if (fd >= 0 && (size_t)fd < sockfd_cap && sockfd_tab[fd]) {
		s = sockfd_tab[fd];
		sockfd_tab[fd] = NULL;
		__atomic_sub_fetch(&sockfd_count, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&sockfd_lock);
	if (s) {
		opts_free(s->opts);
		free(s);
	}
}

bool
sockfd_owned(int fd)
{
	bool owned;

	if (!__atomic_load_n(&sockfd_count, __ATOMIC_ACQUIRE) || fd < 0)
		return false;
	pthread_mutex_lock(&sockfd_lock);
	owned = (size_t)fd < sockfd_cap && sockfd_tab[fd];
	pthread_mutex_unlock(&sockfd_lock);
	return owned;
}

/*
 * A copy of what is known of fd, taken under the lock: the calls below
 * run without it, since they make socket calls of their own (which come
 * back through the interposed names).  With opt, also the option (level,
 * name) when one was set on fd (*has_opt).  False, errno ENOTSOCK, when fd
 * is not ours.
 */
static bool
snapshot(int fd, struct sockfd *out, int level, int name,
	 struct sockfd_opt *opt, bool *has_opt)
{
	struct sockfd *s;
	struct sockfd_opt *o;

	pthread_mutex_lock(&sockfd_lock);
	s = fd >= 0 && (size_t)fd < sockfd_cap ? sockfd_tab[fd] : NULL;
	if (s) {
		*out = *s;
		out->opts = NULL;
		if (has_opt)
			*has_opt = false;
		for (o = opt ? s->opts : NULL; o; o = o->next) {
			if (o->level == level && o->name == name) {
				*opt = *o;
				*has_opt = true;
				break;
			}
		}
	}
	pthread_mutex_unlock(&sockfd_lock);
	if (!s)
		errno = ENOTSOCK;
	return s != NULL;
}

/* The reference TCP socket of family: a fresh socket's defaults. */
static int
reference_socket(int family)
{
	int i = family == AF_INET6, fd, old = -1;

	fd = __atomic_load_n(&ref_fd[i], __ATOMIC_ACQUIRE);
	if (fd >= 0)
		return fd;
	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		return -1;
	if (!__atomic_compare_exchange_n(&ref_fd[i], &old, fd, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		close(fd);
		fd = old;
	}
	return fd;
}

static int
put_int(void *val, socklen_t *len, int v)
{
	if (!val || !len || *len < (socklen_t)sizeof(int)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}

int
sockfd_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct sockfd s;
	struct sockfd_opt opt;
	bool has_opt = false;
	int ref;

	if (!snapshot(fd, &s, level, name, &opt, &has_opt))
		return -1;
	if (level == SOL_SOCKET) {
		switch (name) {
		case SO_TYPE:
			return put_int(val, len, SOCK_STREAM);
		case SO_DOMAIN:
			return put_int(val, len, s.local.ss_family);
		case SO_PROTOCOL:
			return put_int(val, len, IPPROTO_TCP);
		case SO_ACCEPTCONN:
			return put_int(val, len, s.listening);
		case SO_ERROR:
			return put_int(val, len, 0);
		default:
			break;
		}
	}
	if (has_opt) {
		if (!val || !len) {
			errno = EFAULT;
			return -1;
		}
		memcpy(val, opt.val, *len < opt.len ? *len : opt.len);
		*len = opt.len;
		return 0;
	}
	ref = reference_socket(s.local.ss_family);
	if (ref < 0)
		return -1;
	return getsockopt(ref, level, name, val, len);
}

int
sockfd_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct sockfd s, *cur;
	struct sockfd_opt opt, *o;
	bool has_opt;
	int scratch, ret, err;

	if (!snapshot(fd, &s, level, name, &opt, &has_opt))
		return -1;
	/* A socket would refuse what a fresh one refuses. */
	scratch = socket(s.local.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
			 IPPROTO_TCP);
	if (scratch < 0)
		return -1;
	ret = setsockopt(scratch, level, name, val, len);
	err = errno;
	close(scratch);
	if (ret) {
		errno = err;
		return -1;
	}
	if (len > SOCKFD_OPT_MAX)
		return 0;	/* accepted; reads back as the default */

	pthread_mutex_lock(&sockfd_lock);
	cur = fd >= 0 && (size_t)fd < sockfd_cap ? sockfd_tab[fd] : NULL;
	if (cur) {
		for (o = cur->opts; o; o = o->next)
			if (o->level == level && o->name == name)
				break;
		if (!o && (o = calloc(1, sizeof(*o))) != NULL) {
			o->level = level;
			o->name = name;
			o->next = cur->opts;
			cur->opts = o;
		}
		if (o) {
			memcpy(o->val, val, len);
			o->len = len;
		}
	}
	pthread_mutex_unlock(&sockfd_lock);
	return 0;
}

/* Copy an address out as the socket calls do: truncated, full length. */
static int
put_addr(const struct sockaddr_storage *ss, struct sockaddr *sa,
	 socklen_t *len)
{
	socklen_t full = sa_len((const struct sockaddr *)ss);

	if (!len) {
		errno = EFAULT;
		return -1;
	}
	if (sa)
		memcpy(sa, ss, *len < full ? *len : full);
	*len = full;
	return 0;
}

int
sockfd_getsockname(int fd, struct sockaddr *sa, socklen_t *len)
{
	struct sockfd s;

	if (!snapshot(fd, &s, 0, 0, NULL, NULL))
		return -1;
	return put_addr(&s.local, sa, len);
}

int
sockfd_getpeername(int fd, struct sockaddr *sa, socklen_t *len)
{
	struct sockfd s;

	if (!snapshot(fd, &s, 0, 0, NULL, NULL))
		return -1;
	if (s.listening) {
		errno = ENOTCONN;
		return -1;
	}
	return put_addr(&s.peer, sa, len);
}

void
sockfd_fix_stat(struct stat *st)
{
	st->st_mode = S_IFSOCK | 0777;
	st->st_size = 0;
	st->st_rdev = 0;
}
