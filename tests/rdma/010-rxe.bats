#!/usr/bin/env bats
#
# Runs where an RDMA device exists: inside the soft-RoCE VM (tools/rxe-vm),
# which exports RXE_VM=1, RXE_DEV, RXE_ADDR, RXE_ADDR6, RXE_TCP_PEER_NS,
# RXE_TCP_PEER_ADDR and RXE_TCP_HOST_ADDR.  There a missing device or
# variable fails the tests; on other hosts they are skipped.

load ../helpers

SIZES=0,1,100,1000,4K,64K,1M,1M+3,16M
OPS=null,echo,sink,source,mixed

@test "the soft-RoCE device exists" {
	# Never skipped: without the device nothing below means anything.
	[[ -n ${RXE_DEV:-} ]] || fail "RXE_DEV is not set: run this suite through tools/rxe-vm"
	[[ -e /sys/class/infiniband/$RXE_DEV ]] ||
		fail "no $RXE_DEV in /sys/class/infiniband: $(ls /sys/class/infiniband 2>&1)"

	run rdma link show
	assert_success
	assert_line --regexp "^link $RXE_DEV/[0-9]+ "

	run ibv_devices
	assert_success
	assert_line --regexp "^ +$RXE_DEV +"
}

@test "without the shim: the programs over the rxe interface address" {
	require_env RXE_ADDR
	local port
	port=$(free_port)
	start_server -m tli -a "$RXE_ADDR" -p "$port"
	client -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s 0,1,1M+3
	assert_client_ran "$OPS" 0,1,1M+3
	stop_server
}

@test "shim on both sides over RXE_ADDR: tli and tcp, all sizes, byte-exact" {
	require_rdma_device
	require_env RXE_ADDR
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	client --shim -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SIZES" -A sys
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_line --regexp "^whoami caller=${RXE_ADDR//./\\.}\.[0-9]+\.[0-9]+ .* cred=AUTH_SYS uid=$(id -u) "
	# The server saw the call arrive over RPC-over-RDMA (netid "rdma").
	assert_line --regexp ' netid=rdma '
	client --shim -m tcp -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	stop_server

	port=$(free_port)
	start_server --shim -m tcp -a "$RXE_ADDR" -p "$port"
	client --shim -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES" -c 3
	assert_client_ran "$OPS" "$SIZES" 3
	stop_server
}

@test "shim on both sides over RXE_ADDR6 (tcp6), byte-exact" {
	require_rdma_device
	require_env RXE_ADDR6
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR6" -p "$port"
	client --shim -m tli -n tcp6 -h "$RXE_ADDR6" -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	# Over RPC-over-RDMA the server's transport says "rdma6" (RFC 8166 s11).
	assert_line --regexp ' netid=rdma6 '
	stop_server
}

@test "shim on both sides through rpcbind: svc_create, clnt_create and clnt_tp_create to RXE_ADDR" {
	require_rdma_device
	require_env RXE_ADDR
	ensure_rpcbind
	local prog
	prog=$(unique_prog)
	start_server --shim -P "$prog"
	client --shim -m create -h "$RXE_ADDR" -P "$prog" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	client --shim -m tp -h "$RXE_ADDR" -P "$prog" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	stop_server
}

@test "shim on both sides over RXE_ADDR: 64 MiB each way" {
	require_rdma_device
	require_env RXE_ADDR
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	client --shim -m tli -h "$RXE_ADDR" -p "$port" -o echo,sink,source,mixed -s 64M,64M+1 -t 120
	assert_client_ran echo,sink,source,mixed 64M,64M+1
	stop_server
}

@test "a server in the TCP-only namespace is reachable at RXE_TCP_PEER_ADDR, with and without the shim" {
	require_env RXE_TCP_PEER_NS RXE_TCP_PEER_ADDR RXE_TCP_HOST_ADDR
	local port
	port=$(free_port)
	start_server --shim --ns "$RXE_TCP_PEER_NS" -m tli -a "$RXE_TCP_PEER_ADDR" -p "$port"

	client -m tli -h "$RXE_TCP_PEER_ADDR" -p "$port" -o "$OPS" -s 0,1,1M+3
	assert_client_ran "$OPS" 0,1,1M+3

	client --shim -m tli -h "$RXE_TCP_PEER_ADDR" -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_line --regexp "^whoami caller=${RXE_TCP_HOST_ADDR//./\\.}\.[0-9]+\.[0-9]+ "
	client --shim -m tcp -h "$RXE_TCP_PEER_ADDR" -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	stop_server
}

@test "servers with their own poll() or select() loop serve RDMA clients too" {
	require_rdma_device
	require_env RXE_ADDR
	local port loop
	for loop in poll select; do
		port=$(free_port)
		start_server --shim -L "$loop" -m tli -a "$RXE_ADDR" -p "$port"
		client --shim -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s 0,100,64K,1M+3
		assert_client_ran "$OPS,whoami" 0,100,64K,1M+3
		assert_line --regexp ' netid=rdma '
		stop_server
	done
}
