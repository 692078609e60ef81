#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Replay amrma-pcapgen files into a running amrma-dataplane through dpdk-testpmd, then
# check the dataplane's counters (read through DPDK telemetry) against the manifests.
#
#   amrma-pcapgen --> FILE.pcap --> testpmd [net_pcap0 --io--> net_memif0] --> dataplane
#                                    (tx_pcap) <---------------- replies ----'
#
# Passes (each with its own testpmd run and its own manifest):
#   good   well-formed REQUESTs, REPLYs and ACKs from node 1: every frame accepted, each
#          REQUEST's handler run once, each REPLY refused as bad_token (we never asked)
#   bad    one or more frames of each malformed variant: each counted under its reason
#   mixed  both, shuffled, from a new incarnation of node 1 (--src-epoch 2: the target
#          resets the channels, so the sequence numbers may start at 0 again)
# Then a second peer (node 3, config/replay-peer.ini) connects to the same memif socket and
# runs verified echo requests: the target still serves, and its PID is alive throughout.
#
# Usage: replay.sh BUILD_DIR [--keep]
# Exit 0 when every check passes, 1 otherwise.
set -euo pipefail

build=$(cd "${1:?usage: replay.sh BUILD_DIR [--keep]}" && pwd)
keep=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
src=$(cd "$here/../.." && pwd)
dataplane=$build/app/dataplane/amrma-dataplane
pcapgen=$build/app/pcapgen/amrma-pcapgen
check="python3 $here/amrma_check.py"
for x in "$dataplane" "$pcapgen"; do
	[ -x "$x" ] || { echo "missing $x (build first)"; exit 1; }
done
command -v dpdk-testpmd >/dev/null || { echo "dpdk-testpmd not installed"; exit 77; }
command -v dpdk-telemetry.py >/dev/null || { echo "dpdk-telemetry.py not installed"; exit 77; }

tmp=$(mktemp -d /tmp/amrma-replay.XXXXXX)
tag=amrma_rp_$$
target_pid=""
testpmd_pid=""
cleanup() {
	{ exec 3>&-; } 2>/dev/null || true	# the braces: not stderr for good
	stop_pids "$testpmd_pid" "$target_pid"
	rm_rundirs "$tag" t p e
	if [ "$keep" = "--keep" ]; then
		echo "kept $tmp"
	else
		rm -rf "$tmp" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM	# Ctrl-C stops the run (cleanup on the way out)
# a write to testpmd's command pipe after it exited fails (and is reported below) instead
# of killing the script with SIGPIPE
trap '' PIPE

# The receiver the pcaps are written for: config/replay-target.ini and its --vdev mac.
rx=(--dst-mac 02:00:00:00:00:02 --dst-ip 10.0.0.2 --dst-node 2 --udp-base 7000 --nb-ctx 4
    --src-mac 02:00:00:00:00:01 --src-ip 10.0.0.1 --src-node 1)
nb_q=4		# = contexts of the target: testpmd's memif port needs as many queues

# Pinning: the target's poller alone on CPU 1; testpmd's main lcore (blocked on its
# prompt) and forwarding lcore on CPU 0, later node 3. With one CPU everything shares it.
# The target backs off when idle (--idle-sleep) even with a CPU of its own: each testpmd
# run ends with a memif disconnect, and DPDK 22.11's net_memif unmaps the shared regions
# from its control thread while the data path may be inside rte_eth_rx_burst (seen as a
# SIGSEGV in librte_net_memif, about once per 50 disconnects with a busy 4-queue poller).
# A poller that sleeps while idle is almost never inside rx_burst when that happens.
if [ "$(nproc)" -ge 2 ]; then cpu_t=1; else cpu_t=0; fi
backoff=(--idle-sleep 100)
# AMRMA_MEMIF_LOG=pmd.net.memif:debug shows the memif handshakes in the logs
eal=(--no-huge --no-pci --no-shconf --log-level lib.eal:error
     --log-level "${AMRMA_MEMIF_LOG:-pmd.net.memif:error}")
sock=$tmp/memif.sock

"$dataplane" -l "$cpu_t" "${eal[@]}" -m 256 --file-prefix "${tag}_t" \
	--vdev "net_memif0,role=server,socket=$sock,mac=02:00:00:00:00:02" \
	-- --config "$src/config/replay-target.ini" "${backoff[@]}" >"$tmp/target.log" 2>&1 &
target_pid=$!
wait_banner "$target_pid" "$tmp/target.log" '^amrma-dataplane: node 2' || exit 1
echo "target: amrma-dataplane node 2, pid $target_pid, CPU $cpu_t, file-prefix ${tag}_t"

alive() {
	kill -0 "$target_pid" 2>/dev/null && return 0
	echo "FAIL: the target (pid $target_pid) died"
	cat "$tmp/target.log"
	target_pid=""
	exit 1
}

# An empty pcap for testpmd's extra pcap queues (net_pcap has one queue per rx_pcap, and
# io forwarding pairs pcap queue i with memif queue i).
python3 -c 'import struct, sys; open(sys.argv[1], "wb").write(
	struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))' "$tmp/empty.pcap"

status=0
replay() {	# name, pcapgen options...
	local name=$1 vdev q
	shift
	"$pcapgen" "${rx[@]}" "$@" --out "$tmp/$name.pcap" --manifest "$tmp/$name.json" \
		2>"$tmp/$name.gen.log"
	vdev="net_pcap0,rx_pcap=$tmp/$name.pcap"
	for q in $(seq 2 $nb_q); do vdev+=",rx_pcap=$tmp/empty.pcap"; done
	for q in $(seq 1 $nb_q); do vdev+=",tx_pcap=$tmp/$name.out$q.pcap"; done
	$check stats "${tag}_t" >"$tmp/$name.before.json"

	rm -f "$tmp/tp.in"
	mkfifo "$tmp/tp.in"
	# --no-flush-rx: testpmd would otherwise drain (and drop) the whole file at "start"
	dpdk-testpmd --lcores 0@0,1@0 "${eal[@]}" -m 512 --file-prefix "${tag}_p" \
		--vdev "$vdev" \
		--vdev "net_memif0,role=client,socket=$sock,mac=02:00:00:00:00:01" \
		-- -i --forward-mode=io --no-flush-rx --rxq=$nb_q --txq=$nb_q \
		--total-num-mbufs=8192 --cmdline-file="$here/replay.cmd" \
		<"$tmp/tp.in" >"$tmp/$name.testpmd.log" 2>&1 &
	testpmd_pid=$!
	exec 3>"$tmp/tp.in"
	# the target's end of the link is up first; testpmd's (its port 1) a message later
	if ! $check wait-link "${tag}_t" 0 20 || ! $check wait-link "${tag}_p" 1 20; then
		echo "FAIL $name: the memif link did not come up"
		status=1
	fi
	echo start >&3 || { echo "FAIL $name: testpmd reads no commands"; status=1; }
	if ! $check wait-replay "${tag}_t" "$tmp/$name.before.json" "$tmp/$name.json" 30; then
		echo "FAIL $name: the target did not count every frame"
		status=1
	fi
	printf 'stop\nshow port stats all\nquit\n' >&3 ||
		{ echo "FAIL $name: testpmd exited before quit"; status=1; }
	exec 3>&-
	wait "$testpmd_pid" || { echo "FAIL $name: testpmd exit status $?"; status=1; }
	testpmd_pid=""
	alive
	$check stats "${tag}_t" >"$tmp/$name.after.json"
	echo "-- $name: $(head -1 "$tmp/$name.gen.log")"
	$check replay "$tmp/$name.json" "$tmp/$name.before.json" "$tmp/$name.after.json" \
		"$tmp/$name.testpmd.log" || { status=1; sed -n '/Forward statistics/,/+++/p' \
		"$tmp/$name.testpmd.log"; }
}

replay good --kind good --count 200 --seed 11
replay bad --kind bad --count 100 --seed 12
replay mixed --kind mixed --count 100 --seed 13 --src-epoch 2

# The target survived the malformed frames: a live peer still gets verified echoes.
echo "-- echo from node 3 after the replays"
cpu_e=0		# testpmd has exited: CPU 0 is free
if "$dataplane" -l "$cpu_e" "${eal[@]}" -m 256 --file-prefix "${tag}_e" \
	--vdev "net_memif0,role=client,socket=$sock,mac=02:00:00:00:00:03" \
	-- --config "$src/config/replay-peer.ini" --count 2000 --json "${backoff[@]}" \
	>"$tmp/echo.log" 2>&1; then
	grep '^{' "$tmp/echo.log" | sed 's/^/  /'
else
	echo "FAIL: echo from node 3"
	cat "$tmp/echo.log"
	status=1
fi
alive
$check stats "${tag}_t" /amrma/peers >"$tmp/peers.json" ||
	{ echo "FAIL: telemetry does not answer"; status=1; }
echo "  target pid $target_pid alive, telemetry /amrma/peers: $(cat "$tmp/peers.json")"
# the replay target verifies checksums (csum = on) although its port is memif
$check stats "${tag}_t" /amrma/contexts >"$tmp/contexts.json" &&
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["udp_csum"] != 1)' \
		"$tmp/contexts.json" ||
	{ echo "FAIL: /amrma/contexts does not say udp_csum 1: $(cat "$tmp/contexts.json")"; status=1; }

kill -TERM "$target_pid"
if ! wait "$target_pid"; then
	echo "FAIL: the target did not exit cleanly on SIGTERM"
	cat "$tmp/target.log"
	status=1
fi
target_pid=""
if [ $status -eq 0 ]; then
	echo "replay: OK (every frame counted, every rejection under its reason, target alive)"
else
	echo "replay: FAILED"
fi
exit $status
