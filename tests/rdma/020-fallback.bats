#!/usr/bin/env bats
#
# Falling back to TCP, inside the soft-RoCE VM (see 010-rxe.bats): every way
# an RDMA connection can be impossible ends on libtirpc's TCP transport,
# byte-exact, within the connect timeout, and the log line says why.  Also
# the modes that forbid either transport.

load ../helpers
load peer

OPS=null,echo,sink,source
SIZES=0,1,100,3000

setup() {
	require_build
	require_peer
	require_rdma_device
	require_env RXE_ADDR
}

@test "shim client, plain server: TCP because the RDMA connect is refused" {
	local port
	port=$(free_port)
	start_server -m tli -a "$RXE_ADDR" -p "$port"
	client --shim -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_shim_line --comm rpctest-client client "$RXE_ADDR" "$port" 'TCP \(refused by the peer'
	refute_shim_line client "$RXE_ADDR" "$port" RDMA
	assert_netid tcp "$RXE_ADDR"
	stop_server
}

@test "plain client, shim server: TCP, and the server's RDMA listener stays unused" {
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	assert_shim_line --log "$SERVER_LOG" server "$RXE_ADDR" "$port" "RDMA listener on port $port\$"
	client -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_netid tcp "$RXE_ADDR"
	stop_server
	refute_shim_line --log "$SERVER_LOG" connection
}

@test "a server in the TCP-only namespace: TCP at once (not on an RDMA device), then the negative cache" {
	require_env RXE_TCP_PEER_NS RXE_TCP_PEER_ADDR
	local port
	port=$(free_port)
	start_server --shim --ns "$RXE_TCP_PEER_NS" -m tli -a "$RXE_TCP_PEER_ADDR" -p "$port"

	# A connect timeout far above the run: the failure must be immediate.
	timed_client --shim --env RPCRDMA_SHIM_CONNECT_TIMEOUT=20000 \
		-m tli -h "$RXE_TCP_PEER_ADDR" -p "$port" -o "$OPS" -s "$SIZES" -R 2
	assert_client_ran "$OPS" "$SIZES" 2
	assert_shim_line --comm rpctest-client client "$RXE_TCP_PEER_ADDR" "$port" 'TCP \(address not on an RDMA device'
	# The second handle is not tried: the negative cache says why.
	assert_shim_line --comm rpctest-client client "$RXE_TCP_PEER_ADDR" "$port" 'TCP \(failed recently \(negative cache\): address not on an RDMA device'
	((CLIENT_MS < 10000)) ||
		fail "two handles took $CLIENT_MS ms: the shim waited for the connect timeout"
	stop_server
}

@test "a peer that never answers the connect request: TCP within the connect timeout, then the negative cache" {
	local port
	port=$(free_port)
	# A plain server takes TCP; on the same port, RDMA-CM requests go
	# unanswered (neither accepted nor rejected).
	start_server -m tli -a "$RXE_ADDR" -p "$port"
	start_peer -a "$RXE_ADDR" -p "$port" --timeout 120 silent

	# What the same run costs without any wait, as loaded as this machine
	# is now: the shim deciding for TCP at once (no RDMA-CM request).
	timed_client --shim --env RPCRDMA_SHIM_MODE=tcp-only \
		-m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES" -R 2
	assert_client_ran "$OPS" "$SIZES" 2
	local base_ms=$CLIENT_MS

	# Two handles: the first waits for the connect timeout, the second is
	# not even tried.  Both run their calls over TCP.
	timed_client --shim --env RPCRDMA_SHIM_CONNECT_TIMEOUT=4000 \
		-m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES" -R 2
	assert_client_ran "$OPS" "$SIZES" 2
	assert_shim_line --comm rpctest-client client "$RXE_ADDR" "$port" 'TCP \(no answer in time'
	assert_shim_line --comm rpctest-client client "$RXE_ADDR" "$port" 'TCP \(failed recently \(negative cache\): no answer in time'
	((CLIENT_MS >= 3900)) || fail "fell back after $CLIENT_MS ms, before the 4000 ms connect timeout"
	# One wait of 4 s, not two: halfway between, whatever the run itself costs.
	((CLIENT_MS - base_ms < 6000)) ||
		fail "two handles took $CLIENT_MS ms, $base_ms without RDMA: beyond the 4000 ms connect timeout, or the second waited too"

	stop_peer
	assert_peer_ok
	# Only the first handle asked, and got no answer.
	assert_line "connect_request=ignored n=1"
	refute_line --partial "connect_request n=2"
	stop_server
}

@test "a peer that rejects the connect request: TCP at once" {
	local port
	port=$(free_port)
	start_server -m tli -a "$RXE_ADDR" -p "$port"
	start_peer -a "$RXE_ADDR" -p "$port" reject

	timed_client --shim --env RPCRDMA_SHIM_CONNECT_TIMEOUT=20000 \
		-m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	assert_shim_line --comm rpctest-client client "$RXE_ADDR" "$port" 'TCP \(refused by the peer'
	((CLIENT_MS < 10000)) || fail "fell back after $CLIENT_MS ms: the reject was not taken at once"

	wait_peer
	assert_peer_ok
	assert_line "connect_request=rejected n=1"
	stop_server
}

@test "require-rdma: the create fails with an RPC error against TCP-only servers" {
	local port
	port=$(free_port)
	start_server -m tli -a "$RXE_ADDR" -p "$port"
	client --shim --env RPCRDMA_SHIM_MODE=require-rdma -m tli -h "$RXE_ADDR" -p "$port" -o null
	assert_failure 1
	assert_shim_line --comm rpctest-client required "$RXE_ADDR" "$port" 'refused by the peer$'
	assert_line "$RXE_ADDR: RPC: Remote system error - Connection refused"
	refute_line "null ok"
	stop_server

	require_env RXE_TCP_PEER_NS RXE_TCP_PEER_ADDR
	port=$(free_port)
	start_server --ns "$RXE_TCP_PEER_NS" -m tli -a "$RXE_TCP_PEER_ADDR" -p "$port"
	client --shim --env RPCRDMA_SHIM_MODE=require-rdma -m tli -h "$RXE_TCP_PEER_ADDR" -p "$port" -o null
	assert_failure 1
	assert_shim_line required "$RXE_TCP_PEER_ADDR" "$port" 'address not on an RDMA device$'
	assert_line --regexp "^${RXE_TCP_PEER_ADDR//./\\.}: RPC: Remote system error - "
	stop_server
}

@test "require-rdma between shims: RDMA" {
	local port
	port=$(free_port)
	start_server --shim --env RPCRDMA_SHIM_MODE=require-rdma -m tli -a "$RXE_ADDR" -p "$port"
	assert_shim_line --log "$SERVER_LOG" server "$RXE_ADDR" "$port" RDMA
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_shim_line --comm rpctest-client client "$RXE_ADDR" "$port" RDMA
	assert_netid rdma "$RXE_ADDR"
	stop_server
}

@test "tcp-only keeps a shim pair on TCP" {
	local port
	port=$(free_port)
	start_server --shim --env RPCRDMA_SHIM_MODE=tcp-only -m tli -a "$RXE_ADDR" -p "$port"
	assert_shim_line --log "$SERVER_LOG" server "$RXE_ADDR" "$port" 'TCP only \(configuration: mode tcp-only\)$'
	client --shim --env RPCRDMA_SHIM_MODE=tcp-only -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_shim_line --comm rpctest-client client "$RXE_ADDR" "$port" 'TCP \(configuration: mode tcp-only\)'
	assert_netid tcp "$RXE_ADDR"
	stop_server
	refute_shim_line --log "$SERVER_LOG" server '' '' RDMA
	refute_shim_line --log "$SERVER_LOG" connection

	# tcp-only on the client alone: a shim server with an RDMA listener
	# still gets a TCP client.
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	assert_shim_line --log "$SERVER_LOG" server "$RXE_ADDR" "$port" RDMA
	client --shim --env RPCRDMA_SHIM_MODE=tcp-only -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_shim_line --comm rpctest-client client "$RXE_ADDR" "$port" 'TCP \(configuration: mode tcp-only\)'
	assert_netid tcp "$RXE_ADDR"
	stop_server
	refute_shim_line --log "$SERVER_LOG" connection
}
