#!/usr/bin/env bats
#
# The configuration as users meet it (rpcrdma-shim.conf(5)): every kind of
# mistake gives one message that says where, what and what is allowed, and
# the programs go on over TCP untouched; require-rdma turns a mistake into
# a failed create; the search order, log = <file> and enable = no.
#
# HOME and XDG_CONFIG_HOME point into the test's directory, so that no
# configuration of the user running the tests is read.

load ../helpers
load ../tools

SIZES=0,1,100,4K,64K,1M+3
OPS=null,echo,sink,source,mixed

setup() {
	require_build
	require_tools
	export HOME=$BATS_TEST_TMPDIR/home
	unset XDG_CONFIG_HOME
	mkdir -p "$HOME"
	PORT=$(free_port)
}

# The decision lines of the client and the server (shim_line in
# helpers.bash): both on TCP here, for lack of an RDMA device.
CLIENT=(--comm rpctest-client client 127.0.0.1)
SERVER=(--comm rpctest-server server 127.0.0.1)

# bad_input_case DESCRIPTION EXPECTED-MESSAGE-REGEX [--env NAME=VALUE]...
# Server and client both run with the bad input (a file is passed with
# --env RPCRDMA_SHIM_CONFIG=...): each logs the message once, and the
# warning, makes no decision (libtirpc untouched), and all calls are
# byte-exact over TCP.
bad_input_case() {
	local what=$1 msg=$2
	shift 2
	local n

	PORT=$(free_port)
	start_server --shim "$@" -m tli -a 127.0.0.1 -p "$PORT"
	n=$(count_log "$SERVER_LOG" "^rpcrdma-shim\[rpctest-server:$SERVER_PID\]: error: $msg$")
	[ "$n" = 1 ] || fail "$what: the server logged the message $n times:
$(cat "$SERVER_LOG")"
	[ "$(count_log "$SERVER_LOG" ': error: ')" = 1 ] || fail "$what: more than one error: $(cat "$SERVER_LOG")"
	assert_log "$SERVER_LOG" "^rpcrdma-shim\[rpctest-server:$SERVER_PID\]: warning: configuration errors: every transport stays on TCP$"
	refute_shim_line --log "$SERVER_LOG" "${SERVER[@]}"

	client --shim "$@" -m tli -h 127.0.0.1 -p "$PORT" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	assert_line --regexp "^rpcrdma-shim\[rpctest-client:[0-9]+\]: error: $msg$"
	[ "$(grep -c ': error: ' <<<"$output")" = 1 ] || fail "$what: more than one error: $output"
	assert_line --regexp '^rpcrdma-shim\[rpctest-client:[0-9]+\]: warning: configuration errors: every transport stays on TCP$'
	refute_shim_line "${CLIENT[@]}"

	# The transports are left alone: no transport is published, only the
	# process, its configuration errors and the fallback it counted.
	run "$RPCRDMA_TEST_STAT" -j -p "$SERVER_PID"
	assert_success
	assert_output --partial '"config_errors": true,'
	assert_output --partial '"config": 1,'
	assert_output --partial '"transports": []'
	stop_server
}

# A file in the test's directory with the given lines.
conf_file() {
	local f=$BATS_TEST_TMPDIR/$1
	shift
	printf '%s\n' "$@" >"$f"
	echo "$f"
}

@test "an unknown key: one message with file:line, key, value and the known keys" {
	local f
	f=$(conf_file bad.conf '# inline sizes' 'inline_sned = 8K')
	bad_input_case "unknown key" \
		"$(re_quote "$f"):2: inline_sned = 8K: unknown key \(known: enable, mode, inline_send, inline_recv, credits, connect_timeout, negative_cache, upgrade, max_reply, max_call, write_chunk, max_pinned, remote_invalidate, poll_us, defer_wait, no_placement, rpcrdma_version, log_level, log, rule, port_map\)" \
		--env "RPCRDMA_SHIM_CONFIG=$f"
}

@test "a bad value: one message with what is allowed" {
	local f
	f=$(conf_file bad.conf 'credits = 16' 'remote_invalidate = maybe')
	bad_input_case "bad boolean" \
		"$(re_quote "$f"):2: remote_invalidate = maybe: must be yes or no \(or true/false, on/off, 1/0\)" \
		--env "RPCRDMA_SHIM_CONFIG=$f"

	f=$(conf_file bad2.conf 'max_reply = lots')
	bad_input_case "not a number" \
		"$(re_quote "$f"):1: max_reply = lots: must be from 4096 \(4K\) to 1073741824 \(1G\) bytes \(optional suffix K, M, G, KiB, MiB or GiB\)" \
		--env "RPCRDMA_SHIM_CONFIG=$f"

	f=$(conf_file bad3.conf 'rule = tcp programme 100003')
	bad_input_case "bad rule" \
		"$(re_quote "$f"):1: rule = tcp programme 100003: unknown criterion 'programme' \(program, version, address or port\)" \
		--env "RPCRDMA_SHIM_CONFIG=$f"
}

@test "an out-of-range value: one message with the range" {
	local f
	f=$(conf_file bad.conf 'credits = 5000')
	bad_input_case "credits" "$(re_quote "$f"):1: credits = 5000: must be from 1 to 1024" \
		--env "RPCRDMA_SHIM_CONFIG=$f"

	f=$(conf_file bad2.conf '' 'inline_send = 1000   # not a multiple')
	bad_input_case "inline_send" \
		"$(re_quote "$f"):2: inline_send = 1000: must be a multiple of 1024 from 1024 to 262144" \
		--env "RPCRDMA_SHIM_CONFIG=$f"

	f=$(conf_file bad3.conf 'port_map = 2049:70000')
	bad_input_case "port_map" \
		"$(re_quote "$f"):1: port_map = 2049:70000: must be TCP:RDMA, two ports from 1 to 65535" \
		--env "RPCRDMA_SHIM_CONFIG=$f"
}

@test "a malformed line: one message with file:line and the line" {
	local f
	f=$(conf_file bad.conf 'mode = prefer-rdma' '' 'log_level debug')
	bad_input_case "malformed" "$(re_quote "$f"):3: log_level debug: not a 'key = value' line" \
		--env "RPCRDMA_SHIM_CONFIG=$f"
}

@test "an unknown or bad RPCRDMA_SHIM_ variable: one message naming it" {
	bad_input_case "unknown variable" \
		"environment: RPCRDMA_SHIM_CREDIT=4: unknown variable \(known: RPCRDMA_SHIM_CONFIG, RPCRDMA_SHIM_ENABLE, RPCRDMA_SHIM_MODE, .*, RPCRDMA_SHIM_PORT_MAP\)" \
		--env RPCRDMA_SHIM_CREDIT=4
	bad_input_case "bad variable" \
		"environment: RPCRDMA_SHIM_MODE=fast: must be prefer-rdma, require-rdma or tcp-only" \
		--env RPCRDMA_SHIM_MODE=fast
}

@test "a configuration file that cannot be read: one message naming it and why" {
	local d=$BATS_TEST_TMPDIR/a-directory.conf
	mkdir "$d"
	bad_input_case "directory" "$(re_quote "$d"): is a directory" --env "RPCRDMA_SHIM_CONFIG=$d"

	((EUID == 0)) || skip_for_host "the unreadable-file case runs the client as nobody (needs root)"
	command -v setpriv >/dev/null || skip_for_host "setpriv is not installed"
	local f
	f=$(conf_file unreadable.conf 'credits = 8')
	chmod 600 "$f"
	chmod o+x "$BATS_TEST_TMPDIR" "$(dirname "$BATS_TEST_TMPDIR")" "$(dirname "$(dirname "$BATS_TEST_TMPDIR")")"
	local real=$RPCTEST_CLIENT
	RPCTEST_CLIENT=$BATS_TEST_TMPDIR/as-nobody
	printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent %q "$@"\n' \
		"$real" >"$RPCTEST_CLIENT"
	chmod +x "$RPCTEST_CLIENT"
	PORT=$(free_port)
	start_server -m tli -a 127.0.0.1 -p "$PORT"
	client --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -h 127.0.0.1 -p "$PORT" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	assert_line --regexp "^rpcrdma-shim\[rpctest-client:[0-9]+\]: error: $(re_quote "$f"): cannot open: Permission denied$"
	[ "$(grep -c ': error: ' <<<"$output")" = 1 ]
	refute_shim_line "${CLIENT[@]}"
	stop_server
}

@test "mode = require-rdma with a bad configuration: creates fail with a clear error" {
	local f
	f=$(conf_file bad.conf 'mode = require-rdma' 'credits = 0')
	start_server -m tli -a 127.0.0.1 -p "$PORT"
	client --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_failure 1
	assert_line --regexp "^rpcrdma-shim\[rpctest-client:[0-9]+\]: error: $(re_quote "$f"):2: credits = 0: must be from 1 to 1024$"
	assert_shim_line --comm rpctest-client required 127.0.0.1 "$PORT" 'the configuration has errors$'
	assert_line --partial "RPC: Remote system error - Invalid argument"
	refute_line "null ok"
	stop_server

	# A server does not start either.
	local port2
	port2=$(free_port)
	run env LD_PRELOAD="$RPCRDMA_TEST_SHIM_LIB" RPCRDMA_SHIM_CONFIG="$f" \
		timeout 30 "$RPCTEST_SERVER" -m tli -a 127.0.0.1 -p "$port2"
	assert_failure
	assert_line --regexp "^rpcrdma-shim\[rpctest-server:[0-9]+\]: error: server: RDMA required, but the configuration has errors$"
	assert_line --partial "svc_tli_create failed"

	# The same mistake in prefer-rdma mode only costs RDMA (see above);
	# with a good configuration require-rdma fails for the real reason.
	client --shim --env RPCRDMA_SHIM_MODE=require-rdma -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_failure 1
	assert_shim_line required 127.0.0.1 "$PORT" 'no RDMA device$'
}

@test "search order: RPCRDMA_SHIM_CONFIG, then \$XDG_CONFIG_HOME, then ~/.config; the environment wins over files" {
	local xdg=$BATS_TEST_TMPDIR/xdg explicit
	mkdir -p "$xdg/rpcrdma-shim" "$HOME/.config/rpcrdma-shim"
	start_server -m tli -a 127.0.0.1 -p "$PORT"
	local -a call=(-m tli -h 127.0.0.1 -p "$PORT" -o null)

	# No file: the decision line at info.
	client --shim "${call[@]}"
	assert_client_ran null ""
	assert_shim_line "${CLIENT[@]}" "$PORT" TCP

	# ~/.config/rpcrdma-shim/<program>.conf (XDG_CONFIG_HOME unset).
	printf 'log_level = warn\n' >"$HOME/.config/rpcrdma-shim/rpctest-client.conf"
	client --shim "${call[@]}"
	assert_client_ran null ""
	refute_shim_line "${CLIENT[@]}"
	# ... and not for another program's name.
	mv "$HOME/.config/rpcrdma-shim/rpctest-client.conf" "$HOME/.config/rpcrdma-shim/rpctest-server.conf"
	client --shim "${call[@]}"
	assert_shim_line "${CLIENT[@]}" "$PORT" TCP

	# $XDG_CONFIG_HOME/rpcrdma-shim/<program>.conf, before ~/.config.
	printf 'log_level = debug\n' >"$HOME/.config/rpcrdma-shim/rpctest-client.conf"
	printf 'log_level = warn\n' >"$xdg/rpcrdma-shim/rpctest-client.conf"
	client --shim --env "XDG_CONFIG_HOME=$xdg" "${call[@]}"
	assert_client_ran null ""
	refute_shim_line "${CLIENT[@]}"
	refute_line --partial "configuration read from"
	# A relative XDG_CONFIG_HOME is ignored (the XDG rules): ~/.config.
	client --shim --env "XDG_CONFIG_HOME=xdg" "${call[@]}"
	assert_line --regexp "rpcrdma-shim\[rpctest-client:[0-9]+\]: configuration read from $(re_quote "$HOME")/\.config/rpcrdma-shim/rpctest-client\.conf$"

	# RPCRDMA_SHIM_CONFIG before both.
	explicit=$(conf_file explicit.conf 'log_level = debug')
	client --shim --env "XDG_CONFIG_HOME=$xdg" --env "RPCRDMA_SHIM_CONFIG=$explicit" "${call[@]}"
	assert_client_ran null ""
	assert_line --regexp "rpcrdma-shim\[rpctest-client:[0-9]+\]: configuration read from $(re_quote "$explicit")$"
	assert_shim_line "${CLIENT[@]}" "$PORT" TCP

	# A missing RPCRDMA_SHIM_CONFIG is a warning, and the search goes on.
	client --shim --env "XDG_CONFIG_HOME=$xdg" --env "RPCRDMA_SHIM_CONFIG=$BATS_TEST_TMPDIR/none.conf" "${call[@]}"
	assert_client_ran null ""
	assert_line --regexp "warning: environment: RPCRDMA_SHIM_CONFIG=$(re_quote "$BATS_TEST_TMPDIR")/none\.conf: no such file; searching the usual places$"
	refute_shim_line "${CLIENT[@]}"
	refute_line --partial "error:"

	# The environment wins over the file that was read.
	client --shim --env "XDG_CONFIG_HOME=$xdg" --env RPCRDMA_SHIM_LOG_LEVEL=info "${call[@]}"
	assert_shim_line "${CLIENT[@]}" "$PORT" TCP
	stop_server
}

@test "log = <file> sends the decision lines there, not to stderr" {
	local log=$BATS_TEST_TMPDIR/shim.log f
	f=$(conf_file log.conf "log = $log")
	start_server --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -a 127.0.0.1 -p "$PORT"
	refute_log "$SERVER_LOG" 'rpcrdma-shim\['
	client --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -h 127.0.0.1 -p "$PORT" -o "$OPS" -s "$SIZES"
	assert_client_ran "$OPS" "$SIZES"
	refute_line --partial 'rpcrdma-shim['
	assert_shim_line --log "$log" "${SERVER[@]}" "$PORT" 'TCP only \(no RDMA device: No such device\)$'
	assert_shim_line --log "$log" "${CLIENT[@]}" "$PORT" 'TCP \(no RDMA device: No such device\)$'
	[ "$(count_log "$log" .)" = 2 ] || fail "more than the two decision lines: $(cat "$log")"

	# A file that cannot be opened: one warning, and stderr instead.
	client --shim --env RPCRDMA_SHIM_LOG=/nonexistent/dir/shim.log -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_client_ran null ""
	assert_line --regexp "warning: log = /nonexistent/dir/shim\.log: cannot open: No such file or directory; logging to stderr$"
	assert_shim_line "${CLIENT[@]}" "$PORT" TCP

	# The same with the wrapper's -l, relative to the current directory.
	cd "$BATS_TEST_TMPDIR"
	wrap_client -l wrapper.log
	client -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_client_ran null ""
	refute_line --partial 'rpcrdma-shim['
	assert_shim_line --log "$BATS_TEST_TMPDIR/wrapper.log" "${CLIENT[@]}" "$PORT" TCP
	stop_server
}

@test "enable = no: the shim says nothing and leaves libtirpc alone" {
	local f
	f=$(conf_file off.conf 'enable = no')
	start_server --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -a 127.0.0.1 -p "$PORT"
	refute_log "$SERVER_LOG" 'rpcrdma-shim'
	client --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -h 127.0.0.1 -p "$PORT" -o "$OPS,whoami" -s "$SIZES"
	assert_client_ran "$OPS,whoami" "$SIZES"
	assert_line --regexp ' netid=tcp '
	refute_line --partial 'rpcrdma-shim'
	# Neither makes a statistics file.
	run "$RPCRDMA_TEST_STAT" -p "$SERVER_PID"
	assert_failure 1
	[ ! -e "$(stats_file "$SERVER_PID")" ]

	# Also from the environment, and even where the rest would fail.
	client --shim --env RPCRDMA_SHIM_ENABLE=no --env RPCRDMA_SHIM_MODE=require-rdma \
		-m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_client_ran null ""
	refute_line --partial 'rpcrdma-shim'
	stop_server
}

@test "mode = tcp-only and rule = tcp keep transports on TCP for reason config" {
	require_jq
	local f
	f=$(conf_file tcp.conf 'mode = tcp-only')
	start_server --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -a 127.0.0.1 -p "$PORT"
	assert_shim_line --log "$SERVER_LOG" "${SERVER[@]}" "$PORT" 'TCP only \(configuration: mode tcp-only\)$'
	client --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_client_ran null ""
	assert_shim_line "${CLIENT[@]}" "$PORT" 'TCP \(configuration: mode tcp-only\)$'
	stat_json -p "$SERVER_PID"
	assert_st "$SERVER_PID.listener.reason" config
	assert_st "$SERVER_PID.mode" tcp-only
	stop_server

	# A rule: by program for the client, by port for the server.
	f=$(conf_file rule.conf "rule = tcp port $PORT" "rule = tcp program $RPCTEST_PROG_NUM")
	start_server --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -a 127.0.0.1 -p "$PORT"
	assert_shim_line --log "$SERVER_LOG" "${SERVER[@]}" "$PORT" \
		"TCP only \\(configuration: rule \"tcp port $PORT\" \\($(re_quote "$f"):1\\)\\)\$"
	client --shim --env "RPCRDMA_SHIM_CONFIG=$f" -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_shim_line "${CLIENT[@]}" "$PORT" \
		"TCP \\(configuration: rule \"tcp port $PORT\" \\($(re_quote "$f"):1\\)\\)\$"
	client --shim --env "RPCRDMA_SHIM_RULE=tcp program $RPCTEST_PROG_NUM" -m tli -h 127.0.0.1 -p "$PORT" -o null
	assert_shim_line "${CLIENT[@]}" "$PORT" \
		"TCP \\(configuration: rule \"tcp program $RPCTEST_PROG_NUM\" \\(environment\\)\\)\$"
	stop_server
}
