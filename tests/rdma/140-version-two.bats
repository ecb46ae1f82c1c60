#!/usr/bin/env bats
#
# RPC-over-RDMA Version Two, negotiated (draft-cel-nfsv4-rpcrdma-version-
# two-01 s5), never worse than Version One:
# - the shim's client and server speak Version Two to each other, every
#   workload byte-exact (rpcrdma-stat: version 2 on both ends; rdma-peer
#   --rpcrdma 2 sees Version Two replies on the wire);
# - a server of Version One only (the shim set to 1, rdma-peer serve)
#   answers ERR_VERS: the client sends the same call, same XID, again in
#   Version One, no error reaches the program, and with auto the process
#   asks that server once; a server that drops Version Two costs the
#   first call only;
# - rdma-peer sends the shim's server what Version Two allows and forbids
#   (RDMA2_OPTIONAL, the wrong direction, headers cut short, versions
#   outside 1..2): the answer or the silence the draft asks for, while
#   another client goes on being served.
# The kernel's peers with the default (auto) are in 120-kernel-peers.bats.

load ../helpers
load peer
load ../tools

setup() {
	require_build
	require_peer
	require_rdma_device
	require_env RXE_ADDR
	require_tools
	require_jq
}

# jq_st PID FILTER: jq FILTER on rpcrdma-stat -j of PID.
jq_st() {
	"$RPCRDMA_TEST_STAT" -j -p "$1" | jq -c "$2"
}

@test "shim client and shim server: Version Two on both ends, inline, Long Call, Long Reply, Write chunks byte-exact" {
	local port cport
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"

	# Inline (100, 3000), Long Calls (64K, 1M+3 in Read chunks), results
	# placed in the Write chunk (ECHO, SOURCE).
	start_client_bg --rdma --env RPCRDMA_SHIM_WRITE_CHUNK=2M -m tli -h "$RXE_ADDR" -p "$port" \
		-o null,echo,sink,source -s 100,3000,64K,1M+3 -q -H
	await_holding
	stat_json -p "$SERVER_PID" -p "$CLIENT_PID"
	cport=${ST[$CLIENT_PID.client.local.port]}
	assert_st "$CLIENT_PID.client.transport" rdma
	assert_st "$CLIENT_PID.client.rpcrdma_version" 2
	assert_st "$CLIENT_PID.client.errors" 0
	assert_st "$CLIENT_PID.client.rdma_errors" 0
	assert_st "$CLIENT_PID.client.dropped" 0
	assert_st_ge "$CLIENT_PID.client.read_chunk_bytes" 1048579
	assert_st_ge "$CLIENT_PID.client.write_chunk_bytes" 1048579
	assert_st "$SERVER_PID.server.$cport.rpcrdma_version" 2
	assert_st "$SERVER_PID.server.$cport.rdma_errors" 0
	stop_client_bg
	((STOP_STATUS == 0)) || fail "the client exited with $STOP_STATUS: $(cat "$CLIENT_LOG")"
	refute_log "$CLIENT_LOG" 'mismatch|RPC:'

	# Long Replies in the Reply chunk (no Write chunk offered).
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o echo,source -s 64K,1M+3 -q -H
	await_holding
	stat_json -p "$CLIENT_PID"
	assert_st "$CLIENT_PID.client.rpcrdma_version" 2
	assert_st "$CLIENT_PID.client.errors" 0
	assert_st_ge "$CLIENT_PID.client.reply_chunk_bytes" $((2 * 1048579))
	assert_st "$CLIENT_PID.client.write_chunk_bytes" 0
	stop_client_bg

	# The decision line says what was offered, the server's what it takes.
	assert_shim_line --log "$CLIENT_LOG" client "$RXE_ADDR" "$port" 'RDMA, .*, RPC-over-RDMA version 2 offered$'
	assert_shim_line --log "$SERVER_LOG" connection "$RXE_ADDR" '' '.*, RPC-over-RDMA versions 1-2$'
	stop_server
}

@test "rdma-peer --rpcrdma 2: Version Two calls answered in Version Two, chunks and all" {
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	peer_call --rpcrdma 2 -a "$RXE_ADDR" -p "$port" \
		null echo:100 echo:3000 sink:3000 noprog echo:6000+read+reply \
		source:6000+reply source:6000+write echo:3000+write+reply null
	assert_success
	assert_line --regexp '^summary cases=10 ok=10 failed=0 '
	# draft s5.3: every reply in the call's version; s4.2.2: direction
	# REPLY (the peer fails a case otherwise).
	local line n=0
	for line in "${lines[@]}"; do
		[[ $line == case=* ]] || continue
		n=$((n + 1))
		[[ $line =~ \ vers=2\  ]] || fail "not a Version Two answer: $line"
	done
	((n == 10)) || fail "$n cases"
	[[ ! $output =~ direction=not_reply ]] || fail "$output"
	stop_server
}

@test "against a shim server set to version 1: ERR_VERS, the call resent in Version One, asked once per process" {
	local port
	port=$(free_port)
	start_server --shim --env RPCRDMA_SHIM_RPCRDMA_VERSION=1 -m tli -a "$RXE_ADDR" -p "$port"

	# Two handles one after the other (-R 2): the first asks and falls
	# back, the second starts in Version One.  Every call succeeds.
	client --rdma --env RPCRDMA_SHIM_LOG_LEVEL=debug -m tli -h "$RXE_ADDR" -p "$port" \
		-o null,echo,source -s 100,64K -R 2
	assert_success
	local offered plain fallbacks refused
	offered=$(grep -cE "$(shim_line client "$RXE_ADDR" "$port" 'RDMA, .*, RPC-over-RDMA version 2 offered$')" <<<"$output" || true)
	plain=$(grep -cE "$(shim_line client "$RXE_ADDR" "$port" 'RDMA, .*, RPC-over-RDMA version 1$')" <<<"$output" || true)
	fallbacks=$(grep -c "offers versions 1\.\.1 (ERR_VERS to the first call): RPC-over-RDMA version 1, for this server from now on$" <<<"$output" || true)
	[[ $offered == 1 && $plain == 1 && $fallbacks == 1 ]] ||
		fail "offered $offered, plain $plain, fallbacks $fallbacks: $output"
	refute_output --partial 'RPC: '
	refused=$(grep -c 'RPC-over-RDMA version 2 from client, answering ERR_VERS' "$SERVER_LOG" || true)
	[[ $refused == 1 ]] || fail "the server refused $refused Version Two calls: $(cat "$SERVER_LOG")"

	# Held at once (-N 2): both connections end in Version One, one
	# ERR_VERS for the two, no error.
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null,echo -s 100 -N 2 -H
	await_holding
	run jq_st "$CLIENT_PID" '[.processes[].transports[] | select(.role == "client") | [.rpcrdma_version, .rdma_errors, .errors]]'
	assert_output '[[1,1,0],[1,0,0]]'
	run jq_st "$SERVER_PID" '[.processes[].transports[] | select(.role == "server") | .rpcrdma_version] | unique'
	assert_output '[1]'
	stop_client_bg
	stop_server
}

@test "against a Version One peer (rdma-peer serve): the same XID sent again; a dropped first call counts as Version One" {
	start_peer -a "$RXE_ADDR" -p 0 --connections 1 accept
	client --rdma -m tli -h "$RXE_ADDR" -p "$PEER_PORT" -o null,echo -s 100,3000
	assert_client_ran null,echo 100,3000
	wait_peer
	assert_peer_ok
	assert_line --regexp '^summary .* negotiations=1 '
	# s5.2: the call refused at the transport level, then the same XID in
	# Version One, served once.
	local xid
	xid=$(sed -nE 's/^negotiation conn=1 xid=(0x[0-9a-f]{8}) vers=2 answer=ERR_VERS len=[0-9]+$/\1/p' <<<"$output")
	[[ -n $xid ]] || fail "no negotiation line: $output"
	assert_line --regexp "^call conn=1 xid=$xid proc=RDMA_MSG vers=1 "
	[[ $(grep -c "^call conn=1 xid=$xid " <<<"$output") == 1 ]] || fail "$xid served twice: $output"
	refute_line --regexp '^call .* vers=2 '

	# A server that drops Version Two: the first call times out (as over
	# TCP a lost message does), the next ones on the CLIENT go in
	# Version One (-k: go on after an error).
	start_peer -a "$RXE_ADDR" -p 0 --connections 1 --drop-v2 accept
	client --rdma -m tli -h "$RXE_ADDR" -p "$PEER_PORT" -t 3 -k -o null,echo,echo -s 100
	assert_failure 1
	assert_output --partial 'failed 1 of 3 calls'
	assert_output --regexp 'did not answer the first call, in version 2: RPC-over-RDMA version 1'
	wait_peer
	assert_line --regexp '^negotiation conn=1 xid=0x[0-9a-f]{8} vers=2 answer=none '
	assert_line --regexp '^summary .* calls=2 .* negotiations=1 '
}

@test "rdma-peer sends Version Two messages the shim server must answer or drop; another client is served meanwhile" {
	local port
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"
	# Another client, over RDMA, all along.
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o echo -s 1000 -c 400 -q -H

	local cuts=(4 8 12 15 16 20 24 28 32 36 40 44 48 52 56 60 64 68 72 76)
	local cases=(null opt opt:7 optcall null optreply null v2back null v2mismatch null
		badvers badvers:0 badvers:255 null)
	local c
	for c in "${cuts[@]}"; do
		cases+=("v2trunc:$c" null)
	done
	peer_call -a "$RXE_ADDR" -p "$port" --credits 16 "${cases[@]}"
	assert_success
	assert_line --regexp "^summary cases=${#cases[@]} ok=${#cases[@]} failed=0 "

	local ok='xid=ok vers=2 credits=[0-9]+'
	# s3.1: an unknown rdma_opttype, with and without payload.
	assert_case opt "answer=RDMA_ERROR len=20 $ok err=INVALID_OPTION"
	assert_case opt:7 "answer=RDMA_ERROR len=20 $ok err=INVALID_OPTION"
	assert_case optcall "answer=RDMA_ERROR len=20 $ok err=INVALID_OPTION"
	# s4.2.2: messages of the REPLY direction answer nothing it asked.
	assert_case optreply 'answer=none waited_ms=[0-9]+'
	assert_case v2back 'answer=none waited_ms=[0-9]+'
	# A CALL carrying a reply breaks s4.2.2: BAD_HEADER, version echoed.
	assert_case v2mismatch "answer=RDMA_ERROR len=20 $ok err=BADHEADER"
	# RFC 8166 s5.5.1: versions outside 1..2, echoed.
	for c in badvers:3 badvers:0 badvers:255; do
		local v=${c#badvers:}
		[[ $c == badvers:3 ]] && c=badvers
		assert_case "$c" "answer=RDMA_ERROR len=28 xid=ok vers=$v credits=[0-9]+ err=ERR_VERS low=1 high=2"
	done
	# A header cut at every field: below the fixed words nothing is
	# known (dropped), beyond them BAD_HEADER.
	for c in "${cuts[@]}"; do
		if ((c < 16)); then
			assert_case "v2trunc:$c" 'answer=none waited_ms=[0-9]+'
		else
			assert_case "v2trunc:$c" "answer=RDMA_ERROR len=20 $ok err=BADHEADER"
		fi
	done
	refute_line --partial stray

	# Dropped and counted (the peer's connection is gone: its log lines).
	[[ $(grep -c 'server: dropped a Version Two ' "$SERVER_LOG") == 2 ]] ||
		fail "expected two dropped messages: $(cat "$SERVER_LOG")"

	await_holding
	grep -qx 'holding after 400 calls' "$CLIENT_LOG" || fail "$(cat "$CLIENT_LOG")"
	refute_log "$CLIENT_LOG" 'RPC:|mismatch'
	stop_client_bg
	stop_server
}

# assert_case CASE REGEX: the peer ran CASE as expected and its answer
# (the part after "sent=N") matches REGEX.
assert_case() {
	local name=${1//+/\\+}
	assert_line --regexp "^case=$name expect=[a-z-]+ xid=0x[0-9a-f]{8} sent=[0-9]+( sent_over_inline=[0-9]+)? $2 result=ok$"
}
