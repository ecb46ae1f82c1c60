#!/usr/bin/env bats
#
# Small calls at low latency, inside the soft-RoCE VM: threads sharing one
# CLIENT with their calls in flight together, each reply to its caller;
# waits that poll before they sleep (poll_us), on the client and on the
# server, which must neither starve the server's other clients nor cost
# an idle program any CPU.  The figures themselves are tools/rpcrdma-bench's:
# nothing here depends on how fast the emulator is.

load ../helpers
load ../tools

# Clock ticks an idle program may use in 3 s: one at a boundary.
# ThreadSanitizer's runtime wakes a thread of its own ten times a second
# (an idle server built with it used 1 or 2 ticks in 3 s without the
# shim): tools/check raises the bound for that build.
: "${IDLE_TICKS_MAX:=1}"

setup() {
	require_build
	require_tools
	require_jq
	require_rdma_device
	require_env RXE_ADDR
	ADDR=$RXE_ADDR
	PORT=$(free_port)
	export RPCRDMA_SHIM_NEGATIVE_CACHE=0
}

# cpu_ticks PID: utime + stime of the process, in clock ticks.
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

@test "8 threads on one CLIENT: calls in flight together over RDMA, every reply to its caller" {
	start_server --shim -m tli -a "$ADDR" -p "$PORT"

	# -T: each thread checks its ECHO replies against its own pattern.
	client --rdma -m tli -h "$ADDR" -p "$PORT" -o null,echo -s 0,1K,3000 -c 40 -T 8
	assert_success
	assert_line "threads 8: every reply to its caller"
	assert_line "ok $((8 * 40 * (1 + 3))) calls"
	refute_output --partial mismatch
	assert_shim_line client "$ADDR" "$PORT" 'RDMA, inline 4096/4096, '

	# Replies in Reply chunks, calls in Read chunks: memory per call.
	client --rdma -m tli -h "$ADDR" -p "$PORT" -o echo -s 64K -c 10 -T 8
	assert_success
	assert_line "threads 8: every reply to its caller"
	assert_line "ok $((8 * 10)) calls"

	# Without polling, on both ends of a server of its own, the same.
	local port2
	port2=$(free_port)
	start_server --shim --env RPCRDMA_SHIM_POLL_US=0 -m tli -a "$ADDR" -p "$port2"
	client --rdma --env RPCRDMA_SHIM_POLL_US=0 -m tli -h "$ADDR" -p "$port2" \
		-o null,echo -s 1K -c 40 -T 8
	assert_success
	assert_line "ok $((8 * 40 * 2)) calls"
}

@test "a server polling its busy connection still serves TCP clients and other RDMA clients" {
	# The longest poll there is: starving anyone would show as timeouts.
	start_server --shim --env RPCRDMA_SHIM_POLL_US=100000 -m tli -a "$ADDR" -p "$PORT"
	start_client_bg --rdma --env RPCRDMA_SHIM_POLL_US=100000 -m tli -h "$ADDR" -p "$PORT" \
		-o null -c 1000000000 -q
	local busy=$CLIENT_PID

	client -m tli -h "$ADDR" -p "$PORT" -t 20 -o null,echo,whoami -s 100,64K -c 5
	assert_client_ran null,echo,whoami 100,64K 5
	assert_netid tcp "$ADDR"
	client --rdma -m tli -h "$ADDR" -p "$PORT" -t 20 -o null,echo,whoami -s 100,64K -c 5
	assert_client_ran null,echo,whoami 100,64K 5
	assert_netid rdma "$ADDR"
	_alive "$busy" || fail "the busy RDMA client ended: $(cat "$CLIENT_LOG")"
}

@test "polling costs an idle client and an idle server no CPU" {
	start_server --shim --env RPCRDMA_SHIM_POLL_US=100000 -m tli -a "$ADDR" -p "$PORT"
	start_client_bg --rdma --env RPCRDMA_SHIM_POLL_US=100000 -m tli -h "$ADDR" -p "$PORT" \
		-o null,echo -s 1K -c 50 -H
	wait_log "$CLIENT_LOG" "^holding after 100 calls" 120
	# The server's last poll ends 100 ms after the last call.
	sleep 1
	local c0 s0 c1 s1
	c0=$(cpu_ticks "$CLIENT_PID")
	s0=$(cpu_ticks "$SERVER_PID")
	sleep 3
	c1=$(cpu_ticks "$CLIENT_PID")
	s1=$(cpu_ticks "$SERVER_PID")
	# Asleep: no tick at all, give or take one at a boundary.  A poll
	# that went on would take about 300.
	((c1 - c0 <= IDLE_TICKS_MAX)) || fail "the idle client used $((c1 - c0)) ticks in 3 s"
	((s1 - s0 <= IDLE_TICKS_MAX)) || fail "the idle server used $((s1 - s0)) ticks in 3 s"
}

# poll_counts PID ROLE [PEER-PORT]: "missed skipped" of the client of PID,
# or of its server connection from PEER-PORT: waits that polled poll_us in
# vain, and waits that slept at once.
poll_counts() {
	st_fields "$1" "$2" "${3:-0}" poll_missed poll_skipped
}

@test "waits stop polling while replies or calls come later than poll_us, and poll while they come sooner" {
	local missed skipped cport
	# Replies 20 ms after the dispatch (a worker thread answers): after
	# 16 windows in vain (EP_SPIN_MISSES), the client's waits sleep at
	# once but for every eighth (EP_SPIN_PROBE), which looks again.
	start_server --shim -m tli -a "$ADDR" -p "$PORT" -T 1,20
	start_client_bg --rdma -m tli -h "$ADDR" -p "$PORT" -o null -c 40 -H
	await_holding 40
	read -r missed skipped < <(poll_counts "$CLIENT_PID" client)
	((missed >= 16 && missed <= 26 && skipped >= 14)) ||
		fail "slow replies: the client polled $missed windows in vain and skipped $skipped"
	stop_client_bg

	# A client that calls every 20 ms: its server connection stops
	# polling for the next call the same way.
	local port2
	port2=$(free_port)
	start_server --shim -m tli -a "$ADDR" -p "$port2"
	start_client_bg --rdma -m tli -h "$ADDR" -p "$port2" -o null -c 40 -w 20 -H
	await_holding 40
	cport=$(client_port "$CLIENT_PID")
	read -r missed skipped < <(poll_counts "$SERVER_PID" server "$cport")
	((missed >= 16 && missed <= 26 && skipped >= 14)) ||
		fail "a client calling every 20 ms: its connection polled $missed windows in vain and skipped $skipped"
	stop_client_bg

	# Calls one after the other: the replies and calls are found by
	# polling, and hardly a wait sleeps at once.  A window of 5 ms, so
	# that no call is slower than that, sanitizers and emulator included.
	local port3
	port3=$(free_port)
	start_server --shim --env RPCRDMA_SHIM_POLL_US=5000 -m tli -a "$ADDR" -p "$port3"
	start_client_bg --rdma --env RPCRDMA_SHIM_POLL_US=5000 -m tli -h "$ADDR" -p "$port3" \
		-o null -c 400 -H
	await_holding 400
	cport=$(client_port "$CLIENT_PID")
	read -r missed skipped < <(poll_counts "$CLIENT_PID" client)
	((skipped <= 40)) || fail "back-to-back calls: the client skipped $skipped of 400 polls ($missed in vain)"
	read -r missed skipped < <(poll_counts "$SERVER_PID" server "$cport")
	((skipped <= 40)) || fail "back-to-back calls: the server skipped $skipped of 400 polls ($missed in vain)"
}
