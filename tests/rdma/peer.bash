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
	local ready=$BATS_TEST_TMPDIR/peer${#SERVER_LOGS[@]}.ready
	start_bg peer --root -- "$RPCTEST_PEER" serve -r "$ready" "$@"
	PEER_PID=$BG_PID
	PEER_LOG=$BG_LOG
	await_ready "$PEER_PID" "$ready" rdma-peer || return 1
	PEER_PORT=$READY_PORT
}

# wait_peer: the peer ends by itself (bounded); its status in PEER_STATUS
# and its output in `output`/`lines`, as after `run`.
wait_peer() {
	wait_bg "$PEER_PID" "$RPCTEST_PEER_TIMEOUT" || return 1
	PEER_STATUS=$BG_STATUS
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
	wait_until -q "$3" "$1 holds $2 RC queue pairs" _qps_are "$1" "$2" ||
		fail "$1 has $(rdma_qps "$1") RC queue pairs after $3 s, expected $2:
$(rdma resource show qp 2>&1)"
}

_qps_are() {
	(($(rdma_qps "$1" "${3:-}") == $2))
}

_qps_at_least() {
	(($(rdma_qps "$1" "${3:-}") >= $2))
}
