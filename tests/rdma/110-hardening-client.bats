#!/usr/bin/env bats
#
# The shim's client against servers that misbehave, inside the soft-RoCE
# VM: rdma-peer (tests/peer) plays a server that drops a reply, answers
# late, or invalidates the wrong call's key (RFC 8797 s4.1).  The client
# is the unmodified rpcgen client under the shim, as nobody, required to
# use RDMA; each run makes four NULL calls on one CLIENT, of which only
# the first meets the misbehaviour, and keeps going after its error (-k).

load ../helpers
load peer

setup() {
	require_build
	require_peer
	require_rdma_device
	require_env RXE_ADDR
}

# run_four_nulls: four NULL calls, two seconds each at most, on one CLIENT.
run_four_nulls() {
	client --rdma -m tli -h "$RXE_ADDR" -p "$PEER_PORT" -t 2 -k -o null -c 4
}

# assert_first_call_lost: the first call timed out, the three after it were
# answered.
assert_first_call_lost() {
	assert_failure 1
	assert_line --partial "null: RPC: Timed out"
	assert_line "failed 1 of 4 calls"
	local n=0 line
	for line in "${lines[@]}"; do
		[[ $line != "null ok" ]] || n=$((n + 1))
	done
	((n == 3)) || fail "$n calls answered after the lost one, not 3"
}

@test "a dropped reply costs only its call: a fresh CLIENT granted one credit keeps working" {
	# RFC 8166 s4.3.3: one credit until a reply says more, and the peer
	# grants one.  The call left without a reply gives its credit back
	# with its timeout, as the requests in flight are what s4.3.1 counts.
	start_peer -a "$RXE_ADDR" -p 0 --credits 1 drop-first
	run_four_nulls
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
	run_four_nulls
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
	run_four_nulls
	assert_first_call_lost
	wait_peer
	assert_peer_ok
	assert_line --regexp '^invalidating conn=1 key=0x[0-9a-f]{8} of_xid=0x[0-9a-f]{8} with_xid=0x[0-9a-f]{8}$'
	assert_line --regexp '^reply conn=1 xid=0x[0-9a-f]{8} proc=RDMA_MSG .* rpc=SUCCESS late=1$'
	assert_line --regexp '^disconnected conn=1 calls=4 '
}
