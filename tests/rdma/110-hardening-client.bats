#!/usr/bin/env bats
#
# The shim's client against servers that misbehave, inside the soft-RoCE
# VM: rdma-peer (tests/peer) plays a server that drops a reply, answers
# late, or invalidates the wrong call's key (RFC 8797 s4.1); the shim's own
# server is made slow by stopping it.  The client is the unmodified rpcgen
# client under the shim, as nobody, required to use RDMA; each run makes
# its calls on one CLIENT and keeps going after an error (-k).  Against
# the peer the calls are SINKs of no data: results the client cannot see
# into, so each offers a Reply chunk (a NULL call, xdr_void results,
# offers none).

load ../helpers
load peer

setup() {
	require_build
	require_peer
	require_rdma_device
	require_env RXE_ADDR
}

# run_four_calls: four SINK calls, two seconds each at most, on one CLIENT.
run_four_calls() {
	client --rdma -m tli -h "$RXE_ADDR" -p "$PEER_PORT" -t 2 -k -o sink -s 0 -c 4
}

# assert_first_call_lost: the first call timed out, the three after it were
# answered.
assert_first_call_lost() {
	assert_failure 1
	assert_line --partial "sink 0: RPC: Timed out"
	assert_line "failed 1 of 4 calls"
	local n=0 line
	for line in "${lines[@]}"; do
		[[ $line != "sink 0 ok" ]] || n=$((n + 1))
	done
	((n == 3)) || fail "$n calls answered after the lost one, not 3"
}

@test "a dropped reply costs only its call: a fresh CLIENT granted one credit keeps working" {
	# RFC 8166 s4.3.3: one credit until a reply says more, and the peer
	# grants one.  The call left without a reply gives its credit back
	# with its timeout, as the requests in flight are what s4.3.1 counts.
	start_peer -a "$RXE_ADDR" -p 0 --credits 1 drop-first
	run_four_calls
	assert_first_call_lost
	wait_peer
	assert_peer_ok
	assert_line --regexp '^reply_dropped conn=1 xid=0x[0-9a-f]{8}$'
	assert_line --regexp '^summary case=drop-first .* calls=4 violations=0 '
}

@test "a late reply written into its Reply chunk is dropped by XID and the connection stays" {
	# The late reply comes the way Linux's server sends every reply when a
	# Reply chunk is offered: an RDMA Write into the timed-out call's
	# memory, which must still be exposed, then an RDMA_NOMSG Send.
	start_peer -a "$RXE_ADDR" -p 0 --credits 1 late-first
	run_four_calls
	assert_first_call_lost
	wait_peer
	assert_peer_ok
	assert_line --regexp '^reply_held conn=1 xid=0x[0-9a-f]{8}$'
	assert_line --regexp '^reply conn=1 xid=0x[0-9a-f]{8} proc=RDMA_NOMSG .* rpc=SUCCESS late=1$'
	refute_line --partial "rdma_write=failed"
	assert_line --regexp '^disconnected conn=1 calls=4 '
}

@test "a Send With Invalidate of another call's key is taken for that call, never invalidated twice" {
	# The second call's reply invalidates the first (timed-out) call's
	# Reply chunk; the first call's late reply follows with the third.  A
	# client that then invalidated that window itself would invalidate it
	# twice, which breaks the connection (and panics rxe 6.1).
	start_peer -a "$RXE_ADDR" -p 0 --credits 1 inv-first
	run_four_calls
	assert_first_call_lost
	wait_peer
	assert_peer_ok
	assert_line --regexp '^invalidating conn=1 key=0x[0-9a-f]{8} of_xid=0x[0-9a-f]{8} with_xid=0x[0-9a-f]{8}$'
	assert_line --regexp '^reply conn=1 xid=0x[0-9a-f]{8} proc=RDMA_MSG .* rpc=SUCCESS late=1$'
	assert_line --regexp '^disconnected conn=1 calls=4 '
}

# count_lines TEXT: how many lines of the last run are exactly TEXT.
count_lines() {
	local n=0 line
	for line in "${lines[@]}"; do
		[[ $line != "$1" ]] || n=$((n + 1))
	done
	echo "$n"
}

@test "five timed-out calls: their late replies land in their Reply chunks, the connection stays" {
	# A slow server answers five calls only after the client gave up on
	# them, each through its Reply chunk as Linux's server does: every
	# timed-out call's memory is still exposed, no RDMA Write fails, and
	# the calls after them are answered on the same connection.  Reply
	# chunks of 64 KiB, so that memory (ulimit -l) is not what runs out.
	start_peer -a "$RXE_ADDR" -p 0 --credits 1 --held 5 --timeout 50 late-many
	client --rdma --env RPCRDMA_SHIM_MAX_REPLY=64K -m tli -h "$RXE_ADDR" -p "$PEER_PORT" \
		-t 2 -k -o sink -s 0 -c 8
	assert_failure 1
	assert_line "failed 5 of 8 calls"
	assert_equal "$(count_lines "sink 0: RPC: Timed out")" 5
	assert_equal "$(count_lines "sink 0 ok")" 3
	wait_peer
	assert_peer_ok
	assert_equal "$(grep -cE '^reply conn=1 xid=0x[0-9a-f]{8} proc=RDMA_NOMSG .* rpc=SUCCESS late=1$' <<<"$output")" 5
	refute_line --partial "rdma_write=failed"
	refute_line --partial "reply_lost"
	assert_line --regexp '^disconnected conn=1 calls=8 '
	assert_line --regexp '^summary case=late-many requests=1 accepted=1 '
}

@test "more timed-out calls than the client keeps exposed: a new connection, no late reply fails" {
	# Ten calls held: once every slot holds a timed-out call (eight), the
	# next call goes on a new connection rather than revoking one whose
	# reply may still be written; the old connection's held replies are
	# lost with it, as over TCP they would be dropped by XID.
	start_peer -a "$RXE_ADDR" -p 0 --credits 1 --held 10 --connections 2 --timeout 55 late-many
	client --rdma --env RPCRDMA_SHIM_MAX_REPLY=64K -m tli -h "$RXE_ADDR" -p "$PEER_PORT" \
		-t 2 -k -o sink -s 0 -c 13
	assert_failure 1
	assert_line "failed 10 of 13 calls"
	assert_equal "$(count_lines "sink 0 ok")" 3
	wait_peer
	assert_peer_ok
	assert_equal "$(grep -c '^reply_lost conn=1 ' <<<"$output")" 8
	assert_equal "$(grep -cE '^reply conn=2 xid=0x[0-9a-f]{8} proc=RDMA_NOMSG .* late=1$' <<<"$output")" 2
	refute_line --partial "rdma_write=failed"
	assert_line --regexp '^disconnected conn=1 calls=8 '
	assert_line --regexp '^disconnected conn=2 calls=5 '
	assert_line --regexp '^summary case=late-many requests=2 accepted=2 '
}

@test "timed-out calls holding the memory a call needs: a new connection, not a failed call" {
	# With the default 1 MiB Reply chunks, four timed-out calls hold what
	# ulimit -l leaves: the fifth goes on a new connection, which gives
	# their memory back, rather than fail for want of it.
	start_peer -a "$RXE_ADDR" -p 0 --credits 1 --held 4 --connections 2 --timeout 50 late-many
	client --rdma -m tli -h "$RXE_ADDR" -p "$PEER_PORT" -t 2 -k -o sink -s 0 -c 7
	assert_failure 1
	assert_line "failed 4 of 7 calls"
	assert_line --partial "client: timed-out calls hold the memory a call needs, connecting again"
	wait_peer
	assert_peer_ok
	assert_equal "$(grep -c '^reply_lost conn=1 ' <<<"$output")" 4
	refute_line --partial "rdma_write=failed"
	assert_line --regexp '^disconnected conn=2 calls=3 '
}

@test "the shim's own server stopped for a while: its late replies cost no later call" {
	# Once the client is connected, the server is stopped (SIGSTOP) for
	# five seconds while calls time out, one second each, then continued:
	# it answers the backlog late, writing the 16 KiB results into the
	# timed-out calls' chunks, then the calls after them.
	local port n
	port=$(free_port)
	start_server --rdma -m tli -a "$RXE_ADDR" -p "$port"
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -t 1 -k -o echo -s 16K -c 1000
	wait_log "$CLIENT_LOG" ': RDMA, inline' 60
	kill -STOP "$SERVER_PID"
	sleep 5
	kill -CONT "$SERVER_PID"
	wait_bg "$CLIENT_PID" 250
	run cat "$CLIENT_LOG"
	n=$(count_lines "echo 16384: RPC: Timed out")
	((n >= 4)) || fail "only $n calls timed out while the server was stopped"
	# Every other call was answered: none failed with the connection.
	assert_line "failed $n of 1000 calls"
	assert_equal "$(count_lines "echo 16384 ok")" $((1000 - n))
	stop_server
}
