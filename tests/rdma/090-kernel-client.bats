#!/usr/bin/env bats
#
# The Linux kernel's NFS client as the peer: it mounts nfstest-server (an
# ordinary user-space NFS version 3 server on libtirpc, run unprivileged
# with the shim preloaded) over RPC-over-RDMA and, for comparison, over
# TCP.  The kernel client uses Read chunks for WRITE, Write chunks for
# READ, Reply chunks for READDIRPLUS, many calls in flight and Send With
# Invalidate: whatever it does, every byte must come out right, and the
# kernel must have nothing to complain about.  One server serves the file's
# tests, mounted over both transports (see nfs.bash); the last of them
# unmounts and stops it.

load ../helpers
load ../tools
load nfs
load daemon

setup_file() {
	nfs_file_setup
}

teardown_file() {
	nfs_file_teardown
}

setup() {
	require_nfs
	require_jq
}

teardown() {
	nfs_teardown
}

# The RDMA connection the shim's server accepted from the kernel, its RFC
# 8797 private data recognised, and the server's own view of the transfer
# sizes (FSINFO) taken from the RDMA transport as from a TCP socket.
assert_kernel_rdma_connection() {
	assert_shim_line --log "$SERVER_LOG" --comm nfstest-server connection "$RXE_ADDR" '' \
		'inline 4096/4096, credits [0-9]+, R=1, RPC-over-RDMA versions 1-2$'
	refute_log "$SERVER_LOG" "no RFC 8797 private data"
	refute_log "$SERVER_LOG" "cannot determine the socket type"
}

# rpcrdma-stat shows the server's RDMA connection from the kernel with at
# least N calls, private data and remote invalidation.
assert_stat_rdma_calls() {
	local n=$1 doc
	doc=$("$RPCRDMA_TEST_STAT" -j -p "$SERVER_PID") || fail "rpcrdma-stat -j -p $SERVER_PID failed"
	jq -e --argjson n "$n" '[.processes[].transports[]
		| select(.role == "server" and .transport == "rdma" and .calls >= $n
			 and .peer_private_data == true and .remote_invalidate == true)]
		| length == 1' <<<"$doc" >/dev/null ||
		fail "rpcrdma-stat shows no RDMA server connection with $n calls or more:
$doc"
}

# assert_stat_server JQ WHAT: the server's one RDMA connection from the
# kernel satisfies JQ (a condition on its rpcrdma-stat -j record).
assert_stat_server() {
	local cond=$1 what=$2 doc
	doc=$("$RPCRDMA_TEST_STAT" -j -p "$SERVER_PID") || fail "rpcrdma-stat -j -p $SERVER_PID failed"
	jq -e "[.processes[].transports[]
		| select(.role == \"server\" and .transport == \"rdma\")
		| select($cond)] | length == 1" <<<"$doc" >/dev/null ||
		fail "rpcrdma-stat: the server's RDMA connection does not show $what:
$doc"
}

@test "the kernel mounts the user-space server over RDMA: xprt rdma, 1 MiB transfers from FSINFO" {
	nfs_use rdma
	run mount_line "$MNT"
	assert_output --regexp " nfs .*vers=3,.*proto=rdma,port=$NFS_PORT,"
	assert_output --regexp "[ ,]wsize=1048576[ ,]"
	# rsize is the smaller of the option and FSINFO's rtmax: the server
	# found a stream behind the RDMA transport's descriptor.
	assert_output --regexp "[ ,]rsize=1048576[ ,]"
	run mount_xprt "$MNT"
	assert_output rdma
	echo hello >"$W/hello"
	assert_equal "$(cat "$SW/hello")" hello
	assert_kernel_rdma_connection
	assert_stat_rdma_calls 5
}

@test "the same server over TCP: xprt tcp, 1 MiB transfers" {
	nfs_use tcp
	run mount_line "$MNT"
	assert_output --regexp " nfs .*vers=3,.*rsize=1048576,wsize=1048576,.*proto=tcp,port=$NFS_PORT,"
	run mount_xprt "$MNT"
	assert_output tcp
	echo hello >"$W/hello"
	assert_equal "$(cat "$SW/hello")" hello
	refute_log "$SERVER_LOG" "cannot determine the socket type"
}

# Sizes around a page and a transfer; the largest one is bounded by the
# emulator's speed (a few MB/s over soft-RoCE).
FILE_SIZES="0 1 4095 4096 4097 1048579 67108864"
BIG=67108864

# Files of every size written through the mount (buffered and O_DIRECT)
# and checked on the server's tmpfs, then, with the client's caches
# dropped, read back through the mount both ways, with files the server
# made itself.
files_both_ways() {
	nfs_use "$1"
	files_here "$1"
}

# The same in W and SW as they are (a server of the test's own).
files_here() {
	local xprt=$1 size ref
	for size in $FILE_SIZES; do
		ref=$BATS_TEST_TMPDIR/ref.$size
		pattern "$ref" "$((size + 1))" "$size"
		cp "$ref" "$SW/server.$size"
		dd if="$ref" of="$W/buffered.$size" bs=1M conv=fsync status=none
		dd if="$ref" of="$W/direct.$size" bs=1M oflag=direct status=none
		same "$ref" "$SW/buffered.$size"
		same "$ref" "$SW/direct.$size"
	done
	drop_caches
	for size in $FILE_SIZES; do
		ref=$BATS_TEST_TMPDIR/ref.$size
		# The largest files once each way (the emulator is slow).
		if ((size != BIG)); then
			same "$ref" "$W/buffered.$size"
			dd if="$W/direct.$size" of="$BATS_TEST_TMPDIR/in" bs=1M iflag=direct status=none
			same "$ref" "$BATS_TEST_TMPDIR/in"
		fi
		same "$ref" "$W/server.$size"
		dd if="$W/server.$size" of="$BATS_TEST_TMPDIR/in" bs=1M iflag=direct status=none
		same "$ref" "$BATS_TEST_TMPDIR/in"
	done
	# The server's files are the size they should be, as the client sees them.
	run stat -c '%s %n' "$W/direct.$BIG" "$W/buffered.4097"
	assert_line "$BIG $W/direct.$BIG"
	assert_line "4097 $W/buffered.4097"
	[[ $xprt == tcp ]] && return
	assert_stat_rdma_calls "${FILES_MIN_CALLS:-200}"
	# WRITE data came in Read chunks, READ data went out in Write chunks,
	# and replies invalidated the kernel's registrations (RFC 8797 R=1).
	assert_stat_server ".read_chunk_bytes >= $BIG and
		.write_chunk_bytes >= $BIG and .send_inv > 0" \
		"the largest file's size or more each way through chunks, replies With Invalidate"
}

@test "rdma: files of 0 B to 64 MiB, buffered and O_DIRECT, byte-exact both ways" {
	files_both_ways rdma
}

@test "tcp: files of 0 B to 64 MiB, buffered and O_DIRECT, byte-exact both ways" {
	files_both_ways tcp
}

# 2000 entries made on the server, each with its own size, listed by the
# client with ls -l (READDIRPLUS in Reply chunks over RDMA), and listed
# again while it changes.  Loops of 2000 run in perl, seq and awk: bats
# traps every command a test runs itself, which makes shell loops slow.
big_directory() {
	local xprt=$1
	nfs_use "$xprt"
	mkdir "$SW/d"
	perl -e 'for my $i (1 .. 2000) {
		open(my $f, ">", "$ARGV[0]/f$i") or die "$ARGV[0]/f$i: $!"; print $f " " x $i }' \
		"$SW/d"
	chown -R nobody:nogroup "$SW/d"

	ls -l "$W/d" >"$BATS_TEST_TMPDIR/ls" || fail "ls -l failed"
	awk 'NF >= 9 { print $9, $5 }' "$BATS_TEST_TMPDIR/ls" | sort >"$BATS_TEST_TMPDIR/got"
	seq 2000 | awk '{ print "f" $1, $1 }' | sort >"$BATS_TEST_TMPDIR/want"
	diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" >&2 ||
		fail "ls -l of 2000 entries over $xprt: names or sizes differ (above)"
	run head -n 1 "$BATS_TEST_TMPDIR/ls"
	assert_output --regexp '^total [0-9]+$'

	# Entries come and go on the server while the client lists: every
	# name that stays is listed exactly once, whatever was created or
	# removed between two READDIRPLUS calls (the cookies are not
	# positions).
	perl -e 'my $d = shift; $SIG{TERM} = sub { exit 0 };
		while (1) { for my $i (1 .. 40) { open(my $f, ">", "$d/churn$i") and close($f) }
			    unlink glob("$d/churn*"); select(undef, undef, undef, 0.02) }' "$SW/d" &
	local churn=$! round
	SERVER_PIDS+=("$churn")
	{ printf '%s\n' . ..; seq -f 'f%.0f' 2000; } | sort >"$BATS_TEST_TMPDIR/want"
	for round in 1 2 3; do
		ls -f "$W/d" >"$BATS_TEST_TMPDIR/ls$round" || fail "ls -f failed in round $round"
		grep -v '^churn' "$BATS_TEST_TMPDIR/ls$round" | sort >"$BATS_TEST_TMPDIR/got"
		diff "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got" >&2 ||
			fail "listing $round while the directory changed: entries missing or twice (above)"
	done
	_stop_pid "$churn"
	# READDIRPLUS replies of 2000 entries do not fit inline.
	[[ $xprt == tcp ]] ||
		assert_stat_server '.reply_chunk_bytes > 0' "replies through Reply chunks"
}

@test "rdma: ls -l of a 2000-entry directory, names and sizes right, also while it changes" {
	big_directory rdma
}

@test "tcp: ls -l of a 2000-entry directory, names and sizes right, also while it changes" {
	big_directory tcp
}

# Long symbolic links, renames of files and directories, removal, mkdir
# and rmdir, each seen from the server's side.
names() {
	local xprt=$1 target
	nfs_use "$xprt"
	# A 1000-character target: 100 components of 9 characters and slashes.
	target=$(printf 'component%.0s/' {1..100})
	target=${target%/}
	assert_equal "${#target}" 999
	target+=x
	ln -s "$target" "$W/long"
	assert_equal "$(readlink "$SW/long")" "$target"
	drop_caches
	assert_equal "$(readlink "$W/long")" "$target"
	ln -s short "$W/short"
	assert_equal "$(readlink "$W/short")" short

	mkdir -p "$W/a/b/c"
	echo one >"$W/a/b/c/file"
	mv "$W/a/b/c/file" "$W/a/b/c/renamed"
	[[ ! -e $SW/a/b/c/file ]] || fail "the old name is still there"
	assert_equal "$(cat "$SW/a/b/c/renamed")" one
	# A directory renamed: what it holds is reached under its new name.
	mv "$W/a/b" "$W/a/moved"
	drop_caches
	assert_equal "$(cat "$W/a/moved/c/renamed")" one
	echo two >>"$W/a/moved/c/renamed"
	assert_equal "$(cat "$SW/a/moved/c/renamed")" "one
two"
	# Renamed over an existing file.
	echo three >"$W/a/other"
	mv "$W/a/other" "$W/a/moved/c/renamed"
	assert_equal "$(cat "$SW/a/moved/c/renamed")" three

	run rmdir "$W/a/moved/c"
	assert_failure
	assert_output --partial "Directory not empty"
	rm "$W/a/moved/c/renamed" "$W/long" "$W/short"
	rmdir "$W/a/moved/c" "$W/a/moved" "$W/a"
	run ls -A "$SW"
	assert_output ""
}

@test "rdma: symbolic links of 1000 characters, rename, remove, mkdir and rmdir" {
	names rdma
}

@test "tcp: symbolic links of 1000 characters, rename, remove, mkdir and rmdir" {
	names tcp
}

# 4 readers and 4 writers at once, each on its own 8 MiB file, buffered:
# read-ahead and write-back keep many calls in flight on the one
# connection, more than one credit's worth.
concurrent() {
	nfs_use "$1"
	concurrent_here "$1"
}

concurrent_here() {
	local xprt=$1 i
	local -a pids=()
	for i in 1 2 3 4; do
		pattern "$BATS_TEST_TMPDIR/r$i" "$((100 + i))" 8388608
		pattern "$BATS_TEST_TMPDIR/w$i" "$((200 + i))" 8388608
		cp "$BATS_TEST_TMPDIR/r$i" "$SW/r$i"
	done
	drop_caches
	for i in 1 2 3 4; do
		cat "$W/r$i" >"$BATS_TEST_TMPDIR/in$i" &
		pids+=($!)
		dd if="$BATS_TEST_TMPDIR/w$i" of="$W/w$i" bs=1M conv=fsync status=none &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || fail "a reader or writer failed over $xprt"
	done
	for i in 1 2 3 4; do
		same "$BATS_TEST_TMPDIR/r$i" "$BATS_TEST_TMPDIR/in$i"
		same "$BATS_TEST_TMPDIR/w$i" "$SW/w$i"
	done
	[[ $xprt == tcp ]] || assert_stat_rdma_calls 64
}

@test "rdma: 4 readers and 4 writers at once, every byte right" {
	concurrent rdma
}

@test "tcp: 4 readers and 4 writers at once, every byte right" {
	concurrent tcp
}

@test "umount over RDMA and TCP; the server serves on, then exits 0 on SIGTERM; the kernel logged nothing" {
	nfs_use rdma
	nfs_umount "$NFS_MNT/rdma"
	nfs_umount "$NFS_MNT/tcp"
	sleep 0.5
	_alive "$SERVER_PID" || fail "nfstest-server ended when the client unmounted"
	# Still serving: a new mount over RDMA reads what the tests left.
	echo still >"$NFS_EXPORT/after-umount"
	run timeout "$NFS_MOUNT_TIMEOUT" mount -t nfs \
		-o "$NFS_MOUNT_OPTS,proto=rdma,port=$NFS_PORT,mountport=$NFS_PORT" \
		"$RXE_ADDR:/" "$NFS_MNT/rdma"
	assert_success
	assert_equal "$(cat "$NFS_MNT/rdma/after-umount")" still
	nfs_umount "$NFS_MNT/rdma"

	kill -TERM "$SERVER_PID"
	_wait_gone "$SERVER_PID" "$RPCTEST_STOP_TIMEOUT" ||
		fail "nfstest-server did not stop within ${RPCTEST_STOP_TIMEOUT}s of SIGTERM"
	wait_until 5 "the server's exit status" test -s "$BATS_FILE_TMPDIR/server.status"
	assert_equal "$(nfs_file_status)" 0
	assert_log "$SERVER_LOG" "stopped by signal 15"
	assert_no_kernel_errors "$(nfs_file_dmesg_lines)"
}

# -u: the server starts as root and runs each request as the caller's
# AUTH_SYS identity.  It has a server of its own.
per_user() {
	local xprt=$1
	nfs_serve --root -u
	nfs_mount "$xprt"
	per_user_here
	nfs_finish
}

# Files made in MNT by uid 1000 and by root, as the server's own export
# (NFS_OWN_EXPORT) shows them.
per_user_here() {
	setpriv --reuid=1000 --regid=1000 --clear-groups sh -c \
		"echo mine >'$MNT/by1000' && mkdir '$MNT/dir1000'" ||
		fail "uid 1000 could not create in the mount"
	echo root >"$MNT/byroot"
	chmod 644 "$MNT/byroot"
	run stat -c '%u:%g %n' "$NFS_OWN_EXPORT/by1000" "$NFS_OWN_EXPORT/dir1000" "$NFS_OWN_EXPORT/byroot"
	assert_line "1000:1000 $NFS_OWN_EXPORT/by1000"
	assert_line "1000:1000 $NFS_OWN_EXPORT/dir1000"
	assert_line "0:0 $NFS_OWN_EXPORT/byroot"
	# The server's permission checks are the caller's.
	run setpriv --reuid=1000 --regid=1000 --clear-groups sh -c "echo x >>'$MNT/byroot'"
	assert_failure
	assert_output --partial "Permission denied"
	assert_equal "$(cat "$NFS_OWN_EXPORT/byroot")" root
}

@test "tcp: -u, files made through the mount by uid 1000 are owned by uid 1000" {
	per_user tcp
}

@test "rdma: -u, files made through the mount by uid 1000 are owned by uid 1000" {
	per_user rdma
	assert_kernel_rdma_connection
}

# own_rdma_dir: the kernel mounts the test's own server (nfs_serve) over
# RDMA; W is a new directory through the mount, SW the same on the export.
own_rdma_dir() {
	nfs_mount rdma
	[[ $(mount_xprt "$MNT") == rdma ]] || fail "$MNT is not over rdma"
	W=$MNT/rw
	SW=$NFS_OWN_EXPORT/rw
	mkdir "$W"
}

# The server as a file server runs: as root, detached once its transports
# exist, each request under its caller's identity.  The kernel mounts it
# over RDMA and the read/write tests above pass against it.
@test "rdma: the server as a daemon (-D) with -u: files of 0 B to 64 MiB both ways, 4 readers and 4 writers, each file its caller's" {
	nfs_serve --root --daemon -u -D
	own_rdma_dir
	assert_log "$SERVER_LOG" "^rpcrdma-shim\\[nfstest-server:$SERVER_PID\\]: server: RDMA listener on port $NFS_PORT taken over after fork\\(\\)\$"
	files_here rdma
	concurrent_here rdma
	per_user_here
	assert_kernel_rdma_connection
	nfs_finish
}

# The server's NFS calls run in worker threads, which reply after the
# dispatch returned (nfstest-server -T).  The kernel's client has many
# calls in flight on its one connection; libtirpc's reply answers the
# connection's last call, so each call must wait for the one before it
# to be answered (defer_wait): a reply given to another call would be a
# wrong answer the kernel acts on (data in the wrong place, a wrong
# attribute), which the byte-by-byte checks catch.
@test "rdma: the server answering from worker threads (-T 4): files of 0 B to 8 MiB both ways, 4 readers and 4 writers, every byte right" {
	local FILE_SIZES="0 1 4097 1048579 8388608" BIG=8388608 FILES_MIN_CALLS=40
	nfs_serve -T 4
	own_rdma_dir
	files_here rdma
	concurrent_here rdma
	assert_kernel_rdma_connection
	refute_log "$SERVER_LOG" "defer_wait|not sent|svc_sendreply"
	nfs_finish
}

# A server with an interval timer (SIGALRM every millisecond, a handler
# installed without SA_RESTART: tests/programs/sigtick.c), as daemons
# have for their housekeeping, and poll_us 0, so that its waits sleep
# where the signals find them: svc_run's poll(), the Read chunks' pull,
# the Sends' completions.
@test "rdma: a timer's SIGALRM every millisecond in the server: files of 0 B to 8 MiB both ways, 4 readers and 4 writers, every byte right" {
	[[ -f $RPCTEST_SIGTICK_LIB ]] || fail "$RPCTEST_SIGTICK_LIB is missing: build first"
	local FILE_SIZES="0 1 4097 1048579 8388608" BIG=8388608 FILES_MIN_CALLS=40
	nfs_serve --preload "$RPCTEST_SIGTICK_LIB" --env RPCTEST_SIGTICK_US=1000 \
		--env RPCRDMA_SHIM_POLL_US=0
	own_rdma_dir
	files_here rdma
	concurrent_here rdma
	assert_kernel_rdma_connection
	nfs_finish
	assert_ticked "$SERVER_LOG"
	refute_log "$SERVER_LOG" "warning|error"
}

# A server that stops taking clients (it destroys its listener) and goes
# on serving those it has, as libtirpc serves the TCP connections a
# destroyed rendezvous accepted: the kernel's mount keeps its RDMA
# connection, and a new mount finds no listener.
@test "rdma: the server destroys its listener (-K): the kernel's mount goes on over its connection, every byte right; a new mount is refused" {
	local FILE_SIZES="0 1 4097 1048579 8388608" BIG=8388608 FILES_MIN_CALLS=40
	nfs_serve -K
	own_rdma_dir
	kill -USR2 "$SERVER_PID"
	# The first call after the signal destroys it (touch: a SETATTR each;
	# killed if the server stops answering, as the mount is hard).
	wait_until 20 "the server's listener destroyed and a call answered after it" eval \
		'timeout -s KILL 5 touch "$W/after-close" && grep -q "listener destroyed" "$SERVER_LOG"'
	_alive "$SERVER_PID" || fail "nfstest-server ended when it destroyed its listener: $(tail -n 5 "$SERVER_LOG")"
	assert_log "$SERVER_LOG" "server: RDMA listener on port $NFS_PORT closed with its TCP rendezvous; the connections it accepted \([0-9]+\) are served until they end"
	files_here rdma
	assert_kernel_rdma_connection

	run timeout "$NFS_MOUNT_TIMEOUT" mount -t nfs \
		-o "$NFS_MOUNT_OPTS,proto=rdma,port=$NFS_PORT,mountport=$NFS_PORT,retry=0" \
		"$RXE_ADDR:/" "$NFS_OWN_MNT/tcp"
	((status != 0)) || { NFS_MOUNTS+=("$NFS_OWN_MNT/tcp"); fail "a new mount succeeded after the listener was destroyed"; }
	((status != 124)) || fail "the new mount hung for ${NFS_MOUNT_TIMEOUT} s instead of failing"
	nfs_finish
}
