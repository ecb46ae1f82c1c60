#!/usr/bin/env bats
#
# What users see: the man pages, the rpcrdma-run wrapper and rpcrdma-stat.
# This host has no RDMA device, so every transport falls back to TCP with
# the reason no-device, which is what rpcrdma-stat must show.

load ../helpers
load ../tools

setup() {
	require_build
	require_tools
}

teardown() {
	rm -f "${EXTRA_SHM_FILES[@]}"
	tools_teardown
}

EXTRA_SHM_FILES=()

# The wrapper's environment for `env`, without what the test harness set.
run_wrapper_env() {
	run --separate-stderr env -u LD_PRELOAD -u RPCRDMA_SHIM_CONFIG \
		"$RPCRDMA_TEST_RUN" "$@" env
}

# --- man pages --------------------------------------------------------------

@test "every man page renders without warnings" {
	command -v man >/dev/null || skip_for_host "man (man-db) is not installed"
	local page n=0
	for page in "$RPCRDMA_SRC_DIR"/man/*.[1-9]; do
		run --separate-stderr env LC_ALL=C.UTF-8 MANWIDTH=80 \
			man --warnings -E UTF-8 -l "$page"
		assert_success
		[[ -z $stderr ]] || fail "$page: $stderr"
		assert_line --regexp '^NAME$'
		n=$((n + 1))
	done
	((n >= 4)) || fail "only $n pages in $RPCRDMA_SRC_DIR/man"
}

@test "the pages and the wrapper know the same settings as rpcrdma-shim.conf(5)" {
	local conf=$RPCRDMA_SRC_DIR/man/rpcrdma-shim.conf.5
	local seven=$RPCRDMA_SRC_DIR/man/rpcrdma-shim.7
	local -a keys
	local key var
	mapfile -t keys < <(sed -n 's/^\.BI "\([a-z_]*\) = ".*/\1/p' "$conf")
	((${#keys[@]} >= 14)) || fail "only ${#keys[@]} keys found in $conf"

	# Every variable of the configuration page is in the section 7 page.
	for var in $(grep -o 'RPCRDMA_SHIM_[A-Z_]*[A-Z]' "$conf" | sort -u); do
		grep -q "$var" "$seven" || fail "$seven does not name $var"
	done
	# The wrapper accepts exactly the keys of the file, and config.
	run "$RPCRDMA_TEST_RUN" -e nosuchkey=1 true
	assert_failure 125
	local known
	known=$(sed -n 's/.*(known: \(.*\))$/\1/p' <<<"$output" | tr -d ',' | tr ' ' '\n' | sort | tr '\n' ' ')
	[ "$known" = "$(printf '%s\n' config "${keys[@]}" | sort | tr '\n' ' ')" ] ||
		fail "rpcrdma-run knows: $known; the page: config ${keys[*]}"
	for key in "${keys[@]}"; do
		var=RPCRDMA_SHIM_${key^^}
		# An absolute path is a value every key passes on unchanged.
		run_wrapper_env -e "$key=/x"
		assert_line "$var=/x"
	done
}

# --- rpcrdma-run --------------------------------------------------------------

@test "rpcrdma-run preloads the library and sets nothing else unasked" {
	run_wrapper_env
	assert_success
	assert_line "LD_PRELOAD=$RPCRDMA_TEST_SHIM_LIB"
	refute_line --regexp '^RPCRDMA_SHIM_'
	[ -z "$stderr" ]

	# Put first, before what is there; never twice.
	run --separate-stderr env LD_PRELOAD=/x/other.so "$RPCRDMA_TEST_RUN" env
	assert_line "LD_PRELOAD=$RPCRDMA_TEST_SHIM_LIB:/x/other.so"
	run --separate-stderr env "LD_PRELOAD=/x/a.so:$RPCRDMA_TEST_SHIM_LIB" "$RPCRDMA_TEST_RUN" env
	assert_line "LD_PRELOAD=/x/a.so:$RPCRDMA_TEST_SHIM_LIB"

	# The program's arguments and exit status pass through unchanged.
	run "$RPCRDMA_TEST_RUN" printf '<%s>' 'a  b' -t -- ''
	assert_success
	assert_output '<a  b><-t><--><>'
	run "$RPCRDMA_TEST_RUN" sh -c 'exit 7'
	assert_failure 7
}

@test "rpcrdma-run maps each option to its RPCRDMA_SHIM_ variable" {
	cd "$BATS_TEST_TMPDIR"
	echo "log_level = info" >my.conf

	run_wrapper_env -t
	assert_line RPCRDMA_SHIM_MODE=tcp-only
	run_wrapper_env -r
	assert_line RPCRDMA_SHIM_MODE=require-rdma
	run_wrapper_env -m prefer-rdma
	assert_line RPCRDMA_SHIM_MODE=prefer-rdma
	run_wrapper_env -d
	assert_line RPCRDMA_SHIM_LOG_LEVEL=debug
	run_wrapper_env -q
	assert_line RPCRDMA_SHIM_LOG_LEVEL=warn
	run_wrapper_env -l syslog
	assert_line RPCRDMA_SHIM_LOG=syslog
	# Relative paths become absolute: the program may change directory.
	run_wrapper_env -l shim.log -c my.conf
	assert_line "RPCRDMA_SHIM_LOG=$BATS_TEST_TMPDIR/shim.log"
	assert_line "RPCRDMA_SHIM_CONFIG=$BATS_TEST_TMPDIR/my.conf"
	run_wrapper_env -c "$BATS_TEST_TMPDIR/my.conf"
	assert_line "RPCRDMA_SHIM_CONFIG=$BATS_TEST_TMPDIR/my.conf"

	# -e: any key, in either case; rule and port_map add up.
	run_wrapper_env -e inline_send=8K -e CREDITS=16 -e Remote_Invalidate=no \
		-e 'rule=tcp program 100003' -e 'rule=rdma port 2049' \
		-e port_map=2049:20049 -e port_map=111:1111 -e config=my.conf
	assert_success
	assert_line RPCRDMA_SHIM_INLINE_SEND=8K
	assert_line RPCRDMA_SHIM_CREDITS=16
	assert_line RPCRDMA_SHIM_REMOTE_INVALIDATE=no
	assert_line "RPCRDMA_SHIM_RULE=tcp program 100003; rdma port 2049"
	assert_line RPCRDMA_SHIM_PORT_MAP=2049:20049,111:1111
	assert_line "RPCRDMA_SHIM_CONFIG=$BATS_TEST_TMPDIR/my.conf"

	# The later of two options for one setting wins.
	run_wrapper_env -t -r
	assert_line RPCRDMA_SHIM_MODE=require-rdma
	run_wrapper_env -d -e log_level=error
	assert_line RPCRDMA_SHIM_LOG_LEVEL=error

	# An option replaces an inherited variable; others are passed on.
	run --separate-stderr env RPCRDMA_SHIM_MODE=tcp-only RPCRDMA_SHIM_CREDITS=8 \
		"$RPCRDMA_TEST_RUN" -r env
	assert_line RPCRDMA_SHIM_MODE=require-rdma
	assert_line RPCRDMA_SHIM_CREDITS=8

	# -v tells what it sets, on stderr only.
	run_wrapper_env -v -t -e credits=4
	assert_line RPCRDMA_SHIM_CREDITS=4
	[[ $stderr == *"rpcrdma-run: RPCRDMA_SHIM_MODE=tcp-only"* ]] || fail "stderr: $stderr"
	[[ $stderr == *"rpcrdma-run: RPCRDMA_SHIM_CREDITS=4"* ]] || fail "stderr: $stderr"
	[[ $stderr == *"rpcrdma-run: LD_PRELOAD=$RPCRDMA_TEST_SHIM_LIB"* ]] || fail "stderr: $stderr"
	refute_line --partial "rpcrdma-run:"
}

@test "rpcrdma-run: usage errors exit 125 with a usage line, -h and -V exit 0" {
	run --separate-stderr "$RPCRDMA_TEST_RUN" -x true
	assert_failure 125
	[[ $stderr == *"-x: unknown option"* && $stderr == *"usage: rpcrdma-run"* ]] || fail "stderr: $stderr"

	run --separate-stderr "$RPCRDMA_TEST_RUN" -m
	assert_failure 125
	[[ $stderr == *"-m needs an argument"* ]] || fail "stderr: $stderr"

	run --separate-stderr "$RPCRDMA_TEST_RUN" -m fast true
	assert_failure 125
	[[ $stderr == *"prefer-rdma, require-rdma or tcp-only"* ]] || fail "stderr: $stderr"

	run --separate-stderr "$RPCRDMA_TEST_RUN" -e credit=4 true
	assert_failure 125
	[[ $stderr == *"unknown setting credit (known: config, enable, mode,"* ]] || fail "stderr: $stderr"

	run --separate-stderr "$RPCRDMA_TEST_RUN" -e credits true
	assert_failure 125
	[[ $stderr == *"expected KEY=VALUE"* ]] || fail "stderr: $stderr"

	run --separate-stderr "$RPCRDMA_TEST_RUN" -c "$BATS_TEST_TMPDIR/none.conf" true
	assert_failure 125
	[[ $stderr == *"none.conf: no such configuration file"* ]] || fail "stderr: $stderr"

	run --separate-stderr "$RPCRDMA_TEST_RUN"
	assert_failure 125
	[[ $stderr == *"no program given"* ]] || fail "stderr: $stderr"

	run --separate-stderr env RPCRDMA_RUN_LIB=/nonexistent/lib.so "$RPCRDMA_TEST_RUN" true
	assert_failure 125
	[[ $stderr == *"/nonexistent/lib.so: library not found"* ]] || fail "stderr: $stderr"

	run -127 --separate-stderr "$RPCRDMA_TEST_RUN" no-such-program-here
	[[ $stderr == *"no-such-program-here: command not found"* ]] || fail "stderr: $stderr"

	touch "$BATS_TEST_TMPDIR/not-executable"
	run --separate-stderr "$RPCRDMA_TEST_RUN" "$BATS_TEST_TMPDIR/not-executable"
	assert_failure 126

	run "$RPCRDMA_TEST_RUN" -h
	assert_success
	assert_line --regexp '^usage: rpcrdma-run '
	assert_line "library: $RPCRDMA_TEST_SHIM_LIB"

	run "$RPCRDMA_TEST_RUN" -V
	assert_success
	assert_output --regexp '^rpcrdma-run \(rpcrdma-shim\) [0-9]+\.[0-9]+\.[0-9]+$'
}

@test "rpcrdma-run warns that a setuid program ignores LD_PRELOAD" {
	((EUID == 0)) || skip_for_host "making a setuid file needs root"
	cp "$(type -P true)" "$BATS_TEST_TMPDIR/suid-true"
	chmod u+s "$BATS_TEST_TMPDIR/suid-true"
	run --separate-stderr "$RPCRDMA_TEST_RUN" "$BATS_TEST_TMPDIR/suid-true"
	assert_success
	[[ $stderr == *"is setuid or setgid: the dynamic linker ignores LD_PRELOAD"* ]] ||
		fail "stderr: $stderr"
}

@test "client and server under rpcrdma-run: decision lines, -q silences them, byte-exact over TCP" {
	local port
	port=$(free_port)
	wrap_server
	wrap_client
	start_server -m tli -a 127.0.0.1 -p "$port"
	assert_shim_line --log "$SERVER_LOG" --comm rpctest-server --pid "$SERVER_PID" \
		server 127.0.0.1 "$port" 'TCP only \(no RDMA device'

	client -m tli -h 127.0.0.1 -p "$port" -o null,echo,source -s 0,1,64K,1M+3
	assert_client_ran null,echo,source 0,1,64K,1M+3
	assert_shim_line --comm rpctest-client --prog "$RPCTEST_PROG_NUM" client 127.0.0.1 "$port" 'TCP \(no RDMA device'

	wrap_client -q
	client -m tli -h 127.0.0.1 -p "$port" -o echo -s 4K
	assert_client_ran echo 4K
	refute_line --partial "rpcrdma-shim["
	stop_server
}

# --- rpcrdma-stat -------------------------------------------------------------

# --- rpcrdma-coldpath --------------------------------------------------------

@test "rpcrdma-coldpath counts the first call's instructions without and with the shim" {
	command -v valgrind >/dev/null || skip_for_host "valgrind is not installed"
	require_jq
	# valgrind cannot run what a sanitizer instruments.
	if [[ $(meson introspect --buildoptions "$RPCRDMA_BUILD_DIR" |
		jq -r '.[] | select(.name == "b_sanitize") | .value') != none ]]; then
		skip_for_host "rpcrdma-coldpath measures a build without sanitizers"
	fi
	run --separate-stderr "$RPCRDMA_SRC_DIR/tools/rpcrdma-coldpath" --top 4 "$RPCRDMA_BUILD_DIR"
	assert_success
	assert_line --regexp '^rpcrdma-coldpath: rpctest-client over TCP on this host, clnt_tli_create to the first reply$'
	# Without the shim the window runs libtirpc's and libc's code and none
	# of the shim's; with it, the shim's too, and more in all.
	local all lib shim
	all=$(awk '$1 == "all" { print $2, $3 }' <<<"$output")
	lib=$(awk '$1 == "libtirpc.so.3.0.0" || $1 ~ /^libtirpc/ { print $2; exit }' <<<"$output")
	shim=$(awk '$1 == "librpcrdma_shim.so" { print $2, $3 }' <<<"$output")
	read -r plain with <<<"$all"
	((plain > 1000 && with > plain)) || fail "distinct instructions: $all"
	((lib > 0)) || fail "no libtirpc instructions counted: $output"
	[[ $shim =~ ^0\ [1-9][0-9]*$ ]] || fail "the shim's own: '$shim'"
	(($(grep -c 'librpcrdma_shim.so$' <<<"$(sed -n '/^functions to which/,$p' <<<"$output")") >= 1)) ||
		fail "no function of the shim listed: $output"
	assert_equal "$(sed -n '/^functions to which/,$p' <<<"$output" | grep -c '^ ')" 4
}

@test "rpcrdma-stat with nothing running prints the header and exits 0" {
	require_jq
	local -a alone
	# An empty /dev/shm of its own, or a user without shim processes.
	if ((EUID == 0)) && unshare --mount true 2>/dev/null; then
		alone=(unshare --mount sh -c 'mount -t tmpfs none /dev/shm && exec "$@"' sh)
	elif ((EUID == 0)) && command -v setpriv >/dev/null; then
		alone=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	else
		skip_for_host "needs root, to hide the processes of this host"
	fi

	run --separate-stderr "${alone[@]}" "$RPCRDMA_TEST_STAT"
	assert_success
	assert_output --regexp '^PID +PROGRAM +ROLE +XPRT +LOCAL +PEER +RPC +CALLS +ERRORS +TIMEOUTS +SENT +RECEIVED +DETAIL$'
	[ -z "$stderr" ]

	run --separate-stderr "${alone[@]}" "$RPCRDMA_TEST_STAT" --summary
	assert_success
	assert_output --regexp '^PID +UID +PROGRAM +MODE +LIVE +RDMA +TCP +PINNED +FALLBACKS +CONFIG$'

	run --separate-stderr "${alone[@]}" "$RPCRDMA_TEST_STAT" --json
	assert_success
	[ "$(jq -c . <<<"$output")" = '{"format":1,"processes":[]}' ]

	# A process asked for that has no statistics: said so, status 1.
	run --separate-stderr "${alone[@]}" "$RPCRDMA_TEST_STAT" -p 1
	assert_failure 1
	[[ $stderr == *"process 1: no statistics"* ]] || fail "stderr: $stderr"
}

@test "rpcrdma-stat: usage" {
	run "$RPCRDMA_TEST_STAT" -h
	assert_success
	assert_line --regexp '^usage: rpcrdma-stat '
	run "$RPCRDMA_TEST_STAT" -V
	assert_success
	assert_output --regexp '^rpcrdma-stat \(rpcrdma-shim\) [0-9.]+$'
	run "$RPCRDMA_TEST_STAT" -x
	assert_failure 2
	run "$RPCRDMA_TEST_STAT" -p 0
	assert_failure 2
	run "$RPCRDMA_TEST_STAT" -p abc
	assert_failure 2
	run "$RPCRDMA_TEST_STAT" extra
	assert_failure 2
}

@test "rpcrdma-stat: a fallback listener and client, with reason no-device and growing calls" {
	require_jq
	local port spid cpid calls
	port=$(free_port)
	start_server --shim -m tli -a 127.0.0.1 -p "$port"
	spid=$SERVER_PID
	start_client_bg --shim -m tli -h 127.0.0.1 -p "$port" -o null -c 1000000000 -q
	cpid=$CLIENT_PID
	wait_until -q 15 "the client's calls in rpcrdma-stat" stat_has "$cpid" '.transports[0].calls > 0' ||
		fail "the client's calls never showed in rpcrdma-stat: $("$RPCRDMA_TEST_STAT" -j -p "$cpid" 2>&1)"

	stat_json -p "$spid" -p "$cpid"
	# The server: one listener, TCP only for lack of a device.
	assert_st "$spid.program" rpctest-server
	assert_st "$spid.mode" prefer-rdma
	assert_st "$spid.ntransports" 1
	assert_st "$spid.listener.transport" tcp
	assert_st "$spid.listener.reason" no-device
	assert_st "$spid.listener.local.address" 127.0.0.1
	assert_st "$spid.listener.local.port" "$port"
	assert_st "$spid.listener.peer" null
	assert_st "$spid.listener.rdma_port" null
	assert_st "$spid.fallbacks.no-device" 1
	assert_st "$spid.rdma_transports" 0
	# The client: TCP, same reason, its program and the server's address.
	assert_st "$cpid.program" rpctest-client
	assert_st "$cpid.client.transport" tcp
	assert_st "$cpid.client.reason" no-device
	assert_st "$cpid.client.program" "$RPCTEST_PROG_NUM"
	assert_st "$cpid.client.version" 1
	assert_st "$cpid.client.peer.address" 127.0.0.1
	assert_st "$cpid.client.peer.port" "$port"
	assert_st "$cpid.client.inline_send" null
	assert_st "$cpid.client.errors" 0
	assert_st "$cpid.fallbacks.no-device" 1

	# The calls keep counting.
	calls=${ST[$cpid.client.calls]}
	wait_until 10 "the client's calls to grow beyond $calls" stat_has "$cpid" ".transports[0].calls > $calls"

	# The table and the summary say the same.
	run --separate-stderr "$RPCRDMA_TEST_STAT" -p "$spid" -p "$cpid"
	assert_success
	assert_line --index 0 --regexp '^ *PID +PROGRAM +ROLE '
	assert_line --regexp "^ *$spid +rpctest-server +listener +TCP +127\.0\.0\.1:$port +- +- +- +- +- +- +- +reason=no-device$"
	assert_line --regexp "^ *$cpid +rpctest-client +client +TCP +127\.0\.0\.1:[0-9]+ +127\.0\.0\.1:$port +$RPCTEST_PROG_NUM/1 +[1-9][0-9]* +0 +0 +- +- +reason=no-device$"
	[ "${#lines[@]}" = 3 ]

	run --separate-stderr "$RPCRDMA_TEST_STAT" --summary -p "$spid" -p "$cpid"
	assert_success
	# No device: nothing registered (PINNED -).
	assert_line --regexp "^ *$spid +$EUID +rpctest-server +prefer-rdma +1 +0 +1 +- +no-device=1 +-$"
	assert_line --regexp "^ *$cpid +$EUID +rpctest-client +prefer-rdma +1 +0 +1 +- +no-device=1 +-$"
}

@test "rpcrdma-stat: a client upgrading in the background is shown from its second call, with every call" {
	require_jq
	local port one two
	port=$(free_port)
	start_server -m tli -a 127.0.0.1 -p "$port"
	# One call, then holding its CLIENT: the process made no statistics
	# file (its making was most of what statistics cost a first call).
	start_client_bg --shim --env RPCRDMA_SHIM_UPGRADE=background \
		-m tli -h 127.0.0.1 -p "$port" -o null -c 1 -q -H
	one=$CLIENT_PID
	wait_log "$CLIENT_LOG" '^holding after 1 calls$' 15
	[[ ! -e $(stats_file "$one") ]] || fail "a one-call process made $(stats_file "$one")"
	# -p a process it does not find: exit status 1, and an empty list.
	run --separate-stderr "$RPCRDMA_TEST_STAT" -j -p "$one"
	assert_failure 1
	[[ $(jq '.processes | length' <<<"$output") == 0 ]] ||
		fail "rpcrdma-stat shows the one-call process: $output"

	# Two calls: its TCP CLIENT is in the file from the second, counting both.
	start_client_bg --shim --env RPCRDMA_SHIM_UPGRADE=background \
		-m tli -h 127.0.0.1 -p "$port" -o null -c 2 -q -H
	two=$CLIENT_PID
	wait_log "$CLIENT_LOG" '^holding after 2 calls$' 15
	wait_until 15 "the client in rpcrdma-stat" stat_has "$two" '.transports[0].calls == 2'
	stat_json -p "$two"
	assert_st "$two.program" rpctest-client
	assert_st "$two.client.transport" tcp
	assert_st "$two.client.program" "$RPCTEST_PROG_NUM"
	assert_st "$two.client.peer.port" "$port"
	assert_st "$two.client.calls" 2
	assert_st "$two.client.errors" 0
}

@test "rpcrdma-stat: the configuration file and fallbacks for reason config in the summary" {
	require_jq
	local port conf=$BATS_TEST_TMPDIR/client.conf
	port=$(free_port)
	start_server -m tli -a 127.0.0.1 -p "$port"
	printf 'mode = tcp-only\n' >"$conf"
	start_client_bg --shim --env "RPCRDMA_SHIM_CONFIG=$conf" -m tli -h 127.0.0.1 -p "$port" -o null -c 1000000000 -q
	wait_until 15 "the client's calls in rpcrdma-stat" stat_has "$CLIENT_PID" '.transports[0].calls > 0'

	stat_json -p "$CLIENT_PID"
	assert_st "$CLIENT_PID.config" "$conf"
	assert_st "$CLIENT_PID.mode" tcp-only
	assert_st "$CLIENT_PID.config_errors" false
	assert_st "$CLIENT_PID.client.reason" config
	assert_st "$CLIENT_PID.fallbacks.config" 1
	assert_st "$CLIENT_PID.fallbacks.no-device" 0

	run --separate-stderr "$RPCRDMA_TEST_STAT" -s -p "$CLIENT_PID"
	# Kept on TCP by the configuration: nothing registered.
	assert_line --regexp "^ *$CLIENT_PID +$EUID +rpctest-client +tcp-only +1 +0 +1 +- +config=1 +${conf//./\\.}$"
}

@test "rpcrdma-stat ignores the files of processes that are gone, and removes the caller's" {
	require_jq
	local port pid file other
	port=$(free_port)
	start_server --shim -m tli -a 127.0.0.1 -p "$port"
	pid=$SERVER_PID
	file=$(stats_file "$pid")
	wait_until 5 "$file to be made" test -s "$file"

	# Killed: no exit handler ran, the file stays behind.
	kill -KILL "$pid"
	_stop_pid "$pid" || true
	[ -e "$file" ]

	# The same contents under the name of a live process that does not map
	# it (this shell): stale as well.
	local fake
	fake=$(stats_file $$)
	EXTRA_SHM_FILES+=("$fake")
	patch_u32 "$file" 16 $$ >"$fake"

	# Another user's stale file: ignored, but not ours to remove.
	if ((EUID == 0)); then
		other=/dev/shm/rpcrdma-shim.65534.$pid
		EXTRA_SHM_FILES+=("$other")
		patch_u32 "$file" 20 65534 >"$other"
		chown 65534 "$other"
	fi

	stat_json
	[ "$(jq --argjson p "$pid" '[.processes[] | select(.pid == $p)] | length' <<<"$STAT_JSON")" = 0 ]
	[ "$(jq --argjson p $$ '[.processes[] | select(.pid == $p)] | length' <<<"$STAT_JSON")" = 0 ]
	[ -z "$stderr" ] || fail "stderr: $stderr"
	[ ! -e "$file" ] || fail "$file of a killed process was not removed"
	[ ! -e "$fake" ] || fail "$fake of a process that does not map it was not removed"
	if [[ -n $other ]]; then
		[ -e "$other" ] || fail "another user's file was removed"
	fi

	run "$RPCRDMA_TEST_STAT" -p "$pid"
	assert_failure 1
}

# patch_u32 FILE OFFSET VALUE: FILE with the little-endian 32-bit word at
# OFFSET replaced, on stdout.
patch_u32() {
	local v=$3
	head -c "$2" "$1"
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((v & 255)) $((v >> 8 & 255)) \
		$((v >> 16 & 255)) $((v >> 24 & 255)))"
	tail -c +$(($2 + 5)) "$1"
}

@test "without root, rpcrdma-stat shows the caller's own processes only" {
	((EUID == 0)) || skip_for_host "needs root, to run a server as another user"
	command -v setpriv >/dev/null || skip_for_host "setpriv is not installed"
	require_jq
	# HOME too: nobody cannot look into root's.
	local -a as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups
		env HOME=/nonexistent)
	local port root_pid nobody_pid dir

	# The server running as nobody writes its ready file here.
	dir=$BATS_TEST_TMPDIR
	while [[ $dir != / && $dir != /tmp ]]; do
		chmod o+x "$dir"
		dir=$(dirname "$dir")
	done
	chmod 1777 "$BATS_TEST_TMPDIR"

	port=$(free_port)
	start_server --shim -m tli -a 127.0.0.1 -p "$port"
	root_pid=$SERVER_PID
	port=$(free_port)
	local real=$RPCTEST_SERVER
	RPCTEST_SERVER=$BATS_TEST_TMPDIR/as-nobody
	printf '#!/bin/sh\nexec %s %q "$@"\n' "${as_nobody[*]}" "$real" >"$RPCTEST_SERVER"
	chmod +x "$RPCTEST_SERVER"
	start_server --shim -m tli -a 127.0.0.1 -p "$port"
	nobody_pid=$SERVER_PID
	RPCTEST_SERVER=$real
	[ -e /dev/shm/rpcrdma-shim.65534.$nobody_pid ]

	run --separate-stderr "${as_nobody[@]}" "$RPCRDMA_TEST_STAT" -j
	assert_success
	[ "$(jq -c '[.processes[] | .pid]' <<<"$output")" = "[$nobody_pid]" ] ||
		fail "nobody sees: $output"
	[ "$(jq -r '.processes[0].uid' <<<"$output")" = 65534 ]

	run --separate-stderr "${as_nobody[@]}" "$RPCRDMA_TEST_STAT" -p "$root_pid"
	assert_failure 1

	# Root sees both.
	stat_json -p "$root_pid" -p "$nobody_pid"
	[ "$(jq -c '[.processes[] | .pid]' <<<"$STAT_JSON")" = "[$root_pid,$nobody_pid]" ] ||
		[ "$(jq -c '[.processes[] | .pid]' <<<"$STAT_JSON")" = "[$nobody_pid,$root_pid]" ]
}
