#!/usr/bin/env bats
#
# Registered memory as ordinary users meet it, inside the soft-RoCE VM:
# every program here runs as user nobody with Debian's default
# locked-memory limit (ulimit -l 8192, the helpers' default), so the
# shim's budget (max_pinned) is 6 MiB in each process.
#
#   - a thousand CLIENTs in one process, all over RDMA, each calling NULL
#     and a 64 KiB ECHO (a Read chunk and a Reply chunk), against one
#     server that holds them all, then a 1 MiB ECHO on a new one;
#   - a server whose budget is spent refuses new connections at the CM:
#     their clients use TCP at once, the calls on the others go on;
#   - a hostile client's Read chunk claiming 1 GiB, again and again, moves
#     the server's registered memory by less than one connection's share;
#   - replies beyond max_reply fail with an RPC error naming it, and work
#     with the limit and max_reply raised.
#
# Registered memory is read from rpcrdma-stat (the budget's own count) and
# from the kernel (VmPin in /proc/PID/status, the pages the kernel pins
# for RDMA, counted against RLIMIT_MEMLOCK).

load ../helpers
load ../tools
load peer

setup() {
	require_build
	require_tools
	require_peer
	require_rdma_device
	require_env RXE_ADDR
	require_jq
	ADDR=$RXE_ADDR
	PORT=$(free_port)
	# Each test's RDMA failures stay its own.
	export RPCRDMA_SHIM_NEGATIVE_CACHE=0
}

teardown() {
	tools_teardown
}

MiB=$((1 << 20))
# 3/4 of ulimit -l 8192.
BUDGET=$((6 * MiB))
# Program start and 1000 connections are slow in the emulated machine.
WAIT=600

# vm_pin PID: the kernel's count of pinned memory of PID, in KiB.
vm_pin() {
	awk '/^VmPin:/ { print $2 }' "/proc/$1/status"
}

# pinned PID FIELD: the budget's used, total or peak in process PID.
pinned() {
	"$RPCRDMA_TEST_STAT" -j -p "$1" | jq -r ".processes[0].pinned.$2"
}

@test "1000 CLIENTs in one process, each NULL and 64 KiB ECHO, all over RDMA, within ulimit -l 8192 and ulimit -n 1024" {
	local n=1000 fds cfds
	start_server --shim -m tli -a "$ADDR" -p "$PORT"
	# require-rdma: a CLIENT that could not use RDMA would fail its create.
	start_client_bg --rdma -m tli -h "$ADDR" -p "$PORT" -o null,echo -s 64K -N "$n" -H -t 300
	wait_log "$CLIENT_LOG" "^made $n handles" "$WAIT"
	wait_log "$CLIENT_LOG" "^holding after $((2 * n)) calls$" "$WAIT"
	refute_log "$CLIENT_LOG" 'RPC:|mismatch|warning'
	[[ $(count_log "$CLIENT_LOG" '^echo 65536 ok$') == "$n" ]] ||
		fail "not $n verified ECHOs: $(count_log "$CLIENT_LOG" '^echo 65536 ok$')"

	# Every CLIENT on its own RC queue pair, and each of them accepted.
	assert_equal "$(rdma_qps rpctest-client "$CLIENT_PID")" "$n"
	assert_equal "$(rdma_qps rpctest-server "$SERVER_PID")" "$n"
	refute_log "$SERVER_LOG" 'refusing|warning'

	# Descriptors: libtirpc's socket per CLIENT, and a constant few more.
	[[ $(grep '^made' "$CLIENT_LOG") =~ ^made\ $n\ handles,\ ([0-9]+)\ descriptors ]] ||
		fail "no descriptor count: $(grep '^made' "$CLIENT_LOG")"
	cfds=${BASH_REMATCH[1]}
	((cfds <= n + 12)) || fail "$cfds descriptors for $n CLIENTs"
	fds=$(ls "/proc/$SERVER_PID/fd" | wc -l)
	((fds <= n + 16)) || fail "the server has $fds descriptors for $n connections"

	# Registered memory: within the budget, and the kernel agrees.
	stat_json --summary -p "$SERVER_PID" -p "$CLIENT_PID"
	assert_st "$CLIENT_PID.pinned.total" "$BUDGET"
	assert_st "$SERVER_PID.pinned.total" "$BUDGET"
	assert_st "$CLIENT_PID.pinned.refused" 0
	assert_st "$SERVER_PID.listener.connections" "$n"
	assert_st "$CLIENT_PID.rdma_transports" "$n"
	local pid
	for pid in "$CLIENT_PID" "$SERVER_PID"; do
		((ST[$pid.pinned.peak] <= BUDGET)) || fail "peak ${ST[$pid.pinned.peak]} above the budget"
		(($(vm_pin "$pid") <= 8192)) || fail "VmPin of $pid: $(vm_pin "$pid") kB"
		(($(vm_pin "$pid") * 1024 == ST[$pid.pinned.used])) ||
			fail "VmPin $(vm_pin "$pid") kB, the budget counts ${ST[$pid.pinned.used]}"
	done
	# Idle CLIENTs hold nothing of their own: what stays is shared (the
	# receive queue, send buffers, the pool's idle buffers for reuse).
	((ST[$CLIENT_PID.pinned.used] <= 3 * MiB)) ||
		fail "the idle CLIENTs keep ${ST[$CLIENT_PID.pinned.used]} octets registered"
	# The server's connections got their credits from what was left.
	local credits
	credits=$(jq '[.processes[] | select(.pid == '"$SERVER_PID"') | .transports[] | select(.role == "server") | .credits]' <<<"$STAT_JSON")
	(($(jq 'min' <<<"$credits") >= 1)) || fail "a connection without credits: $credits"
	(($(jq 'max' <<<"$credits") == 32)) || fail "none with the configured 32: $credits"

	# They all go; the server gives back their receives.
	_stop_pid "$CLIENT_PID"
	wait_qps rpctest-server 0 "$WAIT"
	wait_until 60 "the server's registered memory back under 1 MiB" \
		eval '(($(pinned "$SERVER_PID" used) < MiB))'
	client --rdma -m tli -h "$ADDR" -p "$PORT" -o null,echo -s 1M
	assert_client_ran null,echo 1M
}

@test "a server whose budget is spent refuses new connections at the CM: they use TCP at once, the calls of the others go on" {
	# Room for calls (two bounce buffers and send buffers) and about 48
	# connections of one credit.
	start_server --shim --env RPCRDMA_SHIM_MAX_PINNED=768K -m tli -a "$ADDR" -p "$PORT"
	start_client_bg --shim --env RPCRDMA_SHIM_NEGATIVE_CACHE=60 \
		-m tli -h "$ADDR" -p "$PORT" -o null,echo,whoami -s 1M -N 80 -H -t 120
	wait_log "$CLIENT_LOG" '^holding after 240 calls$' "$WAIT"
	refute_log "$CLIENT_LOG" 'RPC:|mismatch'

	# The first refusal is logged at once (warning), later ones quietly.
	assert_equal "$(count_log "$SERVER_LOG" 'warning: server: refusing an RDMA connection from .*: no registered memory for its credits .*max_pinned')" 1
	local rdma tcp
	rdma=$(rdma_qps rpctest-client "$CLIENT_PID")
	((rdma >= 32 && rdma < 80)) || fail "$rdma CLIENTs over RDMA"
	stat_json --summary -p "$SERVER_PID" -p "$CLIENT_PID"
	assert_st "$CLIENT_PID.rdma_transports" "$rdma"
	# Refused once, then the negative cache sends the others to TCP.
	assert_st "$CLIENT_PID.fallbacks.refused" 1
	assert_st "$CLIENT_PID.fallbacks.negative-cache" "$((80 - rdma - 1))"
	assert_st "$SERVER_PID.listener.connections" "$rdma"
	assert_st "$SERVER_PID.pinned.total" "$((768 << 10))"
	tcp=$(count_log "$CLIENT_LOG" ' netid=tcp ')
	assert_equal "$tcp" "$((80 - rdma))"
	assert_equal "$(count_log "$CLIENT_LOG" ' netid=rdma ')" "$rdma"
	# Every 1 MiB ECHO over RDMA went through the bounce buffers.
	((ST[$SERVER_PID.pinned.peak] <= 768 << 10)) || fail "peak ${ST[$SERVER_PID.pinned.peak]}"
}

@test "a Read chunk claiming 1 GiB, again and again: answered with RDMA_ERROR before anything is registered, and the server keeps serving" {
	local cases=(null) i peak used pin0
	for ((i = 0; i < 20; i++)); do
		cases+=(bigread null)
	done
	start_server --shim -m tli -a "$ADDR" -p "$PORT"
	# Nothing registered yet: what the peer's connection makes the server
	# register is all the peak will show.
	assert_equal "$(pinned "$SERVER_PID" peak)" 0
	pin0=$(vm_pin "$SERVER_PID")

	peer_call -a "$ADDR" -p "$PORT" --credits 4 "${cases[@]}"
	assert_success
	assert_equal "$(grep -c '^case=bigread .* answer=RDMA_ERROR .* err=BADHEADER result=ok$' <<<"$output")" 20
	assert_equal "$(grep -c '^case=null .* rpc=SUCCESS result=ok$' <<<"$output")" 21
	assert_log "$SERVER_LOG" 'server: call for xid 0x[0-9a-f]+ exceeds max_call \(4194304 octets\)'

	# What the connection registered: its credits' receives and a chunk
	# of send buffers, its share of the budget; nothing for the 1 GiB,
	# not even the bounce buffer.
	peak=$(pinned "$SERVER_PID" peak)
	((peak > 0 && peak <= 32 * 4096 + 64 * 1024)) || fail "the server's peak: $peak octets"
	wait_until 30 "the peer's connection gone" _qps_are rpctest-server 0
	used=$(pinned "$SERVER_PID" used)
	((used == 0)) || fail "$used octets still registered after the peer left"
	(($(vm_pin "$SERVER_PID") == pin0)) || fail "VmPin $pin0 -> $(vm_pin "$SERVER_PID") kB"
	client --rdma -m tli -h "$ADDR" -p "$PORT" -o null,echo -s 1M
	assert_client_ran null,echo 1M
}

@test "with max_call = 1G the 1 GiB Read chunk is pulled through the bounce buffer: the failed Read closes that connection only, pinning at most the bounce" {
	local base peak
	start_server --shim --env RPCRDMA_SHIM_MAX_CALL=1G -m tli -a "$ADDR" -p "$PORT"
	client --rdma -m tli -h "$ADDR" -p "$PORT" -o null
	assert_client_ran null ""
	wait_until 30 "the first connection gone" _qps_are rpctest-server 0
	base=$(pinned "$SERVER_PID" peak)

	# The Read beyond the peer's small registration fails: no answer.
	peer_call -a "$ADDR" -p "$PORT" --credits 4 null bigread=any
	assert_line --regexp '^case=null .* rpc=SUCCESS result=ok$'
	wait_log "$SERVER_LOG" 'closing an RDMA connection: RDMA Read of a call.s chunks failed' 30
	peak=$(pinned "$SERVER_PID" peak)
	# The NULL call's connection set the peak with its receives and send
	# buffers; the 1 GiB adds one bounce buffer at most.
	((peak <= base + 256 * 1024)) || fail "the peak grew by $((peak - base)) octets"
	client --rdma -m tli -h "$ADDR" -p "$PORT" -o null,echo -s 1M
	assert_client_ran null,echo 1M
}

@test "a reply beyond max_reply (1M) fails with an RPC error naming it, a call beyond max_pinned too; raising max_reply makes room" {
	start_server --shim -m tli -a "$ADDR" -p "$PORT"
	client --rdma -m tli -h "$ADDR" -p "$PORT" -o source,null -s 2M -k
	assert_failure 1
	assert_line --regexp '^source 2097152: RPC: Unable to receive; errno = Message too long$'
	assert_line "null ok"
	assert_line --regexp "warning: client: server answered RDMA_ERROR \(BADHEADER\) to xid 0x[0-9a-f]+: no reply is possible; a reply above max_reply \(1048576 octets\)"
	assert_log "$SERVER_LOG" "reply to xid 0x[0-9a-f]+ exceeds the client's Reply chunk \(1052672 octets\)"

	# A call whose arguments cannot have registered memory: refused at once.
	client --rdma -m tli -h "$ADDR" -p "$PORT" -o echo,null -s 16M -k
	assert_failure 1
	assert_line --regexp '^echo 16777216: RPC: Unable to send; errno = Cannot allocate memory$'
	assert_line "null ok"
	assert_line --regexp 'warning: client: no registered memory for .*max_pinned'

	client --rdma --env RPCRDMA_SHIM_MAX_REPLY=4M -m tli -h "$ADDR" -p "$PORT" -o source -s 2M,4M
	assert_client_ran source 2M,4M
}
