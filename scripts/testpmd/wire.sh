#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# dpdk-testpmd as the wire between two amrma-dataplane processes:
#
#   node 1 (initiator) <-memif-> testpmd [net_memif1 <--io--> net_memif0] <-memif-> node 0
#
# testpmd owns both memif sockets (role=server); the dataplanes connect as clients with
# config/node0.ini (target) and config/node1.ini (initiator). The workload runs through
# testpmd, every reply is verified by the initiator, and the target must have run each
# request's handler exactly once.
#
# Usage: wire.sh BUILD_DIR [--workload NAME] [--count N] [--size B] [--window W] [--keep]
# Workloads:
#   am-echo   verified AM echo requests (default: 100000 x 64 B, 32 in flight)
# (add RMA workloads as workload_<name> functions below when RMA exists)
# Exit 0 when the workload and every check pass, 1 otherwise.
set -euo pipefail

build=$(cd "${1:?usage: wire.sh BUILD_DIR [--workload NAME] [options]}" && pwd)
shift
workload=am-echo
count=100000
size=64
window=32
keep=""
while [ $# -gt 0 ]; do
	case $1 in
	--workload) workload=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--window) window=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	*) echo "wire.sh: unknown option $1"; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
src=$(cd "$here/../.." && pwd)
dataplane=$build/app/dataplane/amrma-dataplane
check="python3 $here/amrma_check.py"
[ -x "$dataplane" ] || { echo "missing $dataplane (build first)"; exit 1; }
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd not installed"; exit 77; }

tmp=$(mktemp -d /tmp/amrma-wire.XXXXXX)
tag=amrma_wi_$$
target_pid=""
testpmd_pid=""
cleanup() {
	{ exec 3>&-; } 2>/dev/null || true	# the braces: not stderr for good
	stop_pids "$testpmd_pid" "$target_pid"
	rm_rundirs "$tag" t i p
	if [ -n "$keep" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM	# Ctrl-C stops the run (cleanup on the way out)

# Three busy pollers, two CPUs: testpmd's forwarding lcore gets CPU 0 to itself (its main
# lcore sits blocked on the prompt); both dataplanes share CPU 1 and back off when idle.
if [ "$(nproc)" -ge 2 ]; then cpu_n=1; else cpu_n=0; fi
backoff=(--idle-sleep 20)
eal=(--no-huge --no-pci --no-shconf --log-level lib.eal:error --log-level pmd.net.memif:error)

mkfifo "$tmp/tp.in"
# a write to testpmd's command pipe after it exited fails (and is reported) instead of
# killing the script with SIGPIPE before it can show testpmd's log (seen once)
trap '' PIPE
# --disable-link-check: the memif servers stay down until the dataplanes connect.
# stdbuf: testpmd's stdout is block-buffered into the log, and we wait for a line of it.
stdbuf -oL dpdk-testpmd --lcores 0@0,1@0 "${eal[@]}" -m 256 --file-prefix "${tag}_p" \
	--vdev "net_memif0,role=server,socket=$tmp/n0.sock" \
	--vdev "net_memif1,role=server,socket=$tmp/n1.sock" \
	-- -i --forward-mode=io --disable-link-check --total-num-mbufs=8192 \
	--cmdline-file="$here/wire.cmd" <"$tmp/tp.in" >"$tmp/testpmd.log" 2>&1 &
testpmd_pid=$!
exec 3>"$tmp/tp.in"
# (net_memif's sockets are abstract by default: no file to wait for)
wait_banner "$testpmd_pid" "$tmp/testpmd.log" '^Read CLI commands from' ||
	{ echo "FAIL: testpmd did not start"; exit 1; }
echo start >&3 || { cat "$tmp/testpmd.log"; echo "FAIL: testpmd reads no commands"; exit 1; }
echo "wire: testpmd pid $testpmd_pid (io forwarding, CPU 0), dataplanes on CPU $cpu_n"

"$dataplane" -l "$cpu_n" "${eal[@]}" -m 256 --file-prefix "${tag}_t" \
	--vdev "net_memif0,role=client,socket=$tmp/n0.sock,mac=02:00:00:00:00:01" \
	-- --config "$src/config/node0.ini" "${backoff[@]}" >"$tmp/target.log" 2>&1 &
target_pid=$!
wait_banner "$target_pid" "$tmp/target.log" '^amrma-dataplane: node 0' || exit 1
$check wait-link "${tag}_t" 0 20 || { echo "FAIL: node 0's memif link did not come up"; exit 1; }

status=0
workload_am_echo() {
	local json
	if ! "$dataplane" -l "$cpu_n" "${eal[@]}" -m 256 --file-prefix "${tag}_i" \
		--vdev "net_memif0,role=client,socket=$tmp/n1.sock,mac=02:00:00:00:00:02" \
		-- --config "$src/config/node1.ini" --count "$count" --size "$size" \
		--window "$window" --json "${backoff[@]}" >"$tmp/initiator.log" 2>&1; then
		echo "FAIL: initiator"
		cat "$tmp/initiator.log"
		return 1
	fi
	# called as `workload_am_echo || status=1`, so set -e is off in here: every
	# check returns its failure itself
	json=$(grep '^{' "$tmp/initiator.log") || { echo "FAIL: no JSON summary"; return 1; }
	echo "  initiator: $json"
	python3 -c 'import json, sys
r = json.loads(sys.argv[1]); n = int(sys.argv[2])
assert r["completed"] == n and r["verified"] == n and r["errors"] == 0, r' "$json" "$count" ||
		return 1
	expect_handled=$count
}

expect_handled=""
case $workload in
am-echo) workload_am_echo || status=1 ;;
*) echo "wire.sh: unknown workload $workload (am-echo)"; exit 2 ;;
esac

printf 'stop\nshow port stats all\nquit\n' >&3 ||
	{ tail -20 "$tmp/testpmd.log"; echo "FAIL: testpmd exited before quit"; status=1; }
exec 3>&-
wait "$testpmd_pid" || { echo "FAIL: testpmd exit status $?"; status=1; }
testpmd_pid=""
kill -TERM "$target_pid"
wait "$target_pid" || { echo "FAIL: node 0 did not exit cleanly"; status=1; }
target_pid=""
# the initiator's LEAVE (amrma_node_leave()) is a one-way message: not a request
left=$(counter peers_left "$tmp/target.log")
handled=$(counter requests_handled "$tmp/target.log")
if [ -n "$expect_handled" ] && [ "$handled" != "$expect_handled" ]; then
	echo "FAIL: node 0 ran $handled request handlers, expected $expect_handled (exactly once)"
	status=1
fi
if [ -n "$expect_handled" ] && [ "$left" != 1 ]; then
	echo "FAIL: node 0 took $left LEAVEs, expected 1"
	status=1
fi
# What crossed testpmd, seen on port 0 (node 0's link): requests in, replies out. Port 1's
# counters read 0 by now: net_memif reports a port's statistics only while a client is
# connected, and the initiator has exited.
# Several small messages may share a frame (coalescing): node 0 counts the messages that
# arrived in another message's frame (rx_coalesced) and that it sent so (tx_coalesced).
fwd=$($check fwd "$tmp/testpmd.log")
rx_co=$(counter rx_coalesced "$tmp/target.log")
tx_co=$(counter tx_coalesced "$tmp/target.log")
python3 -c 'import json, sys
f = {int(k): v for k, v in json.loads(sys.argv[1]).items()}; n = int(sys.argv[2])
rx_co, tx_co = int(sys.argv[3] or 0), int(sys.argv[4] or 0)
to0, from0, drops = f[0]["TX-packets"], f[0]["RX-packets"], f[0]["TX-dropped"]
print(f"  testpmd: {to0} frames forwarded to node 0 (+{rx_co} coalesced messages), "
      f"{from0} from node 0 (+{tx_co}), {drops} dropped")
assert to0 + rx_co >= n and from0 + tx_co >= n, f' "$fwd" "$count" "$rx_co" "$tx_co" ||
	{ echo "FAIL: testpmd forwarded fewer messages than requests"; status=1; }
echo "  node 0 ran $handled request handlers"
if [ $status -eq 0 ]; then
	echo "wire ($workload): OK"
else
	echo "wire ($workload): FAILED"
fi
exit $status
