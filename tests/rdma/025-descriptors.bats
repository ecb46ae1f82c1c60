#!/usr/bin/env bats
#
# What a server program learns from its transport's descriptor.  Programs
# inspect xprt->xp_fd as a socket (getsockopt(SO_TYPE) to choose transfer
# sizes, getpeername for access checks, TCP_NODELAY, fstat).  An RDMA
# connection's xp_fd is its completion channel; the shim answers those
# calls for it as the TCP socket of the same peer would.

load ../helpers

setup() {
	require_build
	require_rdma_device
	require_env RXE_ADDR
}

# "10.77.0.1.4.1" (a universal address) -> "10.77.0.1.1025"
uaddr_to_dotted_port() {
	local u=$1 hi lo
	lo=${u##*.}
	u=${u%.*}
	hi=${u##*.}
	echo "${u%.*}.$((hi * 256 + lo))"
}

@test "an RDMA connection's xp_fd answers socket calls as the caller's TCP socket would" {
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o whoami
	assert_client_ran whoami ""
	local re="^whoami caller=([0-9.]+) .* netid=rdma xp_fd=([^ ]+) " line
	line=$(grep '^whoami ' <<<"$output")
	[[ $line =~ $re ]] || fail "not an RDMA whoami line: $line"
	local caller=${BASH_REMATCH[1]} xp_fd=${BASH_REMATCH[2]}
	assert_equal "$xp_fd" "type:stream,domain:inet,protocol:tcp,sock:yes,nodelay:1,local:$RXE_ADDR.$port,peer:$(uaddr_to_dotted_port "$caller")"
	stop_server
}

@test "over IPv6 too, and a TCP client of the same server sees a real socket" {
	require_env RXE_ADDR6
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR6" -p "$port"
	client --rdma -m tli -n tcp6 -h "$RXE_ADDR6" -p "$port" -o whoami
	assert_client_ran whoami ""
	assert_line --regexp "^whoami .* netid=rdma6 xp_fd=type:stream,domain:inet6,protocol:tcp,sock:yes,nodelay:1,local:$RXE_ADDR6\.$port,peer:$RXE_ADDR6\.[0-9]+ "

	# Without the shim the client comes over TCP: the real socket answers.
	client -m tli -n tcp6 -h "$RXE_ADDR6" -p "$port" -o whoami
	assert_client_ran whoami ""
	assert_line --regexp "^whoami .* netid=tcp6 xp_fd=type:stream,domain:inet6,protocol:tcp,sock:yes,nodelay:1,local:$RXE_ADDR6\.$port,peer:$RXE_ADDR6\.[0-9]+ "
	stop_server
}
