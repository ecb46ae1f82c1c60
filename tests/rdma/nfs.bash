# Helpers for the suite where the Linux kernel's NFS client is the peer
# (rdma/090-kernel-client.bats); loaded after ../helpers and ../tools:
#
#     load ../helpers
#     load ../tools
#     load nfs
#
# nfstest-server (tests/programs/nfs) exports a tmpfs; the kernel mounts it
# with NFS version 3 over RDMA (proto=rdma) or TCP, MOUNT over TCP on the
# same port.  Program start-up is slow in the emulator, so the file shares
# one server, run as nobody with the shim, mounted once over RDMA and once
# over TCP (nfs_file_setup in setup_file, nfs_file_teardown in
# teardown_file); each test works in its own directory of it (nfs_use).
# Tests that need a server of their own start it with nfs_serve.

NFSTEST_SERVER=$RPCTEST_BIN_DIR/nfs/nfstest-server
NFSTEST_PATTERN=$RPCTEST_BIN_DIR/nfs/nfstest-pattern

NFS_BASE=/srv/rpcrdma-nfstest
NFS_EXPORT=$NFS_BASE/export		# the file's server: a tmpfs owned by nobody
NFS_MNT=$NFS_BASE/mnt			# its mounts: $NFS_MNT/rdma, $NFS_MNT/tcp
NFS_OWN_EXPORT=$NFS_BASE/own-export	# a test's own server (nfs_serve)
NFS_OWN_MNT=$NFS_BASE/own-mnt
NFS_RUN=$NFS_BASE/run			# ready files, writable by nobody

# The options of every mount but proto= and the ports.
NFS_MOUNT_OPTS=vers=3,mountproto=tcp,nolock,rsize=1048576,wsize=1048576

# Bound on one mount(8) or umount(8).
: "${NFS_MOUNT_TIMEOUT:=30}"

NFS_MOUNTS=()

# --- the file's server ------------------------------------------------------

# The kernel's NFS client and its RDMA transport (the VM loads no module by
# itself), then the shared server and its two mounts.  Nothing here fails
# the file: each test checks what it needs (nfs_use) and says what went
# wrong, with the server's log.
nfs_file_setup() {
	[[ -n ${RXE_KROOT:-} && -n ${RXE_ADDR:-} ]] || return 0
	modprobe -d "$RXE_KROOT" nfs && modprobe -d "$RXE_KROOT" nfsv3 &&
		modprobe -d "$RXE_KROOT" rpcrdma || return 0
	local dir=$BATS_FILE_TMPDIR
	dmesg | wc -l >"$dir/dmesg.lines"
	nfs_tmpfs "$NFS_EXPORT" nobody:nogroup 0755
	mkdir -p "$NFS_MNT/rdma" "$NFS_MNT/tcp"
	nfs_run_dir

	local port
	port=$(BATS_TEST_TMPDIR=$dir free_port)
	echo "$port" >"$dir/port"
	local -a cmd=(setpriv --reuid=nobody --regid=nogroup --clear-groups
		env "LD_PRELOAD=$RPCRDMA_TEST_SHIM_LIB" "$NFSTEST_SERVER"
		-d "$NFS_EXPORT" -a "$RXE_ADDR" -p "$port" -r "$NFS_RUN/ready.file")
	echo "# ulimit -l 8192; ${cmd[*]}" >"$dir/server.log"
	# A waiter keeps the server's exit status for the test that stops it
	# (tests are not its parent).  Each command execs the next: the pid
	# is the server's.
	(
		bash -c 'ulimit -l 8192 && exec "$@"' nfs_serve "${cmd[@]}" \
			>>"$dir/server.log" 2>&1 </dev/null &
		echo $! >"$dir/server.pid"
		wait $!
		echo $? >"$dir/server.status"
	) </dev/null >/dev/null 2>&1 3>&- &
	local deadline=$((SECONDS + RPCTEST_READY_TIMEOUT))
	until [[ -s $NFS_RUN/ready.file ]]; do
		[[ -e $dir/server.status ]] && return 0
		((SECONDS < deadline)) || return 0
		sleep 0.1
	done
	local xprt
	for xprt in rdma tcp; do
		timeout "$NFS_MOUNT_TIMEOUT" mount -t nfs \
			-o "$NFS_MOUNT_OPTS,proto=$xprt,port=$port,mountport=$port" \
			"$RXE_ADDR:/" "$NFS_MNT/$xprt" >"$dir/mount.$xprt" 2>&1 ||
			echo "status $?" >>"$dir/mount.$xprt"
	done
}

nfs_file_teardown() {
	local dir=$BATS_FILE_TMPDIR m pid
	for m in "$NFS_MNT/rdma" "$NFS_MNT/tcp"; do
		mountpoint -q "$m" && umount -f -l "$m"
	done
	pid=$(cat "$dir/server.pid" 2>/dev/null) || true
	if [[ -n $pid ]] && _alive "$pid"; then
		kill -TERM "$pid"
		_wait_gone "$pid" "$RPCTEST_STOP_TIMEOUT" || kill -KILL "$pid"
	fi
	mountpoint -q "$NFS_EXPORT" && umount -l "$NFS_EXPORT"
	return 0
}

# nfs_use XPRT: the shared server's mount over rdma or tcp must be there.
# Sets MNT, SERVER_PID, SERVER_LOG, NFS_PORT, and W and SW: this test's
# directory as the client and as the server see it.
nfs_use() {
	local xprt=$1 dir=$BATS_FILE_TMPDIR
	SERVER_LOG=$dir/server.log
	SERVER_LOGS+=("$SERVER_LOG")
	SERVER_PID=$(cat "$dir/server.pid" 2>/dev/null) ||
		fail "nfstest-server did not start (setup_file)"
	NFS_PORT=$(cat "$dir/port")
	_alive "$SERVER_PID" || fail "nfstest-server is not running"
	MNT=$NFS_MNT/$xprt
	mountpoint -q "$MNT" ||
		fail "the kernel did not mount the server over $xprt: $(cat "$dir/mount.$xprt" 2>/dev/null)"
	[[ $(mount_xprt "$MNT") == "$xprt" ]] ||
		fail "$MNT is not over $xprt: xprt $(mount_xprt "$MNT") in /proc/self/mountstats"
	W=$MNT/t$BATS_TEST_NUMBER
	SW=$NFS_EXPORT/t$BATS_TEST_NUMBER
	mkdir "$W"
}

# The shared server's kernel log baseline, and its exit status once ended.
nfs_file_dmesg_lines() {
	cat "$BATS_FILE_TMPDIR/dmesg.lines"
}

nfs_file_status() {
	cat "$BATS_FILE_TMPDIR/server.status" 2>/dev/null
}

# --- a test's own server ------------------------------------------------------

# nfs_tmpfs DIR OWNER MODE: a fresh tmpfs at DIR.
nfs_tmpfs() {
	mkdir -p "$1"
	mountpoint -q "$1" || mount -t tmpfs -o size=1g tmpfs "$1"
	chown "$2" "$1"
	chmod "$3" "$1"
}

nfs_run_dir() {
	mkdir -p "$NFS_RUN"
	chown nobody:nogroup "$NFS_RUN"
}

# nfs_serve [--root] [--daemon] [--preload LIB] [--env NAME=VALUE]
#           [server options]: a server of the test's own with the shim, on
# a fresh tmpfs, RXE_ADDR and a free port; as nobody (ulimit -l 8192,
# Debian's default) unless --root (the export then is root's, mode 1777).
# --daemon: the server detaches (give it -D; daemon.bash); SERVER_PID is
# then the daemon's.  --preload: one more library after the shim; --env:
# one more variable (both repeatable).  Stopped in teardown.  Sets
# SERVER_PID, SERVER_LOG, NFS_PORT.
NFS_DAEMON=0
nfs_serve() {
	local as_root=0 owner=nobody:nogroup mode=0755 preload=$RPCRDMA_TEST_SHIM_LIB
	local -a envs=()
	NFS_DAEMON=0
	while [[ ${1:-} == --* ]]; do
		case $1 in
		--root) as_root=1 owner=root:root mode=1777 ;;
		--daemon) NFS_DAEMON=1 ;;
		--preload) preload+=":$2"; shift ;;
		--env) envs+=("$2"); shift ;;
		*) break ;;
		esac
		shift
	done
	nfs_tmpfs "$NFS_OWN_EXPORT" "$owner" "$mode"
	mkdir -p "$NFS_OWN_MNT/rdma" "$NFS_OWN_MNT/tcp"
	nfs_run_dir
	rm -f "$NFS_RUN/ready"
	NFS_DMESG_LINES=$(dmesg | wc -l)

	NFS_PORT=$(free_port)
	local -a cmd=(env "LD_PRELOAD=$preload" "${envs[@]}" "$NFSTEST_SERVER"
		-d "$NFS_OWN_EXPORT" -a "$RXE_ADDR" -p "$NFS_PORT" -r "$NFS_RUN/ready" "$@")
	((as_root)) || cmd=(setpriv --reuid=nobody --regid=nogroup --clear-groups "${cmd[@]}")
	# Each command execs the next: the pid is the server's.
	start_bg nfstest-server --root -- bash -c 'ulimit -l 8192 && exec "$@"' nfs_serve "${cmd[@]}"
	if ((NFS_DAEMON)); then
		await_daemon "$BG_PID" "$NFS_RUN/ready" nfstest-server
		return
	fi
	SERVER_PID=$BG_PID
	SERVER_LOG=$BG_LOG
	await_ready "$SERVER_PID" "$NFS_RUN/ready" nfstest-server
}

# nfs_mount XPRT: mount the test's own server over rdma or tcp; sets MNT.
nfs_mount() {
	local xprt=$1
	MNT=$NFS_OWN_MNT/$xprt
	run timeout "$NFS_MOUNT_TIMEOUT" mount -t nfs \
		-o "$NFS_MOUNT_OPTS,proto=$xprt,port=$NFS_PORT,mountport=$NFS_PORT" \
		"$RXE_ADDR:/" "$MNT"
	((status == 0)) || fail "mount over $xprt failed (status $status): $output"
	NFS_MOUNTS+=("$MNT")
}

# nfs_umount MNT: umount must succeed, bounded.
nfs_umount() {
	run timeout "$NFS_MOUNT_TIMEOUT" umount "$1"
	((status == 0)) || fail "umount $1 failed (status $status): $output"
	local -a keep=()
	local m
	for m in "${NFS_MOUNTS[@]}"; do
		[[ $m == "$1" ]] || keep+=("$m")
	done
	NFS_MOUNTS=("${keep[@]}")
}

# nfs_finish: the end of a test with its own server: its mounts go away,
# the server keeps running without them, then stops with status 0 on
# SIGTERM, and the kernel said nothing about NFS or RDMA meanwhile.
nfs_finish() {
	local m
	for m in "${NFS_MOUNTS[@]}"; do
		nfs_umount "$m"
	done
	sleep 0.5
	_alive "$SERVER_PID" || fail "nfstest-server ended when the client unmounted"
	if ((NFS_DAEMON)); then
		stop_daemon "$SERVER_PID" "$SERVER_LOG" nfstest-server
	else
		stop_server
	fi
	assert_no_kernel_errors "$NFS_DMESG_LINES"
}

nfs_teardown() {
	local m
	for m in "${NFS_MOUNTS[@]}"; do
		umount -f -l "$m" 2>/dev/null || true
	done
	NFS_MOUNTS=()
	tools_teardown
	if [[ -z ${BATS_TEST_COMPLETED:-} ]]; then
		echo "--- the kernel's last messages" >&2
		dmesg | tail -n 15 >&2 || true
	fi
	mountpoint -q "$NFS_OWN_EXPORT" && umount -l "$NFS_OWN_EXPORT"
	# The VM's memory holds every file: a test's data goes with it.
	[[ -z ${SW:-} ]] || rm -rf "$SW"
	rm -rf "${BATS_TEST_TMPDIR:?}"/*
	return 0
}

# --- checks -------------------------------------------------------------------

# require_nfs: what every test needs.
require_nfs() {
	require_build
	require_tools
	require_rdma_device
	require_env RXE_ADDR RXE_KROOT
	local f
	for f in "$NFSTEST_SERVER" "$NFSTEST_PATTERN"; do
		[[ -x $f ]] || fail "$f is missing: build first (ninja -C build)"
	done
	[[ -d /sys/module/rpcrdma && -d /sys/module/nfsv3 ]] ||
		fail "the kernel modules rpcrdma and nfsv3 are not loaded (setup_file loads them)"
}

# assert_no_kernel_errors LINES: the kernel's messages after the first
# LINES: none from the NFS client or the RPC-over-RDMA transport (a
# reconnect, a bad reply, a server not responding would show here).
assert_no_kernel_errors() {
	local new
	new=$(dmesg | tail -n +"$(($1 + 1))" |
		grep -iE 'rpcrdma|xprtrdma|svcrdma|rdma_rxe|nfs:|nfs3|RPC:|lockd') || true
	[[ -z $new ]] || fail "the kernel logged:
$new"
}

# drop_caches: the next read of any file comes from the server.
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# mount_line MNT: the mount's line in /proc/mounts.
mount_line() {
	awk -v m="$1" '$2 == m' /proc/mounts
}

# mount_xprt MNT: the transport /proc/self/mountstats names for the mount.
mount_xprt() {
	awk -v m="$1" '
		$1 == "device" { mine = ($5 == m) }
		mine && $1 == "xprt:" { print $2; exit }' /proc/self/mountstats
}

# pattern FILE SEED SIZE: FILE holds SIZE bytes of the seeded pattern.
pattern() {
	"$NFSTEST_PATTERN" "$2" "$3" >"$1"
}

# same REF FILE: FILE holds exactly REF's bytes.
same() {
	cmp "$1" "$2" >&2 || fail "$2 differs from $1 ($(stat -c %s "$2" 2>/dev/null || echo no) bytes, $(stat -c %s "$1") expected)"
}
