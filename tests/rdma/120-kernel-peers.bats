#!/usr/bin/env bats
#
# Every Linux kernel as a peer.  The chunks the shim's client offers and
# the data it places follow the Upper Layer Binding (RFC 8166 s5.3.2,
# s5.3.3; RFC 8267 for NFS), in segments that Linux servers before 5.11
# accept:
# - rdma-peer --old-kernel plays such a server (ERR_CHUNK for segments
#   over 1 MiB + 16 KiB, checked before the call runs; rnr_retry 0): the
#   shim's client workloads come out byte-exact, and a server refusing
#   smaller segments still is answered with smaller ones, once per peer;
# - the VM's kernel nfsd, reached by nfstest-client under the shim with no
#   configuration (NFS's RDMA port 20049 by default): NULL and GETATTR
#   carry no Reply chunk, READ 1 MiB goes in a Write chunk, READDIR in a
#   Reply chunk (the client's rpcrdma-stat counters);
# - the kernel's NFS client mounts a shim'd nfstest-server with proto=rdma
#   and no port= (the server's RDMA side on 20049 without configuration).
# Programs run as nobody with ulimit -l 8192, except rdma-peer and the
# kernel's own NFS server and mounts.

load ../helpers
load peer
load ../tools
load nfs

NFSTEST_CLIENT=$RPCTEST_BIN_DIR/nfs/nfstest-client
KNFS_EXPORT=/srv/rpcrdma-kpeers
NFS_RDMA_PORT=20049

setup_file() {
	[[ -n ${RXE_KROOT:-} && -n ${RXE_ADDR:-} ]] || return 0
	local m="modprobe -d $RXE_KROOT"
	$m nfsd && $m rpcrdma && $m nfs && $m nfsv3 || return 0
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	nfs_tmpfs "$KNFS_EXPORT" root:root 0755
	# A file of 1 MiB for READ, 300 long names for READDIR.
	"$NFSTEST_PATTERN" 7 1048576 >"$KNFS_EXPORT/big"
	local i
	for ((i = 0; i < 300; i++)); do
		: >"$KNFS_EXPORT/entry-with-a-rather-long-name-number-$i"
	done
	echo "$KNFS_EXPORT *(rw,no_root_squash,insecure,no_subtree_check,fsid=78)" \
		>/etc/exports
	if ! timeout 10 rpcinfo -p >/dev/null 2>&1; then
		rpcbind -w
		touch "$BATS_FILE_TMPDIR/rpcbind.started"
	fi
	exportfs -ra
	rpc.mountd
	# READ of 1 MiB in one call (nfsd sizes it from the VM's memory).
	echo 1048576 >/proc/fs/nfsd/max_block_size
	rpc.nfsd 4
	echo "rdma $NFS_RDMA_PORT" >/proc/fs/nfsd/portlist
}

teardown_file() {
	[[ -n ${RXE_KROOT:-} ]] || return 0
	rpc.nfsd 0 || true
	exportfs -ua || true
	pkill -x rpc.mountd || true
	if [[ -e $BATS_FILE_TMPDIR/rpcbind.started ]]; then
		pkill -x rpcbind || true
	fi
	mountpoint -q "$KNFS_EXPORT" && umount -l "$KNFS_EXPORT"
	return 0
}

setup() {
	require_build
	require_rdma_device
	require_env RXE_ADDR
}

teardown() {
	nfs_teardown
}

require_kernel_nfsd() {
	require_env RXE_KROOT
	require_jq
	require_tools
	[[ -x $NFSTEST_CLIENT ]] || fail "$NFSTEST_CLIENT is missing: build first"
	run cat /proc/fs/nfsd/portlist
	assert_line "rdma $NFS_RDMA_PORT"
}

# --- a server as Linux before 5.11 (rdma-peer --old-kernel) -----------------

@test "pre-5.11 server (rdma-peer --old-kernel): every workload byte-exact, no chunk refused" {
	require_peer
	start_peer -a "$RXE_ADDR" -p 0 --connections 1 --old-kernel accept
	# Calls and replies over 1 MiB: Read, Write and Reply chunks of
	# several segments, none over RPCSVC_MAXPAGES pages (1 MiB + 12 KiB).
	# The Write chunk takes ECHO's and SOURCE's data, as those kernels
	# place any page data in it; SINK's reply is small, NULL's empty.
	client --rdma --env RPCRDMA_SHIM_MAX_REPLY=2M --env RPCRDMA_SHIM_WRITE_CHUNK=1100K \
		-m tli -h "$RXE_ADDR" -p "$PEER_PORT" -o null,echo,sink,source \
		-s 1,100,4000,64K,1M+3,1040K+3
	assert_client_ran null,echo,sink,source 1,100,4000,64K,1M+3,1040K+3
	wait_peer
	assert_peer_ok
	assert_line --regexp '^summary .* err_chunks=0 '
	refute_line --regexp '^err_chunk='
	# Chunks were offered and used: a Reply chunk of 2 segments (2 MiB +
	# 4 KiB), the Write chunk in two, a long call's Read chunk in two
	# (above 1 MiB + 12 KiB), and the results placed.
	assert_line --regexp '^call .* reads=2 writes=1 reply_chunk=2:2101248 '
	assert_line --regexp '^reply .* write_chunk_used=1048579$'
	assert_line --regexp '^reply .* write_chunk_used=1064963$'
}

@test "a server refusing segments over 256 KiB: later calls go in segments it takes; no call is sent twice" {
	require_peer
	start_peer -a "$RXE_ADDR" -p 0 --connections 1 --old-kernel --seg-max 256K accept
	client --rdma --env RPCRDMA_SHIM_LOG_LEVEL=info -m tli -h "$RXE_ADDR" -p "$PEER_PORT" \
		-o echo,source -s 100,64K,1M+3 -k
	assert_failure 1
	# ECHO's reply has no size the client knows, so it offers a Reply
	# chunk of max_reply.  An ERR_CHUNK to it may also mean "the reply
	# did not fit, the call ran" (RFC 8166 s5.5.3): the call fails and is
	# not sent again, and the peer gets smaller segments from then on.
	# The Reply chunk's one segment (1 MiB + 4 KiB) refused, then 512
	# KiB ones: two calls fail, every later one goes with 256 KiB.
	assert_line "echo 100: RPC: Unable to receive; errno = Message too long"
	assert_line "echo 65536: RPC: Unable to receive; errno = Message too long"
	assert_line --regexp "client: server answered RDMA_ERROR \(BADHEADER\) to xid 0x[0-9a-f]+: .* segments of 1052672 octets refused give this; the call is not sent again \(the server may have run it\), later calls use segments of at most 524288$"
	assert_line --regexp "client: server answered RDMA_ERROR \(BADHEADER\) to xid 0x[0-9a-f]+: .* segments of 524288 octets refused give this; the call is not sent again \(the server may have run it\), later calls use segments of at most 262144$"
	refute_line --partial "sending it again"
	assert_line "echo 1048579 ok"
	local size
	for size in 100 65536 1048579; do
		assert_line "source $size ok"
	done
	wait_peer
	assert_peer_ok
	assert_line --regexp '^summary .* err_chunks=2 '
	[[ $(grep -c '^err_chunk=reply_segment ' <<<"$output") == 2 ]] ||
		fail "expected two refused Reply chunks: $output"
}

# --- the kernel's nfsd ------------------------------------------------------

# nfsc NAME COMMANDS...: nfstest-client as nobody with the shim (RDMA
# required for NFS, MOUNT on TCP), in the background until it holds its
# CLIENT; sets NFSC_PID and NFSC_LOG.
nfsc() {
	local name=$1
	shift
	start_bg "$name" --rdma --env "RPCRDMA_SHIM_RULE=tcp program 100005" -- \
		"$NFSTEST_CLIENT" -a "$RXE_ADDR" -e "$KNFS_EXPORT" -o "$BATS_TEST_TMPDIR/out" \
		"$@" hold
	NFSC_PID=$BG_PID
	NFSC_LOG=$BG_LOG
	wait_until -q 120 "nfstest-client to hold" _nfsc_held ||
		fail "nfstest-client did not get to hold: $(cat "$NFSC_LOG")"
	grep -qx holding "$NFSC_LOG" || fail "nfstest-client failed: $(cat "$NFSC_LOG")"
	stat_json -p "$NFSC_PID"
	assert_st "$NFSC_PID.client.transport" rdma
	assert_st "$NFSC_PID.client.program" 100003
	assert_st "$NFSC_PID.client.peer.port" "$NFS_RDMA_PORT"
	assert_st "$NFSC_PID.client.errors" 0
}

_nfsc_held() {
	grep -qx holding "$NFSC_LOG" || ! _alive "$NFSC_PID"
}

@test "kernel nfsd, no configuration: NULL and GETATTR carry no Reply chunk" {
	require_kernel_nfsd
	nfsc null-getattr null 200 getattr 200
	assert_st "$NFSC_PID.client.calls" 400
	# Version Two offered first (rpcrdma_version = auto): the kernel's
	# ERR_VERS, the call sent again in Version One, no error seen.
	assert_st "$NFSC_PID.client.rpcrdma_version" 1
	assert_st "$NFSC_PID.client.rdma_errors" 1
	# The kernel answers through a Reply chunk whenever one is offered:
	# none came back, so none was offered.
	assert_st "$NFSC_PID.client.reply_chunk_bytes" 0
	assert_st "$NFSC_PID.client.write_chunk_bytes" 0
	assert_st "$NFSC_PID.client.long_in" 0
	grep -E '^(null|getattr) calls=200 us_per_call=' "$NFSC_LOG"
}

@test "kernel nfsd: READ 1 MiB comes in a Write chunk, byte-exact" {
	require_kernel_nfsd
	nfsc read read big 1048576
	grep -qx 'read count=1048576 data=1048576 eof=1' "$NFSC_LOG" ||
		fail "READ did not return the whole file: $(cat "$NFSC_LOG")"
	cmp "$BATS_TEST_TMPDIR/out" "$KNFS_EXPORT/big"
	assert_st "$NFSC_PID.client.calls" 2
	assert_st "$NFSC_PID.client.rpcrdma_version" 1
	assert_st "$NFSC_PID.client.write_chunk_bytes" 1048576
	assert_st "$NFSC_PID.client.reply_chunk_bytes" 0
}

@test "kernel nfsd: READDIR comes in a Reply chunk, no Write chunk" {
	require_kernel_nfsd
	nfsc readdir readdir 65536
	grep -qE '^readdir entries=30[0-9] eof=1$' "$NFSC_LOG" ||
		fail "READDIR did not list the 300 entries: $(cat "$NFSC_LOG")"
	grep -qx 'entry-with-a-rather-long-name-number-299' "$NFSC_LOG" ||
		fail "entry 299 missing"
	assert_st "$NFSC_PID.client.calls" 1
	assert_st "$NFSC_PID.client.write_chunk_bytes" 0
	assert_st_ge "$NFSC_PID.client.reply_chunk_bytes" 16384
}

# --- NFSv4.1: the READ data placed, the session id inline --------------------

NFS4_READ_SERVER=$RPCRDMA_BUILD_DIR/tests/peer/nfs4-read-server

# assert_nfs4_case CASE CHUNK: rdma-peer's nfs4read CASE came back whole,
# its session id, tag and data as sent, with CHUNK (a regex) in the answer.
assert_nfs4_case() {
	local name=${1//+/\\+}
	assert_line --regexp "^case=$name expect=success xid=0x[0-9a-f]{8} sent=[0-9]+ answer=RDMA_(NO)?MSG .* rpc=SUCCESS data=ok $2 result=ok$"
}

@test "NFSv4.1 READ COMPOUND to a shim'd server: only the READ data in the Write chunk, the session id inline" {
	# SEQUENCE, PUTFH, READ from the raw peer, offering a Write chunk of
	# the READ's size: RFC 8267 makes only READ's data eligible, so the
	# 16-octet session id before it (the first opaque of the reply) must
	# stay in the inline reply, and the chunk hold exactly the data.
	require_peer
	[[ -x $NFS4_READ_SERVER ]] || fail "$NFS4_READ_SERVER is missing: build first"
	local port ready=$BATS_TEST_TMPDIR/nfs4.ready pid
	port=$(free_port)
	start_bg nfs4-read-server --rdma -- "$NFS4_READ_SERVER" -a "$RXE_ADDR" -p "$port" -r "$ready"
	pid=$BG_PID
	await_ready "$pid" "$ready" nfs4-read-server
	peer_call -a "$RXE_ADDR" -p "$port" --prog 100003 --vers 4 \
		nfs4read:1K+write nfs4read:64K+write nfs4read:1024K+write nfs4read:64K+reply
	assert_success
	assert_nfs4_case nfs4read:1K+write "write_chunk_used=1024"
	assert_nfs4_case nfs4read:64K+write "write_chunk_used=65536"
	assert_nfs4_case nfs4read:1024K+write "write_chunk_used=1048576"
	# Without a Write chunk the whole reply comes through the Reply chunk.
	assert_nfs4_case nfs4read:64K+reply "reply_chunk_used=[0-9]+"
	assert_line "summary cases=4 ok=4 failed=0 not_run=0 result=ok"
	stop_server "$pid"
}

# --- the kernel's NFS client ------------------------------------------------

@test "the kernel's client mounts a shim'd server with proto=rdma and no port=: RDMA on 20049" {
	require_env RXE_KROOT
	require_jq
	require_tools
	# NFS's ports are the server's now: the kernel's nfsd goes.
	rpc.nfsd 0
	! grep -qE '^(rdma|tcp) ' /proc/fs/nfsd/portlist 2>/dev/null ||
		fail "nfsd still listens: $(cat /proc/fs/nfsd/portlist)"
	nfs_serve -p 2049
	MNT=$NFS_OWN_MNT/rdma
	run timeout "$NFS_MOUNT_TIMEOUT" mount -t nfs \
		-o vers=3,proto=rdma,mountport=2049,mountproto=tcp,nolock \
		"$RXE_ADDR:/" "$MNT"
	assert_success
	NFS_MOUNTS+=("$MNT")
	run mount_line "$MNT"
	assert_output --regexp "proto=rdma,port=$NFS_RDMA_PORT,"
	[[ $(mount_xprt "$MNT") == rdma ]] || fail "$MNT is not over RDMA"
	pattern "$BATS_TEST_TMPDIR/f" 11 300000
	cp "$BATS_TEST_TMPDIR/f" "$MNT/f"
	sync
	cmp "$BATS_TEST_TMPDIR/f" "$NFS_OWN_EXPORT/f"
	drop_caches
	cmp "$BATS_TEST_TMPDIR/f" "$MNT/f"
	# The server's RDMA listener is on 20049 with no port_map.
	grep -q "RDMA listener on port $NFS_RDMA_PORT\$" "$SERVER_LOG" ||
		fail "no RDMA listener on $NFS_RDMA_PORT in: $(cat "$SERVER_LOG")"
	# Its programs see the kernel client's own port: not a reserved one
	# (the kernel's RDMA client binds none, and RDMA-CM lets only
	# privileged processes bind below 1024, as TCP does: the shim never
	# pretends).
	local doc port
	doc=$("$RPCRDMA_TEST_STAT" -j -p "$SERVER_PID")
	port=$(jq -r '[.processes[].transports[] | select(.role == "server" and .transport == "rdma")][0].peer.port' <<<"$doc")
	[[ $port =~ ^[0-9]+$ ]] && ((port >= 1024)) ||
		fail "the kernel client's RDMA connection comes from port '$port': $doc"
	# The server accepts Version Two (the default) and the kernel's
	# client speaks Version One: its calls answered in Version One.
	[[ $(jq -r '[.processes[].transports[] | select(.role == "server" and .transport == "rdma")][0].rpcrdma_version' <<<"$doc") == 1 ]] ||
		fail "the kernel client's connection is not in Version One: $doc"
	nfs_finish
}
