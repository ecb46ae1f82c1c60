#!/usr/bin/env bats
#
# The wire protocol, inside the soft-RoCE VM (see 010-rxe.bats), checked
# with rdma-peer (tests/peer): a raw RPC-over-RDMA Version One peer that
# sends what well-behaved implementations never send and reports each
# answer.  First the shim's server answering the peer's calls (RFC 8166
# s5.5 errors, RFC 8797 private data and the inline sizes that follow from
# it), then the shim's client calling the peer.

load ../helpers
load peer

setup() {
	require_build
	require_peer
	require_rdma_device
	require_env RXE_ADDR
}

# assert_case CASE REGEX: the peer ran CASE as expected and its answer
# (the part after "sent=N") matches REGEX.
assert_case() {
	local name=${1//+/\\+}
	assert_line --regexp "^case=$name expect=[a-z-]+ xid=0x[0-9a-f]{8} sent=[0-9]+( sent_over_inline=[0-9]+)? $2 result=ok$"
}

# assert_calls_within LIMIT: every call the serving peer received was at
# most LIMIT octets, and it saw no violation.
assert_calls_within() {
	local limit=$1 line n=0 len
	for line in "${lines[@]}"; do
		[[ $line == "call "* ]] || continue
		n=$((n + 1))
		len=${line##* len=}
		((len <= limit)) || fail "a call of $len octets, above $limit: $line"
	done
	((n > 0)) || fail "the peer received no call"
	refute_line --partial "violation="
}

@test "the shim server answers every malformed message as RFC 8166 s5.5 says, and keeps serving" {
	local port
	port=$(free_port)
	start_server --shim --env RPCRDMA_SHIM_CREDITS=16 -m tli -a "$RXE_ADDR" -p "$port"

	# A valid call after each bad one proves the connection survived it.
	peer_call -a "$RXE_ADDR" -p "$port" \
		null badvers null msgp null done null badproc null badproc:255 null \
		badchunk null badchunk:trunc null badchunk:count null xidmismatch null \
		short null rdmaerror null noprog null badpos null \
		echo:0 echo:1 echo:3000 sink:3000 source:1 source:3000 null
	assert_success
	assert_line --regexp '^server_pdata=present format=0xf6ab0e18 version=1 send=4096 recv=4096 rinv=1 offset=0 len=[0-9]+$'
	assert_line --regexp "^connected addr=${RXE_ADDR//./\\.} port=$port pdata=4096:4096 send_max=4096 recv_max=4096$"

	local ok='xid=ok vers=1 credits=16'
	assert_case null "answer=RDMA_MSG len=[0-9]+ $ok rpc=SUCCESS"
	# s5.5.1: ERR_VERS names the versions the server speaks (1..2 by
	# default: draft-cel-nfsv4-rpcrdma-version-two-01 s5.3) and echoes
	# the version sent (3).
	assert_case badvers "answer=RDMA_ERROR len=28 xid=ok vers=3 credits=16 err=ERR_VERS low=1 high=2"
	# s5.5.2, s5.6: reserved and unknown procedures, malformed chunk
	# lists and an RPC XID that differs from the transport's: BADHEADER.
	local c
	for c in msgp done badproc badproc:255 badchunk badchunk:trunc badchunk:count xidmismatch; do
		assert_case "$c" "answer=RDMA_ERROR len=20 $ok err=BADHEADER"
	done
	# Nothing to answer: no XID (s5.5), or an error (never answered).
	assert_case short 'answer=none waited_ms=[0-9]+'
	assert_case rdmaerror 'answer=none waited_ms=[0-9]+'
	assert_case noprog "answer=RDMA_MSG len=[0-9]+ $ok rpc=PROG_UNAVAIL"
	# s5.5.2: a well-formed header whose Read chunk does not fit the
	# payload: the arguments cannot be decoded, RPC GARBAGE_ARGS.
	assert_case badpos "answer=RDMA_MSG len=[0-9]+ $ok rpc=GARBAGE_ARGS"
	assert_log "$SERVER_LOG" "Read chunks of xid 0x[0-9a-f]+ do not fit the call's payload: its arguments cannot be decoded \\(GARBAGE_ARGS"
	for c in echo:0 echo:1 echo:3000 sink:3000 source:1 source:3000; do
		assert_case "$c" "answer=RDMA_MSG len=[0-9]+ $ok rpc=SUCCESS data=ok"
	done
	refute_line --partial "stray"
	assert_line "summary cases=34 ok=34 failed=0 not_run=0 result=ok"

	# The server is still there for an ordinary client, over RDMA.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null,echo,sink,source,whoami -s 0,100,3000
	assert_client_ran null,echo,sink,source,whoami 0,100,3000
	assert_shim_line client "$RXE_ADDR" "$port" 'RDMA, inline 4096/4096, '
	assert_netid rdma
	stop_server
}

@test "the shim server takes calls offering chunks, and serves Long Calls and Long Replies" {
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"

	# Chunks offered where everything fits inline: the server may use
	# them or not, the answer must be right either way.
	peer_call -a "$RXE_ADDR" -p "$port" \
		null+reply echo:100+reply source:100+write echo:3000+write+reply sink:1000+reply null
	assert_success
	assert_line --regexp '^summary cases=6 ok=6 failed=0 '

	# A call in a position-zero Read chunk (RDMA_NOMSG), and replies that
	# only fit the Reply chunk or the Write chunk offered.
	peer_call -a "$RXE_ADDR" -p "$port" \
		echo:6000+read+reply sink:6000+read source:6000+reply source:6000+write null
	assert_success
	assert_line --regexp '^summary cases=5 ok=5 failed=0 '
	# RFC 8166 s3.5.3: the call came in the Read chunk, the reply went
	# into the Reply chunk (RDMA_NOMSG) or placed in the Write chunk.
	assert_case echo:6000+read+reply 'answer=RDMA_NOMSG .* rpc=SUCCESS data=ok reply_chunk_used=60[0-9][0-9]'
	assert_case sink:6000+read 'answer=RDMA_MSG .* rpc=SUCCESS data=ok'
	assert_case source:6000+reply 'answer=RDMA_NOMSG .* rpc=SUCCESS data=ok reply_chunk_used=60[0-9][0-9]'
	assert_case source:6000+write 'answer=RDMA_MSG .* rpc=SUCCESS data=ok write_chunk_used=6000'
	stop_server
}

@test "the shim server's accept grants no more RDMA Reads than the client offered to serve" {
	local port offer init resp line
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"

	# I:R is the connect's initiator_depth (Reads the client issues) and
	# responder_resources (Reads it answers).  The server may have no
	# more Reads in flight than the client answers, and must answer as
	# many as the client issues.  0:16 is how the Linux client connects:
	# Read chunks (its NFS WRITEs) must work then.  A client answering no
	# Reads gets BADHEADER for a Read chunk, and its connection goes on.
	for offer in 0:16 3:5 4:1 16:0; do
		init=${offer%:*} resp=${offer#*:}
		if ((resp > 0)); then
			peer_call -a "$RXE_ADDR" -p "$port" --rd-atom "$offer" null sink:8000+read echo:100
		else
			peer_call -a "$RXE_ADDR" -p "$port" --rd-atom "$offer" null sink:8000+read=badheader echo:100
		fi
		assert_success
		line=$(grep '^server_accept ' <<<"$output")
		[[ $line =~ server_initiator_depth=([0-9]+)\ server_responder_resources=([0-9]+) ]] ||
			fail "no server_accept line: $output"
		((BASH_REMATCH[1] <= resp && BASH_REMATCH[2] <= init)) ||
			fail "offered $offer, the accept took initiator_depth=${BASH_REMATCH[1]} responder_resources=${BASH_REMATCH[2]}"
		((resp == 0 || BASH_REMATCH[1] >= 1)) ||
			fail "offered $offer: the server took no Read resources: $line"
		((init == 0 || BASH_REMATCH[2] >= 1)) ||
			fail "offered $offer: the server answers no Reads: $line"
		assert_line --regexp '^summary cases=3 ok=3 '
	done
	stop_server
}

@test "over IPv6 (RXE_ADDR6): the peer calls the shim server, and the shim client calls the peer" {
	require_env RXE_ADDR6
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR6" -p "$port"
	peer_call -a "$RXE_ADDR6" -p "$port" null echo:3000 badvers badchunk short null
	assert_success
	assert_line "connected addr=$RXE_ADDR6 port=$port pdata=4096:4096 send_max=4096 recv_max=4096"
	assert_line --regexp '^summary cases=6 ok=6 '
	stop_server

	start_peer -a "$RXE_ADDR6" -p 0 accept
	client --rdma -m tli -n tcp6 -h "$RXE_ADDR6" -p "$PEER_PORT" -o null,echo,sink,source -s 0,100,3000
	assert_client_ran null,echo,sink,source 0,100,3000
	wait_peer
	assert_peer_ok
	assert_line --regexp "^connect_request n=1 from=${RXE_ADDR6} port=[0-9]+ "
}

@test "RFC 8797: the shim server's accept carries its configured sizes, and honours the peer's" {
	local port
	port=$(free_port)
	start_server --shim --env RPCRDMA_SHIM_INLINE_SEND=8K --env RPCRDMA_SHIM_INLINE_RECV=2K \
		-m tli -a "$RXE_ADDR" -p "$port"

	# The peer offers 4096 each way: the server sends at most 4096 (our
	# receive size, not its 8K), and we send at most its 2048.
	peer_call -a "$RXE_ADDR" -p "$port" null source:3000 source:4100=badheader echo:1900 null
	assert_success
	assert_line --regexp '^server_pdata=present format=0xf6ab0e18 version=1 send=8192 recv=2048 rinv=1 offset=0 len=[0-9]+$'
	assert_line --regexp "^connected .* pdata=4096:4096 send_max=2048 recv_max=4096$"
	assert_case source:3000 'answer=RDMA_MSG len=3056 xid=ok .* rpc=SUCCESS data=ok'
	assert_case source:4100=badheader 'answer=RDMA_ERROR len=20 xid=ok vers=1 credits=[0-9]+ err=BADHEADER'
	assert_case echo:1900 'answer=RDMA_MSG len=1956 xid=ok .* rpc=SUCCESS data=ok'
	assert_shim_line --log "$SERVER_LOG" connection "$RXE_ADDR" '' RDMA
	stop_server
}

@test "RFC 8797: without private data the shim server replies inline up to 1024 octets" {
	local port
	port=$(free_port)
	# Debug: every connection is logged, not only the first from an address.
	start_server --shim --env RPCRDMA_SHIM_LOG_LEVEL=debug -m tli -a "$RXE_ADDR" -p "$port"

	peer_call -a "$RXE_ADDR" -p "$port" --pdata none \
		echo:900 source:900 echo:1100=badheader source:1100=badheader null
	assert_success
	assert_line "connected addr=$RXE_ADDR port=$port pdata=none send_max=1024 recv_max=1024"
	assert_case echo:900 'answer=RDMA_MSG len=956 xid=ok .* rpc=SUCCESS data=ok'
	assert_case source:900 'answer=RDMA_MSG len=956 xid=ok .* rpc=SUCCESS data=ok'
	# Too long for 1024 and no Reply chunk offered: an error, not a crash.
	assert_case echo:1100=badheader 'answer=RDMA_ERROR len=20 xid=ok vers=1 credits=[0-9]+ err=BADHEADER'
	assert_case source:1100=badheader 'answer=RDMA_ERROR len=20 xid=ok vers=1 credits=[0-9]+ err=BADHEADER'
	assert_case null 'answer=RDMA_MSG .* rpc=SUCCESS'

	# A larger receive size is honoured: replies above 2048 come inline.
	peer_call -a "$RXE_ADDR" -p "$port" --pdata 2048:16384 echo:2000 source:3000 null
	assert_success
	assert_line "connected addr=$RXE_ADDR port=$port pdata=2048:16384 send_max=2048 recv_max=4096"
	assert_case echo:2000 'answer=RDMA_MSG len=2056 xid=ok .* rpc=SUCCESS data=ok'
	assert_case source:3000 'answer=RDMA_MSG len=3056 xid=ok .* rpc=SUCCESS data=ok'

	# Private data that is not RFC 8797's counts as none: the defaults.
	local pd
	for pd in garbage badversion; do
		peer_call -a "$RXE_ADDR" -p "$port" --pdata "$pd" source:900 source:1100=badheader null
		assert_success
		assert_case source:900 'answer=RDMA_MSG len=956 xid=ok .* rpc=SUCCESS data=ok'
		assert_case source:1100=badheader 'answer=RDMA_ERROR len=20 .* err=BADHEADER'
	done
	stop_server
	run count_shim_lines --log "$SERVER_LOG" connection "$RXE_ADDR" '' \
		'inline 1024/1024 \(peer sent no RFC 8797 private data\), '
	assert_output 3
}

@test "the shim client sends nothing above 1024 octets to a peer without private data" {
	local port
	start_peer -a "$RXE_ADDR" -p 0 --pdata none --connections 2 accept
	port=$PEER_PORT

	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null,echo,sink,source -s 0,100,900
	assert_client_ran null,echo,sink,source 0,100,900
	assert_shim_line client "$RXE_ADDR" "$port" 'RDMA, inline 1024/1024 \(peer sent no RFC 8797 private data\), '
	# Too long to go inline: a Long Call (Read chunk), never inline.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o echo -s 2000
	assert_client_ran echo 2000

	wait_peer
	assert_peer_ok
	assert_line --regexp '^client_pdata=present format=0xf6ab0e18 version=1 send=4096 recv=4096 rinv=1 '
	assert_calls_within 1024
	assert_line --regexp '^call conn=2 .* proc=RDMA_NOMSG .* reads=1 '
}

@test "the shim client keeps its calls within the peer's receive size, and takes replies up to its own" {
	local port
	start_peer -a "$RXE_ADDR" -p 0 --pdata 8192:2048 --connections 2 accept
	port=$PEER_PORT

	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null,echo,sink,source -s 0,100,1000,1900
	assert_client_ran null,echo,sink,source 0,100,1000,1900
	assert_shim_line client "$RXE_ADDR" "$port" 'RDMA, inline 2048/4096, '
	# Replies up to min(8192, 4096): a SOURCE of 3000 comes inline.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o source -s 3000
	assert_client_ran source 3000

	wait_peer
	assert_peer_ok
	assert_line --regexp '^accepted conn=1 pdata=8192:2048 credits=32 send_max=4096 recv_max=2048 '
	assert_line --regexp '^reply conn=2 xid=0x[0-9a-f]{8} proc=RDMA_MSG len=3056 rpc=SUCCESS$'
	assert_calls_within 2048
}

@test "the shim client's Long Calls and Long Replies through the peer's chunk handling" {
	start_peer -a "$RXE_ADDR" -p 0 --connections 1 accept

	client --rdma -m tli -h "$RXE_ADDR" -p "$PEER_PORT" -o null,echo,sink,source -s 100,6000,100000
	assert_client_ran null,echo,sink,source 100,6000,100000

	wait_peer
	assert_peer_ok
	assert_calls_within 4096
	# Long Calls went as RDMA_NOMSG with a Read chunk (RFC 8166 s3.5.3),
	# and every call offered a Reply chunk for a Long Reply but the NULL
	# call: its results are xdr_void, its reply a header that fits inline.
	assert_line --regexp '^call .* proc=RDMA_NOMSG .* reads=1 '
	assert_line --regexp '^call .* reply_chunk=[1-9]'
	local none
	none=$(grep -c '^call .* reply_chunk=none ' <<<"$output" || true)
	[[ $none == 1 ]] || fail "calls without a Reply chunk: $none, not 1 (the NULL call)"
}

@test "the shim client takes a grant of zero credits as one" {
	start_peer -a "$RXE_ADDR" -p 0 --credits 0 accept

	client --rdma -m tli -h "$RXE_ADDR" -p "$PEER_PORT" -o null,echo,sink,source -s 0,100,1000 -c 5
	assert_client_ran null,echo,sink,source 0,100,1000 5

	wait_peer
	assert_peer_ok
	assert_line --regexp '^accepted conn=1 pdata=4096:4096 credits=0 '
	assert_line --regexp '^summary case=accept requests=1 accepted=1 rejected=0 closed=1 calls=50 violations=0 '
}

@test "memory offered in chunks is out of reach once its call has completed" {
	start_peer -a "$RXE_ADDR" -p 0 --connections 2 rkey-after-reply

	# Each first call needs a chunk (a Reply chunk or Write chunk for a
	# long reply; a Read chunk for a long call); the second call lets the
	# peer touch that chunk after the first call completed.
	# The peer's late access breaks each connection: the second call of
	# each run fails, by design.
	client --rdma -m tli -h "$RXE_ADDR" -p "$PEER_PORT" -o source -s 100000,8
	assert_line "source 100000 ok"
	client --rdma -m tli -h "$RXE_ADDR" -p "$PEER_PORT" -o sink -s 100000,8
	assert_line "sink 100000 ok"

	wait_peer
	refute_line --partial "reason=no_chunk_offered"
	assert_peer_ok
	refute_line --regexp '^late_(write|read)=ok '
	assert_line --regexp '^late_write=failed '
	assert_line --regexp '^late_read=failed '
}

@test "rdma-peer against itself: chunks both ways, and rkey-after-reply catches memory left exposed" {
	start_peer -a "$RXE_ADDR" -p 0 accept
	peer_call -a "$RXE_ADDR" -p "$PEER_PORT" \
		echo:100+reply source:6000+reply source:6000+write echo:6000+read+reply \
		sink:6000+read echo:6000+read+write+reply null+read null
	assert_success
	assert_case echo:100+reply 'answer=RDMA_MSG len=156 .* data=ok reply_chunk_used=0'
	assert_case source:6000+reply 'answer=RDMA_NOMSG len=[0-9]+ .* data=ok reply_chunk_used=6028'
	assert_case source:6000+write 'answer=RDMA_MSG len=[0-9]+ .* data=ok write_chunk_used=6000'
	assert_case echo:6000+read+reply 'answer=RDMA_NOMSG len=[0-9]+ .* data=ok reply_chunk_used=6028'
	assert_case sink:6000+read 'answer=RDMA_MSG len=68 .* data=ok'
	wait_peer
	assert_peer_ok
	assert_line --regexp '^call conn=1 xid=0x[0-9a-f]{8} proc=RDMA_NOMSG vers=1 credits=8 reads=1 writes=0 reply_chunk=1:7024 len=[0-9]+$'

	# A client that deregisters each call's memory once it has the
	# answer: the late Write and Read fail, and take the connection.
	start_peer -a "$RXE_ADDR" -p 0 rkey-after-reply
	peer_call -a "$RXE_ADDR" -p "$PEER_PORT" source:6000+reply null
	assert_failure 1
	assert_line --regexp '^case=null .* answer=disconnected result=failed'
	wait_peer
	assert_peer_ok
	assert_line --regexp '^late_write=failed status="remote access error" conn=1 of_xid=0x[0-9a-f]{8} target=reply '

	start_peer -a "$RXE_ADDR" -p 0 rkey-after-reply
	peer_call -a "$RXE_ADDR" -p "$PEER_PORT" sink:6000+read null
	assert_failure 1
	wait_peer
	assert_peer_ok
	assert_line --regexp '^late_read=failed status="remote access error" conn=1 '

	# A careless client that leaves it registered is caught.
	start_peer -a "$RXE_ADDR" -p 0 rkey-after-reply
	peer_call -a "$RXE_ADDR" -p "$PEER_PORT" --keep-chunks echo:6000+read+reply null
	assert_success
	wait_peer
	((PEER_STATUS == 1)) || fail "rdma-peer exited $PEER_STATUS, not 1"
	assert_line --regexp '^late_write=ok '
	assert_line --regexp '^late_read=ok '
	assert_line --regexp '^summary case=rkey-after-reply .* late_tested=2 late_exposed=2 result=failed why=memory_still_exposed$'
}
