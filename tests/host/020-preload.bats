#!/usr/bin/env bats
#
# The same programs with librpcrdma_shim.so preloaded on the client, on the
# server and on both. This host has no RDMA device, so every connection must
# end up on libtirpc's TCP transport, byte for byte as without the shim.
# Also: what the library exports, and proof that each libtirpc entry point
# reaches the interposed functions.

load ../helpers

# The sanitizer runs (tools/check) pass HOST_SIZES without 16M: on TCP the
# shim never touches the payload, and the instrumented test programs spent
# half the suite's time making and checking it.
SIZES=${HOST_SIZES:-0,1,100,1000,4K,64K,1M,1M+3,16M}
OPS=null,echo,sink,source,mixed

# The line ld.so writes (LD_DEBUG=bindings) when libtirpc's reference to
# NAME resolves to the shim's definition.
tirpc_binds_to_shim() {
	local name=$1 file=$2
	grep -qF "libtirpc.so.3 [0] to $RPCRDMA_TEST_SHIM_LIB [0]: normal symbol \`$name'" "$file" ||
		fail "$file: libtirpc's $name is not bound to $RPCRDMA_TEST_SHIM_LIB:
$(grep -F "\`$name'" "$file")"
}

@test "the library exports exactly the transport constructors, the socket calls it answers and write" {
	run nm -D --defined-only "$RPCRDMA_TEST_SHIM_LIB"
	assert_success
	local names
	names=$(awk 'NF >= 3 { print $3 }' <<<"$output" | sort | tr '\n' ' ')
	[ "$names" = "__fxstat __fxstat64 clnt_vc_create fstat fstat64 getpeername getsockname getsockopt setsockopt svc_vc_create write " ] ||
		fail "exported: $names"
}

@test "socket calls on ordinary descriptors are the real ones under the shim" {
	local port
	port=$(free_port)
	# The server under the shim (TCP only here: no RDMA device) reports
	# what getsockopt, setsockopt, getsockname, getpeername and fstat say
	# of its connection's descriptor: a real TCP socket's answers.
	start_server --shim -m tli -a 127.0.0.1 -p "$port"
	client -m tli -h 127.0.0.1 -p "$port" -o whoami
	assert_client_ran whoami ""
	assert_line --regexp "^whoami caller=127\.0\.0\.1\.[0-9.]+ .* netid=tcp xp_fd=type:stream,domain:inet,protocol:tcp,sock:yes,nodelay:1,local:127\.0\.0\.1\.$port,peer:127\.0\.0\.1\.[0-9]+ "
	stop_server
}

@test "shim on the client only: tli, tcp and tcp6 clients, byte-exact" {
	local port port6
	port=$(free_port)
	start_server -m tli -p "$port"
	client --shim -m tli -h 127.0.0.1 -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	client --shim -m tcp -h 127.0.0.1 -p "$port" -o "$OPS" -s "$SIZES" -A sys
	assert_client_ran "$OPS" "$SIZES"

	require_ipv6
	port6=$(free_port)
	start_server -m tli -a ::1 -p "$port6"
	client --shim -m tli -n tcp6 -h ::1 -p "$port6" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
}

@test "shim on the server only: svc_tli_create and svctcp_create servers, byte-exact" {
	local port
	port=$(free_port)
	start_server --shim -m tli -p "$port"
	client -m tli -h 127.0.0.1 -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	stop_server

	port=$(free_port)
	start_server --shim -m tcp -p "$port"
	client -m tcp -h 127.0.0.1 -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	stop_server
}

@test "shim on both sides: tli, tcp and tcp6, byte-exact, repeated" {
	local port port6
	port=$(free_port)
	start_server --shim -m tcp -p "$port"
	client --shim -m tli -h 127.0.0.1 -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	client --shim -m tcp -h 127.0.0.1 -p "$port" -o "$OPS" -s 0,1,1000,64K -c 20
	assert_client_ran "$OPS" 0,1,1000,64K 20
	stop_server

	require_ipv6
	port6=$(free_port)
	start_server --shim -m tli -a ::1 -p "$port6"
	client --shim -m tli -n tcp6 -h ::1 -p "$port6" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	stop_server
}

@test "shim on both sides through rpcbind: svc_create, clnt_create, clnt_tp_create" {
	ensure_rpcbind
	local prog
	prog=$(unique_prog)
	start_server --shim -P "$prog"

	client --shim -m create -h localhost -P "$prog" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	client --shim -m tp -h localhost -P "$prog" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"

	require_ipv6
	client --shim -m tp -n tcp6 -h ::1 -P "$prog" -o "$OPS,whoami" -s 0,1,1M+3
	assert_client_ran "$OPS,whoami" 0,1,1M+3
	assert_line --regexp ' netid=tcp6 '
	stop_server

	# Unregistered on the way out, through the shim as well.
	run rpcinfo
	refute_line --regexp "^ +$((prog)) "
}

@test "WHOAMI under the shim: AUTH_SYS credentials and the caller's address" {
	local port
	port=$(free_port)
	start_server --shim -p "$port"
	client --shim -m tli -h 127.0.0.1 -p "$port" -o whoami -A sys
	assert_success
	assert_line --regexp "^whoami caller=127\.0\.0\.1\.[0-9.]+ .* cred=AUTH_SYS uid=$(id -u) gid=$(id -g) "
	assert_fd_addrs 127.0.0.1 "$port"
	stop_server
}

@test "rpcinfo works under the shim (AF_LOCAL and TCP to rpcbind)" {
	ensure_rpcbind
	local probe=$BATS_TEST_TMPDIR/probe.log
	local -a pre=(env "LD_PRELOAD=$RPCRDMA_TEST_SHIM_LIB:$RPCTEST_PROBE_LIB" "RPCTEST_PROBE_LOG=$probe")

	# rpcinfo -p and plain rpcinfo talk to rpcbind over its AF_LOCAL socket,
	# through clnt_vc_create: the shim must hand that to libtirpc.
	run timeout 30 "${pre[@]}" rpcinfo -p
	assert_success
	assert_line --regexp '^ +100000 +2 +tcp +111 +portmapper$'
	run timeout 30 "${pre[@]}" rpcinfo
	assert_success
	assert_line --regexp '^ +100000 +4 +tcp +0\.0\.0\.0\.0\.111 '
	run cat "$probe"
	assert_line "clnt_vc_create prog=0x186a0 vers=2 af=local"
	assert_line "clnt_vc_create prog=0x186a0 vers=3 af=local"

	# A NULL call over TCP to a server registered through the shim.  The
	# shim's decision line goes to stderr; rpcinfo's answer to stdout.
	local prog
	prog=$(unique_prog)
	start_server --shim -P "$prog"
	run --separate-stderr timeout 30 "${pre[@]}" rpcinfo -t 127.0.0.1 "$((prog))" 1
	assert_success
	assert_output "program $((prog)) version 1 ready and waiting"
	stop_server
}

@test "clnt_create, clnt_tp_create, clnt_tli_create and clnttcp_create reach the interposed clnt_vc_create" {
	ensure_rpcbind
	local prog port mode dir
	prog=$(unique_prog)
	start_server -P "$prog"
	port=$(free_port)
	start_server -P "$prog" -m tli -p "$port"

	for mode in create tp tli tcp; do
		dir=$BATS_TEST_TMPDIR/$mode
		mkdir "$dir"
		local -a args=(-m "$mode" -h 127.0.0.1 -P "$prog" -o null)
		[[ $mode == create || $mode == tp ]] || args+=(-p "$port")
		client --shim --preload "$RPCTEST_PROBE_LIB" \
			--env "RPCTEST_PROBE_LOG=$dir/probe.log" \
			--env LD_DEBUG=bindings --env "LD_DEBUG_OUTPUT=$dir/ld" \
			"${args[@]}"
		assert_client_ran null ""

		# libtirpc's calls to clnt_vc_create go to the shim ...
		tirpc_binds_to_shim clnt_vc_create "$(echo "$dir"/ld.*)"
		# ... and the probe behind the shim, reached only through the shim's
		# dlsym(RTLD_NEXT), saw the call for our program being forwarded.
		run cat "$dir/probe.log"
		assert_line "clnt_vc_create prog=$(printf '0x%x' "$prog") vers=1 af=inet"
	done

	# Control: a run that never creates a client leaves no trace.
	client --shim --preload "$RPCTEST_PROBE_LIB" \
		--env "RPCTEST_PROBE_LOG=$BATS_TEST_TMPDIR/control.log" -m tli -o null
	assert_failure 64
	[ ! -e "$BATS_TEST_TMPDIR/control.log" ]
}

@test "svc_create, svc_tli_create and svctcp_create reach the interposed svc_vc_create" {
	ensure_rpcbind
	local mode dir port
	for mode in create tli tcp; do
		dir=$BATS_TEST_TMPDIR/$mode
		mkdir "$dir"
		local -a args=(-m "$mode" -P "$(unique_prog)")
		if [[ $mode != create ]]; then
			port=$(free_port)
			args+=(-p "$port")
		fi
		start_server --shim --preload "$RPCTEST_PROBE_LIB" \
			--env "RPCTEST_PROBE_LOG=$dir/probe.log" \
			--env LD_DEBUG=bindings --env "LD_DEBUG_OUTPUT=$dir/ld" \
			"${args[@]}"
		tirpc_binds_to_shim svc_vc_create "$dir/ld.$SERVER_PID"
		run grep -c '^svc_vc_create fd=[0-9]' "$dir/probe.log"
		assert_success
		if [[ $mode == create ]]; then
			# One listener per netid of the "tcp" nettype: tcp and tcp6.
			((output >= 1))
		else
			assert_output 1
		fi
		stop_server
	done
}

@test "a require-rdma server that cannot listen over RDMA leaves its socket to whoever made it" {
	# No RDMA device here, so every server transport is refused.  The
	# socket belongs to the program (tli, tcp) or to libtirpc
	# (svc_create): each closes it once itself.  A second close could
	# close a descriptor another thread opened meanwhile.
	! has_rdma_device || skip "this host has an RDMA device"
	command -v strace >/dev/null || fail "strace is not installed (tools/setup installs it)"
	local mode trace
	for mode in create tli tcp; do
		trace=$BATS_TEST_TMPDIR/close-$mode.trace
		local -a args=(-m "$mode")
		[[ $mode == create ]] || args+=(-a 127.0.0.1 -p "$(free_port)")
		run --separate-stderr timeout 60 strace -f -qq -e trace=close -o "$trace" \
			-E "LD_PRELOAD=$RPCRDMA_TEST_SHIM_LIB" -E RPCRDMA_SHIM_MODE=require-rdma \
			"$RPCTEST_SERVER" "${args[@]}"
		assert_failure
		[[ $stderr == *"create failed"* ]] || fail "$mode: the server did not fail: $stderr"
		grep -q 'close(' "$trace" || fail "$mode: no close in the trace"
		if grep -E 'close\([0-9]+\) += -1 EBADF' "$trace"; then
			fail "$mode: a descriptor was closed twice (strace above)"
		fi
	done
}
