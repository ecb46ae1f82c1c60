#!/usr/bin/env bats
#
# The shim's server against clients that misbehave, inside the soft-RoCE
# VM.  rdma-peer's abuse role (tests/peer/abuse.c) plays a client that
# keeps its credits full, one that stops posting receives, and one whose
# RDMA Reads never get an answer; meanwhile other clients, over RDMA and
# over TCP, must be served as usual: one connection may not hold the
# single svc_run() thread for the others.  The server is the unmodified
# rpcgen server under the shim, as nobody under ulimit -l 8192.
#
# Timings under the emulator are noisy: the bound is generous (100 NULL
# calls, start and connect included, within LATENCY_BOUND_MS), where a
# server waiting for the abuser takes seconds per stall or never answers.

load ../helpers
load peer

: "${LATENCY_BOUND_MS:=3000}"

setup() {
	require_build
	require_peer
	require_rdma_device
	require_env RXE_ADDR
}

# start_abuser MODE [rdma-peer options]: the abuser, against the server,
# in the background; waits (bounded) until its abuse is in full swing.
start_abuser() {
	local mode=$1
	shift
	start_bg abuser --root -- "$RPCTEST_PEER" abuse -a "$RXE_ADDR" \
		-p "$SERVER_PORT" --timeout 60 "$@" "$mode"
	PEER_PID=$BG_PID
	PEER_LOG=$BG_LOG
	wait_log "$PEER_LOG" '^abusing ' 20
}

# measure_others: 100 NULL calls over RDMA (required), then 100 over TCP,
# each run verified and within LATENCY_BOUND_MS.
measure_others() {
	timed_client --rdma -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -t 10 -o null -c 100 -q
	assert_success
	echo "# 100 NULL calls over RDMA: ${CLIENT_MS} ms" >&3
	((CLIENT_MS < LATENCY_BOUND_MS)) ||
		fail "100 RDMA calls took ${CLIENT_MS} ms (bound ${LATENCY_BOUND_MS})"
	timed_client -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -t 10 -o null -c 100 -q
	assert_success
	echo "# 100 NULL calls over TCP: ${CLIENT_MS} ms" >&3
	((CLIENT_MS < LATENCY_BOUND_MS)) ||
		fail "100 TCP calls took ${CLIENT_MS} ms (bound ${LATENCY_BOUND_MS})"
}

@test "a client keeping its credits full does not starve the others" {
	start_server --shim -m tli -a "$RXE_ADDR" -p 0
	start_abuser flood
	measure_others
	# The flooder is served too, all along.
	stop_peer
	assert_line --regexp '^summary mode=flood conns=1 sent=[0-9]+ replies=[0-9]+ result=ok$'
	local replies
	replies=$(sed -n 's/^summary .* replies=\([0-9]*\) .*/\1/p' <<<"$output")
	((replies > 1000)) || fail "the flooder had only $replies calls answered"
	kill -0 "$SERVER_PID"
}

@test "a client that stops posting receives does not hold the others up" {
	start_server --shim -m tli -a "$RXE_ADDR" -p 0
	start_abuser no-repost --connections 2
	measure_others
	stop_peer
	assert_line --regexp '^summary mode=no-repost conns=2 sent=[0-9]+ replies=64 result=ok$'
	kill -0 "$SERVER_PID"
}

@test "a client whose RDMA Reads get no answer does not hold the others up" {
	start_server --shim -m tli -a "$RXE_ADDR" -p 0
	start_abuser vanish-read --connections 3
	measure_others
	# The Reads fail in the end (the adapter's retries), and the
	# connections with them.
	wait_log "$SERVER_LOG" 'RDMA read failed' 60
	stop_peer
	assert_line --regexp '^summary mode=vanish-read conns=3 sent=3 replies=0 result=ok$'
	kill -0 "$SERVER_PID"
}

@test "worker threads answering after the dispatch: every reply goes out over RDMA, as over TCP" {
	start_server --shim -m tli -a "$RXE_ADDR" -p 0 -T 4
	# Over TCP first: the pattern is one libtirpc's own transport allows.
	client -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -t 10 -o null,echo,sink,source -s 0,100,3000
	assert_success
	# Three clients at once: replies from several threads while svc_run
	# takes the next calls.
	local pids=() i
	for i in 1 2; do
		start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -t 10 \
			-o null,echo,sink,source -s 0,100,3000,200K -c 20 -q
		pids+=("$CLIENT_PID")
	done
	client --rdma -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -t 10 \
		-o null,echo,sink,source -s 0,100,3000,200K -c 20
	assert_success
	for i in "${pids[@]}"; do
		wait_bg "$i" 120
		((BG_STATUS == 0)) || fail "a client running at the same time exited with status $BG_STATUS"
	done
}
