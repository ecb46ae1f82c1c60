#!/usr/bin/env bats
#
# Runs where an RDMA device exists: inside the soft-RoCE VM (tools/rxe-vm),
# which exports RXE_VM=1, RXE_DEV, RXE_ADDR, RXE_ADDR6, RXE_TCP_PEER_NS,
# RXE_TCP_PEER_ADDR and RXE_TCP_HOST_ADDR.  There a missing device or
# variable fails the tests; on other hosts they are skipped.
#
# A test that says RDMA proves it: the server's WHOAMI answer names the
# transport the calls came over (netid rdma), and the shim's decision line
# says RDMA; one that says TCP proves that the same way.

load ../helpers

SIZES=0,1,100,1000,4K,64K,1M,1M+3,16M
# One size of each way a message goes (inline, Long Message, Read and
# Write chunks, more than one bounce buffer's worth): enough for the
# other ways of making a CLIENT or a server, once SIZES went one way.
SOME_SIZES=0,1000,4K,64K,1M+3
OPS=null,echo,sink,source,mixed

# Up to 16 MiB each way (mixed: 32 MiB calls) over RDMA takes more than
# the defaults (max_reply 1M, max_call 4M, 6 MiB of registered memory
# under ulimit -l 8192): what a user raises for such a program.
BIG=(--memlock 262144 --env RPCRDMA_SHIM_MAX_REPLY=16M)
SBIG=(--env RPCRDMA_SHIM_MAX_CALL=64M)

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
	client -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s 0,1,1M+3
	assert_client_ran "$OPS,whoami" 0,1,1M+3
	assert_netid tcp "$RXE_ADDR"
	assert_fd_addrs "$RXE_ADDR" "$port"
	stop_server
}

@test "shim on both sides over RXE_ADDR: tli and tcp, all sizes, byte-exact" {
	require_rdma_device
	require_env RXE_ADDR
	local port
	port=$(free_port)
	start_server --shim "${SBIG[@]}" -m tli -a "$RXE_ADDR" -p "$port"
	client --shim "${BIG[@]}" -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SIZES" -A sys
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_line --regexp "^whoami caller=${RXE_ADDR//./\\.}\.[0-9]+\.[0-9]+ .* cred=AUTH_SYS uid=$(launch_uid) "
	# The server saw the call arrive over RPC-over-RDMA (netid "rdma").
	assert_netid rdma "$RXE_ADDR"
	assert_shim_line client "$RXE_ADDR" "$port" RDMA
	# The CLIENT's descriptor answers as the connection's socket would.
	assert_fd_addrs "$RXE_ADDR" "$port"
	client --shim "${BIG[@]}" -m tcp -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SOME_SIZES"
	assert_client_ran "$OPS,whoami" "$SOME_SIZES"
	assert_netid rdma "$RXE_ADDR"
	assert_shim_line client "$RXE_ADDR" "$port" RDMA
	assert_fd_addrs "$RXE_ADDR" "$port"
	stop_server

	port=$(free_port)
	start_server --shim "${SBIG[@]}" -m tcp -a "$RXE_ADDR" -p "$port"
	assert_shim_line --log "$SERVER_LOG" server '' "$port" RDMA
	client --shim "${BIG[@]}" -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SOME_SIZES" -c 3
	assert_client_ran "$OPS,whoami" "$SOME_SIZES" 3
	assert_netid rdma "$RXE_ADDR"
	stop_server
}

@test "shim on both sides over RXE_ADDR6 (tcp6), byte-exact" {
	require_rdma_device
	require_env RXE_ADDR6
	local port
	port=$(free_port)
	# Only the address family differs from RXE_ADDR: one size of each
	# way a message goes is enough.
	start_server --shim "${SBIG[@]}" -m tli -a "$RXE_ADDR6" -p "$port"
	client --shim "${BIG[@]}" -m tli -n tcp6 -h "$RXE_ADDR6" -p "$port" -o "$OPS,whoami" -s "$SOME_SIZES"
	assert_client_ran "$OPS,whoami" "$SOME_SIZES"
	# Over RPC-over-RDMA the server's transport says "rdma6" (RFC 8166 s11).
	assert_netid rdma6 "$RXE_ADDR6"
	assert_shim_line client "$RXE_ADDR6" "$port" RDMA
	stop_server
}

@test "shim on both sides through rpcbind: svc_create, clnt_create and clnt_tp_create to RXE_ADDR" {
	require_rdma_device
	require_env RXE_ADDR
	ensure_rpcbind
	local prog
	prog=$(unique_prog)
	start_server --shim "${SBIG[@]}" -P "$prog"
	# svc_create: a listener per netid of the "tcp" nettype, each with its
	# RDMA listener.
	assert_shim_line --log "$SERVER_LOG" server 0.0.0.0 '' RDMA
	# The rpcbind lookup stays on TCP (a built-in rule); the calls do not.
	client --shim "${BIG[@]}" -m create -h "$RXE_ADDR" -P "$prog" -o "$OPS,whoami" -s "$SOME_SIZES"
	assert_client_ran "$OPS,whoami" "$SOME_SIZES"
	assert_netid rdma "$RXE_ADDR"
	assert_shim_line --prog "$prog" client "$RXE_ADDR" '' RDMA
	client --shim "${BIG[@]}" -m tp -h "$RXE_ADDR" -P "$prog" -o "$OPS,whoami" -s "$SOME_SIZES"
	assert_client_ran "$OPS,whoami" "$SOME_SIZES"
	assert_netid rdma "$RXE_ADDR"
	assert_shim_line --prog "$prog" client "$RXE_ADDR" '' RDMA
	stop_server
}

@test "shim on both sides over RXE_ADDR: 64 MiB each way" {
	require_rdma_device
	require_env RXE_ADDR
	local port
	port=$(free_port)
	# The server pulls and writes them through its bounce buffers; the
	# client registers each call and its Reply chunk (ulimit -l 1G).  An
	# odd size: the last segment and the XDR pad too (page-aligned sizes
	# up to 64 MiB are the NFS tests' files).  ECHO goes both ways, MIXED
	# has the data after other arguments (SINK and SOURCE, each one way
	# of ECHO, go up to 16 MiB above).
	start_server --shim --env RPCRDMA_SHIM_MAX_CALL=256M -m tli -a "$RXE_ADDR" -p "$port"
	client --shim --memlock 1048576 --env RPCRDMA_SHIM_MAX_REPLY=64M \
		-m tli -h "$RXE_ADDR" -p "$port" -o echo,mixed,whoami -s 64M+1 -t 120
	assert_client_ran echo,mixed,whoami 64M+1
	assert_netid rdma "$RXE_ADDR"
	assert_shim_line client "$RXE_ADDR" "$port" RDMA
	stop_server
}

@test "a server in the TCP-only namespace is reachable at RXE_TCP_PEER_ADDR, with and without the shim" {
	require_env RXE_TCP_PEER_NS RXE_TCP_PEER_ADDR RXE_TCP_HOST_ADDR
	local port
	port=$(free_port)
	start_server --shim --ns "$RXE_TCP_PEER_NS" -m tli -a "$RXE_TCP_PEER_ADDR" -p "$port"

	# No RDMA device in that namespace: the server listens on TCP only.
	assert_shim_line --log "$SERVER_LOG" server "$RXE_TCP_PEER_ADDR" "$port" TCP

	client -m tli -h "$RXE_TCP_PEER_ADDR" -p "$port" -o "$OPS,whoami" -s 0,1,1M+3
	assert_client_ran "$OPS,whoami" 0,1,1M+3
	assert_netid tcp "$RXE_TCP_HOST_ADDR"

	client --shim -m tli -h "$RXE_TCP_PEER_ADDR" -p "$port" -o "$OPS,whoami" -s "$SOME_SIZES"
	assert_client_ran "$OPS,whoami" "$SOME_SIZES"
	assert_netid tcp "$RXE_TCP_HOST_ADDR"
	assert_shim_line client "$RXE_TCP_PEER_ADDR" "$port" 'TCP \(address not on an RDMA device'
	client --shim -m tcp -h "$RXE_TCP_PEER_ADDR" -p "$port" -o "$OPS,whoami" -s "$SOME_SIZES"
	assert_client_ran "$OPS,whoami" "$SOME_SIZES"
	assert_netid tcp "$RXE_TCP_HOST_ADDR"
	assert_shim_line client "$RXE_TCP_PEER_ADDR" "$port" TCP
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
		assert_netid rdma "$RXE_ADDR"
		assert_shim_line client "$RXE_ADDR" "$port" RDMA
		stop_server
	done
}
