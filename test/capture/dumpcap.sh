#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Packet capture with dpdk-dumpcap from a running amrma-dataplane.
#
# dpdk-dumpcap is a DPDK secondary process: it asks the primary (the dataplane, which calls
# rte_pdump_init()) to copy what its port receives and sends into a ring. That needs the
# primary's memory to be shareable: hugepages and a shared config, so unlike the other
# tests the dataplanes run WITHOUT --no-huge/--no-shconf. Two dataplanes over net_memif;
# dumpcap captures node 0's port while node 1 runs verified echo requests; the pcapng
# must hold amrma frames in both directions (tshark, plus scripts/wireshark/amrma.lua).
#
# Hugepages: uses free 2 MB pages; as root it adds pages to vm.nr_hugepages (and gives
# them back) and mounts hugetlbfs on /dev/hugepages if nothing is mounted. Exit 77
# (skipped) with the reason when it cannot get them.
#
# Usage: dumpcap.sh BUILD_DIR [--keep]
set -euo pipefail

build=$(cd "${1:?usage: dumpcap.sh BUILD_DIR [--keep]}" && pwd)
keep=${2:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../../scripts/lib/procs.sh
. "$src/scripts/lib/procs.sh"
dataplane=$build/app/dataplane/amrma-dataplane
lua=$src/scripts/wireshark/amrma.lua
[ -x "$dataplane" ] || { echo "missing $dataplane (build first)"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
command -v dpdk-dumpcap >/dev/null || skip "dpdk-dumpcap is not installed (package dpdk)"
command -v tshark >/dev/null || skip "tshark is not installed"

mem_mb=128			# per dataplane (EAL -m)
# 2 MB pages: both dataplanes plus room for dumpcap (AMRMA_HUGEPAGES overrides)
need=${AMRMA_HUGEPAGES:-$(( 2 * mem_mb / 2 + 32 ))}

tmp=$(mktemp -d /tmp/amrma-dumpcap.XXXXXX)
tag=amrma_dc_$$
pids=()
added_pages=0
set_pages=""
mounted=""
# TERM, then KILL after 5 s: a secondary that dies inside EAL init can leave the shared
# memory lock taken, and the primary then never finishes rte_eal_cleanup().
stop_pid() {
	local p=$1 i
	kill -0 "$p" 2>/dev/null || { wait "$p" 2>/dev/null; return; }
	kill -TERM "$p" 2>/dev/null || true
	for i in $(seq 50); do
		kill -0 "$p" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null; then
		echo "pid $p ignored SIGTERM for 5 s: SIGKILL"
		kill -KILL "$p" 2>/dev/null || true
	fi
	wait "$p" 2>/dev/null
}
cleanup() {
	local p m
	for p in "${pids[@]}"; do
		stop_pid "$p" || true
	done
	# EAL leaves the hugepage files of a primary with a shared config behind
	for m in $(awk '$3 == "hugetlbfs" {print $2}' /proc/mounts); do
		rm -f "$m/${tag}_t"map_* "$m/${tag}_i"map_* 2>/dev/null || true
	done
	rm_rundirs "$tag" t i
	# give back the pages we added, unless someone changed the count since
	if [ "$added_pages" -gt 0 ] && [ "$(cat /proc/sys/vm/nr_hugepages)" = "$set_pages" ]; then
		echo $(( set_pages - added_pages )) >/proc/sys/vm/nr_hugepages || true
	fi
	[ -n "$mounted" ] && umount "$mounted" 2>/dev/null || true
	if [ "$keep" = "--keep" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT

meminfo() { awk -v k="$1:" '$1 == k {print $2}' /proc/meminfo; }
[ "$(meminfo Hugepagesize)" = "2048" ] || skip "default hugepage size is not 2 MB"
if ! awk '$3 == "hugetlbfs" {f = 1} END {exit !f}' /proc/mounts; then
	[ "$(id -u)" = 0 ] ||
		skip "no hugetlbfs mounted and not root (mount -t hugetlbfs nodev /dev/hugepages)"
	mkdir -p /dev/hugepages
	mount -t hugetlbfs nodev /dev/hugepages 2>"$tmp/mount.err" ||
		skip "cannot mount hugetlbfs: $(cat "$tmp/mount.err")"
	mounted=/dev/hugepages
fi
free=$(meminfo HugePages_Free)
if [ "$free" -lt "$need" ]; then
	[ "$(id -u)" = 0 ] ||
		skip "$free free 2 MB hugepages, need $need (as root: echo N > /proc/sys/vm/nr_hugepages)"
	total=$(cat /proc/sys/vm/nr_hugepages)
	set_pages=$(( total + need - free ))
	if ! echo "$set_pages" >/proc/sys/vm/nr_hugepages 2>/dev/null; then
		set_pages=""
		skip "$free free 2 MB hugepages, need $need, and /proc/sys/vm/nr_hugepages is not writable"
	fi
	added_pages=$(( $(cat /proc/sys/vm/nr_hugepages) - total ))
	set_pages=$(cat /proc/sys/vm/nr_hugepages)
	free=$(meminfo HugePages_Free)
	[ "$free" -ge "$need" ] ||
		skip "asked the kernel for $need free hugepages, got $free (memory fragmented?)"
	echo "hugepages: added $added_pages pages (vm.nr_hugepages $total -> $set_pages)"
fi
echo "hugepages: $free free 2 MB pages, using up to $need"

# no --no-huge, no --no-shconf: dumpcap attaches as a secondary process, which must map
# the primary's memory at the same addresses. Left to itself the primary picks addresses
# near the libraries, where the secondary may already have something (and an ASan build
# places things differently still): pin the node dumpcap attaches to at 32 TiB, above
# ASan's shadow memory and far from anything either process maps.
eal=(--no-pci -m "$mem_mb" --log-level lib.eal:error --log-level pmd.net.memif:error)
base_va=0x200000000000
if [ "$(nproc)" -ge 2 ]; then cpu_i=0; cpu_t=1; else cpu_i=0; cpu_t=0; fi

"$dataplane" -l "$cpu_t" "${eal[@]}" --base-virtaddr "$base_va" --file-prefix "${tag}_t" \
	--vdev "net_memif0,role=server,socket=$tmp/memif.sock,mac=02:00:00:00:00:01" \
	-- --config "$src/config/node0.ini" --idle-sleep 20 >"$tmp/target.log" 2>&1 &
target_pid=$!
pids+=("$target_pid")
wait_banner "$target_pid" "$tmp/target.log" '^amrma-dataplane: node 0' || exit 1
if grep -q 'rte_pdump) unavailable' "$tmp/target.log"; then
	cat "$tmp/target.log"
	echo "FAIL: rte_pdump_init() failed in the dataplane"
	exit 1
fi

# dumpcap shares CPU 0 with the initiator, which backs off when idle. Its "Capturing on"
# line goes to stdout, which is block-buffered into a file: stdbuf makes it appear now.
# It is stopped (SIGINT) once the traffic is over, not by a packet count: DPDK 22.11's
# pdump can still be copying a packet into dumpcap's pool while dumpcap exits and frees
# it, and the target then crashes (seen once, under load, with `-c 4000`: SIGSEGV in a
# mempool driver the target never uses, reached through the freed pool's ops index).
taskset -c "$cpu_i" stdbuf -oL dpdk-dumpcap --file-prefix="${tag}_t" -i net_memif0 -q \
	-a duration:60 -w "$tmp/capture.pcapng" >"$tmp/dumpcap.log" 2>&1 &
dumpcap_pid=$!
pids+=("$dumpcap_pid")
wait_banner "$dumpcap_pid" "$tmp/dumpcap.log" '^Capturing on' ||
	{ echo "FAIL: dpdk-dumpcap did not start capturing"; exit 1; }
echo "dumpcap: capturing node 0's net_memif0 (pid $dumpcap_pid)"

status=0
if "$dataplane" -l "$cpu_i" "${eal[@]}" --file-prefix "${tag}_i" \
	--vdev "net_memif0,role=client,socket=$tmp/memif.sock,mac=02:00:00:00:00:02" \
	-- --config "$src/config/node1.ini" --count 20000 --window 8 --size 64 --json \
	--idle-sleep 20 >"$tmp/initiator.log" 2>&1; then
	echo "initiator: $(grep '^{' "$tmp/initiator.log")"
else
	cat "$tmp/initiator.log"
	echo "FAIL: initiator"
	status=1
fi
kill -INT "$dumpcap_pid" 2>/dev/null || true	# it may have stopped on its own
wait "$dumpcap_pid" || { echo "FAIL: dpdk-dumpcap exit status $?"; status=1; }
sed -n '/^Packets/p' "$tmp/dumpcap.log" | tail -2
stop_pid "$target_pid" || { echo "FAIL: node 0 did not exit cleanly"; status=1; }

[ -s "$tmp/capture.pcapng" ] || { echo "FAIL: no capture file"; exit 1; }
udp=$(tshark -r "$tmp/capture.pcapng" -Y 'udp.port == 7000' 2>/dev/null | wc -l)
req=$(tshark -X lua_script:"$lua" -r "$tmp/capture.pcapng" -Y 'amrma.type == 1' \
	2>/dev/null | wc -l)
rep=$(tshark -X lua_script:"$lua" -r "$tmp/capture.pcapng" -Y 'amrma.type == 2' \
	2>/dev/null | wc -l)
bad=$(tshark -X lua_script:"$lua" -r "$tmp/capture.pcapng" -Y 'amrma && _ws.expert' \
	2>/dev/null | wc -l)
echo "capture: $udp frames on UDP port 7000: $req amrma REQUESTs, $rep REPLYs, $bad with" \
	"dissector warnings"
tshark -X lua_script:"$lua" -r "$tmp/capture.pcapng" -c 2 2>/dev/null | sed 's/^/  /'
if [ "$udp" -gt 0 ] && [ "$req" -gt 0 ] && [ "$rep" -gt 0 ] && [ "$bad" -eq 0 ]; then
	:
else
	echo "FAIL: the capture does not hold well-formed amrma frames in both directions"
	status=1
fi
[ $status -eq 0 ] && echo "dumpcap: OK" || echo "dumpcap: FAILED"
exit $status
