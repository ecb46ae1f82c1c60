#!/usr/bin/env bats
#
# upgrade = background, inside the soft-RoCE VM: a client's calls go over
# TCP while its RDMA connection is made in the background, and over RDMA
# once it is up (the statistics show both connections); a process that
# ends before RDMA is up leaves no connection on the server, nor a warning
# in its log when the server had not yet taken its request; a black-holed
# RDMA path costs the calls nothing, the log says why RDMA was not used,
# and the next process knows it; require-rdma keeps its strict meaning.
# The helpers launch programs with upgrade = wait: these tests ask for
# background themselves.

load ../helpers
load ../tools
load peer

BG=(--env RPCRDMA_SHIM_UPGRADE=background)

setup() {
	require_build
	require_tools
	require_jq
	require_peer
	require_rdma_device
	require_env RXE_ADDR
}

# stop_held: SIGTERM ends the background client holding its CLIENT (-H), 0.
stop_held() {
	_stop_pid "$CLIENT_PID" || fail "the client did not stop on SIGTERM"
	((STOP_STATUS == 0)) || fail "the client exited with $STOP_STATUS"
}

# client_records PID: "TRANSPORT CALLS" per client record of process PID.
client_records() {
	local i n=${ST[$1.ntransports]:-0}
	for ((i = 0; i < n; i++)); do
		[[ ${ST[$1.transports.$i.role]} == client ]] || continue
		echo "${ST[$1.transports.$i.transport]} ${ST[$1.transports.$i.calls]}"
	done
}

@test "calls go over TCP while RDMA connects, then over RDMA; the statistics show both" {
	local port records tcp rdma
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	# Enough calls to outlast the connection set-up many times over.
	start_client_bg --shim "${BG[@]}" -m tli -h "$RXE_ADDR" -p "$port" -o null,echo -s 100 -c 5000 -q -H
	wait_log "$CLIENT_LOG" '^holding after 10000 calls$' 300
	assert_shim_line --log "$CLIENT_LOG" client "$RXE_ADDR" "$port" RDMA
	refute_shim_line --log "$CLIENT_LOG" client "$RXE_ADDR" "$port" TCP

	stat_json
	records=$(client_records "$CLIENT_PID")
	tcp=$(awk '$1 == "tcp" { print $2 }' <<<"$records")
	rdma=$(awk '$1 == "rdma" { print $2 }' <<<"$records")
	[[ $tcp =~ ^[0-9]+$ && $rdma =~ ^[0-9]+$ ]] ||
		fail "expected one TCP and one RDMA client record, got: $records"
	((tcp >= 2)) || fail "$tcp calls over TCP: the first two at least go there"
	((rdma >= 1)) || fail "no call over RDMA"
	((tcp + rdma == 10000)) || fail "$tcp over TCP and $rdma over RDMA: not the 10000 calls made"
	echo "# $tcp calls over TCP before the switch, $rdma over RDMA" >&3
	# The server served both connections.
	assert_st "$SERVER_PID.listener.transport" rdma
	stop_held
	stop_server
}

@test "a process that exits while RDMA connects leaves no connection on the server" {
	local port i
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	# One call: nothing is tried at all.
	timed_client --shim "${BG[@]}" --env RPCRDMA_SHIM_LOG_LEVEL=debug \
		-m tli -h "$RXE_ADDR" -p "$port" -o null
	assert_client_ran null ""
	assert_line --regexp 'TCP while RDMA is set up, from the second call$'
	refute_shim_line client "$RXE_ADDR" "$port" RDMA
	# Two calls: the attempt starts with the second and the process ends
	# at once, mid-connect; it waits for nothing.
	for i in 1 2 3 4 5; do
		timed_client --shim "${BG[@]}" --env RPCRDMA_SHIM_CONNECT_TIMEOUT=20000 \
			-m tli -h "$RXE_ADDR" -p "$port" -o null,echo -s 10
		assert_client_ran null,echo 10
		((CLIENT_MS < 15000)) || fail "run $i took $CLIENT_MS ms: it waited for the RDMA connection"
	done
	# Whatever the server accepted, it let go of (bounded: a connection
	# the client never finished times out in the CM).
	wait_qps rpctest-server 0 60
	# And it still serves.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null,whoami
	assert_client_ran null,whoami ""
	assert_netid rdma "$RXE_ADDR"
	stop_server
}

@test "a connection request withdrawn before the server takes it: no warning, the server goes on" {
	local port
	port=$(free_port)
	start_server --shim --env RPCRDMA_SHIM_LOG_LEVEL=debug -m tli -a "$RXE_ADDR" -p "$port"
	# The server stopped while a client's request arrives; the client
	# gives up (rdma-peer's bound) and ends, rejecting its request in
	# the CM, before the server reads the request and accepts it.
	kill -STOP "$SERVER_PID"
	peer_call -a "$RXE_ADDR" -p "$port" --timeout 2 null
	kill -CONT "$SERVER_PID"
	assert_output --partial 'connect=failed'
	wait_log "$SERVER_LOG" 'withdrew its RDMA connection request before it was accepted$' 30
	run cat "$SERVER_LOG"
	refute_line --partial 'warning:'
	# And the next client is served over RDMA.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null,whoami
	assert_client_ran null,whoami ""
	assert_netid rdma "$RXE_ADDR"
	stop_server
}

@test "a black-holed RDMA path: the calls go over TCP at once, the log says why, the next process knows" {
	local port first t0 held
	port=$(free_port)
	# TCP is served; RDMA connect requests on the same port get no answer.
	start_server -m tli -a "$RXE_ADDR" -p "$port"
	start_peer -a "$RXE_ADDR" -p "$port" --timeout 300 silent

	t0=$(now_ms)
	start_client_bg --shim "${BG[@]}" --env RPCRDMA_SHIM_CONNECT_TIMEOUT=8000 \
		-m tli -h "$RXE_ADDR" -p "$port" -o null,echo -s 100 -c 5 -q -H
	first=$CLIENT_PID
	wait_log "$CLIENT_LOG" '^holding after 10 calls$' 60
	held=$(($(now_ms) - t0))
	# Generous: program start-up under emulation, nothing near 8 s.
	((held < 7000)) || fail "the calls took $held ms: they waited for the RDMA connect"
	wait_log "$CLIENT_LOG" 'TCP \(no answer in time' 60
	assert_shim_line --log "$CLIENT_LOG" client "$RXE_ADDR" "$port" 'TCP \(no answer in time'
	stat_json
	assert_st "$first.fallbacks.timeout" 1
	stop_held

	# The next process of the same user goes to TCP at once, and says why.
	timed_client --shim "${BG[@]}" --env RPCRDMA_SHIM_CONNECT_TIMEOUT=8000 \
		-m tli -h "$RXE_ADDR" -p "$port" -o null,echo -s 100 -c 5
	assert_client_ran null,echo 100 5
	assert_shim_line client "$RXE_ADDR" "$port" \
		"TCP \\(failed recently \\(negative cache\\): no answer in time, found by process $first, for [0-9]+ s more \\(.*/rpcrdma-shim/negcache\\)\\)"
	((CLIENT_MS < 7000)) || fail "the second process took $CLIENT_MS ms"
	stop_peer
	# The peer saw one connect request: the second process did not ask.
	assert_line "connect_request=ignored n=1"
	refute_line --regexp "connect_request n=2 "
	stop_server
}

@test "require-rdma does not upgrade in the background: it fails when RDMA does" {
	local port
	port=$(free_port)
	start_server -m tli -a "$RXE_ADDR" -p "$port"
	start_peer -a "$RXE_ADDR" -p "$port" --timeout 120 silent
	timed_client --rdma "${BG[@]}" --env RPCRDMA_SHIM_CONNECT_TIMEOUT=3000 \
		-m tli -h "$RXE_ADDR" -p "$port" -o null
	assert_failure 1
	assert_shim_line required "$RXE_ADDR" "$port" 'no answer in time$'
	assert_line --regexp "^$(re_quote "$RXE_ADDR"): RPC: Remote system error - "
	refute_line "null ok"
	((CLIENT_MS >= 2900)) || fail "failed after $CLIENT_MS ms, before the 3000 ms connect timeout"
	stop_peer
	stop_server
}
