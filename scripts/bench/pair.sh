# shellcheck shell=bash
# One amrma-perf server + client pair over net_memif, shared by scripts/bench.sh,
# scripts/bench/ab.sh and test/perf/smoke.sh. Source it; it defines:
#
#   pair_stop PID
#       SIGTERM, then SIGKILL after 5 s; waits for it. Sets pair_stop_rc.
#   pair_run LOG SERVER_CMD... ::: CLIENT_CMD...
#       Starts the server and waits (10 s at most) until it logs "ready". Then starts the
#       client, which must run with --linger, and waits until it logs "amrma-perf: done"
#       or exits. The server is stopped first, because net_memif (DPDK 22.11) can crash
#       a side that polls while its peer disconnects; then the client.
#       Output: LOG.server (server), LOG.out and LOG.err (client).
#       Returns 0 when both exited cleanly; otherwise prints why and the logs' tails.
#
# (":::" separates the commands: each has the EAL's "--" of its own.)
# While pair_run runs, the PIDs it started are in pair_pids: a caller's cleanup on a
# signal stops them with pair_stop.

pair_pids=()

pair_stop() {
	local pid=$1 i
	pair_stop_rc=0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for i in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || pair_stop_rc=$?
}

pair_run() {
	local log=$1 server=() sp cp i src crc end
	shift
	while [ "$1" != ::: ]; do server+=("$1"); shift; done
	shift
	"${server[@]}" >"$log.server" 2>&1 &
	sp=$!
	pair_pids=("$sp")
	for i in $(seq 100); do
		grep -qsE '^amrma-perf: node [0-9]+ ready' "$log.server" && break
		if ! kill -0 "$sp" 2>/dev/null; then
			echo "pair: server exited before it was ready:" >&2
			tail -20 "$log.server" >&2
			pair_stop "$sp"
			pair_pids=()
			return 1
		fi
		sleep 0.1
	done
	if ! grep -qsE '^amrma-perf: node [0-9]+ ready' "$log.server"; then
		echo "pair: server not ready after 10 s:" >&2
		tail -20 "$log.server" >&2
		pair_stop "$sp"
		pair_pids=()
		return 1
	fi
	"$@" >"$log.out" 2>"$log.err" &
	cp=$!
	pair_pids+=("$cp")
	# a client that hangs is stopped after PAIR_CLIENT_TIMEOUT_S (and fails the run)
	end=$((SECONDS + ${PAIR_CLIENT_TIMEOUT_S:-900}))
	while kill -0 "$cp" 2>/dev/null && ! grep -qs '^amrma-perf: done' "$log.err"; do
		if [ $SECONDS -ge $end ]; then
			echo "pair: client still running after ${PAIR_CLIENT_TIMEOUT_S:-900} s" >&2
			break
		fi
		sleep 0.05
	done
	pair_stop "$sp"
	src=$pair_stop_rc
	pair_stop "$cp"
	crc=$pair_stop_rc
	pair_pids=()
	if [ "$crc" -ne 0 ]; then
		echo "pair: client failed ($crc):" >&2
		tail -20 "$log.err" >&2
		return 1
	fi
	if [ "$src" -ne 0 ]; then
		echo "pair: server did not exit cleanly ($src):" >&2
		tail -20 "$log.server" >&2
		return 1
	fi
	return 0
}
