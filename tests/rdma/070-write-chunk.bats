#!/usr/bin/env bats
#
# Direct data placement through a Write chunk (RFC 8166 s4.4.6): with
# write_chunk set, the shim client offers one with every call; a server
# places the first opaque result there by RDMA Write, and the client puts
# it back into the reply.  Shown against the shim server and against
# rdma-peer, which places results independently of the shim's code.

load ../helpers
load peer

setup() {
	require_build
	require_peer
	require_rdma_device
	require_env RXE_ADDR
}

@test "shim client with a Write chunk against the shim server: results placed, byte-exact" {
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	client --rdma --env RPCRDMA_SHIM_WRITE_CHUNK=2M --env RPCRDMA_SHIM_LOG_LEVEL=debug \
		-m tli -h "$RXE_ADDR" -p "$port" -o echo,sink,source,mixed -s 1,100,1001,64K,1M+3
	assert_client_ran echo,sink,source,mixed 1,100,1001,64K,1M+3
	# ECHO, SOURCE and MIXED have an opaque result: placed; SINK has none.
	assert_line --regexp 'client: xid 0x[0-9a-f]+: 1048579 octets of the result came in the Write chunk$'
	assert_line --regexp 'client: xid 0x[0-9a-f]+: 1001 octets of the result came in the Write chunk$'
	stop_server
}

@test "shim client with a Write chunk against rdma-peer, which places the results" {
	start_peer -a "$RXE_ADDR" -p 0 --connections 1 accept
	client --rdma --env RPCRDMA_SHIM_WRITE_CHUNK=1M -m tli -h "$RXE_ADDR" -p "$PEER_PORT" \
		-o echo,source -s 100,5000,64K+1
	assert_client_ran echo,source 100,5000,64K+1
	wait_peer
	assert_peer_ok
	# Every call offered one Write chunk; every reply used it.
	assert_line --regexp '^call .* writes=1 '
	refute_line --regexp '^call .* writes=0 '
	assert_line --regexp '^reply .* write_chunk_used=65537$'
	assert_line --regexp '^reply .* write_chunk_used=5000$'
}

@test "a Write chunk too small for the result: the server sends it inline instead" {
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	client --rdma --env RPCRDMA_SHIM_WRITE_CHUNK=4K --env RPCRDMA_SHIM_LOG_LEVEL=debug \
		-m tli -h "$RXE_ADDR" -p "$port" -o source -s 1000,64K
	assert_client_ran source 1000,64K
	assert_line --regexp 'client: xid 0x[0-9a-f]+: 1000 octets of the result came in the Write chunk$'
	refute_line --regexp ': 65536 octets of the result came in the Write chunk$'
	stop_server
}
