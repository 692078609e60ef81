#!/usr/bin/env bash
# amrma-dataplane's exit paths:
#  - a stop signal while a call waits for a peer that never answers (the call's state was
#    on a stack frame the library wrote into after the call returned);
#  - a stop signal in the middle of 4 MiB RMA puts and gets over memif (their buffers
#    were freed while the operations still read and wrote them);
#  - a production layout without the worker lcores it needs must exit non-zero.
# Each run must end without a sanitizer report (the sanitized build is where the first two
# would show); the first two exit 1 (interrupted), the target stays up and exits 0.
# Usage: exit_paths.sh DATAPLANE_BINARY CONFIG_DIR
set -euo pipefail
# shellcheck source=../../scripts/lib/procs.sh
. "$(dirname "$0")/../../scripts/lib/procs.sh"
bin=$1
cfg=$2
tmp=$(mktemp -d /tmp/amrma-exit-test.XXXXXX)
pids=()
cleanup() {
	local p

	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	rm_rundirs "amrma_ex_$$" a t i p
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM	# Ctrl-C stops the run (cleanup on the way out)
eal=(--no-huge --no-pci --no-shconf -m 256 --log-level lib.eal:error --log-level pmd.net.memif:error)
# stack frames of returned functions stay poisoned, so a late write into one is reported
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_stack_use_after_return=1
# run alone, the same UBSan settings as scripts/test.sh (DPDK's unaligned helpers)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:suppressions=$(cd "$(dirname "$0")/../.." && pwd)/scripts/ubsan.supp}
fail=0

# interrupt PID LOG BANNER: once PID printed BANNER, a second later SIGINT; sets rc to its
# exit status
interrupt() {
	wait_banner "$1" "$2" "$3" || exit 1
	sleep 1
	kill -INT "$1"
	rc=0
	wait "$1" || rc=$?
}

clean_log() {	# NAME LOG: no sanitizer report in LOG
	if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' "$2"; then
		echo "FAIL $1: sanitizer report"
		grep -E -A12 'AddressSanitizer|LeakSanitizer|runtime error:' "$2" | head -30
		fail=1
	fi
}

# 1. The target is absent (net_ring0 loops back to ourselves): the region-info call waits;
# retransmissions a second apart keep the peer from being declared dead meanwhile.
cat >"$tmp/lonely.ini" <<'INI'
[node]
id = 1
port = net_ring0
ip = 198.18.0.2
contexts = 1
[peer.0]
mac = 02:00:00:00:00:01
ip = 198.18.0.1
contexts = 1
[workload]
role = rma
peer = 0
[am]
rto_us = 1000000
rto_max_us = 1000000
max_retries = 100
INI
"$bin" -l 0 "${eal[@]}" --file-prefix "amrma_ex_$$_a" --vdev net_ring0 \
	-- --config "$tmp/lonely.ini" >"$tmp/lonely.log" 2>&1 &
p=$!
pids+=("$p")
interrupt "$p" "$tmp/lonely.log" '^amrma-dataplane: node 1'
pids=()
if [ $rc -ne 1 ] || ! grep -q 'no region 0 (Interrupted' "$tmp/lonely.log"; then
	echo "FAIL call cut short: exit $rc"
	tail -5 "$tmp/lonely.log"
	fail=1
fi
clean_log "call cut short" "$tmp/lonely.log"
[ $fail -eq 0 ] && echo "call cut short: exit 1 (interrupted), no sanitizer report"

# 2. RMA puts and gets of 4 MiB, stopped after a second: an operation is almost always in
# flight (each takes milliseconds; filling and checking between them, about as long). Each
# size runs 64 of them (0.5 s here); 16 sizes keep it busy well past the signal.
sizes=$(printf '4M,%.0s' $(seq 16))
sizes=${sizes%,}
cpu_i=$(( $(nproc) > 1 ? 1 : 0 ))
backoff=()
[ "$cpu_i" -eq 0 ] && backoff=(--idle-sleep 20)
"$bin" -l 0 "${eal[@]}" --file-prefix "amrma_ex_$$_t" \
	--vdev "net_memif0,role=server,socket=$tmp/m.sock,mac=02:00:00:00:00:01" \
	-- --config "$cfg/node0.ini" "${backoff[@]}" >"$tmp/target.log" 2>&1 &
t=$!
pids+=("$t")
wait_banner "$t" "$tmp/target.log" '^amrma-dataplane: node 0' || exit 1
"$bin" -l "$cpu_i" "${eal[@]}" --file-prefix "amrma_ex_$$_i" \
	--vdev "net_memif0,role=client,socket=$tmp/m.sock,mac=02:00:00:00:00:02" \
	-- --config "$cfg/node1.ini" --role rma --sizes "$sizes" --count 1000 "${backoff[@]}" \
	>"$tmp/rma.log" 2>&1 &
p=$!
pids+=("$p")
interrupt "$p" "$tmp/rma.log" '^amrma-dataplane: node 1'
if [ $rc -ne 1 ]; then
	echo "FAIL RMA cut short: exit $rc"
	tail -5 "$tmp/rma.log"
	fail=1
fi
clean_log "RMA cut short" "$tmp/rma.log"
kill -TERM "$t"
rc=0
wait "$t" || rc=$?
pids=()
[ $rc -eq 0 ] || { echo "FAIL target: exit $rc on SIGTERM"; tail -5 "$tmp/target.log"; fail=1; }
clean_log target "$tmp/target.log"
[ $fail -eq 0 ] && echo "RMA cut short: $(grep -m1 '^rma: .*verified' "$tmp/rma.log" || echo 'no size finished'); exit 1, target exit 0, no sanitizer report"

# 3. Two contexts in the production layout need two worker lcores; -l 0 has none.
cat >"$tmp/prod.ini" <<'INI'
[node]
id = 0
port = net_ring0
ip = 198.18.0.1
contexts = 2
layout = production
INI
rc=0
"$bin" -l 0 "${eal[@]}" --file-prefix "amrma_ex_$$_p" --vdev net_ring0 \
	-- --config "$tmp/prod.ini" --duration 1 >"$tmp/prod.log" 2>&1 || rc=$?
if [ $rc -eq 0 ] || ! grep -q 'no worker lcore' "$tmp/prod.log"; then
	echo "FAIL production layout without workers: exit $rc"
	tail -5 "$tmp/prod.log"
	fail=1
else
	echo "production layout without workers: exit $rc"
fi
clean_log "production layout" "$tmp/prod.log"

[ $fail -eq 0 ] && echo "exit paths: OK" || echo "exit paths: FAILED"
exit $fail
