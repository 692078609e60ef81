#!/usr/bin/env bash
# Two amrma-dataplane processes over the kernel: net_af_packet ports on the two ends of a
# veth pair (unique names, removed at exit). AM echo and RMA put/get, checksums on, as on
# any kernel or NIC path. The initiator's end lives in a network namespace of its own:
# DPDK 22.11 names an af_packet socket's fanout group pid ^ ifindex, and a veth pair's
# consecutive ifindices with consecutive pids draw the same group (EINVAL at start, seen
# in CI) unless the sockets are in different namespaces. Needs root (creates links and
# a namespace): otherwise skipped (77).
# Usage: afpacket_pair.sh DATAPLANE_BINARY CONFIG_DIR
set -euo pipefail
# shellcheck source=../../scripts/lib/procs.sh
. "$(dirname "$0")/../../scripts/lib/procs.sh"
bin=$1
cfg=$2
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
	echo "SKIP: needs root and iproute2 to create a veth pair"
	exit 77
fi
a=amv$$a
b=amv$$b
ns=amrma-afp$$
tmp=$(mktemp -d /tmp/amrma-afp-test.XXXXXX)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	ip link del "$a" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm_rundirs "amrma_afp_$$" t i r
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM	# Ctrl-C stops the run (cleanup on the way out)
# root without CAP_NET_ADMIN (a default container) cannot make one: skip, not fail
if ! ip netns add "$ns" 2>"$tmp/veth.err" ||
   ! ip link add "$a" type veth peer name "$b" netns "$ns" 2>"$tmp/veth.err"; then
	echo "SKIP: cannot create a namespace and a veth pair: $(cat "$tmp/veth.err")"
	exit 77
fi
inns() { ip netns exec "$ns" "$@"; }
ip link set "$a" address 02:00:00:00:00:01
inns ip link set "$b" address 02:00:00:00:00:02
# the kernel must not answer or rewrite our frames: no IPv6 chatter, no offloads
sysctl -qw "net.ipv6.conf.$a.disable_ipv6=1" 2>/dev/null || true
inns sysctl -qw "net.ipv6.conf.$b.disable_ipv6=1" 2>/dev/null || true
ip link set "$a" up
inns ip link set "$b" up
# same configs as the memif pair, on af_packet ports: csum = auto turns checksums on here
for n in 0 1; do
	sed -e "s/^port = .*/port = net_af_packet$n/" "$cfg/node$n.ini" >"$tmp/node$n.ini"
done
eal=(--no-huge --no-pci --no-shconf -m 256 --log-level lib.eal:error)
cpu_i=$(( $(nproc) > 1 ? 1 : 0 ))
"$bin" -l 0 "${eal[@]}" --file-prefix "amrma_afp_$$_t" \
	--vdev "net_af_packet0,iface=$a" -- --config "$tmp/node0.ini" >"$tmp/target.log" 2>&1 &
pid=$!
wait_banner "$pid" "$tmp/target.log" '^amrma-dataplane: node 0' || exit 1
fail=0
inns "$bin" -l "$cpu_i" "${eal[@]}" --file-prefix "amrma_afp_$$_i" \
	--vdev "net_af_packet1,iface=$b" -- --config "$tmp/node1.ini" --count 20000 \
	--window 16 --size 1000 >"$tmp/am.log" 2>&1 || fail=1
grep '^initiator:' "$tmp/am.log" || { cat "$tmp/am.log"; fail=1; }
inns "$bin" -l "$cpu_i" "${eal[@]}" --file-prefix "amrma_afp_$$_r" \
	--vdev "net_af_packet1,iface=$b" -- --config "$tmp/node1.ini" --role rma --count 5 \
	--sizes 1,1400,1401,65536,1048576 >"$tmp/rma.log" 2>&1 || fail=1
grep '^rma:' "$tmp/rma.log" || { cat "$tmp/rma.log"; fail=1; }
kill -TERM "$pid"
wait "$pid" || fail=1
pid=""
grep -q 'rx_rejected_bad_udp_csum' "$tmp/target.log" && { echo "checksum rejections:"; fail=1; }
grep -q '^amrma-dataplane: node 0 .*udp checksums on$' "$tmp/target.log" ||
	{ echo "af_packet target without checksums:"; head -3 "$tmp/target.log"; fail=1; }
if [ $fail -eq 0 ]; then
	echo "1 passed, 0 failed: AM echo and RMA put/get verified over net_af_packet + veth"
else
	echo "0 passed, 1 failed"
	tail -20 "$tmp/target.log"
fi
exit $fail
