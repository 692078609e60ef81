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
