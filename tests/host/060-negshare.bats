#!/usr/bin/env bats
#
# The negative cache the processes of one user share (shim/negshare.h), on
# this host, where every RDMA attempt fails at once ("no RDMA device"): a
# later process goes to TCP without trying and names the process that
# failed; a file or directory that is not the user's alone, a symbolic
# link or garbage is never believed (nor written through), with one
# warning saying why.  Each test has its own $XDG_RUNTIME_DIR (helpers).

load ../helpers

setup() {
	require_build
	PORT=$(free_port)
	start_server -m tli -a 127.0.0.1 -p "$PORT"
	DIR=$XDG_RUNTIME_DIR/rpcrdma-shim
	FILE=$DIR/negcache
}

# tried: the last client tried RDMA itself (no device), not the cache.
assert_tried() {
	assert_client_ran null ""
	assert_shim_line client 127.0.0.1 "$PORT" 'TCP \(no RDMA device'
	refute_shim_line client 127.0.0.1 "$PORT" 'TCP \(failed recently'
}

# warned WHAT: the last client warned once that the file is not used.
assert_warned() {
	assert_equal "$(grep -c 'not shared with other processes' <<<"$output")" 1
	assert_line --partial "$1"
}

@test "a failure in one process sends the next straight to TCP, naming the first" {
	local first size
	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_tried
	first=$(sed -n 's/^rpcrdma-shim\[rpctest-client:\([0-9]*\)\]: client .*TCP (no RDMA device.*/\1/p' <<<"$output")
	[[ -n $first ]] || fail "no decision line: $output"
	assert [ -d "$DIR" ] && assert [ ! -L "$DIR" ]
	assert_equal "$(stat -c %a "$DIR")" 700
	assert_equal "$(stat -c %a "$FILE")" 600
	size=$(stat -c %s "$FILE")

	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_client_ran null ""
	assert_shim_line client 127.0.0.1 "$PORT" \
		"TCP \\(failed recently \\(negative cache\\): no RDMA device, found by process $first, for [0-9]+ s more \\($(re_quote "$FILE")\\)\\)"
	refute_line --partial "not shared"
	assert_equal "$(stat -c %s "$FILE")" "$size"

	# negative_cache = 0: neither read nor written.
	rm -f "$FILE"
	client --shim --env RPCRDMA_SHIM_NEGATIVE_CACHE=0 -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_tried
	assert [ ! -e "$FILE" ]
	stop_server
}

@test "a shared file others may read or write, or in such a directory, is ignored with one warning" {
	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_tried

	chmod 644 "$FILE"
	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_tried
	assert_warned "$FILE: open to other users"
	assert_equal "$(stat -c %a "$FILE")" 644

	chmod 600 "$FILE"
	chmod 755 "$DIR"
	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_tried
	assert_warned "$DIR: open to other users"
	stop_server
}

@test "a symbolic link in place of the shared file or its directory is neither read nor written through" {
	local target=$BATS_TEST_TMPDIR/target
	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_tried
	# A valid file, reached through a link: not believed, not written.
	mv "$FILE" "$target"
	cp "$target" "$target.orig"
	ln -s "$target" "$FILE"
	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_tried
	assert_warned "$FILE: a symbolic link"
	cmp "$target" "$target.orig" || fail "the link's target was written"
	assert [ -L "$FILE" ]

	rm "$FILE"
	mv "$DIR" "$BATS_TEST_TMPDIR/realdir"
	mv "$target" "$BATS_TEST_TMPDIR/realdir/negcache"
	ln -s "$BATS_TEST_TMPDIR/realdir" "$DIR"
	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_tried
	assert_warned "$DIR: not a directory"
	cmp "$BATS_TEST_TMPDIR/realdir/negcache" "$target.orig" ||
		fail "the file behind the linked directory was written"
	stop_server
}

@test "garbage in the shared file is not believed, and the next failure replaces it" {
	local size
	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_tried
	size=$(stat -c %s "$FILE")
	for junk in "$(head -c "$size" /dev/urandom | base64 -w0 | head -c "$size")" \
		"short" "$(head -c $((size * 3)) /dev/zero | tr '\0' x)"; do
		printf '%s' "$junk" >"$FILE"
		client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
		assert_tried
		refute_line --partial "not shared"
		assert_equal "$(stat -c %s "$FILE")" "$size"
	done
	# Replaced by a valid one: the next process believes it.
	client --shim -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_client_ran null ""
	assert_shim_line client 127.0.0.1 "$PORT" 'TCP \(failed recently \(negative cache\): no RDMA device'
	stop_server
}
