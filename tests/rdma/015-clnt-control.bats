#!/usr/bin/env bats
#
# What a program sees of its CLIENT is the same over RDMA as over TCP:
# clnt_control() answers (descriptor, addresses, program and version,
# timeouts, the XID sequence, CLSET_XID/VERS/PROG and their effect),
# batched calls, and who closes the descriptor.  ctlprobe prints all of
# it without transport-specific values; the two runs must match line for
# line.

load ../helpers

setup() {
	require_build
	require_rdma_device
	require_env RXE_ADDR
}

@test "clnt_control and friends: an RDMA CLIENT answers exactly as libtirpc's TCP CLIENT" {
	local port tcp rdma
	port=$(free_port)
	start_server --shim -m tli -a "$RXE_ADDR" -p "$port"

	run timeout 60 "$RPCTEST_BIN_DIR/ctlprobe" "$RXE_ADDR" "$port"
	assert_success
	tcp=$output

	# require-rdma: a CLIENT that fell back to TCP would fail the probe.
	run --separate-stderr env LD_PRELOAD="$RPCRDMA_TEST_SHIM_LIB" \
		RPCRDMA_SHIM_MODE=require-rdma \
		timeout 60 "$RPCTEST_BIN_DIR/ctlprobe" "$RXE_ADDR" "$port"
	assert_success
	rdma=$output
	assert_shim_line --stderr client "$RXE_ADDR" "$port" RDMA
	refute_shim_line --stderr client "$RXE_ADDR" "$port" TCP

	if [[ $tcp != "$rdma" ]]; then
		fail "TCP and RDMA differ:
$(diff <(echo "$tcp") <(echo "$rdma"))"
	fi
	# And the run said something: every line checked has its value.
	assert_line 'CLSET_XID=TRUE call=RPC: Success xid=0x10223345'
	assert_line 'one_way=RPC: Success'
	assert_line 'fd_open_after_destroy=1'
	assert_line 'fd_open_after_destroy=0'
	stop_server
}
