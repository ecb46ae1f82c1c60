#!/usr/bin/env bats
#
# Wire compatibility with another RPC-over-RDMA Version 1 implementation:
# the Linux kernel's NFS server (svcrdma), listening for RDMA on port
# 20049, answered by unmodified rpcinfo under the shim.  The kernel sends
# RFC 8797 private data and answers through the Reply chunk the client
# offers.

load ../helpers

NFS_RDMA_PORT=20049

setup_file() {
	[[ -n ${RXE_KROOT:-} ]] || return 0
	local m="modprobe -d $RXE_KROOT"
	$m nfsd && $m rpcrdma || return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	mkdir -p /srv/rpcrdma-export
	mountpoint -q /srv/rpcrdma-export || mount -t tmpfs tmpfs /srv/rpcrdma-export
	echo "/srv/rpcrdma-export *(rw,no_root_squash,insecure,no_subtree_check,fsid=77)" \
		>/etc/exports
	if ! timeout 10 rpcinfo -p >/dev/null 2>&1; then
		rpcbind -w
		touch "$BATS_FILE_TMPDIR/rpcbind.started"
	fi
	exportfs -ra
	rpc.nfsd 4
	echo "rdma $NFS_RDMA_PORT" >/proc/fs/nfsd/portlist
}

teardown_file() {
	[[ -n ${RXE_KROOT:-} ]] || return 0
	rpc.nfsd 0 || true
	exportfs -ua || true
	if [[ -e $BATS_FILE_TMPDIR/rpcbind.started ]]; then
		pkill -x rpcbind || true
	fi
}

# What the kernel server offers, before any shim is involved.
require_kernel_nfs() {
	require_rdma_device
	require_env RXE_ADDR RXE_KROOT
	run cat /proc/fs/nfsd/portlist
	assert_line "rdma $NFS_RDMA_PORT"
}

@test "the kernel NFS server listens for RPC-over-RDMA on port $NFS_RDMA_PORT" {
	require_kernel_nfs
	run cat /proc/fs/nfsd/portlist
	assert_line --regexp '^tcp 2049$'
}

@test "unmodified rpcinfo reaches the kernel's svcrdma over RDMA (NFS versions 3 and 4)" {
	require_kernel_nfs
	local vers
	for vers in 3 4; do
		# require-rdma: the NULL call cannot have gone over TCP (the
		# rpcbind lookup stays on TCP by the built-in rule).
		run --separate-stderr env LD_PRELOAD="$RPCRDMA_TEST_SHIM_LIB" \
			RPCRDMA_SHIM_MODE=require-rdma \
			RPCRDMA_SHIM_PORT_MAP="2049:$NFS_RDMA_PORT" \
			timeout 60 rpcinfo -t "$RXE_ADDR" nfs "$vers"
		assert_success
		assert_output "program 100003 version $vers ready and waiting"
		# The NULL call went over RDMA to the kernel, which sent its
		# RFC 8797 private data (no "no RFC 8797 private data" note).
		assert_shim_line --stderr --prog 100003 client "$RXE_ADDR" "$NFS_RDMA_PORT" \
			'RDMA, inline [0-9]+/[0-9]+, credits'
		[[ $stderr == *"client program 100003 (nfs) version $vers to "* ]] ||
			fail "no decision for NFS version $vers in: $stderr"
	done
}

@test "a program the kernel does not serve gets PROG_UNAVAIL over RDMA, not a transport error" {
	require_kernel_nfs
	# NFS version 2 is not served by this kernel: the reply is an RPC
	# error carried over RDMA, decoded by the shim's client.
	run --separate-stderr env LD_PRELOAD="$RPCRDMA_TEST_SHIM_LIB" \
		RPCRDMA_SHIM_MODE=require-rdma \
		RPCRDMA_SHIM_PORT_MAP="2049:$NFS_RDMA_PORT" \
		timeout 60 rpcinfo -t "$RXE_ADDR" 100003 2
	assert_failure
	assert_output "program 100003 version 2 is not available"
	assert_shim_line --stderr --prog 100003 client "$RXE_ADDR" "$NFS_RDMA_PORT" RDMA
}
