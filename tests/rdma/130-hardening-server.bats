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
load ../tools
load peer

: "${LATENCY_BOUND_MS:=5000}"
# The soak's clients make SOAK_SETS sets of 10 calls each.  The sanitizer
# runs (tools/check) take fewer: instrumented, a set costs them twice as
# much, and what they look for (a use after free as a client dies) comes
# with each kill, not with the length of the calls between.
: "${SOAK_SETS:=100}"

setup() {
	require_build
	require_peer
	require_rdma_device
	require_env RXE_ADDR
}

teardown() {
	tools_teardown
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

@test "threads sharing a CLIENT against worker threads answering after the dispatch: every thread gets its own replies over RDMA" {
	# The client's threads have their calls in flight together; the
	# server's workers answer each 20 ms after its dispatch.  libtirpc's
	# reply goes to the connection's last call, so each call must wait
	# for the one before to be answered (defer_wait): a reply given to
	# another thread's call fails that thread's byte-by-byte check.
	start_server --shim -m tli -a "$RXE_ADDR" -p 0 -T 4,20
	client --rdma -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -t 20 -T 4 \
		-o null,echo -s 0,100,3000,200K -c 5
	assert_success
	refute_log "$SERVER_LOG" "not sent"
	refute_log "$SERVER_LOG" "defer_wait"
}

@test "a client with several calls in flight, against worker threads: each call is answered in turn, a Read chunk's pull included" {
	start_server --shim -m tli -a "$RXE_ADDR" -p 0 -T 4,150
	# The peer does not wait for its first call's answer (the workers
	# give it 150 ms later): a SINK with a Read chunk comes behind it
	# and waits in the connection's ring until the ECHO is answered; its
	# chunk is pulled after that.  The ECHO's answer comes while the
	# peer waits for the SINK's ("stray"): every call gets its own.
	local size echo_xid
	for size in 256 1024 2048; do
		peer_call -a "$RXE_ADDR" -p "$SERVER_PORT" --quiet-wait 5 --late-ok \
			echo:0=none "sink:${size}K+read" null
		assert_success
		echo_xid=$(sed -n 's/^case=echo:0=none .* xid=\(0x[0-9a-f]*\) .*answer=none.*result=ok$/\1/p' <<<"$output")
		[[ -n $echo_xid ]] || fail "the ECHO was answered before the peer went on"
		assert_line --regexp "^stray xid=$echo_xid len=[0-9]+ during=sink:${size}K\\+read\$"
		assert_line --regexp "^case=sink:${size}K\\+read .* answer=RDMA_MSG .* rpc=SUCCESS data=ok .*result=ok\$"
		assert_line --regexp '^case=null .* rpc=SUCCESS .*result=ok$'
		refute_line --partial 'rpc_xid=mismatch'
	done
	refute_log "$SERVER_LOG" "not sent"
}

@test "worker threads that never answer a procedure: its calls hold the next for defer_wait once, then not at all" {
	# NULL (procedure 0) is never answered, as batched calls are not.
	start_server --shim --env RPCRDMA_SHIM_DEFER_WAIT=400ms -m tli -a "$RXE_ADDR" -p 0 -T 4,5,0
	# Each ECHO comes 5 ms after an unanswered NULL: the first waits for
	# the NULL's reply until defer_wait is over, then the listener's
	# alarm has it served; later ones wait for nothing.
	peer_call -a "$RXE_ADDR" -p "$SERVER_PORT" --quiet-wait 5 \
		null=none echo:0 null=none echo:0
	assert_success
	assert_equal "$(grep -c '^case=echo:0 .* rpc=SUCCESS data=ok .*result=ok$' <<<"$output")" 2
	peer_call -a "$RXE_ADDR" -p "$SERVER_PORT" --quiet-wait 5 null=none echo:0
	assert_success
	assert_line --regexp '^case=echo:0 .* rpc=SUCCESS data=ok .*result=ok$'
	assert_log "$SERVER_LOG" "no reply within defer_wait \\(400 ms\\) to the call with xid 0x[0-9a-f]+ \\(program 536871065 version 1 procedure 0\\)"
	assert_equal "$(grep -c 'no reply within defer_wait' "$SERVER_LOG")" 1
	refute_log "$SERVER_LOG" "not sent"
}

@test "defer_wait = 0: a reply too late touches nothing of the next call" {
	start_server --shim --env RPCRDMA_SHIM_DEFER_WAIT=0 -m tli -a "$RXE_ADDR" -p 0 -T 4,150
	# With no wait, the SINK behind the unanswered ECHO is taken at once
	# (libtirpc's contract: a reply answers the transport's last call),
	# and the server pulls its Read chunk.  Where the worker's reply
	# comes during the pull (for some of the sizes, as the emulator's
	# timings go), it is for a call that is over: it is not sent, and it
	# must not end the pull, whose buffers the RDMA Reads are filling.
	# Where it comes before or after the pull, it answers the
	# connection's last call, and the peer sees the wrong answer: both
	# as libtirpc's TCP transport would have it.
	local size
	for size in 256 512 768 1024 1280 1536 1792 2048; do
		peer_call -a "$RXE_ADDR" -p "$SERVER_PORT" --quiet-wait 5 --linger 500 \
			echo:0=none "sink:${size}K+read=any" null
		kill -0 "$SERVER_PID" || fail "the server died with a SINK of $size KiB: $(cat "$SERVER_LOG")"
	done
	assert_log "$SERVER_LOG" "a reply made after the dispatch came once the connection had taken its client's next call: not sent"
	client --rdma -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -t 10 -o echo,whoami -s 0,1M+3
	assert_client_ran echo,whoami 0,1M+3
	assert_line --regexp '^whoami .* netid=rdma '
}

# pinned_used PID: the budget's count of registered octets in PID.
pinned_used() {
	"$RPCRDMA_TEST_STAT" -j -p "$1" | jq -r '.processes[0].pinned.used'
}

vm_pin() {
	awk '/^VmPin:/ { print $2 }' "/proc/$1/status"
}

fd_count() {
	ls "/proc/$1/fd" | wc -l
}

# back_to_start PID FDS PIN USED: descriptors and pinned memory as before.
back_to_start() {
	(($(fd_count "$1") == $2)) && (($(vm_pin "$1") == $3)) &&
		(($(pinned_used "$1") == $4))
}

@test "soak: 32 clients of mixed calls (SOAK_SETS x 10 each), one killed every second: the server's descriptors and pinned memory come back to where they started" {
	require_tools
	require_jq
	start_server --shim -m tli -a "$RXE_ADDR" -p 0
	# The start: once a first client came and went (the device is open).
	client --rdma -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -o null
	assert_success
	wait_until 30 "the first connection gone" eval '(($(pinned_used "$SERVER_PID") == 0))'
	local fds0 pin0 used0
	fds0=$(fd_count "$SERVER_PID")
	pin0=$(vm_pin "$SERVER_PID")
	used0=$(pinned_used "$SERVER_PID")

	# SOAK_SETS sets of 10 calls (NULL once, the others at each size:
	# inline, Long Call and Long Reply, chunks both ways).
	local pids=() i
	local -A logs=()
	for ((i = 0; i < 32; i++)); do
		start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -t 30 \
			-o null,echo,sink,source -s 0,4000,64K -c "$SOAK_SETS" -q
		pids+=("$CLIENT_PID")
		logs[$CLIENT_PID]=$CLIENT_LOG
	done
	local killed=() deadline=$((SECONDS + 400)) running
	while ((SECONDS < deadline)); do
		sleep 1
		running=()
		for i in "${pids[@]}"; do
			_alive "$i" && running+=("$i")
		done
		((${#running[@]})) || break
		# Not the last few: most clients run to their end.
		if ((${#killed[@]} < 8 && ${#running[@]} > 4)); then
			i=${running[RANDOM % ${#running[@]}]}
			# It may have ended since it was seen running: then it
			# ran to its end and is not counted as killed.
			kill -KILL "$i" 2>/dev/null || continue
			killed+=("$i")
		fi
	done
	local ok=0 k st
	for i in "${pids[@]}"; do
		wait_bg "$i" 60
		st=$BG_STATUS
		for k in "${killed[@]}"; do
			[[ $k != "$i" ]] || st=killed
		done
		case $st in
		0) ok=$((ok + 1)) ;;
		killed) ;;
		*) fail "client $i exited with status $st, its log ending: $(tail -n 5 "${logs[$i]}")" ;;
		esac
	done
	echo "# ${ok} clients of $((SOAK_SETS * 10)) calls ran to their end, ${#killed[@]} were killed" >&3
	((ok >= 32 - ${#killed[@]})) || fail "only $ok clients ran to their end"
	((${#killed[@]} >= 3)) || fail "only ${#killed[@]} clients were killed: the run was too short"
	wait_until 60 "the server back at $fds0 descriptors, VmPin $pin0 kB, $used0 octets registered" \
		back_to_start "$SERVER_PID" "$fds0" "$pin0" "$used0"
	kill -0 "$SERVER_PID"
	client --rdma -m tli -h "$RXE_ADDR" -p "$SERVER_PORT" -o null,echo -s 100
	assert_success
}
