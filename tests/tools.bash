# Helpers for the suites on the tools and the settings (host/030-tools,
# host/040-config, rdma/050-settings).  Load after the common helpers:
#
#     load ../helpers
#     load ../tools
#
# Paths come from meson (tests/meson.build), or default to the build tree:
#   RPCRDMA_TEST_STAT  the built rpcrdma-stat
#   RPCRDMA_TEST_RUN   the configured rpcrdma-run
# The wrapper is pointed at the library of this build with RPCRDMA_RUN_LIB,
# never at an installed one.

: "${RPCRDMA_TEST_STAT:=$RPCRDMA_BUILD_DIR/tools/rpcrdma-stat}"
: "${RPCRDMA_TEST_RUN:=$RPCRDMA_BUILD_DIR/tools/rpcrdma-run}"
RPCRDMA_RUN_LIB=$RPCRDMA_TEST_SHIM_LIB
export RPCRDMA_TEST_STAT RPCRDMA_TEST_RUN RPCRDMA_RUN_LIB

RPCTEST_PROG_NUM=$((0x20000099))	# rpctest.x

# The tools must have been built.
require_tools() {
	local f
	for f in "$RPCRDMA_TEST_STAT" "$RPCRDMA_TEST_RUN"; do
		[[ -x $f ]] ||
			fail "$f is missing: build first (ninja -C build), or set RPCRDMA_BUILD_DIR"
	done
}

require_jq() {
	command -v jq >/dev/null ||
		skip_for_host "jq is not installed (the tests read rpcrdma-stat -j with it)"
}

# --- programs ---------------------------------------------------------------

# The background client is started with start_client_bg (helpers.bash).

# await_holding [CALLS]: the background client (-H) made its calls (CALLS
# of them, when given) and keeps its CLIENT(s), so that both sides'
# statistics stay to be read.
_holding() {
	grep -qE "^holding after ${1:-[0-9]+} calls\$" "$CLIENT_LOG" || ! _alive "$CLIENT_PID"
}
await_holding() {
	wait_until -q 300 "the client to finish its calls" _holding "${1:-}" ||
		fail "the client did not finish its calls: $(cat "$CLIENT_LOG")"
	grep -qE "^holding after ${1:-[0-9]+} calls\$" "$CLIENT_LOG" ||
		fail "the client ended before holding: $(cat "$CLIENT_LOG")"
}

# st_fields PID ROLE PEER-PORT FIELD...: those fields of rpcrdma-stat -j,
# on one line, of the client of process PID (ROLE client; PEER-PORT is
# not looked at) or of its server connection from PEER-PORT.
st_fields() {
	local pid=$1 role=$2 port=$3
	shift 3
	"$RPCRDMA_TEST_STAT" -j -p "$pid" 2>/dev/null |
		jq -r --arg role "$role" --argjson port "$port" '
			.processes[].transports[]
			| select(.role == $role and ($role == "client" or .peer.port == $port))
			| [.[$ARGS.positional[]]] | map(tostring) | join(" ")' --args "$@"
}

# client_port PID: the local port of the RDMA connection of the client of
# process PID.
client_port() {
	"$RPCRDMA_TEST_STAT" -j -p "$1" |
		jq -r '.processes[].transports[] | select(.role == "client") | .local.port'
}

# stop_client_bg: SIGTERM the background client (-H holds until then).
stop_client_bg() {
	_stop_pid "$CLIENT_PID" || fail "the client did not stop on SIGTERM"
}

# pause_client / resume_client: stop the background client (SIGSTOP), so
# that its traffic does not slow down the checks, and let it go on.  A
# paused client is resumed in tools_teardown.
pause_client() {
	kill -STOP "$CLIENT_PID"
	PAUSED_PIDS+=("$CLIENT_PID")
}

resume_client() {
	kill -CONT "$CLIENT_PID"
}

PAUSED_PIDS=()

# Teardown for the suites that load this file.
tools_teardown() {
	local pid
	for pid in "${PAUSED_PIDS[@]}"; do
		kill -CONT "$pid" 2>/dev/null || true
	done
	helpers_teardown
}

teardown() {
	tools_teardown
}

# wrap_server [rpcrdma-run options]: from now on, start_server runs
# rpctest-server through rpcrdma-run with these options (the process id
# stays the server's: the wrapper execs it).  wrap_client does the same
# for client and start_client_bg, with upgrade = wait first, as the
# helpers' preloaded clients (an -e upgrade=... given replaces it).
wrap_server() {
	RPCTEST_SERVER=$(_wrapper server "$RPCTEST_BIN_DIR/rpctest-server" "$@")
}

wrap_client() {
	RPCTEST_CLIENT=$(_wrapper client "$RPCTEST_BIN_DIR/rpctest-client" \
		-e upgrade=wait "$@")
}

_wrapper() {
	local name=$1 real=$2 arg
	shift 2
	local script=$BATS_TEST_TMPDIR/run-$name
	{
		echo '#!/bin/sh'
		printf 'exec %q' "$RPCRDMA_TEST_RUN"
		for arg in "$@"; do
			printf ' %q' "$arg"
		done
		printf ' -- %q "$@"\n' "$real"
	} >"$script"
	chmod +x "$script"
	echo "$script"
}

# --- rpcrdma-stat ---------------------------------------------------------------

# stat_json [--summary] [rpcrdma-stat options]: rpcrdma-stat -j into
# STAT_JSON (the command must succeed and print a JSON document),
# flattened with one jq run into the associative array ST, values as jq -r
# prints them:
#   ST[PID.KEY]                 the process's fields (.program, .fallbacks.config,
#                               .transports.0.role, ...) and PID.ntransports
#   ST[PID.client.KEY]          its first client (.transport, .local.port, ...)
#   ST[PID.listener.KEY]        its first listener
#   ST[PID.server.PORT.KEY]     its server connection from peer port PORT
# --summary leaves out the keys of each transport (.transports.N.KEY and
# PID.server.PORT.KEY): with a thousand connections they are 100 000
# pairs, which jq takes half a minute to print in the emulated machine.
stat_json() {
	local summary=false
	if [[ ${1:-} == --summary ]]; then
		summary=true
		shift
	fi
	run --separate-stderr "$RPCRDMA_TEST_STAT" -j "$@"
	assert_success
	STAT_JSON=$output
	# One assignment of every pair, read at once: a loop of bash's read
	# makes system calls per line, and the 100 000 pairs of a thousand
	# connections took ten minutes that way in the emulated machine.
	local pairs
	declare -gA ST=()
	pairs=$(jq -r --argjson summary "$summary" '
		def pair($k; $v): "[\($k | @sh)]=\($v | tostring | @sh)";
		def leaves($k): paths(type != "object" and type != "array") as $q
			| pair("\($k).\($q | map(tostring) | join("."))"; getpath($q));
		.processes[] | .pid as $p
		| (if $summary then del(.transports) else . end | leaves("\($p)")),
		  pair("\($p).ntransports"; .transports | length),
		  (.transports
		   | (map(select(.role == "client"))[0] // empty | leaves("\($p).client")),
		     (map(select(.role == "listener"))[0] // empty | leaves("\($p).listener")),
		     (if $summary then empty else
			.[] | select(.role == "server") | leaves("\($p).server.\(.peer.port)")
		      end))
		' <<<"$STAT_JSON") || fail "rpcrdma-stat -j printed no JSON: $STAT_JSON"
	eval "ST=($pairs)"
}

# assert_st KEY VALUE: ST[KEY] is VALUE.
assert_st() {
	[[ ${ST[$1]-<none>} == "$2" ]] ||
		fail "rpcrdma-stat: $1 is ${ST[$1]-<none>}, expected $2; the document:
$STAT_JSON"
}

# assert_st_ge KEY N: ST[KEY] is a number of at least N.
assert_st_ge() {
	[[ ${ST[$1]-} =~ ^[0-9]+$ ]] && ((ST[$1] >= $2)) ||
		fail "rpcrdma-stat: $1 is ${ST[$1]-<none>}, expected at least $2; the document:
$STAT_JSON"
}

# stat_has PID JQ-CONDITION: process PID is shown by rpcrdma-stat and the
# condition holds on its object (for wait_until).
stat_has() {
	"$RPCRDMA_TEST_STAT" -j -p "$1" 2>/dev/null |
		jq -e --argjson pid "$1" ".processes[] | select(.pid == \$pid) | $2" >/dev/null
}

# The statistics file of process PID (of this user).
stats_file() {
	echo "/dev/shm/rpcrdma-shim.$(id -u).$1"
}
