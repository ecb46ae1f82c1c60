# Shared helpers for the BATS suites; every .bats file starts with
#
#     load ../helpers
#
# Paths come from the environment meson sets for `meson test`:
#   RPCRDMA_TEST_SHIM_LIB   absolute path of the built librpcrdma_shim.so
#   RPCTEST_BIN_DIR    directory holding rpctest-server and rpctest-client
#   RPCTEST_PROBE_LIB  the test probe library (tests/programs/probe.c)
#   RPCTEST_SIGTICK_LIB  the interval-timer fixture (tests/programs/sigtick.c)
#   RPCRDMA_SRC_DIR    source tree
#   RPCRDMA_BUILD_DIR  build tree
# When bats is run by hand, they default to the build tree bats runs from
# (a directory holding build.ninja) or else <source>/build.
#
# Everything a test starts in the background (servers, peers, clients,
# rpcbind: start_bg) is recorded and stopped in teardown, the last started
# first, also when the test failed; every wait is bounded (wait_until).
# A test skips only for a reason of the host it runs on (skip_for_host):
# inside the soft-RoCE VM nothing is skipped.

bats_require_minimum_version 1.5.0

# bats sources this file, and so both libraries, once per test.  Their
# loaders find their parts with $(dirname ...): fifteen programs started
# per test, about a second of each test inside the emulated VM.  While
# they load, dirname is this function instead (same answer for the
# absolute paths they pass).
# shellcheck disable=SC2317 # called by the libraries' loaders
dirname() {
	local p=$1
	[[ $p == */* ]] || { echo .; return; }
	p=${p%/*}
	echo "${p:-/}"
}
bats_load_library bats-support
bats_load_library bats-assert
unset -f dirname

# --- paths ------------------------------------------------------------------

: "${RPCRDMA_SRC_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
if [[ -z ${RPCRDMA_BUILD_DIR:-} ]]; then
	if [[ -f $PWD/build.ninja ]]; then
		RPCRDMA_BUILD_DIR=$PWD
	else
		RPCRDMA_BUILD_DIR=$RPCRDMA_SRC_DIR/build
	fi
fi
: "${RPCTEST_BIN_DIR:=$RPCRDMA_BUILD_DIR/tests/programs}"
: "${RPCRDMA_TEST_SHIM_LIB:=$RPCRDMA_BUILD_DIR/shim/librpcrdma_shim.so}"
: "${RPCTEST_PROBE_LIB:=$RPCTEST_BIN_DIR/librpctest_probe.so}"
: "${RPCTEST_SIGTICK_LIB:=$RPCTEST_BIN_DIR/librpctest_sigtick.so}"
export RPCRDMA_SRC_DIR RPCRDMA_BUILD_DIR RPCTEST_BIN_DIR RPCRDMA_TEST_SHIM_LIB RPCTEST_PROBE_LIB
export RPCTEST_SIGTICK_LIB

RPCTEST_SERVER=$RPCTEST_BIN_DIR/rpctest-server
RPCTEST_CLIENT=$RPCTEST_BIN_DIR/rpctest-client

# A peer whose RDMA path failed is remembered by every process of the user
# (shim/negshare.h, under $XDG_RUNTIME_DIR): each test starts from nothing,
# in a runtime directory of its own (programs run as RPCTEST_USER get
# theirs from _launch_prefix).
if [[ -n ${BATS_TEST_TMPDIR:-} ]]; then
	XDG_RUNTIME_DIR=$BATS_TEST_TMPDIR/xdg
	export XDG_RUNTIME_DIR
	mkdir -p -m 700 "$XDG_RUNTIME_DIR"
fi

# Bounds, in seconds.
: "${RPCTEST_READY_TIMEOUT:=15}"	# server start until its ready file
: "${RPCTEST_STOP_TIMEOUT:=10}"		# SIGTERM until exit, then SIGKILL
: "${RPCTEST_CLIENT_TIMEOUT:=300}"	# one client run, whatever it does

# State of the current test: every program started in the background (its
# pid and log, in start order), and the last server and client started.
SERVER_PIDS=()
SERVER_LOGS=()
SERVER_PID=
SERVER_LOG=
SERVER_PORT=
CLIENT_PID=
CLIENT_LOG=
RPCBIND_PID=

# --- setup and teardown -----------------------------------------------------

# The programs and the library must have been built.
require_build() {
	local f
	for f in "$RPCTEST_SERVER" "$RPCTEST_CLIENT" "$RPCRDMA_TEST_SHIM_LIB"; do
		[[ -x $f || -f $f ]] ||
			fail "$f is missing: build first (meson setup build && ninja -C build), or set RPCRDMA_BUILD_DIR"
	done
}

setup() {
	require_build
}

# Stop what the test started, the last started first (clients before their
# servers, servers before rpcbind); on failure, show their logs.
helpers_teardown() {
	local i
	for ((i = ${#SERVER_PIDS[@]} - 1; i >= 0; i--)); do
		_stop_pid "${SERVER_PIDS[i]}" || true
	done
	RPCBIND_PID=
	if [[ -z ${BATS_TEST_COMPLETED:-} ]]; then
		show_server_logs
	fi
}

teardown() {
	helpers_teardown
}

show_server_logs() {
	local log
	for log in "${SERVER_LOGS[@]}"; do
		[[ -f $log ]] || continue
		echo "--- $log"
		cat "$log"
	done >&2
}

# --- waiting ------------------------------------------------------------------

# wait_until [-q] SECONDS WHAT COMMAND [ARGS...]
# Runs COMMAND every 0.1 s until it succeeds, for at most SECONDS.  When
# it never does, fails the test saying "WHAT" was not seen in time (with
# -q only returns 1, for callers that say more themselves).
wait_until() {
	local quiet=0
	if [[ $1 == -q ]]; then
		quiet=1
		shift
	fi
	local secs=$1 what=$2 deadline=$((SECONDS + $1))
	shift 2
	until "$@"; do
		if ((SECONDS >= deadline)); then
			((quiet)) || fail "waited ${secs}s, in vain, for: $what"
			return 1
		fi
		sleep 0.1
	done
}

# --- processes ----------------------------------------------------------------

# True while pid exists and is not a zombie.
_alive() {
	local stat
	# read, not $(cat ...): this runs in every wait's loop.
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
	stat=${stat##*) }
	[[ ${stat:0:1} != Z ]]
}

_gone() {
	! _alive "$1"
}

# Wait at most $2 seconds for pid $1 to end; true if it did.
_wait_gone() {
	wait_until -q "$2" "process $1 ends" _gone "$1"
}

# _dump_stuck PID: where each thread of a process that does not stop is
# (kernel wait channel, and the user stacks when gdb is there), so a hang
# shows its cause in the test's output before the process is killed.
_dump_stuck() {
	local pid=$1 t
	for t in /proc/"$pid"/task/*; do
		echo "# thread ${t##*/}: $(cat "$t/comm" 2>/dev/null) wchan=$(cat "$t/wchan" 2>/dev/null)" >&2
	done
	command -v gdb >/dev/null || return 0
	timeout 60 gdb -p "$pid" -batch -nx -ex 'thread apply all bt 12' 2>/dev/null |
		grep -E '^(Thread|#)' | sed 's/^/# /' >&2 || true
}

# SIGTERM, bounded wait, SIGKILL; reaps a child. Status of the process in
# STOP_STATUS (128+signal when killed), 1 when it had to be killed.
_stop_pid() {
	local pid=$1 killed=0
	STOP_STATUS=0
	kill -TERM "$pid" 2>/dev/null || true
	if ! _wait_gone "$pid" "$RPCTEST_STOP_TIMEOUT"; then
		echo "# pid $pid still running ${RPCTEST_STOP_TIMEOUT}s after SIGTERM: SIGKILL" >&2
		_dump_stuck "$pid"
		kill -KILL "$pid" 2>/dev/null || true
		_wait_gone "$pid" 5 || true
		killed=1
	fi
	wait "$pid" 2>/dev/null || STOP_STATUS=$?
	_forget_pid "$pid"
	((killed == 0))
}

_forget_pid() {
	local -a keep=()
	local p
	for p in "${SERVER_PIDS[@]}"; do
		[[ $p == "$1" ]] || keep+=("$p")
	done
	SERVER_PIDS=("${keep[@]}")
}

# Where RDMA is tested (rdma_required: the soft-RoCE VM), programs run as
# an ordinary user would run them: as user nobody when the tests run as
# root, with the locked-memory limit of a stock Debian system (ulimit -l
# 8192), so that what the shim registers is bounded as it is for users.
# --root keeps root (and its limit) where root is the point (rpcbind, the
# kernel's peers); --memlock KiB sets another limit.  RPCTEST_USER=root
# keeps root everywhere.  The host suite has no RDMA memory to bound: its
# programs run as the caller.
: "${RPCTEST_USER:=nobody}"
: "${RPCTEST_MEMLOCK_KB:=8192}"

# The uid the helpers run programs as (without --root).
launch_uid() {
	if ((EUID == 0)) && rdma_required && [[ $RPCTEST_USER != root ]]; then
		id -u "$RPCTEST_USER"
	else
		id -u
	fi
}

# Programs running as RPCTEST_USER write their ready files into the test's
# directory: let them reach it.
_share_test_dir() {
	local d=$BATS_TEST_TMPDIR
	[[ ${_SHARED_DIR:-} == "$d" ]] && return 0
	chmod 1777 "$d"
	while d=${d%/*}; [[ -n $d && $d != /tmp ]]; do
		chmod o+x "$d" 2>/dev/null || true
	done
	_SHARED_DIR=$BATS_TEST_TMPDIR
}

# The test's runtime directory for RPCTEST_USER's programs: theirs alone.
_user_runtime_dir() {
	local d=$BATS_TEST_TMPDIR/xdg.$RPCTEST_USER
	if [[ ! -d $d ]]; then
		mkdir -m 700 "$d"
		chown "$RPCTEST_USER:$(id -gn "$RPCTEST_USER")" "$d"
	fi
	echo "$d"
}

# _launch_prefix ARRAY [--shim] [--rdma] [--preload LIB] [--env NAME=VALUE] [--ns NETNS]
#                [--root] [--memlock KiB] ...
# Fills the named array with the command prefix; leaves the remaining
# arguments' count to skip in _PREFIX_SHIFT.  --rdma is --shim with
# RPCRDMA_SHIM_MODE=require-rdma: the program fails rather than fall back
# to TCP, so its success proves that it ran over RDMA.
_launch_prefix() {
	local -n _cmd=$1
	shift
	local preload= ns= n=0 root=0 memlock=$RPCTEST_MEMLOCK_KB
	local -a envs=()
	while (($#)); do
		case $1 in
		--shim) preload+="${preload:+:}$RPCRDMA_TEST_SHIM_LIB"; shift; n=$((n + 1)) ;;
		--rdma)
			preload+="${preload:+:}$RPCRDMA_TEST_SHIM_LIB"
			envs+=(RPCRDMA_SHIM_MODE=require-rdma)
			shift
			n=$((n + 1))
			;;
		--preload) preload+="${preload:+:}$2"; shift 2; n=$((n + 2)) ;;
		--env) envs+=("$2"); shift 2; n=$((n + 2)) ;;
		--ns) ns=$2; shift 2; n=$((n + 2)) ;;
		--root) root=1; shift; n=$((n + 1)) ;;
		--memlock) memlock=$2; shift 2; n=$((n + 2)) ;;
		--) n=$((n + 1)); break ;;
		*) break ;;
		esac
	done
	_cmd=()
	[[ -z $ns ]] || _cmd+=(ip netns exec "$ns")
	rdma_required && [[ $RPCTEST_USER != root ]] || root=1
	if ((EUID == 0 && !root)); then
		_share_test_dir
		_cmd+=(prlimit "--memlock=$((memlock * 1024))"
			setpriv "--reuid=$RPCTEST_USER" "--regid=$(id -gn "$RPCTEST_USER")"
			--clear-groups)
		envs=("XDG_RUNTIME_DIR=$(_user_runtime_dir)" "${envs[@]}")
	elif ((!root)); then
		_cmd+=(prlimit "--memlock=$((memlock * 1024)):")
	fi
	# Clients decide in clnt_create (upgrade = wait), so that a client
	# making one call shows its decision and a first call proves its
	# transport; the background upgrade (the default) has tests of its
	# own, which pass --env RPCRDMA_SHIM_UPGRADE=background.
	[[ -z $preload ]] || envs=("LD_PRELOAD=$preload" RPCRDMA_SHIM_UPGRADE=wait "${envs[@]}")
	((${#envs[@]} == 0)) || _cmd+=(env "${envs[@]}")
	_PREFIX_SHIFT=$n
}

# start_bg NAME [--shim] [--rdma] [--preload LIB] [--env NAME=VALUE] [--ns NETNS]
#          [--root] [--memlock KiB] [--] COMMAND [ARGS...]
# The one way to run a program in the background: stdin closed, stdout
# and stderr (after a first line showing the command) into
# $BATS_TEST_TMPDIR/NAME<n>.log, recorded so that teardown stops it and
# shows its log when the test failed.  Sets BG_PID and BG_LOG.
start_bg() {
	local name=$1
	shift
	local -a cmd
	_launch_prefix cmd "$@"
	shift "$_PREFIX_SHIFT"
	cmd+=("$@")
	BG_LOG=$BATS_TEST_TMPDIR/$name${#SERVER_LOGS[@]}.log
	echo "# ${cmd[*]}" >"$BG_LOG"
	"${cmd[@]}" >>"$BG_LOG" 2>&1 </dev/null 3>&- &
	BG_PID=$!
	SERVER_PIDS+=("$BG_PID")
	SERVER_LOGS+=("$BG_LOG")
}

# wait_bg PID SECONDS: the background program PID ends by itself within
# SECONDS (else the test fails); its exit status in BG_STATUS.
wait_bg() {
	local pid=$1
	if ! _wait_gone "$pid" "$2"; then
		fail "process $pid still running after $2 s"
		return 1
	fi
	BG_STATUS=0
	wait "$pid" 2>/dev/null || BG_STATUS=$?
	_forget_pid "$pid"
}

# start_server [launch options] [--] [server args]
# Starts rpctest-server in the background and waits (bounded) for its ready
# file. Sets SERVER_PID, SERVER_PORT (0 for an rpcbind-registered server)
# and SERVER_LOG.
start_server() {
	local -a pre
	_launch_prefix pre "$@"
	shift "$_PREFIX_SHIFT"
	local ready=$BATS_TEST_TMPDIR/server${#SERVER_LOGS[@]}.ready
	start_bg server --root -- "${pre[@]}" "$RPCTEST_SERVER" -r "$ready" "$@"
	SERVER_PID=$BG_PID
	SERVER_LOG=$BG_LOG
	await_ready "$SERVER_PID" "$ready" server || return 1
	SERVER_PORT=$READY_PORT
}

# start_client_bg [launch options] [--] [client args]
# rpctest-client in the background (give it a large -c), stopped in
# teardown with the servers.  Sets CLIENT_PID and CLIENT_LOG; wait_bg
# "$CLIENT_PID" waits for its end.
start_client_bg() {
	local -a pre
	_launch_prefix pre "$@"
	shift "$_PREFIX_SHIFT"
	start_bg client --root -- "${pre[@]}" "$RPCTEST_CLIENT" "$@"
	CLIENT_PID=$BG_PID
	CLIENT_LOG=$BG_LOG
}

_ready_or_gone() {
	[[ -s $2 ]] || ! _alive "$1"
}

# await_ready PID READY_FILE WHAT: wait (bounded by RPCTEST_READY_TIMEOUT)
# until the background process PID writes "ready PORT" into READY_FILE;
# sets READY_PORT.  Fails the test, naming WHAT, when the process exits
# first or does not get ready in time (teardown then shows its log).
await_ready() {
	local pid=$1 ready=$2 what=$3
	if ! wait_until -q "$RPCTEST_READY_TIMEOUT" "$what ready" _ready_or_gone "$pid" "$ready"; then
		fail "$what not ready after ${RPCTEST_READY_TIMEOUT}s (its log follows)"
		return 1
	fi
	if [[ ! -s $ready ]]; then
		local st=0
		wait "$pid" 2>/dev/null || st=$?
		_forget_pid "$pid"
		fail "$what exited with status $st before it was ready (its log follows)"
		return 1
	fi
	local word
	read -r word READY_PORT <"$ready"
	[[ $word == ready ]] || fail "unexpected ready file: $(cat "$ready")"
}

# stop_server [PID]: SIGTERM the server (default: the last started), wait
# (bounded) and check that it exited 0, as it must on SIGTERM.
stop_server() {
	local pid=${1:-$SERVER_PID}
	[[ -n $pid ]] || fail "stop_server: no server"
	if ! _stop_pid "$pid"; then
		fail "server $pid did not stop on SIGTERM within ${RPCTEST_STOP_TIMEOUT}s"
		return 1
	fi
	((STOP_STATUS == 0)) || fail "server $pid exited with status $STOP_STATUS after SIGTERM"
}

# client [launch options] [--] [client args]
# Runs rpctest-client under `run` (status, output, lines), bounded by
# RPCTEST_CLIENT_TIMEOUT (status 124 when it had to be stopped).
client() {
	local -a cmd
	_launch_prefix cmd "$@"
	shift "$_PREFIX_SHIFT"
	run timeout --kill-after=5 "$RPCTEST_CLIENT_TIMEOUT" "${cmd[@]}" "$RPCTEST_CLIENT" "$@"
}

# --- expectations -------------------------------------------------------------

# size_bytes 4K -> 4096, 1M+3 -> 1048579 (the client's -s syntax).
size_bytes() {
	local s=$1 add=0 mult=1
	if [[ $s == *+* ]]; then
		add=${s#*+}
		s=${s%%+*}
	fi
	case $s in
	*[Kk]) mult=1024; s=${s%?} ;;
	*[Mm]) mult=1048576; s=${s%?} ;;
	esac
	echo $((s * mult + add))
}

# assert_client_ran OPS SIZES [COUNT]
# The last client run succeeded and reported every op (and every size of
# the sized ops) as ok, and the total number of calls.
assert_client_ran() {
	local ops=$1 sizes=$2 count=${3:-1} op size calls=0
	local -a opl szl
	IFS=, read -ra opl <<<"$ops"
	IFS=, read -ra szl <<<"$sizes"
	assert_success
	for op in "${opl[@]}"; do
		case $op in
		null)
			assert_line "null ok"
			calls=$((calls + 1))
			;;
		whoami)
			assert_line --regexp '^whoami caller=[^ ]+ '
			calls=$((calls + 1))
			;;
		*)
			for size in "${szl[@]}"; do
				assert_line "$op $(size_bytes "$size") ok"
				calls=$((calls + 1))
			done
			;;
		esac
	done
	assert_line "ok $((calls * count)) calls"
}

# --- resources ----------------------------------------------------------------

# free_port: a TCP port nobody uses, outside the ephemeral range, and not
# handed out before in this test.
free_port() {
	local lo=10000 hi=32767 port hex eph_lo _
	if read -r eph_lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null && ((eph_lo > lo + 1000)); then
		hi=$((eph_lo - 1))
	fi
	local given=$BATS_TEST_TMPDIR/ports.given
	for _ in $(seq 200); do
		port=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
		grep -qx "$port" "$given" 2>/dev/null && continue
		hex=$(printf ':%04X ' "$port")
		if ! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q -- "$hex"; then
			echo "$port" >>"$given"
			echo "$port"
			return 0
		fi
	done
	fail "no free TCP port found"
}

# unique_prog: a program number in the user range (0x20000000-0x3fffffff)
# for servers registered with rpcbind, so runs never meet each other.
unique_prog() {
	printf '0x%08x\n' $((0x20100000 + (RANDOM * 32768 + RANDOM) % 0x0ff00000))
}

# skip_for_host REASON: skip the test for a reason of this host (no root,
# a tool not installed, no RDMA device, an rpcbind of its own).  Inside the
# soft-RoCE VM (RXE_VM=1) nothing may be skipped: there it fails instead.
skip_for_host() {
	if [[ ${RXE_VM:-} == 1 ]]; then
		fail "$1 (inside the VM a test may not be skipped)"
		return 1
	fi
	skip "$1"
}

_rpcbind_answers() {
	timeout 5 rpcinfo -p >/dev/null 2>&1
}

# ensure_rpcbind: rpcbind answers `rpcinfo -p`; starts one for this test
# (stopped in teardown, after what the test started later) when none runs.
# Skips when that needs root.
ensure_rpcbind() {
	_rpcbind_answers && return 0
	command -v rpcbind >/dev/null || skip_for_host "rpcbind is not running and not installed"
	((EUID == 0)) || skip_for_host "rpcbind is not running and starting it needs root"
	start_bg rpcbind --root rpcbind -f
	RPCBIND_PID=$BG_PID
	wait_until 15 "rpcbind to answer rpcinfo -p" _rpcbind_answers
}

# require_ipv6: the loopback has ::1.
require_ipv6() {
	grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null ||
		skip_for_host "no IPv6 loopback address (::1)"
}

# has_rdma_device [NAME]
has_rdma_device() {
	if [[ -n ${1:-} ]]; then
		[[ -e /sys/class/infiniband/$1 ]]
	else
		compgen -G '/sys/class/infiniband/*' >/dev/null
	fi
}

# rdma_required: the environment promises an RDMA device (the soft-RoCE VM
# sets RXE_VM=1; RPCRDMA_TEST_REQUIRE_RDMA=1 asks for the same elsewhere).
rdma_required() {
	[[ ${RXE_VM:-} == 1 || ${RPCRDMA_TEST_REQUIRE_RDMA:-} == 1 ]]
}

# require_rdma_device: an RDMA device (RXE_DEV when set) is present. Where
# one is required its absence FAILS the test; elsewhere the test is skipped.
require_rdma_device() {
	local dev=${RXE_DEV:-}
	has_rdma_device "$dev" && return 0
	if rdma_required; then
		fail "no RDMA device${dev:+ named $dev} in /sys/class/infiniband, but RXE_VM=${RXE_VM:-} RPCRDMA_TEST_REQUIRE_RDMA=${RPCRDMA_TEST_REQUIRE_RDMA:-} require one"
		return 1
	fi
	skip_for_host "no RDMA device${dev:+ named $dev}: run through tools/rxe-vm, or set up soft-RoCE"
}

# require_env NAME...: variables the VM exports; missing ones fail where
# RDMA is required and skip elsewhere.
require_env() {
	local name
	for name in "$@"; do
		[[ -n ${!name:-} ]] && continue
		if rdma_required; then
			fail "$name is not set (tools/rxe-vm exports it)"
			return 1
		fi
		skip_for_host "$name is not set: run through tools/rxe-vm"
	done
}

# --- the shim's log -----------------------------------------------------------

# re_quote STRING: STRING as a literal inside an extended regex.
re_quote() {
	sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$1"
}

# shim_line [--comm NAME] [--pid PID] [--prog N] KIND ADDR PORT [OUTCOME]
# The extended regex of one of the shim's decision lines, from the start
# of the line:
#   client      rpcrdma-shim[COMM:PID]: client program N[ (NAME)] version V to ADDR port PORT: OUTCOME
#   required    rpcrdma-shim[COMM:PID]: error: client to ADDR port PORT: RDMA required, but OUTCOME
#   server      rpcrdma-shim[COMM:PID]: server on ADDR port PORT: OUTCOME
#   connection  rpcrdma-shim[COMM:PID]: server: RDMA connection from ADDR port PORT: OUTCOME
# ADDR and PORT are literal, '' for any.  OUTCOME is a regex that follows
# (end it with $ to match the rest of the line whole), '' for any; RDMA and
# TCP stand for each kind's own forms:
#   client      RDMA  RDMA, inline S/R[ (peer sent no RFC 8797 private data)], credits C requested, R=0|1, RPC-over-RDMA version 1|2 offered
#               TCP   TCP (REASON[: DETAIL])
#   server      RDMA  RDMA listener on port N
#               TCP   TCP only (REASON[: DETAIL])
#   connection  RDMA  inline S/R[ (peer sent no RFC 8797 private data)], credits C, R=0|1, RPC-over-RDMA version 1|versions 1-2
shim_line() {
	local comm='[^]:]+' pid='[0-9]+' prog='[0-9]+'
	while [[ $1 == --* ]]; do
		case $1 in
		--comm) comm=$(re_quote "$2") ;;
		--pid) pid=$2 ;;
		--prog) prog=$(($2)) ;;
		*) fail "shim_line: unknown option $1"; return 1 ;;
		esac
		shift 2
	done
	local kind=$1 addr='[^ ]+' port='[0-9]+' outcome=${4:-}
	[[ -z ${2:-} ]] || addr=$(re_quote "$2")
	[[ -z ${3:-} ]] || port=$3
	local inline='inline [0-9]+/[0-9]+( \(peer sent no RFC 8797 private data\))?'
	case $kind:$outcome in
	client:RDMA) outcome="RDMA, $inline, credits [0-9]+ requested, R=[01], RPC-over-RDMA version (1|2 offered)\$" ;;
	client:TCP) outcome='TCP \(' ;;
	server:RDMA) outcome='RDMA listener on port [0-9]+$' ;;
	server:TCP) outcome='TCP only \(' ;;
	connection:RDMA) outcome="$inline, credits [0-9]+, R=[01], RPC-over-RDMA (version 1|versions 1-2)\$" ;;
	esac
	local head="^rpcrdma-shim\\[$comm:$pid\\]: "
	case $kind in
	client) echo "${head}client program $prog( \\([^)]*\\))? version [0-9]+ to $addr port $port: $outcome" ;;
	required) echo "${head}error: client to $addr port $port: RDMA required, but $outcome" ;;
	server) echo "${head}server on $addr port $port: $outcome" ;;
	connection) echo "${head}server: RDMA connection from $addr port $port: $outcome" ;;
	*) fail "shim_line: unknown kind '$kind' (client, required, server, connection)"; return 1 ;;
	esac
}

# _shim_text [--log FILE | --stderr] ...: the text to search, into
# _SHIM_TEXT and _SHIM_WHERE; the count of arguments taken in _SHIM_SHIFT.
_shim_text() {
	_SHIM_SHIFT=0
	case ${1:-} in
	--log)
		_SHIM_TEXT=$(cat "$2" 2>&1)
		_SHIM_WHERE=$2
		_SHIM_SHIFT=2
		;;
	--stderr)
		_SHIM_TEXT=$stderr
		_SHIM_WHERE="the program's stderr"
		_SHIM_SHIFT=1
		;;
	*)
		_SHIM_TEXT=$output
		_SHIM_WHERE="the program's output"
		;;
	esac
}

# assert_shim_line [--log FILE | --stderr] [shim_line arguments]
# The output of the last `run` (or FILE, or the stderr of the last `run
# --separate-stderr`) has that decision line.
assert_shim_line() {
	local re
	_shim_text "$@"
	shift "$_SHIM_SHIFT"
	re=$(shim_line "$@") || return 1
	grep -qE -- "$re" <<<"$_SHIM_TEXT" ||
		fail "no line matching '$re' in $_SHIM_WHERE:
$_SHIM_TEXT"
}

# refute_shim_line: as assert_shim_line, that no such line is there.
refute_shim_line() {
	local re
	_shim_text "$@"
	shift "$_SHIM_SHIFT"
	re=$(shim_line "$@") || return 1
	! grep -qE -- "$re" <<<"$_SHIM_TEXT" ||
		fail "a line matching '$re' in $_SHIM_WHERE:
$(grep -E -- "$re" <<<"$_SHIM_TEXT")"
}

# count_shim_lines [--log FILE | --stderr] [shim_line arguments]: how many.
count_shim_lines() {
	local re
	_shim_text "$@"
	shift "$_SHIM_SHIFT"
	re=$(shim_line "$@") || return 1
	grep -cE -- "$re" <<<"$_SHIM_TEXT" || true
}

# assert_log FILE REGEX: FILE has a line matching REGEX (grep -E).
assert_log() {
	grep -qE -- "$2" "$1" ||
		fail "no line matching '$2' in $1:
$(cat "$1")"
}

refute_log() {
	! grep -qE -- "$2" "$1" ||
		fail "a line matching '$2' in $1:
$(grep -E -- "$2" "$1")"
}

# assert_ticked FILE|-: the count the sigtick fixture printed at exit (in
# FILE, or in $output with -) is at least 100: its signals did come.
assert_ticked() {
	local n
	if [[ $1 == - ]]; then
		n=$(sed -n 's/^rpctest-sigtick: \([0-9]*\) signals$/\1/p' <<<"$output")
	else
		n=$(sed -n 's/^rpctest-sigtick: \([0-9]*\) signals$/\1/p' "$1")
	fi
	[[ -n $n ]] || fail "no signal count from the sigtick fixture in ${1/#-/the output}"
	((n >= 100)) || fail "only $n signals came"
}

# count_log FILE REGEX: how many lines match.
count_log() {
	grep -cE -- "$2" "$1" || true
}

# wait_log FILE REGEX SECONDS: until a line of FILE matches (bounded).
wait_log() {
	wait_until "$3" "a line matching '$2' in $1" grep -qE -- "$2" "$1"
}

# assert_fd_addrs ADDRESS PORT: in the last client run's WHOAMI, the
# client's descriptor (CLGET_FD) answers as its connection's socket: its
# own address (getsockname) is the caller's address the server saw, and
# its peer (getpeername) the server's ADDRESS and PORT as the program
# gave them, over TCP and over RDMA alike.
assert_fd_addrs() {
	local server
	server="$1.$(($2 >> 8)).$(($2 & 255))"
	[[ $output =~ whoami\ caller=([^ ]+)\ local=([^ ]+)\ server=([^ ]+) ]] ||
		fail "no WHOAMI line with caller, local and server addresses"
	[[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] ||
		fail "the server saw ${BASH_REMATCH[1]}, the client's descriptor says ${BASH_REMATCH[2]}"
	[[ ${BASH_REMATCH[3]} == "$server" ]] ||
		fail "the client's descriptor is connected to ${BASH_REMATCH[3]}, not $server"
}

# assert_netid NETID [CALLER-ADDRESS]: the server's WHOAMI answer in the
# last client run names the transport the call came over (rdma, rdma6,
# tcp, tcp6), and the caller's address.
assert_netid() {
	local caller='[^ ]+'
	[[ -z ${2:-} ]] || caller="$(re_quote "$2")\\.[0-9]+\\.[0-9]+"
	assert_line --regexp "^whoami caller=$caller .* netid=$1 "
}
