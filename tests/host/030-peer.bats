#!/usr/bin/env bats
#
# rdma-peer (tests/peer) on the build host: its command line and its exit
# status when no RDMA connection is possible.  What it finds on a real
# connection is checked by the rdma suite.

load ../helpers

: "${RPCTEST_PEER:=$RPCRDMA_BUILD_DIR/tests/peer/rdma-peer}"

setup() {
	[[ -x $RPCTEST_PEER ]] ||
		fail "$RPCTEST_PEER is missing: build first (ninja -C build), or set RPCTEST_PEER"
}

@test "usage errors exit 64 with a usage text" {
	local -a bad=(
		""
		"dance"
		"call -p 1 null"
		"call -a 127.0.0.1 null"
		"call -a 127.0.0.1 -p 1"
		"call -a 127.0.0.1 -p 1 nosuchcase"
		"call -a 127.0.0.1 -p 1 echo"
		"call -a 127.0.0.1 -p 1 null:3"
		"call -a 127.0.0.1 -p 1 null=maybe"
		"call -a 127.0.0.1 -p 1 badchunk:wide"
		"call -a 127.0.0.1 -p 1 --pdata 512:4096 null"
		"call -a 127.0.0.1 -p 1 --pdata 4096 null"
		"serve -a 127.0.0.1 -p 1 accept reject"
		"serve -a 127.0.0.1 -p 1 --connections 0 accept"
	)
	local args
	for args in "${bad[@]}"; do
		# shellcheck disable=SC2086 # word splitting wanted
		run "$RPCTEST_PEER" $args
		[[ $status -eq 64 ]] || fail "rdma-peer $args: status $status, not 64: $output"
		assert_output --partial "usage: rdma-peer call"
	done
	run "$RPCTEST_PEER" --help
	assert_failure 64
	assert_output --partial "exit status: 0 as expected"
}

@test "without an RDMA connection, call exits 2 and says why" {
	run timeout 60 "$RPCTEST_PEER" call -a 127.0.0.1 -p 1 --timeout 10 null echo:10
	assert_failure 2
	assert_line --regexp '^connect=(failed|rejected) '
	assert_line "summary cases=2 ok=0 failed=0 not_run=2 result=failed why=no_connection"
	refute_line --partial "case="
}

@test "without an RDMA device, serve exits 2 and says why" {
	! has_rdma_device || skip_for_host "this host has an RDMA device: serve would not fail"
	run timeout 60 "$RPCTEST_PEER" serve -a 127.0.0.1 -p 0 --timeout 1 accept
	assert_failure 2
	assert_line --regexp '^listen=failed '
}
