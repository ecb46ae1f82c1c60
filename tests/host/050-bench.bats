#!/usr/bin/env bats
#
# tools/rpcrdma-bench, as far as it goes without an RDMA device: its help
# and its usage errors, which are all answered before any VM is started;
# tools/rpcrdma-cptrace on stamps written by hand.

load ../helpers

BENCH=$RPCRDMA_SRC_DIR/tools/rpcrdma-bench

# assert_usage_errors TOOL NAME --exact|--partial "ARGS|MESSAGE"...: for
# each case TOOL ARGS exits 2, its first line is "NAME: MESSAGE" (or holds
# it, with --partial) and its second points to --help.
assert_usage_errors() {
	local tool=$1 name=$2 args
	local -a how=()
	[[ $3 != --partial ]] || how=(--partial)
	shift 3
	for args in "$@"; do
		# shellcheck disable=SC2086 # the arguments split on purpose
		run "$tool" ${args%%|*}
		[ "$status" -eq 2 ] || fail "'${args%%|*}': exit $status, not 2: $output"
		assert_line --index 0 "${how[@]}" "$name: ${args#*|}"
		assert_line --index 1 "Try 'tools/$name --help'."
	done
}

@test "rpcrdma-bench --help lists the options and every scenario" {
	run "$BENCH" --help
	assert_success
	assert_line --regexp '^Usage: tools/rpcrdma-bench '
	local opt name
	for opt in --mtu --cpus --pin --quick --scenario --runs; do
		assert_line --regexp "^  $opt( |$)"
	done
	for name in null null-nopoll echo-1k echo-1k-nopoll digest-1k null-t8 echo-4000 echo-4k echo-64k echo-1m \
		source-1m sink-1m echo-4k-x2 echo-4k-t8; do
		assert_line --regexp "^  $name +[0-9x]+ calls  "
	done
	for name in start-rdma start-tcp start-client start-none create blackhole; do
		assert_line --regexp "^  $name +[a-z]"
	done
	run "$BENCH" -h
	assert_success
	assert_line --regexp '^Usage: '
}

@test "rpcrdma-bench: usage errors exit 2 with one line saying what is wrong" {
	local -a bad
	bad=(
		"--frobnicate|unknown option: --frobnicate"
		"--scenario nosuch|unknown scenario: nosuch (known: null null-nopoll echo-1k "
		"--scenario|--scenario needs a name"
		"--mtu 576|--mtu: not an MTU from 1280 to 65535: 576"
		"--mtu big|--mtu: not an MTU from 1280 to 65535: big"
		"--cpus 0|--cpus: not a number from 1 to 9: 0"
		"--pin --cpus 1|--pin needs two CPUs, not --cpus 1"
		"--runs 0|--runs: not a number from 1 to 99: 0"
		"--runs|--runs needs a value"
		"build extra|unexpected argument: extra"
		"$BATS_TEST_TMPDIR/nosuchdir|no build directory $BATS_TEST_TMPDIR/nosuchdir"
	)
	assert_usage_errors "$BENCH" rpcrdma-bench --partial "${bad[@]}"
}

@test "rpcrdma-bench: a build directory without the programs is refused" {
	mkdir -p "$BATS_TEST_TMPDIR/empty"
	run "$BENCH" --quick "$BATS_TEST_TMPDIR/empty"
	assert_failure 1
	assert_output --partial "is missing: build first"
}

# tools/nfs-bench (the kernel's NFS client against nfstest-server and the
# kernel's nfsd): the same conventions.
NFS_BENCH=$RPCRDMA_SRC_DIR/tools/nfs-bench

@test "nfs-bench --help lists the options and the measurements" {
	run "$NFS_BENCH" --help
	assert_success
	assert_line --regexp '^Usage: tools/nfs-bench '
	local opt what
	for opt in --mtu --cpus --size --seconds --runs --quick; do
		assert_line --regexp "^  $opt( |$)"
	done
	for what in "write MB/s" "read MB/s" "4k IOPS" "ls -l s"; do
		assert_line --regexp "^  $what +[a-zA-Z0-9]"
	done
}

@test "nfs-bench: usage errors exit 2 with one line saying what is wrong" {
	local -a bad
	bad=(
		"--frobnicate|unknown option: --frobnicate"
		"--size 0|--size: not a number of MiB from 1 to 512: 0"
		"--size 1024|--size: not a number of MiB from 1 to 512: 1024"
		"--seconds x|--seconds: not a number from 1 to 99: x"
		"--mtu 576|--mtu: not an MTU from 1280 to 65535: 576"
		"--cpus 0|--cpus: not a number from 1 to 9: 0"
		"--runs|--runs needs a value"
		"build extra|unexpected argument: extra"
		"$BATS_TEST_TMPDIR/nosuchdir|no build directory $BATS_TEST_TMPDIR/nosuchdir: run tools/setup first"
	)
	assert_usage_errors "$NFS_BENCH" nfs-bench --exact "${bad[@]}"
}

@test "nfs-bench: a build directory without nfstest-server is refused" {
	mkdir -p "$BATS_TEST_TMPDIR/empty"
	run "$NFS_BENCH" --quick "$BATS_TEST_TMPDIR/empty"
	assert_failure 1
	assert_output --partial "is missing: build first"
}

CPTRACE=$RPCRDMA_SRC_DIR/tools/rpcrdma-cptrace

# write_stamps FILE POINT:OFFSET...: three calls 100000 ticks apart at
# 1000 ticks per microsecond, each POINT stamped OFFSET ticks after its
# call began (OFFSET is arithmetic, and may use i, the call's number).
write_stamps() {
	local file=$1 i b pt
	shift
	{
		echo "# ticks_per_us 1000.000000"
		for i in 0 1 2; do
			b=$((1000000 + i * 100000))
			for pt in "$@"; do
				echo "${pt%%:*} $((b + ${pt#*:}))"
			done
		done
	} >"$file"
}

# write_trace DIR: one client's and one server's stamps, each segment of
# known length.
write_trace() {
	write_stamps "$1/cp.100" call:0 call_post:4000 call_posted:30000 \
		"reply:45000 + i * 1000" return:50000
	write_stamps "$1/cp.200" svc_call:20000 svc_recv:23000 svc_reply:24000 \
		svc_post:26000 svc_posted:50000
}

@test "rpcrdma-cptrace: each segment of a call, across the two processes, in microseconds" {
	write_trace "$BATS_TEST_TMPDIR"
	run "$CPTRACE" "$BATS_TEST_TMPDIR"
	assert_success
	assert_line --index 0 --regexp '^segment \(microseconds\) +n +p25 +p50 +p75$'
	assert_line --regexp '^client: the call marshalled .* +3 +4\.00 +4\.00 +4\.00$'
	assert_line --regexp '^client: ibv_post_send .* +3 +26\.00 +26\.00 +26\.00$'
	assert_line --regexp '^the Send on its way: .* +3 +16\.00 +16\.00 +16\.00$'
	assert_line --regexp '^server: the call received .* +3 +3\.00 +3\.00 +3\.00$'
	assert_line --regexp '^server: the reply marshalled .* +3 +2\.00 +2\.00 +2\.00$'
	assert_line --regexp "^the reply's Send on its way: .* +3 +19\.00 +20\.00 +20\.00$"
	assert_line --regexp '^the program between two calls .* +2 +50\.00 +50\.00 +50\.00$'
	assert_line --regexp '^the whole call, as its caller sees it .* +3 +50\.00 +50\.00 +50\.00$'
	# The same from the files named one by one.
	run "$CPTRACE" "$BATS_TEST_TMPDIR/cp.100" "$BATS_TEST_TMPDIR/cp.200"
	assert_success
	assert_line --regexp '^the Send on its way: .* +3 +16\.00 +16\.00 +16\.00$'
}

@test "rpcrdma-cptrace: usage errors exit 2; files without stamps exit 1" {
	run "$CPTRACE"
	[ "$status" -eq 2 ]
	assert_line --index 0 "rpcrdma-cptrace: name a directory of cp.<pid> files, or the files"
	assert_line --index 1 "Try 'tools/rpcrdma-cptrace --help'."
	run "$CPTRACE" --bogus
	[ "$status" -eq 2 ]
	assert_line --index 0 "rpcrdma-cptrace: unknown option: --bogus"
	run "$CPTRACE" "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 2 ]
	assert_line --index 0 "rpcrdma-cptrace: $BATS_TEST_TMPDIR/none: no such file or directory"
	run "$CPTRACE" "$BATS_TEST_TMPDIR"
	[ "$status" -eq 1 ]
	assert_output "rpcrdma-cptrace: no cp.<pid> files in $BATS_TEST_TMPDIR"
	echo "call 5" >"$BATS_TEST_TMPDIR/cp.1"
	run "$CPTRACE" "$BATS_TEST_TMPDIR"
	[ "$status" -eq 1 ]
	assert_output --partial 'no "# ticks_per_us" line'
	run "$CPTRACE" --help
	assert_success
	assert_line --index 0 'Usage: tools/rpcrdma-cptrace DIR|FILE...'
}
