# Helpers for the rdma suite files that use rdma-peer (tests/peer) and time
# what they run; loaded after ../helpers:
#
#     load ../helpers
#     load peer
#
# rdma-peer comes from RPCTEST_PEER, which meson sets; by hand it defaults
# to the build tree.  A peer started here is recorded with the servers, so
# teardown stops it (and shows its output when the test failed).

: "${RPCTEST_PEER:=$RPCRDMA_BUILD_DIR/tests/peer/rdma-peer}"
export RPCTEST_PEER

# Bound on a peer run in the foreground, and on its end in the background.
: "${RPCTEST_PEER_TIMEOUT:=60}"

PEER_PID=
PEER_LOG=
PEER_PORT=
PEER_STATUS=

require_peer() {
	[[ -x $RPCTEST_PEER ]] ||
		fail "$RPCTEST_PEER is missing: build first (ninja -C build), or set RPCTEST_PEER"
}

# Milliseconds on the wall clock (bash's EPOCHREALTIME, no fork).
now_ms() {
	local t=${EPOCHREALTIME/[.,]/}
	echo $((t / 1000))
}

# peer_call ARGS...: rdma-peer call under `run`, bounded.
peer_call() {
	run timeout --kill-after=5 "$RPCTEST_PEER_TIMEOUT" "$RPCTEST_PEER" call "$@"
}

# start_peer ARGS...: rdma-peer serve in the background; waits (bounded)
# until it listens.  Sets PEER_PID, PEER_LOG and PEER_PORT.
start_peer() {
	local n=${#SERVER_LOGS[@]}
	local ready=$BATS_TEST_TMPDIR/peer$n.ready
	local log=$BATS_TEST_TMPDIR/peer$n.log

	echo "# rdma-peer serve $*" >"$log"
	"$RPCTEST_PEER" serve -r "$ready" "$@" >>"$log" 2>&1 </dev/null 3>&- &
	PEER_PID=$!
	PEER_LOG=$log
	SERVER_PIDS+=("$PEER_PID")
	SERVER_LOGS+=("$log")

	await_ready "$PEER_PID" "$ready" rdma-peer || return 1
	PEER_PORT=$READY_PORT
}

# wait_peer: the peer ends by itself (bounded); its status in PEER_STATUS
# and its output in `output`/`lines`, as after `run`.
wait_peer() {
	if ! _wait_gone "$PEER_PID" "$RPCTEST_PEER_TIMEOUT"; then
		fail "rdma-peer $PEER_PID still running after ${RPCTEST_PEER_TIMEOUT}s"
		return 1
	fi
	PEER_STATUS=0
	wait "$PEER_PID" 2>/dev/null || PEER_STATUS=$?
	_forget_pid "$PEER_PID"
	run cat "$PEER_LOG"
}

# stop_peer: SIGTERM (it then prints its summary and exits); as wait_peer.
stop_peer() {
	if ! _stop_pid "$PEER_PID"; then
		fail "rdma-peer $PEER_PID did not stop on SIGTERM within ${RPCTEST_STOP_TIMEOUT}s"
		return 1
	fi
	PEER_STATUS=$STOP_STATUS
	run cat "$PEER_LOG"
}

# assert_peer_ok: the peer's summary says the scenario went as expected.
assert_peer_ok() {
	((PEER_STATUS == 0)) || fail "rdma-peer exited with status $PEER_STATUS"
	assert_line --regexp '^summary .* result=ok$'
}

# timed_client ARGS...: client (see helpers.bash), its wall time in CLIENT_MS.
timed_client() {
	local t0
	t0=$(now_ms)
	client "$@"
	CLIENT_MS=$(($(now_ms) - t0))
}

# rdma_qps COMM [PID]: the RC queue pairs rxe lists for a process.
rdma_qps() {
	local comm=$1 pid=${2:-}
	rdma resource show qp 2>/dev/null |
		awk -v comm="$comm" -v pid="$pid" '
			/ type RC / {
				c = ""; p = ""
				for (i = 1; i < NF; i++) {
					if ($i == "comm") c = $(i + 1)
					if ($i == "pid") p = $(i + 1)
				}
				if (c == comm && (pid == "" || p == pid)) n++
			}
			END { print n + 0 }'
}

# wait_qps COMM COUNT SECONDS: until COMM has COUNT RC queue pairs (bounded).
wait_qps() {
	local comm=$1 want=$2 deadline=$((SECONDS + $3)) n
	while :; do
		n=$(rdma_qps "$comm")
		((n == want)) && return 0
		if ((SECONDS >= deadline)); then
			fail "$comm has $n RC queue pairs after $3 s, expected $want:
$(rdma resource show qp 2>&1)"
			return 1
		fi
		sleep 0.2
	done
}

# wait_log FILE REGEX SECONDS: until a line of FILE matches (bounded).
wait_log() {
	local file=$1 re=$2 deadline=$((SECONDS + $3))
	until grep -qE -- "$re" "$file" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			fail "no line matching '$re' in $file after $3 s"
			return 1
		fi
		sleep 0.05
	done
}
