# shellcheck shell=bash
# Shared by replay.sh and wire.sh (sourced).

# shellcheck source=../lib/procs.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/procs.sh"

# stop_pids PID...: SIGTERM each live process and wait for it
stop_pids() {
	local p
	for p in "$@"; do
		if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
			kill -TERM "$p" 2>/dev/null || true
			wait "$p" 2>/dev/null || true
		fi
	done
}

# rm_rundirs TAG SUFFIX...: EAL makes /var/run/dpdk/PREFIX (or
# $XDG_RUNTIME_DIR/dpdk/PREFIX) even with --no-shconf and leaves it behind
rm_rundirs() {
	local tag=$1 s
	shift
	for s in "$@"; do
		rm -rf "/var/run/dpdk/${tag}_$s" "${XDG_RUNTIME_DIR:-/nonexistent}/dpdk/${tag}_$s" \
			2>/dev/null || true
	done
}
