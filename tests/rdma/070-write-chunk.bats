#!/usr/bin/env bats
#
# Direct data placement through a Write chunk (RFC 8166 s4.4.6): with
# write_chunk set, the shim client offers one with every call; a server
# places the first opaque result there by RDMA Write, and the client puts
# it back into the reply.  Shown against the shim server and against
# rdma-peer, which places results independently of the shim's code.  Last,
# the statistics of what moved through Read, Write and Reply chunks, and
# of remote invalidation, on both sides (rpcrdma-stat -j).

load ../helpers
load peer
load ../tools

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

# --- the statistics of how data moved ------------------------------------------

# chunk_counters PID ROLE [PEER-PORT]: "read write reply send_inv" of the
# client of PID, or of its server connection from PEER-PORT.
chunk_counters() {
	st_fields "$1" "$2" "${3:-0}" read_chunk_bytes write_chunk_bytes reply_chunk_bytes send_inv
}

_counters_are() {
	[[ $(chunk_counters "$SERVER_PID" server "$1") == "$2" ]]
}

# server_caught_up CLIENT-PID: the server's connection from that client
# shows the same four counters as the client (its last reply is counted
# just after it was posted: wait for that, bounded).
server_caught_up() {
	local c cport
	c=$(chunk_counters "$1" client)
	cport=$(client_port "$1")
	[[ -n $c && -n $cport ]] || fail "no client transport of process $1 in rpcrdma-stat"
	wait_until -q 30 "the server's counters" _counters_are "$cport" "$c" ||
		fail "the server's connection from port $cport shows '$(chunk_counters "$SERVER_PID" server "$cport")', the client (read write reply send_inv) '$c'"
}

# assert_moved KEY-PREFIX READ WRITE REPLY SEND_INV (after stat_json)
assert_moved() {
	assert_st "$1.read_chunk_bytes" "$2"
	assert_st "$1.write_chunk_bytes" "$3"
	assert_st "$1.reply_chunk_bytes" "$4"
	assert_st "$1.send_inv" "$5"
}

@test "rpcrdma-stat: the octets through Read, Write and Reply chunks and the remote invalidations, the same on both sides" {
	require_tools
	require_jq
	local port cport n=4
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	# Both calls go as Long Calls (over the 4K inline threshold), in a
	# Read chunk.  ECHO 16K: the result goes into the 32K Write chunk, the
	# rest of the reply inline.  ECHO 64K: the result does not fit the
	# Write chunk (which comes back unused), the reply goes into the Reply
	# chunk.  Remote invalidation is on (the default): every reply is a
	# Send With Invalidate of its call's Reply chunk.
	start_client_bg --rdma --env RPCRDMA_SHIM_WRITE_CHUNK=32K -m tli -h "$RXE_ADDR" -p "$port" \
		-o echo -s 16K,64K -c "$n" -q -H
	await_holding $((2 * n))
	server_caught_up "$CLIENT_PID"
	stat_json -p "$SERVER_PID" -p "$CLIENT_PID"
	cport=${ST[$CLIENT_PID.client.local.port]}
	assert_st "$CLIENT_PID.client.transport" rdma
	assert_st "$CLIENT_PID.client.calls" $((2 * n))
	assert_st "$CLIENT_PID.client.errors" 0
	assert_st "$CLIENT_PID.client.remote_invalidate" true
	assert_st "$SERVER_PID.server.$cport.transport" rdma
	assert_st "$SERVER_PID.server.$cport.calls" $((2 * n))
	assert_st "$SERVER_PID.server.$cport.remote_invalidate" true

	# What moved, exactly (RFC 5531 with AUTH_NONE: a call header of 40
	# octets, a reply header of 24, then the opaque's length word; the
	# Write chunk holds the result alone, RFC 8166 s4.4.6.1):
	#   Read chunks   n * ((40 + 4 + 16K) + (40 + 4 + 64K))
	#   Write chunk   n * 16K, not the 32K offered with each of the 2n calls
	#   Reply chunk   n * (24 + 4 + 64K), not the 64M offered
	local read=$((n * (44 + 16384 + 44 + 65536)))
	local write=$((n * 16384))
	local reply=$((n * (28 + 65536)))
	assert_moved "$CLIENT_PID.client" "$read" "$write" "$reply" $((2 * n))
	assert_moved "$SERVER_PID.server.$cport" "$read" "$write" "$reply" $((2 * n))
	assert_st "$CLIENT_PID.client.long_out" $((2 * n))
	assert_st "$SERVER_PID.server.$cport.long_in" $((2 * n))

	# The table says the same, in K.
	run --separate-stderr "$RPCRDMA_TEST_STAT" -p "$SERVER_PID" -p "$CLIENT_PID"
	assert_success
	assert_line --regexp "^ *$CLIENT_PID +rpctest-client +client +RDMA .* R=1 .* read_chunk=320K write_chunk=64K reply_chunk=256K send_inv=8 vers=2 dropped=0 poll=[0-9]+/[0-9]+$"
	assert_line --regexp "^ *$SERVER_PID +rpctest-server +server +RDMA .* R=1 .* read_chunk=320K write_chunk=64K reply_chunk=256K send_inv=8 vers=2 dropped=0 poll=[0-9]+/[0-9]+$"
}

@test "rpcrdma-stat: inline calls and replies move nothing through chunks; send_inv follows remote_invalidate" {
	require_tools
	require_jq
	local port a b aport bport
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	# NULL, SINK and DIGEST have no opaque result: the 1M Write chunk
	# SINK offers is never used.  Every message fits the 4K inline threshold.
	start_client_bg --rdma --env RPCRDMA_SHIM_WRITE_CHUNK=1M -m tli -h "$RXE_ADDR" -p "$port" \
		-o null,sink,digest -s 100,1000 -c 5 -q -H
	await_holding 25
	a=$CLIENT_PID
	server_caught_up "$a"
	# The same without remote invalidation, and ECHO.  ECHO and SINK of
	# 4000 octets are the largest calls that fit: 4096 octets with the
	# Version Two header (52 octets with the Reply chunk of max_reply, one
	# segment), the RPC header (40) and the opaque's length.
	start_client_bg --rdma --env RPCRDMA_SHIM_REMOTE_INVALIDATE=no -m tli -h "$RXE_ADDR" -p "$port" \
		-o null,sink,echo -s 100,1000,4000 -c 5 -q -H
	await_holding 35
	b=$CLIENT_PID
	server_caught_up "$b"

	stat_json -p "$SERVER_PID" -p "$a" -p "$b"
	aport=${ST[$a.client.local.port]}
	bport=${ST[$b.client.local.port]}
	assert_st "$a.client.transport" rdma
	assert_st "$b.client.transport" rdma
	assert_st "$SERVER_PID.server.$aport.calls" 25
	assert_st "$SERVER_PID.server.$bport.calls" 35
	assert_st "$a.client.long_out" 0
	assert_st "$a.client.long_in" 0
	assert_st "$b.client.long_out" 0
	assert_st "$b.client.long_in" 0
	# Remote invalidation on: every SINK reply invalidated the call's Reply
	# chunk.  NULL (xdr_void results, a reply that is a header) and DIGEST
	# (xdr_u_quad_t: a header and eight octets) offer none.
	assert_st "$a.client.remote_invalidate" true
	assert_moved "$a.client" 0 0 0 10
	assert_moved "$SERVER_PID.server.$aport" 0 0 0 10
	# Off: plain Sends.
	assert_st "$b.client.remote_invalidate" false
	assert_st "$SERVER_PID.server.$bport.remote_invalidate" false
	assert_moved "$b.client" 0 0 0 0
	assert_moved "$SERVER_PID.server.$bport" 0 0 0 0

	run --separate-stderr "$RPCRDMA_TEST_STAT" -p "$a" -p "$b"
	assert_success
	assert_line --regexp "^ *$a +rpctest-client +client +RDMA .* R=1 .* read_chunk=0 write_chunk=0 reply_chunk=0 send_inv=10 vers=2 dropped=0 poll=[0-9]+/[0-9]+$"
	assert_line --regexp "^ *$b +rpctest-client +client +RDMA .* R=0 .* read_chunk=0 write_chunk=0 reply_chunk=0 send_inv=0 vers=2 dropped=0 poll=[0-9]+/[0-9]+$"
}
