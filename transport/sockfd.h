/*
 * Descriptors that stand in for sockets.
 *
 * A server transport's xp_fd is what libtirpc polls: for an RDMA listener
 * the RDMA-CM event channel, for an RDMA connection its completion
 * channel.  Programs inspect xp_fd as a socket (getsockopt(SO_TYPE) to
 * tell stream from datagram, getpeername, setsockopt(TCP_NODELAY), fstat),
 * so the shim answers these calls for its own descriptors as a TCP socket
 * with the same addresses would: a listener bound to the RDMA address, or
 * a connection from the RDMA peer.  An RDMA client's socket (CLGET_FD),
 * which libtirpc handed over unconnected, stands in for its connection
 * the same way.  Every other descriptor gets the real call; sockfd_owned()
 * is one relaxed load while the shim owns none.
 */
#ifndef TRANSPORT_SOCKFD_H
#define TRANSPORT_SOCKFD_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>

/*
 * fd now stands for a TCP socket bound to local, connected to peer (NULL:
 * a listening socket).  Returns 0 or -ENOMEM.
 */
int sockfd_add(int fd, const struct sockaddr *local,
	       const struct sockaddr *peer);

/* fd, standing for a connected socket, is now bound to local. */
void sockfd_set_local(int fd, const struct sockaddr *local);

/* fd no longer stands for a socket: call before closing it. */
void sockfd_del(int fd);

/* True when fd is one of the shim's stand-in descriptors. */
bool sockfd_owned(int fd);

/*
 * The socket calls on a stand-in descriptor; each returns what the call
 * returns (0, or -1 with errno).  Only valid when sockfd_owned(fd).
 */
int sockfd_getsockopt(int fd, int level, int name, void *val, socklen_t *len);
int sockfd_setsockopt(int fd, int level, int name, const void *val,
		      socklen_t len);
int sockfd_getsockname(int fd, struct sockaddr *sa, socklen_t *len);
int sockfd_getpeername(int fd, struct sockaddr *sa, socklen_t *len);

/* Turn the descriptor's real status into a socket's. */
void sockfd_fix_stat(struct stat *st);

/* fork(): the table's lock is held across it (shim/fork.c). */
void sockfd_fork_lock(void);
void sockfd_fork_unlock(void);

#endif
