#!/usr/bin/env bats
#
# Unmodified daemons under the shim, one test per pattern of how servers
# run: detached after creating their transports, pre-forked workers, each
# call under its caller's identity, a permanent privilege drop (rpcbind,
# and a server with connections open), children run with fork+exec,
# system() and popen(), and children that touch what they inherited.
# The kernel lets write() reach RDMA descriptors only from the credentials
# that opened them; each test proves that RDMA is served regardless (the
# server's netid, its queue pairs, rpcrdma-stat, the shim's log) and that
# no client waits on a listener nobody reads.

load ../helpers
load ../tools
load peer
load daemon

: "${RPCTEST_DROPPRIVS_LIB:=$RPCTEST_BIN_DIR/librpctest_dropprivs.so}"

# Every size: inline both ways, Read chunks, Reply and Write chunks.
ALL_OPS=null,echo,source,sink,whoami
ALL_SIZES=0,4K,64K,1M+3

setup() {
	require_build
	require_tools
	require_jq
	require_rdma_device
	require_env RXE_ADDR
	((EUID == 0)) || skip_for_host "the tests change users: they need root"
}

teardown() {
	if [[ -n ${CM_MODE:-} ]]; then
		chmod "$CM_MODE" /dev/infiniband/rdma_cm
	fi
	tools_teardown
}

# The CPU ticks (user + system) a process used so far.
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# assert_idle PID: the process uses (almost) no CPU for 3 s.
assert_idle() {
	local a b
	a=$(cpu_ticks "$1")
	sleep 3
	b=$(cpu_ticks "$1")
	((b - a <= 10)) || fail "process $1 used $((b - a)) ticks in 3 s while idle"
}

# client_calls PID: the calls rpcrdma-stat counted for that RDMA client.
client_calls() {
	"$RPCRDMA_TEST_STAT" -j -p "$1" 2>/dev/null |
		jq -r '[.processes[].transports[] | select(.role == "client" and .transport == "rdma")][0].calls // 0'
}

# more_calls PID N: the client made more than N calls (asked anew each time).
more_calls() {
	(($(client_calls "$1") > $2))
}

# await_calls PID N: the background client PID makes more than N calls.
await_calls() {
	local pid=$1 n=$2
	wait_until -q 60 "client $pid to make $n calls" more_calls "$pid" "$n" && return 0
	fail "client $pid made $(client_calls "$pid") calls, not more than $n: $(ps -o pid,stat,etime,cmd -p "$pid"; "$RPCRDMA_TEST_STAT" -p "$pid" 2>&1)"
}

# assert_client_going PID: its calls go on (the count grows), none failed.
assert_client_going() {
	local a b doc
	a=$(client_calls "$1")
	await_calls "$1" "$a"
	doc=$("$RPCRDMA_TEST_STAT" -j -p "$1")
	jq -e '[.processes[].transports[] | select(.role == "client")][0]
		| .errors == 0 and .timeouts == 0' <<<"$doc" >/dev/null ||
		fail "client $1 saw errors: $doc"
}

# as_user UID CLIENT-ARGS...: rpctest-client --rdma as UID (its gid the same).
as_user() {
	local uid=$1
	shift
	run timeout --kill-after=5 "$RPCTEST_CLIENT_TIMEOUT" \
		setpriv --reuid="$uid" --regid="$uid" --clear-groups \
		env "LD_PRELOAD=$RPCRDMA_TEST_SHIM_LIB" RPCRDMA_SHIM_MODE=require-rdma \
		"$RPCTEST_CLIENT" "$@"
}

# --- 1. daemonize -----------------------------------------------------------

# rpctest-server -D TIMES: the process that made the transports exits, its
# child (TIMES 1: daemon(3)) or grandchild (2: the double fork) serves.
daemonized() {
	local times=$1 port
	port=$(free_port)
	start_daemon --rdma --env RPCRDMA_SHIM_LOG_LEVEL=debug \
		-m tli -a "$RXE_ADDR" -p "$port" -D "$times"
	local pid=$SERVER_PID log=$SERVER_LOG

	# The first client is served by the daemon, at once: its connection
	# request moves with the listener the daemon takes over.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o "$ALL_OPS" -s "$ALL_SIZES"
	assert_client_ran "$ALL_OPS" "$ALL_SIZES"
	assert_netid rdma "$RXE_ADDR"
	assert_log "$log" "^rpcrdma-shim\\[rpctest-server:$pid\\]: server: RDMA listener on port $port taken over after fork\\(\\)\$"
	assert_shim_line --log "$log" --pid "$pid" connection "$RXE_ADDR" '' RDMA

	# While a client holds its connection: the daemon's queue pair, and
	# its statistics in a file of its own.
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o echo -s 4K -c 20 -H
	wait_log "$CLIENT_LOG" "^holding after 20 calls" 60
	assert_qp_of "$pid"
	assert_serves_rdma "$pid" 20
	_stop_pid "$CLIENT_PID"
	stop_daemon "$pid" "$log" rpctest-server
}

@test "daemonize: the daemon (fork once, or twice around setsid) takes the RDMA listener over and serves every size at once" {
	daemonized 1
	daemonized 2
}

# A daemon (the double fork) whose worker threads run the calls and reply
# after the dispatch, with NULL never answered: the process serving the
# listener holds each connection's next call until the last is answered,
# and makes its own alarm for a call nobody answers.
@test "a daemon whose worker threads reply after the dispatch: threads sharing a CLIENT get their own replies; a call never answered holds the next once" {
	local port
	port=$(free_port)
	start_daemon --rdma --env RPCRDMA_SHIM_DEFER_WAIT=400ms \
		-m tli -a "$RXE_ADDR" -p "$port" -D 2 -T 4,10,0
	local pid=$SERVER_PID log=$SERVER_LOG
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -t 20 -T 4 \
		-o echo -s 0,100,3000,200K -c 5
	assert_success
	peer_call -a "$RXE_ADDR" -p "$port" --quiet-wait 5 null=none echo:0
	assert_success
	assert_line --regexp '^case=echo:0 .* rpc=SUCCESS data=ok .*result=ok$'
	assert_log "$log" "^rpcrdma-shim\\[rpctest-server:$pid\\]: warning: server: no reply within defer_wait \\(400 ms\\)"
	refute_log "$log" "not sent"
	stop_daemon "$pid" "$log" rpctest-server
}

@test "an interval timer's SIGALRM every millisecond, without SA_RESTART, in the server and its clients: the connects, every size and threads sharing a CLIENT go on over RDMA" {
	[[ -f $RPCTEST_SIGTICK_LIB ]] || fail "$RPCTEST_SIGTICK_LIB is missing: build first"
	local port tick=(--preload "$RPCTEST_SIGTICK_LIB" --env RPCTEST_SIGTICK_US=1000)
	port=$(free_port)
	# poll_us 0: every wait sleeps (poll(), condition variables), where a
	# signal finds it; the threads' client polls as by default.
	start_server --shim "${tick[@]}" --env RPCRDMA_SHIM_POLL_US=0 -m tli -a "$RXE_ADDR" -p "$port"
	local pid=$SERVER_PID log=$SERVER_LOG
	# Each client connects, and upgrades, with the ticks already coming.
	client --rdma "${tick[@]}" --env RPCRDMA_SHIM_POLL_US=0 -m tli -h "$RXE_ADDR" -p "$port" \
		-o "$ALL_OPS" -s "$ALL_SIZES" -c 3
	assert_success
	assert_line --regexp '^whoami .* netid=rdma '
	assert_ticked -
	client --rdma "${tick[@]}" -m tli -h "$RXE_ADDR" -p "$port" -T 4 \
		-o null,echo -s 0,3000,200K -c 25
	assert_success
	assert_line "threads 4: every reply to its caller"
	assert_ticked -
	# svc_run's poll() took them as well, and served on.
	stop_server "$pid"
	assert_ticked "$log"
	refute_log "$log" "svc_run returned unexpectedly|warning"
}

# --- 2. pre-forked workers ----------------------------------------------------

@test "pre-forked workers: one worker takes the RDMA listener over, every client is served over RDMA, none waits" {
	local port
	port=$(free_port)
	start_server --rdma --env RPCRDMA_SHIM_LOG_LEVEL=debug -m tli -a "$RXE_ADDR" -p "$port" -W 3
	local master=$SERVER_PID log=$SERVER_LOG
	local -a workers
	mapfile -t workers < <(sed -n 's/^rpctest-server: worker pid //p' "$log")
	((${#workers[@]} == 3)) || fail "3 workers expected: $(cat "$log")"

	# require-rdma: a connection request left on a listener nobody reads
	# would time out and fail the client.
	local i
	for i in 1 2 3; do
		client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null,echo,whoami -s 0,64K
		assert_client_ran null,echo,whoami 0,64K
		assert_netid rdma "$RXE_ADDR"
	done
	# Two at once.
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o echo -s 4K,64K -c 30
	local first=$CLIENT_PID
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o echo -s 4K,64K -c 30 -H
	wait_bg "$first" 300
	assert_equal "$BG_STATUS" 0
	wait_log "$CLIENT_LOG" "^holding after 60 calls" 300

	# One worker serves the listener; the process that forked them, none.
	assert_equal "$(count_log "$log" 'taken over after fork\(\)$')" 1
	local winner
	winner=$(sed -n 's/^rpcrdma-shim\[rpctest-server:\([0-9]*\)\]: server: RDMA listener on port [0-9]* taken over after fork()$/\1/p' "$log")
	[[ " ${workers[*]} " == *" $winner "* ]] || fail "pid $winner is not a worker (${workers[*]})"
	assert_qp_of "$winner"
	refute_qp_of "$master"
	assert_serves_rdma "$winner" 60
	refute_shim_line --log "$log" --pid "$master" connection "$RXE_ADDR" '' RDMA

	_stop_pid "$CLIENT_PID"
	stop_server "$master"
	assert_log "$log" "^rpctest-server: the workers stopped\$"
}

# --- 3. each call under its caller's identity -----------------------------------

@test "-u, each call as its caller's uid and gid: the listener and every RDMA connection keep working, calls and replies of every size" {
	local port
	port=$(free_port)
	start_server --root --rdma --env RPCRDMA_SHIM_LOG_LEVEL=debug -m tli -a "$RXE_ADDR" -p "$port" -u
	local pid=$SERVER_PID log=$SERVER_LOG

	# A connection that lives through everything below.
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -A sys \
		-o echo,source,sink -s "$ALL_SIZES" -c 100000 -q
	local long=$CLIENT_PID
	await_calls "$long" 10

	# Connections come and go under other identities, each proving its
	# calls ran as its caller.
	local uid
	for uid in 1000 1001 0; do
		as_user "$uid" -m tli -h "$RXE_ADDR" -p "$port" -A sys -o "$ALL_OPS" -s "$ALL_SIZES"
		assert_client_ran "$ALL_OPS" "$ALL_SIZES"
		assert_line --regexp "^whoami .* netid=rdma .* cred=AUTH_SYS uid=$uid gid=$uid "
		assert_log "$log" "^rpctest-server: serving calls as uid $uid gid $uid\$"
	done
	assert_client_going "$long"

	# The credentials changed under the channel: its ids moved, none lost.
	assert_log "$log" "RDMA-CM channel [0-9]+: the process's credentials changed; [0-9]+ ids moved to a channel opened under the new ones\$"
	refute_log "$log" "could not be moved|cannot post|closing an RDMA connection|stops:"
	assert_serves_rdma "$pid" 100
	_stop_pid "$long"
	stop_server
}

# --- 4. permanent privilege drop ------------------------------------------------

@test "rpcbind drops privileges: its RDMA listener (port 111) moves to the new credentials and serves; no thread keeps root" {
	! _rpcbind_answers || skip_for_host "an rpcbind already runs: this test starts its own"
	command -v rpcbind >/dev/null || fail "rpcbind is not installed"
	# rpcbind itself is program 100000: let the shim try RDMA for it.
	start_bg rpcbind --root --shim --env "RPCRDMA_SHIM_RULE=rdma program 100000" \
		--env RPCRDMA_SHIM_LOG_LEVEL=debug rpcbind -f -w
	local pid=$BG_PID log=$BG_LOG
	wait_until 15 "rpcbind to answer rpcinfo -p" _rpcbind_answers
	assert_shim_line --log "$log" server 0.0.0.0 111 'RDMA listener on port 111$'
	run ps -o user= -p "$pid"
	refute_output root

	# Over RDMA: rpcbind looks programs up under the netid of the
	# transport a lookup came on, which says "tcp" on its port.
	local -a shim_rpcb=(env "RPCRDMA_SHIM_RULE=rdma program 100000" RPCRDMA_SHIM_MODE=require-rdma
		LD_PRELOAD="$RPCRDMA_TEST_SHIM_LIB" timeout 60)
	run --separate-stderr "${shim_rpcb[@]}" rpcinfo -T tcp "$RXE_ADDR" 100000 4
	assert_success || fail "rpcinfo: $stderr"
	assert_line 'program 100000 version 4 ready and waiting'
	assert_shim_line --stderr --prog 100000 client "$RXE_ADDR" 111 RDMA
	run --separate-stderr "${shim_rpcb[@]}" rpcinfo -p "$RXE_ADDR"
	assert_success || fail "rpcinfo -p: $stderr"
	assert_line --regexp '^ +100000 +4 +tcp +111 '
	assert_shim_line --stderr --prog 100000 client "$RXE_ADDR" 111 RDMA
	assert_shim_line --log "$log" connection "$RXE_ADDR" '' RDMA
	assert_log "$log" "RDMA-CM channel [0-9]+: the process's credentials changed; 1 ids moved"
	refute_log "$log" "stops:"

	assert_unprivileged "$pid"
	assert_idle "$pid"
}

@test "a server that drops privileges with RDMA connections open: they go on, new ones are served, nothing keeps the old credentials" {
	[[ -f $RPCTEST_DROPPRIVS_LIB ]] || fail "$RPCTEST_DROPPRIVS_LIB is missing: build first"
	local port
	port=$(free_port)
	# As root: it drops its privileges itself.
	start_server --root --shim --preload "$RPCTEST_DROPPRIVS_LIB" \
		--env RPCRDMA_SHIM_LOG_LEVEL=debug --env RPCRDMA_SHIM_MODE=require-rdma \
		-m tli -a "$RXE_ADDR" -p "$port"
	local pid=$SERVER_PID log=$SERVER_LOG
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o echo,source -s 4K,64K -c 100000 -q
	local long=$CLIENT_PID
	await_calls "$long" 10

	kill -USR2 "$pid"
	wait_log "$log" "rpctest-dropprivs: now uid 65534 gid 65534" 20
	assert_client_going "$long"

	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o "$ALL_OPS" -s "$ALL_SIZES"
	assert_client_ran "$ALL_OPS" "$ALL_SIZES"
	assert_netid rdma "$RXE_ADDR"
	assert_client_going "$long"
	assert_log "$log" "RDMA-CM channel [0-9]+: the process's credentials changed; 2 ids moved"
	refute_log "$log" "stops:|could not be moved"
	assert_unprivileged "$pid"
	assert_qp_of "$pid"
	_stop_pid "$long"
	stop_server
}

@test "new credentials that cannot open the RDMA-CM device: the listener stops cleanly, clients are refused at once and use TCP" {
	[[ -f $RPCTEST_DROPPRIVS_LIB ]] || fail "$RPCTEST_DROPPRIVS_LIB is missing: build first"
	CM_MODE=$(stat -c %a /dev/infiniband/rdma_cm)
	chmod 0600 /dev/infiniband/rdma_cm
	local port
	port=$(free_port)
	start_server --root --shim --preload "$RPCTEST_DROPPRIVS_LIB" -m tli -a "$RXE_ADDR" -p "$port"
	local pid=$SERVER_PID log=$SERVER_LOG
	kill -USR2 "$pid"
	wait_log "$log" "rpctest-dropprivs: now uid 65534 gid 65534" 20

	# As root: rdma_cm is root's alone now, and the client must reach
	# the listener to be refused by it.
	client --root --shim -m tli -h "$RXE_ADDR" -p "$port" -o null,whoami
	assert_client_ran null,whoami ""
	assert_netid tcp "$RXE_ADDR"
	assert_shim_line client "$RXE_ADDR" "$port" 'TCP \(refused by the peer'
	assert_log "$log" "RDMA listener on port $port stops: Permission denied \\(the process changed its credentials and cannot open the RDMA-CM device under the new ones\\); RDMA clients now use TCP"
	refute_qp_of "$pid"
	assert_idle "$pid"
	stop_server
}

# --- 5. children --------------------------------------------------------------

@test "fork+exec, system() and popen() with RDMA transports live: the children inherit no RDMA descriptor, the server's connections go on" {
	local port
	port=$(free_port)
	start_server --rdma -m tli -a "$RXE_ADDR" -p "$port" -x 'ls -l /proc/self/fd'
	local pid=$SERVER_PID log=$SERVER_LOG
	start_client_bg --rdma -m tli -h "$RXE_ADDR" -p "$port" -o echo -s 4K,64K -c 100000 -q
	local long=$CLIENT_PID
	await_calls "$long" 10

	kill -USR2 "$pid"
	wait_log "$log" "^rpctest-server: fork\\+exec: exit status 0\$" 60
	assert_log "$log" "^rpctest-server: system: exit status 0\$"
	assert_log "$log" "^rpctest-server: popen: exit status 0\$"
	# Each child listed its descriptors: 0, 1, 2 and what ls opened.
	assert_equal "$(count_log "$log" ' 1 -> ')" 3
	grep -E ' -> ' "$log" >"$BATS_TEST_TMPDIR/children.fds"
	assert_no_rdma_fds "$BATS_TEST_TMPDIR/children.fds"

	assert_client_going "$long"
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null,echo,whoami -s 0,1M+3
	assert_client_ran null,echo,whoami 0,1M+3
	assert_netid rdma "$RXE_ADDR"
	_stop_pid "$long"
	stop_server
}

# Tagged sanitizer-fork: the sanitizer runs in the VM (tools/check) leave it
# out.  GCC 12's ASan and TSan allocators keep a size class's lock across
# fork(), so a child forked while another thread allocates can block in
# its first malloc, in the runtime, not in the shim.
# bats test_tags=sanitizer-fork
@test "a child that uses an inherited CLIENT or SVCXPRT gets a clean RPC error; children of a busy multi-threaded client make their own RDMA clients" {
	local port
	port=$(free_port)
	start_server --rdma -m tli -a "$RXE_ADDR" -p "$port" -f
	local log=$SERVER_LOG

	# Server: a child answers on the connection it inherited, and fails.
	client --rdma -m tli -h "$RXE_ADDR" -p "$port" -o null -c 3
	assert_client_ran null "" 3
	assert_equal "$(count_log "$log" '^rpctest-server: child [0-9]+: svc_sendreply on the parent.s transport failed$')" 3
	assert_equal "$(count_log "$log" '^rpctest-server: child [0-9]+ exited with status 0$')" 3
	assert_log "$log" "no reply on an RDMA connection accepted before fork\\(\\): it is the parent's"

	# Client: forks while a thread calls (logging each call) and another
	# holds libtirpc's AUTH_NONE lock; each child's inherited CLIENT fails
	# at once, its own CLIENT works over RDMA.
	client --rdma --env RPCRDMA_SHIM_LOG_LEVEL=debug -m tli -h "$RXE_ADDR" -p "$port" \
		-F 5 -o null,echo,source -s 0,64K
	assert_success
	assert_equal "$(grep -cE '^fork child [0-9]+: the inherited CLIENT: RPC: Unable to send; errno = Transport endpoint is not connected$' <<<"$output")" 5
	assert_equal "$(grep -cE '^fork child [0-9]+: its own CLIENT: 5 calls, 0 failed$' <<<"$output")" 5
	assert_line --regexp '^fork: 5 children, 0 failed; the parent.s thread made [1-9][0-9]* calls meanwhile$'
	assert_equal "$(grep -cE 'client program [0-9]+ version 1 to .*: RDMA,' <<<"$output")" 6
	stop_server
}
