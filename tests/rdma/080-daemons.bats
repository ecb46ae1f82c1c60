#!/usr/bin/env bats
#
# Unmodified daemons under the shim.  rpcbind creates its listeners as
# root, then changes to its own user; from then on the kernel refuses the
# RDMA-CM commands of the listener's channel (they come from other
# credentials).  The shim must notice, say so, stop the RDMA listener
# without spinning, and leave TCP serving: RDMA clients are refused at
# once and use TCP.

load ../helpers

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
	start_bg rpcbind --shim --env "RPCRDMA_SHIM_RULE=rdma program 100000" rpcbind -f -w
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
