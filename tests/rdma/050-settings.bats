#!/usr/bin/env bats
#
# Each setting of rpcrdma-shim.conf(5) does what the page says, seen three
# ways: the decision log lines, rpcrdma-stat -j, and the server's own view
# of the call (the netid WHOAMI reports: rdma or tcp).  Needs the soft-RoCE
# VM (tools/rxe-vm).  connect_timeout and negative_cache are covered by the
# fallback suite.

load ../helpers
load ../tools

setup() {
	require_build
	require_tools
	require_rdma_device
	require_env RXE_ADDR
	require_jq
	ADDR=$RXE_ADDR
	ADDR_RE=${ADDR//./\\.}
	PORT=$(free_port)
	# Each test's RDMA failures stay its own.
	export RPCRDMA_SHIM_NEGATIVE_CACHE=0
}

# Program start is slow in the emulated machine: bound the waits generously.
WAIT=60

# wait_shown PID JQ-CONDITION: rpcrdma-stat shows PID with the condition.
wait_shown() {
	wait_until -q "$WAIT" "rpcrdma-stat shows process $1 with $2" stat_has "$1" "$2" ||
		fail "rpcrdma-stat never showed process $1 with $2:
$("$RPCRDMA_TEST_STAT" -p "$1" 2>&1)"
}

@test "mode = tcp-only keeps a shim pair on TCP, for reason config" {
	wrap_server -t
	wrap_client -t
	start_server -m tli -a "$ADDR" -p "$PORT"
	assert_shim_line --log "$SERVER_LOG" server "$ADDR" "$PORT" 'TCP only \(configuration: mode tcp-only\)$'

	client -m tli -h "$ADDR" -p "$PORT" -o null,echo,whoami -s 100,64K
	assert_client_ran null,echo,whoami 100,64K
	assert_shim_line --prog "$RPCTEST_PROG_NUM" client "$ADDR" "$PORT" 'TCP \(configuration: mode tcp-only\)$'
	assert_netid tcp "$ADDR"

	start_client_bg -m tli -h "$ADDR" -p "$PORT" -o null -c 1000000000 -q
	wait_shown "$CLIENT_PID" '.transports[0].calls > 0'
	pause_client
	stat_json -p "$SERVER_PID" -p "$CLIENT_PID"
	assert_st "$SERVER_PID.mode" tcp-only
	assert_st "$SERVER_PID.listener.transport" tcp
	assert_st "$SERVER_PID.listener.reason" config
	assert_st "$SERVER_PID.ntransports" 1
	assert_st "$CLIENT_PID.client.transport" tcp
	assert_st "$CLIENT_PID.client.reason" config
	assert_st "$CLIENT_PID.fallbacks.config" 1
	assert_st "$CLIENT_PID.rdma_transports" 0
}

@test "port_map: the client reaches the server's RDMA listener on the mapped port" {
	local rdma_port
	rdma_port=$(free_port)
	wrap_server -e "port_map=$PORT:$rdma_port"
	wrap_client -e "port_map=$PORT:$rdma_port"
	start_server -m tli -a "$ADDR" -p "$PORT"
	assert_shim_line --log "$SERVER_LOG" server "$ADDR" "$PORT" "RDMA listener on port $rdma_port\$"

	client -m tli -h "$ADDR" -p "$PORT" -o null,echo,whoami -s 100,64K
	assert_client_ran null,echo,whoami 100,64K
	assert_shim_line --prog "$RPCTEST_PROG_NUM" client "$ADDR" "$rdma_port" RDMA
	assert_netid rdma "$ADDR"

	stat_json -p "$SERVER_PID"
	assert_st "$SERVER_PID.listener.transport" rdma
	assert_st "$SERVER_PID.listener.local.port" "$PORT"
	assert_st "$SERVER_PID.listener.rdma_port" "$rdma_port"
	assert_st "$SERVER_PID.listener.connections" 1
	run --separate-stderr "$RPCRDMA_TEST_STAT" -p "$SERVER_PID"
	assert_line --regexp "^ *$SERVER_PID +rpctest-server +listener +RDMA +$ADDR_RE:$PORT +.* rdma_port=$rdma_port connections=[0-9]+$"

	# Without the map, the client looks for RDMA on the TCP port, finds no
	# listener there, and uses TCP.
	wrap_client
	client -m tli -h "$ADDR" -p "$PORT" -o null,whoami
	assert_client_ran null,whoami ""
	assert_shim_line --prog "$RPCTEST_PROG_NUM" client "$ADDR" "$PORT" 'TCP \(refused by the peer'
	assert_netid tcp "$ADDR"
}

@test "rule = tcp program N keeps that program on TCP while another stays on RDMA" {
	local prog_tcp=$((0x20000a01)) prog_rdma=$((0x20000a02)) port2
	port2=$(free_port)
	start_server --shim -m tli -a "$ADDR" -p "$PORT" -P "$prog_tcp"
	local server_tcp=$SERVER_PID
	start_server --shim -m tli -a "$ADDR" -p "$port2" -P "$prog_rdma"
	wrap_client -e "rule=tcp program $prog_tcp"

	client -m tli -h "$ADDR" -p "$PORT" -P "$prog_tcp" -o null,echo,whoami -s 64K
	assert_client_ran null,echo,whoami 64K
	assert_shim_line --prog "$prog_tcp" client "$ADDR" "$PORT" \
		"TCP \\(configuration: rule \"tcp program $prog_tcp\" \\(environment\\)\\)\$"
	assert_netid tcp "$ADDR"

	client -m tli -h "$ADDR" -p "$port2" -P "$prog_rdma" -o null,echo,whoami -s 64K
	assert_client_ran null,echo,whoami 64K
	assert_shim_line --prog "$prog_rdma" client "$ADDR" "$port2" RDMA
	assert_netid rdma "$ADDR"

	# Rules with a program do not apply to servers: both listen over RDMA.
	stat_json -p "$server_tcp" -p "$SERVER_PID"
	assert_st "$server_tcp.listener.transport" rdma
	assert_st "$SERVER_PID.listener.transport" rdma
	assert_st "$server_tcp.listener.connections" 0
	assert_st "$SERVER_PID.listener.connections" 1
}

@test "inline_send and inline_recv: the smaller of each pair on both sides (client 8K/8K, server 2K/16K)" {
	wrap_server -e inline_send=2K -e inline_recv=16K
	wrap_client -e inline_send=8K -e inline_recv=8K
	# 16K receive buffers: under ulimit -l 8192 the budget keeps one for
	# each connection the server could still accept, and the first gets a
	# single credit; with a larger limit it gets the 32 configured.
	start_server --memlock 65536 -m tli -a "$ADDR" -p "$PORT"

	# Calls up to 8K inline, replies over 2K through a Reply chunk; every
	# byte checked on the way.
	client -m tli -h "$ADDR" -p "$PORT" -o echo,sink,source,whoami -s 1000,2000,3000,7000,9000,1M
	assert_client_ran echo,sink,source,whoami 1000,2000,3000,7000,9000,1M
	assert_netid rdma "$ADDR"
	assert_shim_line --prog "$RPCTEST_PROG_NUM" client "$ADDR" "$PORT" 'RDMA, inline 8192/2048, credits 32 requested, R=[01], RPC-over-RDMA version 2 offered$'
	assert_shim_line --log "$SERVER_LOG" connection "$ADDR" '' 'inline 8192/2048, credits 32, R=[01], RPC-over-RDMA versions 1-2$'

	# 3000-octet ECHOs: the call fits 8K inline, the reply does not fit 2K.
	start_client_bg -m tli -h "$ADDR" -p "$PORT" -o echo -s 3000 -c 1000000000 -q
	wait_shown "$CLIENT_PID" '.transports[0].calls > 2'
	pause_client
	stat_json -p "$SERVER_PID" -p "$CLIENT_PID"
	local cport
	cport=${ST[$CLIENT_PID.client.local.port]}
	assert_st "$CLIENT_PID.client.transport" rdma
	assert_st "$SERVER_PID.server.$cport.transport" rdma
	assert_st "$CLIENT_PID.client.inline_send" 8192
	assert_st "$CLIENT_PID.client.inline_recv" 2048
	assert_st "$SERVER_PID.server.$cport.inline_send" 2048
	assert_st "$SERVER_PID.server.$cport.inline_recv" 8192
	assert_st "$CLIENT_PID.client.long_out" 0
	assert_st_ge "$CLIENT_PID.client.long_in" 2
	assert_st "$SERVER_PID.server.$cport.long_in" 0
	assert_st_ge "$SERVER_PID.server.$cport.long_out" 2
	# Both rows of the table show the thresholds in call/reply order.
	run --separate-stderr "$RPCRDMA_TEST_STAT" -p "$SERVER_PID" -p "$CLIENT_PID"
	assert_line --regexp "^ *$SERVER_PID +rpctest-server +server +RDMA +.* inline=8192/2048 credits=32 "
	assert_line --regexp "^ *$CLIENT_PID +rpctest-client +client +RDMA +.* inline=8192/2048 credits=32 "
}

@test "credits: the server grants its number, the client shows the grant" {
	wrap_server -e credits=8
	wrap_client -e credits=64
	start_server -m tli -a "$ADDR" -p "$PORT"
	start_client_bg -m tli -h "$ADDR" -p "$PORT" -o null,echo -s 100 -c 1000000000 -q
	wait_shown "$CLIENT_PID" '.transports[0].calls > 0'
	pause_client
	assert_shim_line --log "$CLIENT_LOG" --prog "$RPCTEST_PROG_NUM" client "$ADDR" "$PORT" 'RDMA, inline [0-9]+/[0-9]+, credits 64 requested, '
	assert_shim_line --log "$SERVER_LOG" connection "$ADDR" '' 'inline [0-9]+/[0-9]+, credits 8, '

	stat_json -p "$SERVER_PID" -p "$CLIENT_PID"
	local cport
	cport=${ST[$CLIENT_PID.client.local.port]}
	assert_st "$CLIENT_PID.client.transport" rdma
	assert_st "$SERVER_PID.server.$cport.transport" rdma
	assert_st "$CLIENT_PID.client.credits" 8
	assert_st "$SERVER_PID.server.$cport.credits" 8
}

@test "max_reply smaller than a reply: 'Message too long', and the next call works" {
	start_server --shim -m tli -a "$ADDR" -p "$PORT"
	# -r (require-rdma): the errors below are the RDMA client's.
	wrap_client -r -e max_reply=4K
	# -k: go on after the error, on the same client.
	client -m tli -h "$ADDR" -p "$PORT" -o source,null,echo -s 1000,64K -k
	assert_failure 1
	assert_line "source 1000 ok"
	assert_line --regexp "^source 65536: RPC: Unable to receive; errno = Message too long$"
	assert_line "null ok"
	assert_line "echo 1000 ok"
	assert_line --regexp "^echo 65536: RPC: Unable to receive; errno = Message too long$"
	assert_line "failed 2 of 5 calls"
	assert_shim_line --prog "$RPCTEST_PROG_NUM" client "$ADDR" "$PORT" RDMA
	# One connection served it all.
	stat_json -p "$SERVER_PID"
	assert_st "$SERVER_PID.listener.connections" 1

	# The same sizes with the default max_reply.
	wrap_client -r
	client -m tli -h "$ADDR" -p "$PORT" -o source,null,echo -s 1000,64K
	assert_client_ran source,null,echo 1000,64K
}

@test "remote_invalidate = no: R=0 on both sides" {
	# Debug: the server logs both connections (info has an address's first).
	start_server --shim --env RPCRDMA_SHIM_LOG_LEVEL=debug -m tli -a "$ADDR" -p "$PORT"

	# The default where the device allows it: on.
	client --rdma -m tli -h "$ADDR" -p "$PORT" -o null,echo -s 64K
	assert_client_ran null,echo 64K
	assert_shim_line --prog "$RPCTEST_PROG_NUM" client "$ADDR" "$PORT" 'RDMA, .*, R=1, '

	wrap_client -e remote_invalidate=no
	start_client_bg -m tli -h "$ADDR" -p "$PORT" -o null,echo -s 64K -c 1000000000 -q
	wait_shown "$CLIENT_PID" '.transports[0].calls > 0'
	pause_client
	assert_shim_line --log "$CLIENT_LOG" --prog "$RPCTEST_PROG_NUM" client "$ADDR" "$PORT" 'RDMA, .*, R=0, '
	assert_shim_line --log "$SERVER_LOG" connection "$ADDR" '' '.*, R=0, '
	stat_json -p "$SERVER_PID" -p "$CLIENT_PID"
	local cport
	cport=${ST[$CLIENT_PID.client.local.port]}
	assert_st "$CLIENT_PID.client.transport" rdma
	assert_st "$CLIENT_PID.client.remote_invalidate" false
	assert_st "$SERVER_PID.server.$cport.remote_invalidate" false
	run --separate-stderr "$RPCRDMA_TEST_STAT" -p "$CLIENT_PID"
	assert_line --regexp " R=0 pdata=yes "
}

@test "rpcrdma-stat: a running RDMA client and its server connection, negotiated values as logged, growing counters" {
	wrap_server -e credits=16
	wrap_client
	start_server -m tli -a "$ADDR" -p "$PORT"
	start_client_bg -m tli -h "$ADDR" -p "$PORT" -o null,echo -s 100,64K -c 1000000000 -q
	wait_shown "$CLIENT_PID" '.transports[0].calls > 2'
	pause_client
	stat_json -p "$SERVER_PID" -p "$CLIENT_PID"

	# The client: what its log line says.
	local line send recv rinv cport calls out in
	line=$(grep -E "$(shim_line --prog "$RPCTEST_PROG_NUM" client "$ADDR" "$PORT" RDMA)" "$CLIENT_LOG") ||
		fail "no RDMA decision line: $(cat "$CLIENT_LOG")"
	[[ $line =~ inline\ ([0-9]+)/([0-9]+),\ credits\ 32\ requested,\ R=([01]),\ RPC-over-RDMA\ version\ 2\ offered$ ]] || fail "line: $line"
	send=${BASH_REMATCH[1]} recv=${BASH_REMATCH[2]} rinv=${BASH_REMATCH[3]}
	assert_st "$CLIENT_PID.client.transport" rdma
	assert_st "$CLIENT_PID.client.reason" null
	assert_st "$CLIENT_PID.client.program" "$RPCTEST_PROG_NUM"
	assert_st "$CLIENT_PID.client.peer.address" "$ADDR"
	assert_st "$CLIENT_PID.client.peer.port" "$PORT"
	assert_st "$CLIENT_PID.client.inline_send" "$send"
	assert_st "$CLIENT_PID.client.inline_recv" "$recv"
	assert_st "$CLIENT_PID.client.remote_invalidate" "$( ((rinv)) && echo true || echo false)"
	assert_st "$CLIENT_PID.client.peer_private_data" true
	assert_st "$CLIENT_PID.client.credits" 16
	assert_st "$CLIENT_PID.rdma_transports" 1

	# The server's connection: what its log line says, from its side.
	cport=${ST[$CLIENT_PID.client.local.port]}
	line=$(grep -E "$(shim_line connection "$ADDR" "$cport" RDMA)" "$SERVER_LOG") ||
		fail "no connection line for port $cport: $(cat "$SERVER_LOG")"
	[[ $line =~ inline\ ([0-9]+)/([0-9]+),\ credits\ 16,\ R=([01]),\ RPC-over-RDMA\ versions\ 1-2$ ]] || fail "line: $line"
	[ "${BASH_REMATCH[1]}" = "$send" ] && [ "${BASH_REMATCH[2]}" = "$recv" ] && [ "${BASH_REMATCH[3]}" = "$rinv" ]
	assert_st "$SERVER_PID.server.$cport.inline_recv" "$send"
	assert_st "$SERVER_PID.server.$cport.inline_send" "$recv"
	assert_st "$SERVER_PID.server.$cport.credits" 16
	assert_st "$SERVER_PID.server.$cport.peer_private_data" true
	assert_st "$SERVER_PID.server.$cport.local.port" "$PORT"
	assert_st "$SERVER_PID.listener.transport" rdma
	assert_st "$SERVER_PID.listener.rdma_port" "$PORT"

	# Counters grow, on both ends.
	resume_client
	calls=${ST[$CLIENT_PID.client.calls]}
	out=${ST[$CLIENT_PID.client.bytes_out]}
	in=${ST[$CLIENT_PID.client.bytes_in]}
	((calls > 0 && out > 64 * 1024 && in > 64 * 1024)) || fail "calls $calls out $out in $in"
	assert_st_ge "$SERVER_PID.server.$cport.calls" 1
	wait_shown "$CLIENT_PID" ".transports[0].calls > $calls and .transports[0].bytes_out > $out and .transports[0].bytes_in > $in"
	assert_st "$CLIENT_PID.client.errors" 0
	assert_st "$CLIENT_PID.client.rdma_errors" 0

	# The summary counts RDMA transports and no fallbacks.
	run --separate-stderr "$RPCRDMA_TEST_STAT" -s -p "$SERVER_PID" -p "$CLIENT_PID"
	# Both registered memory: some of their budget (3/4 of ulimit -l 8192) in use.
	assert_line --regexp "^ *$SERVER_PID +[0-9]+ +rpctest-server +prefer-rdma +2 +2 +0 +[0-9.]+[KM]?/6\.0M +- +-$"
	assert_line --regexp "^ *$CLIENT_PID +[0-9]+ +rpctest-client +prefer-rdma +1 +1 +0 +[0-9.]+[KM]?/6\.0M +- +-$"
}
