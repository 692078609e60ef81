# shellcheck shell=bash
# Sourced by the demo, test and testpmd scripts: watching the processes they start.

# wait_banner PID LOG PATTERN: wait up to 10 s for a line matching PATTERN (grep -E) in
# LOG. Returns 0 once it is there; otherwise prints why and the log, and returns 1 (PID
# exited first, or 10 s passed).
wait_banner() {
	local pid=$1 log=$2 pattern=$3
	for _ in $(seq 100); do
		grep -qsE "$pattern" "$log" && return 0
		if ! kill -0 "$pid" 2>/dev/null; then
			grep -qsE "$pattern" "$log" && return 0
			echo "pid $pid exited before printing /$pattern/:"
			cat "$log" 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
	echo "no /$pattern/ from pid $pid after 10 s:"
	cat "$log" 2>/dev/null
	return 1
}

# counter NAME LOG: the value of counter NAME in an amrma-dataplane "node N counters:"
# list in LOG (it prints non-zero counters only, so 0 when absent)
counter() {
	awk -v c="$1" '$1 == c {v = $2} END {print v + 0}' "$2"
}

# rm_rundirs TAG SUFFIX...: remove the EAL run directories of prefixes TAG_SUFFIX. EAL
# makes /var/run/dpdk/PREFIX as root, else $XDG_RUNTIME_DIR/dpdk/PREFIX or, without that,
# /tmp/dpdk/PREFIX, even with --no-shconf; our applications remove theirs at exit, testpmd
# and a process that was killed do not
rm_rundirs() {
	local tag=$1 s
	shift
	for s in "$@"; do
		rm -rf "/var/run/dpdk/${tag}_$s" "${XDG_RUNTIME_DIR:-/nonexistent}/dpdk/${tag}_$s" \
			"/tmp/dpdk/${tag}_$s" 2>/dev/null || true
	done
}
