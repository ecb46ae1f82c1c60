# Helpers for the suite where the Linux kernel's NFS client is the peer
# (rdma/090-kernel-client.bats); loaded after ../helpers and ../tools:
#
#     load ../helpers
#     load ../tools
#     load nfs
#
# nfstest-server (tests/programs/nfs) exports a tmpfs; the kernel mounts it
# with NFS version 3 over RDMA (proto=rdma) or TCP, MOUNT over TCP on the
# same port.  A test starts its server with nfs_serve and mounts it with
# nfs_mount; teardown unmounts whatever is left, stops the server and
# removes the export.

NFSTEST_SERVER=$RPCTEST_BIN_DIR/nfs/nfstest-server
NFSTEST_PATTERN=$RPCTEST_BIN_DIR/nfs/nfstest-pattern

NFS_BASE=/srv/rpcrdma-nfstest
NFS_EXPORT=$NFS_BASE/export	# a tmpfs, owned by the server's user
NFS_RUN=$NFS_BASE/run		# the server's ready file
NFS_MNT=$NFS_BASE/mnt		# mount points: $NFS_MNT/rdma, $NFS_MNT/tcp

# The options of every mount but proto= and the ports.
NFS_MOUNT_OPTS=vers=3,mountproto=tcp,nolock,rsize=1048576,wsize=1048576

# Bound on one mount(8) or umount(8).
: "${NFS_MOUNT_TIMEOUT:=30}"

NFS_MOUNTS=()
NFS_DMESG_LINES=0

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

# The kernel's NFS client and its RDMA transport; the VM loads no module
# by itself.
nfs_load_modules() {
	[[ -n ${RXE_KROOT:-} ]] || return 0
	modprobe -d "$RXE_KROOT" nfs && modprobe -d "$RXE_KROOT" nfsv3 &&
		modprobe -d "$RXE_KROOT" rpcrdma
}

# nfs_serve [--root] [server options]: nfstest-server with the shim,
# serving a fresh tmpfs on RXE_ADDR at a free port.  As nobody (ulimit -l
# 8192, Debian's default) unless --root (the export then is root's, mode
# 1777).  Sets SERVER_PID, SERVER_LOG, NFS_PORT.
nfs_serve() {
	local as_root=0 owner=nobody:nogroup mode=0755
	if [[ ${1:-} == --root ]]; then
		as_root=1 owner=root:root mode=1777
		shift
	fi
	mkdir -p "$NFS_EXPORT" "$NFS_RUN" "$NFS_MNT/rdma" "$NFS_MNT/tcp"
	mountpoint -q "$NFS_EXPORT" || mount -t tmpfs -o size=1g,mode="$mode" tmpfs "$NFS_EXPORT"
	chown "$owner" "$NFS_EXPORT"
	chmod "$mode" "$NFS_EXPORT"
	chown nobody:nogroup "$NFS_RUN"
	rm -f "$NFS_RUN/ready"
	NFS_DMESG_LINES=$(dmesg | wc -l)

	NFS_PORT=$(free_port)
	local log=$BATS_TEST_TMPDIR/nfstest-server.log
	local -a cmd=(env "LD_PRELOAD=$RPCRDMA_TEST_SHIM_LIB" "$NFSTEST_SERVER"
		-d "$NFS_EXPORT" -a "$RXE_ADDR" -p "$NFS_PORT" -r "$NFS_RUN/ready" "$@")
	((as_root)) || cmd=(setpriv --reuid=nobody --regid=nogroup --clear-groups "${cmd[@]}")
	echo "# ulimit -l 8192; ${cmd[*]}" >"$log"
	# Each command execs the next: SERVER_PID is the server's.
	bash -c 'ulimit -l 8192 && exec "$@"' nfs_serve "${cmd[@]}" >>"$log" 2>&1 </dev/null 3>&- &
	SERVER_PID=$!
	SERVER_LOG=$log
	SERVER_PIDS+=("$SERVER_PID")
	SERVER_LOGS+=("$log")
	await_ready "$SERVER_PID" "$NFS_RUN/ready" nfstest-server
}

# nfs_mount XPRT: mount the server at $NFS_MNT/XPRT over rdma or tcp;
# sets MNT.
nfs_mount() {
	local xprt=$1
	MNT=$NFS_MNT/$xprt
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

# nfs_finish: what every test ends with: the mounts go away, the server
# keeps running without them, then stops with status 0 on SIGTERM, and the
# kernel said nothing about NFS or RDMA meanwhile.
nfs_finish() {
	local m
	for m in "${NFS_MOUNTS[@]}"; do
		nfs_umount "$m"
	done
	sleep 0.5
	_alive "$SERVER_PID" || fail "nfstest-server ended when the client unmounted"
	stop_server
	assert_no_kernel_errors
}

# The kernel's messages since nfs_serve: none from the NFS client or the
# RPC-over-RDMA transport (a reconnect, a bad reply, a server not
# responding would show here).
assert_no_kernel_errors() {
	local new
	new=$(dmesg | tail -n +"$((NFS_DMESG_LINES + 1))" |
		grep -iE 'rpcrdma|xprtrdma|svcrdma|rdma_rxe|nfs:|nfs3|RPC:|lockd') || true
	[[ -z $new ]] || fail "the kernel logged:
$new"
}

nfs_teardown() {
	local m
	for m in "${NFS_MOUNTS[@]}"; do
		umount -f -l "$m" 2>/dev/null || true
	done
	NFS_MOUNTS=()
	tools_teardown
	if [[ -z ${BATS_TEST_COMPLETED:-} ]]; then
		echo "--- kernel messages of the test" >&2
		dmesg | tail -n +"$((NFS_DMESG_LINES + 1))" >&2 || true
	fi
	mountpoint -q "$NFS_EXPORT" && umount -l "$NFS_EXPORT"
	return 0
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
