#!/usr/bin/env bats
#
# The rpctest programs on their own, without the shim: every way of making
# a client and a server, IPv4 and IPv6, all sizes, and that the client's
# checks and exit statuses mean what they say.
#
# Tagged no-shim: the sanitizer builds' runs of the host suite (tools/check)
# leave this file out; they are there for the shim, and every other test
# runs these programs there too.

# bats file_tags=no-shim

load ../helpers

SIZES=0,1,100,1000,4K,64K,1M,1M+3,16M
OPS=null,echo,sink,source,mixed

@test "usage errors exit 64 with a usage text" {
	client -x
	assert_failure 64
	assert_output --partial "usage: rpctest-client"

	client -m tli -o null
	assert_failure 64
	assert_output --partial "need"

	client -m tcp -n tcp6 -p 1 -o null
	assert_failure 64

	client -s 1X
	assert_failure 64
	assert_output --partial "bad size: 1X"

	client -o null,nosuchop
	assert_failure 64

	run "$RPCTEST_SERVER" -m tcp
	assert_failure 64
	assert_output --partial "usage: rpctest-server"

	run "$RPCTEST_SERVER" -p 1 -a not-an-address
	assert_failure
}

@test "svc_tli_create server, clnt_tli_create client, IPv4, all sizes" {
	local port
	port=$(free_port)
	start_server -m tli -a 127.0.0.1 -p "$port"
	[ "$SERVER_PORT" -eq "$port" ]

	client -m tli -h 127.0.0.1 -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	stop_server
}

@test "svctcp_create server, clnttcp_create client, all sizes" {
	local port
	port=$(free_port)
	start_server -m tcp -p "$port"

	client -m tcp -h 127.0.0.1 -p "$port" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	stop_server
}

@test "svc_tli_create server on ::1, clnt_tli_create client over tcp6, all sizes" {
	require_ipv6
	local port
	port=$(free_port)
	start_server -m tli -a ::1 -p "$port"

	client -m tli -n tcp6 -h ::1 -p "$port" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_line --regexp '^whoami caller=::1\.[0-9]+\.[0-9]+ .* netid=tcp6 '
	stop_server
}

@test "svctcp_create server on ::1 serves tcp6 clients" {
	require_ipv6
	local port
	port=$(free_port)
	start_server -m tcp -a ::1 -p "$port"

	client -m tli -n tcp6 -h ::1 -p "$port" -o "$OPS" -s 0,1,1M+3
	assert_client_ran "$OPS" 0,1,1M+3
	stop_server
}

@test "svc_create server, clnt_create and clnt_tp_create clients through rpcbind" {
	ensure_rpcbind
	local prog
	prog=$(unique_prog)
	start_server -P "$prog"
	[ "$SERVER_PORT" -eq 0 ]

	run rpcinfo
	assert_success
	assert_line --regexp "^ +$((prog)) +1 +tcp +0\.0\.0\.0\.[0-9.]+ "

	client -m create -h localhost -P "$prog" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"

	client -m tp -h localhost -P "$prog" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	stop_server
}

@test "svc_create server over IPv6 through rpcbind: clnt_tp_create tcp6, clnt_create to ::1" {
	require_ipv6
	ensure_rpcbind
	local prog
	prog=$(unique_prog)
	start_server -P "$prog"

	run rpcinfo
	assert_line --regexp "^ +$((prog)) +1 +tcp6 +::\.[0-9.]+ "

	client -m tp -n tcp6 -h ::1 -P "$prog" -o "$OPS,whoami" -s 0,1,1M+3,16M
	assert_client_ran "$OPS,whoami" 0,1,1M+3,16M
	assert_line --regexp ' netid=tcp6 '

	# clnt_create() takes a nettype, and libtirpc's "tcp" nettype covers
	# both tcp and tcp6: an IPv6 host is reached through the tcp6 netconfig.
	client -m create -h ::1 -P "$prog" -o null,echo,whoami -s 1000
	assert_client_ran null,echo,whoami 1000
	assert_line --regexp '^whoami caller=::1\..* netid=tcp6 '
	stop_server
}

@test "svc_create server leaves rpcbind when stopped" {
	ensure_rpcbind
	local prog
	prog=$(unique_prog)
	start_server -P "$prog"
	run rpcinfo
	assert_line --regexp "^ +$((prog)) +1 +tcp "

	stop_server
	run rpcinfo
	assert_success
	refute_line --regexp "^ +$((prog)) "
}

@test "WHOAMI: AUTH_SYS shows our uid and gid, AUTH_NONE none; the caller is our address" {
	local port uid gid
	uid=$(id -u)
	gid=$(id -g)
	port=$(free_port)
	start_server -p "$port"

	client -m tli -h 127.0.0.1 -p "$port" -o whoami -A sys
	assert_success
	assert_line --regexp "^whoami caller=127\.0\.0\.1\.[0-9]+\.[0-9]+ .* cred=AUTH_SYS uid=$uid gid=$gid machine=[^ ]+$"
	# The address the server saw is the client's own end of the connection.
	assert_fd_addrs 127.0.0.1 "$port"

	client -m tcp -h 127.0.0.1 -p "$port" -o whoami,null -A none
	assert_client_ran whoami,null ""
	assert_line --regexp "^whoami caller=127\.0\.0\.1\..* cred=AUTH_NONE$"
	stop_server
}

@test "the client detects damaged replies and names the first bad offset" {
	local port
	port=$(free_port)
	# The server flips the byte at offset 70 of ECHO and SOURCE replies and
	# the checksums of SINK, MIXED and DIGEST data longer than 70 bytes.
	start_server -m tcp -p "$port" -X 70

	client -m tcp -h 127.0.0.1 -p "$port" -o echo -s 64
	assert_client_ran echo 64

	client -m tcp -h 127.0.0.1 -p "$port" -o echo -s 1000
	assert_failure 2
	assert_output --partial "mismatch: echo 1000: first difference at offset 70"

	client -m tcp -h 127.0.0.1 -p "$port" -o source -s 4K
	assert_failure 2
	assert_output --partial "mismatch: source 4096: first difference at offset 70"

	client -m tcp -h 127.0.0.1 -p "$port" -o sink -s 100
	assert_failure 2
	assert_output --partial "mismatch: sink 100: checksum"

	client -m tcp -h 127.0.0.1 -p "$port" -o digest -s 0,70
	assert_client_ran digest 0,70

	client -m tcp -h 127.0.0.1 -p "$port" -o digest -s 71
	assert_failure 2
	assert_output --partial "mismatch: digest 71: checksum"

	client -m tcp -h 127.0.0.1 -p "$port" -o mixed -s 71
	assert_failure 2
	assert_output --partial "mismatch: mixed 71: checksum"
	stop_server
}

@test "RPC errors exit 1 with the clnt_sperror text" {
	local port
	port=$(free_port)

	# Nobody listens.
	client -m tli -h 127.0.0.1 -p "$port" -o null
	assert_failure 1
	assert_output --partial "RPC: Remote system error"

	# A server that stops answering: the call times out after -t.
	start_server -p "$port"
	kill -STOP "$SERVER_PID"
	client -m tli -h 127.0.0.1 -p "$port" -o null -t 1
	kill -CONT "$SERVER_PID"
	assert_failure 1
	assert_output --partial "null: RPC: Timed out"

	# The server goes away between calls.
	client -m tli -h 127.0.0.1 -p "$port" -o null -s 0
	assert_success
	stop_server
	client -m tli -h 127.0.0.1 -p "$port" -o null
	assert_failure 1
	assert_output --partial "RPC:"
}

@test "-c repeats the set and -b reports timing per op and size" {
	local port
	port=$(free_port)
	start_server -p "$port"

	client -m tli -h 127.0.0.1 -p "$port" -o null,echo,source -s 1,4K -c 7
	assert_client_ran null,echo,source 1,4K 7

	client -m tli -h 127.0.0.1 -p "$port" -o null,echo -s 100,64K -c 5 -b -q
	assert_success
	assert_line --regexp '^op +size +calls +seconds +calls/s +MB/s +mean_us$'
	assert_line --regexp '^null +0 +5 +[0-9.]+ +[0-9.]+ +0\.00 +[0-9.]+$'
	assert_line --regexp '^echo +100 +5 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$'
	assert_line --regexp '^echo +65536 +5 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$'
	# From making the handle to its first reply.
	assert_line --regexp '^create [0-9]+\.[0-9]{6}$'
	local create
	create=$(awk '$1 == "create" { print $2 }' <<<"$output")
	awk -v c="$create" 'BEGIN { exit !(c > 0 && c < 60) }' ||
		fail "create took $create s"
	refute_line --partial " ok"

	# -u adds the CPU time spent inside the calls, mean per call.
	client -m tli -h 127.0.0.1 -p "$port" -o null,echo -s 4K -c 3 -b -u -q
	assert_success
	assert_line --regexp '^op +size +calls +seconds +calls/s +MB/s +mean_us +cpu_us$'
	assert_line --regexp '^null +0 +3 +[0-9.]+ +[0-9.]+ +0\.00 +[0-9.]+ +[0-9.]+$'
	assert_line --regexp '^echo +4096 +3 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$'
	stop_server
}

@test "-R makes and destroys the client handle N times; -b then reports descriptors and RSS" {
	local port
	port=$(free_port)
	start_server -p "$port"

	client -m tli -h 127.0.0.1 -p "$port" -o null,echo -s 1,100 -c 2 -R 3
	assert_client_ran null,echo 1,100 6

	client -m tcp -h 127.0.0.1 -p "$port" -o null -R 200 -b -q
	assert_success
	assert_line --regexp '^null +0 +200 '
	assert_line --regexp '^cycles=200 fds_before=[0-9]+ fds_after=[0-9]+ rss_kb_before=[0-9]+ rss_kb_after=[0-9]+$'
	local before after
	before=$(sed -n 's/^cycles=.* fds_before=\([0-9]*\) .*/\1/p' <<<"$output")
	after=$(sed -n 's/^cycles=.* fds_after=\([0-9]*\) .*/\1/p' <<<"$output")
	((before == after)) || fail "descriptors grew over 200 handles: $before -> $after"

	# Without -R the -b output stays as it was.
	client -m tli -h 127.0.0.1 -p "$port" -o null -b -q
	assert_success
	refute_line --partial "cycles="
	stop_server
}

@test "64 MiB ECHO, SINK, SOURCE and MIXED" {
	local port
	port=$(free_port)
	start_server -p "$port"

	client -m tli -h 127.0.0.1 -p "$port" -o echo,sink,source,mixed -s 64M,64M+1 -t 120
	assert_client_ran echo,sink,source,mixed 64M,64M+1
	stop_server
}

@test "the server stops on SIGINT too, and closes its listener" {
	local port
	port=$(free_port)
	start_server -p "$port"
	grep -q "$(printf ':%04X ' "$port")" /proc/net/tcp

	local st=0
	kill -INT "$SERVER_PID"
	_wait_gone "$SERVER_PID" "$RPCTEST_STOP_TIMEOUT"
	wait "$SERVER_PID" || st=$?
	_forget_pid "$SERVER_PID"
	[ "$st" -eq 0 ]
	grep -q "stopped by signal 2" "$SERVER_LOG"

	client -m tli -h 127.0.0.1 -p "$port" -o null
	assert_failure 1
}
