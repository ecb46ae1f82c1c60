# Helpers for servers that run as daemons (rdma/080-daemons.bats and the
# daemon test of rdma/090-kernel-client.bats); loaded after ../helpers and
# ../tools:
#
#     load ../helpers
#     load ../tools
#     load daemon
#
# A detaching server (-D) says "NAME: daemon pid N" on stderr, which its
# log keeps; its launching process exits 0 at once.  The daemon is
# recorded with the servers, so teardown stops it.

# daemon_pid LOG NAME: the pid NAME serves from.
daemon_pid() {
	sed -n "s/^$2: daemon pid \\([0-9][0-9]*\\)\$/\\1/p" "$1" | tail -n 1
}

# await_daemon LAUNCHER READY NAME: the launching process LAUNCHER (started
# with start_bg, log in BG_LOG) exits 0 and the daemon writes READY, both
# bounded; sets SERVER_PID (the daemon), SERVER_LOG and SERVER_PORT.
await_daemon() {
	local launcher=$1 ready=$2 name=$3 log=$BG_LOG
	wait_bg "$launcher" "$RPCTEST_READY_TIMEOUT" || return 1
	((BG_STATUS == 0)) || fail "$name exited with status $BG_STATUS instead of detaching"
	wait_until "$RPCTEST_READY_TIMEOUT" "$name's daemon to write $ready" test -s "$ready"
	SERVER_LOG=$log
	SERVER_PID=$(daemon_pid "$log" "$name")
	[[ -n $SERVER_PID ]] || fail "$name did not say its daemon's pid: $(cat "$log")"
	SERVER_PIDS+=("$SERVER_PID")
	local word
	read -r word SERVER_PORT <"$ready"
	[[ $word == ready ]] || fail "unexpected ready file: $(cat "$ready")"
}

# start_daemon [launch options] [--] [rpctest-server args]: rpctest-server
# with the arguments given (-D 1 or -D 2 among them).
start_daemon() {
	local -a pre
	_launch_prefix pre "$@"
	shift "$_PREFIX_SHIFT"
	local ready=$BATS_TEST_TMPDIR/daemon${#SERVER_LOGS[@]}.ready
	# The prefix (user, limits) is in pre already, as in start_server.
	start_bg server --root -- "${pre[@]}" "$RPCTEST_SERVER" -r "$ready" "$@"
	await_daemon "$BG_PID" "$ready" rpctest-server
}

# stop_daemon PID LOG NAME: SIGTERM; it ends within RPCTEST_STOP_TIMEOUT
# and logs that the signal stopped it (its exit status goes to no one).
stop_daemon() {
	local pid=$1 log=$2 name=$3
	kill -TERM "$pid"
	_wait_gone "$pid" "$RPCTEST_STOP_TIMEOUT" ||
		fail "$name $pid did not stop within ${RPCTEST_STOP_TIMEOUT}s of SIGTERM"
	_forget_pid "$pid"
	assert_log "$log" "^$name: stopped by signal 15\$"
}

# qp_of PID: the RC queue pairs that process holds (rdma res show qp).
qp_of() {
	rdma resource show qp | grep -E " type RC .* pid $1 comm "
}

# assert_qp_of PID: the process holds an RC queue pair in RTS.
assert_qp_of() {
	local qps
	qps=$(qp_of "$1") || true
	grep -q " state RTS " <<<"$qps" ||
		fail "process $1 holds no RC queue pair in RTS; rdma resource show qp:
$(rdma resource show qp)"
}

# refute_qp_of PID: the process holds no RC queue pair.
refute_qp_of() {
	local qps
	qps=$(qp_of "$1") || true
	[[ -z $qps ]] || fail "process $1 holds queue pairs:
$qps"
}

# assert_serves_rdma PID N: rpcrdma-stat shows process PID with an RDMA
# listener and an RDMA server connection that took N calls or more.
assert_serves_rdma() {
	local doc
	doc=$("$RPCRDMA_TEST_STAT" -j -p "$1") || fail "rpcrdma-stat -j -p $1 failed"
	jq -e --argjson n "$2" '[.processes[].transports[]] as $t
		| ([$t[] | select(.role == "listener" and .transport == "rdma")] | length) >= 1
		  and ([$t[] | select(.role == "server" and .transport == "rdma"
				    and .calls >= $n)] | length) >= 1' <<<"$doc" >/dev/null ||
		fail "rpcrdma-stat does not show process $1 serving $2 calls over RDMA:
$doc"
}

# assert_unprivileged PID: no thread of the process keeps uid 0, gid 0 or
# any capability (real, effective, saved; permitted, effective).
assert_unprivileged() {
	local f
	for f in /proc/"$1"/task/*/status; do
		awk '/^Uid:|^Gid:/ { for (i = 2; i <= 4; i++) if ($i == 0) bad = 1 }
		     /^CapPrm:|^CapEff:/ { if ($2 != "0000000000000000") bad = 1 }
		     END { exit bad }' "$f" ||
			fail "a thread of process $1 keeps a privilege: $(grep -E '^(Uid|Gid|CapPrm|CapEff):' "$f")"
	done
}

# assert_no_rdma_fds FILE: FILE, a listing of some process's descriptors
# (ls -l /proc/self/fd), shows no RDMA device and no RDMA event channel.
assert_no_rdma_fds() {
	! grep -qE 'infiniband|uverbs|rdma_cm' "$1" ||
		fail "RDMA descriptors were inherited across exec: $(grep -E 'infiniband|uverbs|rdma_cm' "$1")"
}
