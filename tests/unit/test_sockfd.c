/*
 * Stand-in descriptors (transport/sockfd.c): the answers a program gets
 * from socket calls on a server transport's xp_fd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addr_fixture.h"
#include "check.h"
#include "sockfd.h"

static int
get_int(int fd, int level, int name, int *v)
{
	socklen_t len = sizeof(*v);

	return sockfd_getsockopt(fd, level, name, v, &len);
}

static void
test_connection(void)
{
	struct sockaddr_in local = in4("10.77.0.1", 2049);
	struct sockaddr_in peer = in4("10.77.0.2", 812);
	struct sockaddr_in6 big;
	struct sockaddr_in out;
	struct stat st;
	socklen_t len;
	int fd = eventfd(0, EFD_CLOEXEC), v, one = 1;

	CHECK(!sockfd_owned(fd), "an eventfd is not a stand-in before it is added");
	CHECK(sockfd_add(fd, (struct sockaddr *)&local, (struct sockaddr *)&peer) == 0,
	      "added");
	CHECK(sockfd_owned(fd), "owned once added");
	CHECK(!sockfd_owned(fd + 1000), "another descriptor is not");

	CHECK(get_int(fd, SOL_SOCKET, SO_TYPE, &v) == 0 && v == SOCK_STREAM,
	      "SO_TYPE is SOCK_STREAM");
	CHECK(get_int(fd, SOL_SOCKET, SO_DOMAIN, &v) == 0 && v == AF_INET,
	      "SO_DOMAIN is the address family");
	CHECK(get_int(fd, SOL_SOCKET, SO_PROTOCOL, &v) == 0 && v == IPPROTO_TCP,
	      "SO_PROTOCOL is TCP");
	CHECK(get_int(fd, SOL_SOCKET, SO_ACCEPTCONN, &v) == 0 && v == 0,
	      "a connection does not accept");
	CHECK(get_int(fd, SOL_SOCKET, SO_SNDBUF, &v) == 0 && v > 0,
	      "an option never set reads as a TCP socket's default (SO_SNDBUF %d)", v);
	CHECK(get_int(fd, IPPROTO_TCP, TCP_NODELAY, &v) == 0 && v == 0,
	      "TCP_NODELAY is off by default");
	CHECK(sockfd_setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0 &&
	      get_int(fd, IPPROTO_TCP, TCP_NODELAY, &v) == 0 && v == 1,
	      "TCP_NODELAY set reads back");
	errno = 0;
	CHECK(sockfd_setsockopt(fd, SOL_SOCKET, SO_LINGER, &one, 1) == -1 &&
	      errno == EINVAL, "a value a socket refuses is refused (EINVAL)");
	len = 1;
	CHECK(sockfd_getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 &&
	      errno == EINVAL, "a too short buffer for an int fails");

	len = sizeof(out);
	CHECK(sockfd_getsockname(fd, (struct sockaddr *)&out, &len) == 0 &&
	      len == sizeof(out) && memcmp(&out, &local, sizeof(out)) == 0,
	      "getsockname is the local RDMA address");
	len = sizeof(big);
	CHECK(sockfd_getpeername(fd, (struct sockaddr *)&big, &len) == 0 &&
	      len == sizeof(struct sockaddr_in) && memcmp(&big, &peer, sizeof(peer)) == 0,
	      "getpeername is the peer, with its own length");
	len = 4;
	memset(&out, 0xa5, sizeof(out));
	CHECK(sockfd_getpeername(fd, (struct sockaddr *)&out, &len) == 0 &&
	      len == sizeof(out) && memcmp(&out, &peer, 4) == 0 &&
	      ((unsigned char *)&out)[4] == 0xa5,
	      "a short buffer is filled to its size, the full length reported");

	/* A client's new connection: another local port, the options kept. */
	local.sin_port = htons(40001);
	sockfd_set_local(fd, (struct sockaddr *)&local);
	len = sizeof(out);
	CHECK(sockfd_getsockname(fd, (struct sockaddr *)&out, &len) == 0 &&
	      ntohs(out.sin_port) == 40001, "a new local address replaces the old");
	len = sizeof(out);
	CHECK(sockfd_getpeername(fd, (struct sockaddr *)&out, &len) == 0 &&
	      memcmp(&out, &peer, sizeof(peer)) == 0, "the peer stays");
	CHECK(get_int(fd, IPPROTO_TCP, TCP_NODELAY, &v) == 0 && v == 1,
	      "the options set stay");

	CHECK(fstat(fd, &st) == 0, "fstat");
	sockfd_fix_stat(&st);
	CHECK(S_ISSOCK(st.st_mode), "the status says socket");

	sockfd_del(fd);
	CHECK(!sockfd_owned(fd), "deleted: no longer a stand-in");
	sockfd_set_local(fd, (struct sockaddr *)&local);
	CHECK(!sockfd_owned(fd), "a new local address does not add a descriptor");
	close(fd);
}

static void
test_listener(void)
{
	struct sockaddr_in6 local;
	struct sockaddr_in6 out;
	socklen_t len = sizeof(out);
	int fd = eventfd(0, EFD_CLOEXEC), v;

	memset(&local, 0, sizeof(local));
	local.sin6_family = AF_INET6;
	local.sin6_port = htons(20049);
	inet_pton(AF_INET6, "fd77::1", &local.sin6_addr);
	CHECK(sockfd_add(fd, (struct sockaddr *)&local, NULL) == 0, "listener added");
	CHECK(get_int(fd, SOL_SOCKET, SO_ACCEPTCONN, &v) == 0 && v == 1,
	      "a listener accepts");
	CHECK(get_int(fd, SOL_SOCKET, SO_DOMAIN, &v) == 0 && v == AF_INET6,
	      "SO_DOMAIN AF_INET6");
	CHECK(sockfd_getsockname(fd, (struct sockaddr *)&out, &len) == 0 &&
	      len == sizeof(out) && memcmp(&out, &local, sizeof(out)) == 0,
	      "getsockname is the listening address");
	len = sizeof(out);
	errno = 0;
	CHECK(sockfd_getpeername(fd, (struct sockaddr *)&out, &len) == -1 &&
	      errno == ENOTCONN, "a listener has no peer (ENOTCONN)");
	/* Added again (the descriptor was reused): the new facts hold. */
	CHECK(sockfd_add(fd, (struct sockaddr *)&local, (struct sockaddr *)&local) == 0 &&
	      get_int(fd, SOL_SOCKET, SO_ACCEPTCONN, &v) == 0 && v == 0,
	      "re-added as a connection");
	sockfd_del(fd);
	sockfd_del(fd);
	CHECK(!sockfd_owned(fd), "deleting twice is harmless");
	close(fd);
}

int
main(void)
{
	test_connection();
	test_listener();
	return check_done();
}
