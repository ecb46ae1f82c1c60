# Shared helpers for the BATS suites; every .bats file starts with
#
#     load ../helpers
#
# Paths come from the environment meson sets for `meson test`:
#   RPCRDMA_TEST_SHIM_LIB   absolute path of the built librpcrdma_shim.so
#   RPCTEST_BIN_DIR    directory holding rpctest-server and rpctest-client
#   RPCTEST_PROBE_LIB  the test probe library (tests/programs/probe.c)
#   RPCRDMA_SRC_DIR    source tree
#   RPCRDMA_BUILD_DIR  build tree
# When bats is run by hand, they default to the build tree bats runs from
# (a directory holding build.ninja) or else <source>/build.
#
# Everything a test starts (servers, rpcbind) is recorded and stopped in
# teardown, also when the test failed; every wait is bounded.

bats_require_minimum_version 1.5.0
bats_load_library bats-support
bats_load_library bats-assert

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
export RPCRDMA_SRC_DIR RPCRDMA_BUILD_DIR RPCTEST_BIN_DIR RPCRDMA_TEST_SHIM_LIB RPCTEST_PROBE_LIB

RPCTEST_SERVER=$RPCTEST_BIN_DIR/rpctest-server
RPCTEST_CLIENT=$RPCTEST_BIN_DIR/rpctest-client

# Bounds, in seconds.
: "${RPCTEST_READY_TIMEOUT:=15}"	# server start until its ready file
: "${RPCTEST_STOP_TIMEOUT:=10}"		# SIGTERM until exit, then SIGKILL
: "${RPCTEST_CLIENT_TIMEOUT:=300}"	# one client run, whatever it does

# State of the current test.
SERVER_PIDS=()
SERVER_LOGS=()
SERVER_PID=
SERVER_LOG=
SERVER_PORT=
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

# Stop what the test started; on failure, show the server logs.
helpers_teardown() {
	local pid
	for pid in "${SERVER_PIDS[@]}"; do
		_stop_pid "$pid" || true
	done
	if [[ -n $RPCBIND_PID ]]; then
		_stop_pid "$RPCBIND_PID" || true
		RPCBIND_PID=
	fi
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

# --- processes ----------------------------------------------------------------

# True while pid exists and is not a zombie.
_alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat:0:1} != Z ]]
}

# Wait at most $2 seconds for pid $1 to end; true if it did.
_wait_gone() {
	local pid=$1 deadline=$((SECONDS + $2))
	while _alive "$pid"; do
		((SECONDS < deadline)) || return 1
		sleep 0.05
	done
}

# SIGTERM, bounded wait, SIGKILL; reaps a child. Status of the process in
# STOP_STATUS (128+signal when killed), 1 when it had to be killed.
_stop_pid() {
	local pid=$1 killed=0
	STOP_STATUS=0
	kill -TERM "$pid" 2>/dev/null || true
	if ! _wait_gone "$pid" "$RPCTEST_STOP_TIMEOUT"; then
		echo "# pid $pid still running ${RPCTEST_STOP_TIMEOUT}s after SIGTERM: SIGKILL" >&2
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

# _launch_prefix ARRAY [--shim] [--preload LIB] [--env NAME=VALUE] [--ns NETNS] ...
# Fills the named array with the command prefix; leaves the remaining
# arguments' count to skip in _PREFIX_SHIFT.
_launch_prefix() {
	local -n _cmd=$1
	shift
	local preload= ns= n=0
	local -a envs=()
	while (($#)); do
		case $1 in
		--shim) preload+="${preload:+:}$RPCRDMA_TEST_SHIM_LIB"; shift; n=$((n + 1)) ;;
		--preload) preload+="${preload:+:}$2"; shift 2; n=$((n + 2)) ;;
		--env) envs+=("$2"); shift 2; n=$((n + 2)) ;;
		--ns) ns=$2; shift 2; n=$((n + 2)) ;;
		--) n=$((n + 1)); break ;;
		*) break ;;
		esac
	done
	_cmd=()
	[[ -z $ns ]] || _cmd+=(ip netns exec "$ns")
	_cmd+=(env)
	[[ -z $preload ]] || _cmd+=("LD_PRELOAD=$preload")
	_cmd+=("${envs[@]}")
	_PREFIX_SHIFT=$n
}

# start_server [--shim] [--preload LIB] [--env NAME=VALUE] [--ns NETNS] [--] [server args]
# Starts rpctest-server in the background and waits (bounded) for its ready
# file. Sets SERVER_PID, SERVER_PORT (0 for an rpcbind-registered server)
# and SERVER_LOG.
start_server() {
	local -a cmd
	_launch_prefix cmd "$@"
	shift "$_PREFIX_SHIFT"
	local n=${#SERVER_LOGS[@]}
	local ready=$BATS_TEST_TMPDIR/server$n.ready
	local log=$BATS_TEST_TMPDIR/server$n.log
	cmd+=("$RPCTEST_SERVER" -r "$ready" "$@")

	echo "# ${cmd[*]}" >"$log"
	"${cmd[@]}" >>"$log" 2>&1 </dev/null 3>&- &
	SERVER_PID=$!
	SERVER_LOG=$log
	SERVER_PIDS+=("$SERVER_PID")
	SERVER_LOGS+=("$log")

	await_ready "$SERVER_PID" "$ready" server || return 1
	SERVER_PORT=$READY_PORT
}

# await_ready PID READY_FILE WHAT: wait (bounded by RPCTEST_READY_TIMEOUT)
# until the background process PID writes "ready PORT" into READY_FILE;
# sets READY_PORT.  Fails the test, naming WHAT, when the process exits
# first or does not get ready in time (teardown then shows its log).
await_ready() {
	local pid=$1 ready=$2 what=$3
	local deadline=$((SECONDS + RPCTEST_READY_TIMEOUT))
	until [[ -s $ready ]]; do
		if ! _alive "$pid"; then
			local st=0
			wait "$pid" 2>/dev/null || st=$?
			_forget_pid "$pid"
			fail "$what exited with status $st before it was ready (its log follows)"
			return 1
		fi
		if ((SECONDS >= deadline)); then
			fail "$what not ready after ${RPCTEST_READY_TIMEOUT}s (its log follows)"
			return 1
		fi
		sleep 0.05
	done
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

# client [--shim] [--preload LIB] [--env NAME=VALUE] [--ns NETNS] [--] [client args]
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

# ensure_rpcbind: rpcbind answers `rpcinfo -p`; starts one for this test
# (stopped in teardown) when none runs. Skips when that needs root.
ensure_rpcbind() {
	if timeout 10 rpcinfo -p >/dev/null 2>&1; then
		return 0
	fi
	command -v rpcbind >/dev/null || skip "rpcbind is not running and not installed"
	((EUID == 0)) || skip "rpcbind is not running and starting it needs root"
	rpcbind -f </dev/null >"$BATS_TEST_TMPDIR/rpcbind.log" 2>&1 3>&- &
	RPCBIND_PID=$!
	local deadline=$((SECONDS + 10))
	until timeout 5 rpcinfo -p >/dev/null 2>&1; do
		if ! _alive "$RPCBIND_PID" || ((SECONDS >= deadline)); then
			fail "rpcbind did not come up; log:
$(cat "$BATS_TEST_TMPDIR/rpcbind.log")"
			return 1
		fi
		sleep 0.1
	done
}

# require_ipv6: the loopback has ::1.
require_ipv6() {
	grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null ||
		skip "no IPv6 loopback address (::1)"
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
	skip "no RDMA device${dev:+ named $dev}: run through tools/rxe-vm, or set up soft-RoCE"
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
		skip "$name is not set: run through tools/rxe-vm"
	done
}
