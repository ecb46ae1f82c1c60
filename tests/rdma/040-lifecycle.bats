#!/usr/bin/env bats
#
# Connections coming and going, inside the soft-RoCE VM (see 010-rxe.bats):
# several clients at once, clients and servers that die or stop mid-run,
# and many handles made and destroyed, with the queue pairs rxe lists
# (`rdma resource show qp`) as the witness of what RDMA holds.

load ../helpers
load peer

OPS=null,echo,sink,source
SIZES=0,1,100,1000,3000

setup() {
	require_build
	require_rdma_device
	require_env RXE_ADDR
	command -v rdma >/dev/null || fail "the rdma tool (iproute2) is missing"
}

# wait_client_qp PID SECONDS: the client process holds an RC queue pair
# (and is still running).
wait_client_qp() {
	wait_until -q "$2" "client $1 holds a queue pair" _client_qp_or_gone "$1" ||
		fail "client $1 holds no queue pair after $2 s:
$(rdma resource show qp 2>&1)"
	_alive "$1" || fail "client $1 ended before it held a queue pair: $(cat "$CLIENT_LOG")"
}

_client_qp_or_gone() {
	_qps_at_least rpctest-client 1 "$1" || _gone "$1"
}

@test "two shim clients at once against one shim server, byte-exact" {
	local port a b
	port=$(free_port)
	# Debug: the server logs every connection, not only an address's first.
	start_server --shim --env RPCRDMA_SHIM_LOG_LEVEL=debug -m tli -a "$RXE_ADDR" -p "$port"

	# Each holds its CLIENT after its calls (-H): a client done before
	# the other connected still has its connection then.
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES" -c 60 -H
	a=$CLIENT_PID
	local log_a=$CLIENT_LOG
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES" -c 60 -H
	b=$CLIENT_PID
	# Both connected at once: the server holds two queue pairs.
	wait_qps rpctest-server 2 30
	wait_log "$log_a" "^holding after" 120
	wait_log "$CLIENT_LOG" "^holding after" 120
	_stop_pid "$a" || fail "the first client did not stop on SIGTERM"
	local sa=$STOP_STATUS
	_stop_pid "$b" || fail "the second client did not stop on SIGTERM"
	local sb=$STOP_STATUS

	run cat "$log_a"
	((sa == 0)) || fail "first client exited $sa"
	assert_client_ran "$OPS" "$SIZES" 60
	assert_shim_line client "$RXE_ADDR" "$port" RDMA
	run cat "$CLIENT_LOG"
	((sb == 0)) || fail "second client exited $sb"
	assert_client_ran "$OPS" "$SIZES" 60
	assert_shim_line client "$RXE_ADDR" "$port" RDMA

	run count_shim_lines --log "$SERVER_LOG" connection "$RXE_ADDR" '' RDMA
	assert_output 2
	wait_qps rpctest-server 0 15
	stop_server
}

@test "RDMA carries the calls; a client killed mid-run leaves the server serving, without its queue pair" {
	local port pid
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	wait_qps rpctest-server 0 5

	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" \
		-o echo -s 1000 -c 100000000 -q -t 30
	pid=$CLIENT_PID
	wait_client_qp "$pid" 20
	wait_qps rpctest-server 1 10

	# The proof that the calls travel over RDMA: the client holds a
	# queue pair and no TCP connection to the service exists.
	run ss -tnH state established "( dport = :$port or sport = :$port )"
	assert_success
	assert_output ""
	run ss -tnpH state established
	refute_output --partial "pid=$pid,"
	_alive "$pid" || fail "the client ended early: $(cat "$CLIENT_LOG")"

	kill -KILL "$pid"
	wait_bg "$pid" 10
	((BG_STATUS == 128 + 9)) || fail "client exited $BG_STATUS, not by SIGKILL: $(cat "$CLIENT_LOG")"
	# The server notices and frees the connection.
	wait_qps rpctest-server 0 15

	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_netid rdma "$RXE_ADDR"
	stop_server
}

@test "1000 handles made and destroyed: descriptors, memory and queue pairs do not pile up" {
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"

	# require-rdma: every one of the 1000 handles is an RDMA connection.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null -R 1000 -b -q
	assert_success
	assert_shim_line client "$RXE_ADDR" "$port" RDMA
	assert_line --regexp '^null +0 +1000 '
	local line fb fa rb ra
	line=$(grep '^cycles=' <<<"$output") || fail "no cycles= line"
	[[ $line =~ ^cycles=1000\ fds_before=([0-9]+)\ fds_after=([0-9]+)\ rss_kb_before=([0-9]+)\ rss_kb_after=([0-9]+)$ ]] ||
		fail "unexpected line: $line"
	fb=${BASH_REMATCH[1]} fa=${BASH_REMATCH[2]} rb=${BASH_REMATCH[3]} ra=${BASH_REMATCH[4]}
	((fa == fb)) || fail "descriptors grew over 999 handles: $fb -> $fa"
	((ra - rb < 2048)) || fail "RSS grew by $((ra - rb)) KiB over 999 handles ($rb -> $ra KiB)"

	# Every connection left the server too.
	wait_qps rpctest-server 0 15
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	stop_server
}

@test "a stopped server times the call out; a killed one fails it at once" {
	local port pid t0 ms
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	local server=$SERVER_PID

	# SIGSTOP mid-run: the call in flight gets no reply within -t 3.
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" \
		-o echo -s 100 -c 100000000 -q -t 3
	pid=$CLIENT_PID
	wait_client_qp "$pid" 20
	kill -STOP "$server"
	t0=$(now_ms)
	wait_bg "$pid" 30
	ms=$(($(now_ms) - t0))
	kill -CONT "$server"
	run cat "$CLIENT_LOG"
	((BG_STATUS == 1)) || fail "client exited $BG_STATUS after the server stopped"
	assert_line "echo 100: RPC: Timed out"
	((ms < 9000)) || fail "the client gave up $ms ms after the server stopped, with a 3 s timeout"

	# The server, continued, still serves.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"

	# SIGKILL mid-run: the connection goes, the call fails.
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" \
		-o source -s 3000 -c 100000000 -q -t 10
	pid=$CLIENT_PID
	wait_client_qp "$pid" 20
	kill -KILL "$server"
	t0=$(now_ms)
	wait_bg "$pid" 30
	ms=$(($(now_ms) - t0))
	_wait_gone "$server" 5 || true
	wait "$server" 2>/dev/null || true
	_forget_pid "$server"
	run cat "$CLIENT_LOG"
	((BG_STATUS == 1)) || fail "client exited $BG_STATUS after the server was killed"
	assert_line --regexp '^source 3000: RPC: (Unable to receive|Timed out)'
	((ms < 15000)) || fail "the client gave up $ms ms after the server died, with a 10 s timeout"
}

# rdma_cm_fds PID: the process's descriptors open on the RDMA-CM device
# (an event channel each).
rdma_cm_fds() {
	local n=0 f
	for f in /proc/"$1"/fd/*; do
		[[ $(readlink "$f" 2>/dev/null) != /dev/infiniband/rdma_cm ]] || n=$((n + 1))
	done
	echo "$n"
}

@test "a server that destroys its listener serves the RDMA connections it accepted to their end, as libtirpc does TCP's; new clients are refused" {
	local port
	# libtirpc's own behaviour first: a TCP connection outlives the
	# rendezvous that accepted it.
	port=$(free_port)
	start_server -m tli -a "$RXE_ADDR" -p "$port" -K 3
	client -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	grep -q "listener destroyed" "$SERVER_LOG" || fail "the server did not destroy its listener: $(cat "$SERVER_LOG")"
	stop_server

	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port" -K 3
	# One CLIENT, one connection, require-rdma: the listener goes after
	# its third call, and the other calls go on over the same connection
	# (a new one would be refused).
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	assert_shim_line client "$RXE_ADDR" "$port" RDMA
	grep -q "listener destroyed" "$SERVER_LOG" || fail "the server did not destroy its listener: $(cat "$SERVER_LOG")"
	grep -q "RDMA listener on port $port closed with its TCP rendezvous; the connections it accepted (1) are served until they end" "$SERVER_LOG" ||
		fail "no line about the closed listener: $(cat "$SERVER_LOG")"

	# The connection ended with its client; the listener went with it:
	# no queue pair, no RDMA-CM channel left.
	wait_qps rpctest-server 0 15
	wait_until 15 "the server without RDMA-CM channels" eval '(($(rdma_cm_fds "$SERVER_PID") == 0))'

	# New clients find neither an RDMA nor a TCP listener, at once.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null -t 5
	assert_failure
	assert_shim_line --comm rpctest-client required "$RXE_ADDR" "$port" 'refused by the peer$'
	client -m tli -h "$RXE_ADDR" -p "$port" -o null -t 5
	assert_failure
	kill -0 "$SERVER_PID" || fail "the server ended"
	stop_server
}
