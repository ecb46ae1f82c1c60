#!/usr/bin/env bats
#
# Unmodified daemons under the shim.  rpcbind creates its listeners as
# root, then changes to its own user; from then on the kernel refuses the
# RDMA-CM commands of the listener's channel (they come from other
# credentials).  The shim must notice, say so, stop the RDMA listener
# without spinning, and leave TCP serving: RDMA clients are refused at
# once and use TCP.

load ../helpers
load peer

: "${RPCTEST_DROPPRIVS_LIB:=$RPCTEST_BIN_DIR/librpctest_dropprivs.so}"

setup() {
	require_build
	require_rdma_device
	require_env RXE_ADDR
	! _rpcbind_answers || skip_for_host "an rpcbind already runs: this test starts its own"
	command -v rpcbind >/dev/null || fail "rpcbind is not installed"
}

# The CPU ticks (user + system) a process used so far.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

@test "rpcbind under the shim: it drops privileges, RDMA clients get TCP at once, nothing spins" {
	# rpcbind itself is program 100000: let the shim try RDMA for it.
	start_bg rpcbind --root --shim --env "RPCRDMA_SHIM_RULE=rdma program 100000" rpcbind -f -w
	local pid=$BG_PID log=$BG_LOG
	wait_until 15 "rpcbind to answer rpcinfo -p" _rpcbind_answers
	assert_shim_line --log "$log" server 0.0.0.0 111 'RDMA listener on port 111$'
	run ps -o user= -p "$pid"
	refute_output root

	# The first RDMA connect makes the listener find out; refused, not timed out.
	local t0=$SECONDS
	run --separate-stderr env RPCRDMA_SHIM_RULE="rdma program 100000" \
		LD_PRELOAD="$RPCRDMA_TEST_SHIM_LIB" timeout 60 rpcinfo -t "$RXE_ADDR" 100000 2
	assert_success
	assert_output "program 100000 version 2 ready and waiting"
	assert_shim_line --stderr --prog 100000 client "$RXE_ADDR" 111 'TCP \(refused by the peer'
	((SECONDS - t0 < 10)) || fail "took $((SECONDS - t0)) s"

	grep -q 'RDMA listener on port 111 stops: Permission denied (the process changed its credentials after creating it)' "$log" ||
		fail "no explanation in the log: $(cat "$log")"

	# Nothing left for svc_run to spin on: rpcbind stays idle.
	local a b
	a=$(cpu_ticks "$pid")
	sleep 3
	b=$(cpu_ticks "$pid")
	((b - a <= 10)) || fail "rpcbind used $((b - a)) ticks in 3 s while idle"

	# And TCP keeps serving.
	run timeout 30 rpcinfo -p "$RXE_ADDR"
	assert_success
	assert_line --regexp '^ +100000 +4 +tcp +111 +portmapper$'
}

@test "a server that drops privileges with an RDMA connection open: the listener stops, the connection is closed" {
	require_peer
	[[ -f $RPCTEST_DROPPRIVS_LIB ]] || fail "$RPCTEST_DROPPRIVS_LIB is missing: build first"
	local port
	port=$(free_port)
	# As root: it drops its privileges itself.
	start_server --root --shim --preload "$RPCTEST_DROPPRIVS_LIB" \
		--env RPCRDMA_SHIM_LOG_LEVEL=debug --env RPCRDMA_SHIM_MODE=require-rdma \
		-m tli -a "$RXE_ADDR" -p "$port"
	local server_log=$SERVER_LOG server_pid=$SERVER_PID

	# A connection that stays open: a call, a message the server drops,
	# then quiet until the server goes away.
	local peer_log=$BATS_TEST_TMPDIR/peer-open.log
	"$RPCTEST_PEER" call -a "$RXE_ADDR" -p "$port" --quiet-wait 30000 null short \
		>"$peer_log" 2>&1 </dev/null 3>&- &
	SERVER_PIDS+=("$!")
	SERVER_LOGS+=("$peer_log")
	wait_log "$server_log" "dropped a 8-octet message" 20

	kill -USR2 "$server_pid"
	wait_log "$server_log" "rpctest-dropprivs: now uid 65534" 20

	# The next connect makes the listener find out; it is refused.
	peer_call -a "$RXE_ADDR" -p "$port" null
	assert_failure 2
	wait_log "$server_log" "RDMA listener on port $port stops: Permission denied" 20

	# The open connection is flushed: libtirpc destroys its transport,
	# and it leaves the statistics.
	wait_log "$server_log" "server: connection closed" 20
	run "$RPCRDMA_TEST_STAT" -p "$server_pid"
	assert_success
	assert_line --regexp "^ *$server_pid +rpctest-server +listener +RDMA "
	refute_line --regexp " server +RDMA "
}
