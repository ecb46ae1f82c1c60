#!/usr/bin/env bats
#
# The README's demo (tools/demo), run as the README runs it, inside the
# soft-RoCE VM.  Each of its scenes checks what it shows and the demo
# fails otherwise; the lines asserted here are those checks' evidence,
# so that a demo which no longer shows RDMA (its clients quietly on TCP,
# say) fails this suite.  The demo runs its RPC programs as nobody under
# ulimit -l 8192 itself, and mounts as root.

load ../helpers

setup() {
	require_build
	require_rdma_device
	require_env RXE_ADDR RXE_TCP_PEER_NS RXE_TCP_PEER_ADDR
}

@test "the README's demo: RDMA from the first call, the upgrade, the kernel's mount, the fallback" {
	run timeout 600 "$RPCRDMA_SRC_DIR/tools/demo" --inside "$RPCRDMA_BUILD_DIR"
	assert_success
	# upgrade = wait: the server saw the client over RDMA.
	assert_line --regexp '^whoami .* netid=rdma '
	# upgrade = background: the same client's calls on TCP, then on RDMA.
	assert_line --regexp '^[0-9]+ +rpctest-client +client +TCP '
	assert_line --regexp '^[0-9]+ +rpctest-client +client +RDMA '
	# A client without the shim stays on TCP.
	assert_line --regexp '^whoami .* netid=tcp '
	# The kernel's NFS client mounted the user-space server over RDMA.
	assert_line --regexp '^[[:space:]]*xprt:[[:space:]]+rdma '
	# The peer without RDMA: TCP, with the reason.
	assert_line --regexp "to ${RXE_TCP_PEER_ADDR//./\\.} port [0-9]+: TCP \(address not on an RDMA device"
	assert_line 'demo: done'
}
