#!/usr/bin/env bash
# Three amrma-dataplane processes over the kernel with loss: each runs in a network
# namespace of its own with a net_af_packet port on a veth whose other end is a port of a
# bridge in a fourth namespace, where an nftables rule drops LOSS % of the frames the
# bridge forwards (this kernel has no netem). A namespace per process also keeps their
# af_packet sockets apart: DPDK 22.11 names a socket's fanout group after its pid and
# ifindex, and two processes in one namespace can draw the same group (EINVAL at start).
# Nodes 1 and 2 run AM echo, then RMA put/get, notified puts (put + REFLECT) and striped
# sends against node 0 at the same time; every reply and every byte is verified (each
# initiator in a region of its own), and the target must have retransmitted. Names
# are unique to this run and removed at exit. Needs root, iproute2 and nft: otherwise
# skipped (77).
# Usage: bridge_loss.sh DATAPLANE_BINARY [LOSS_PERCENT]
set -euo pipefail
# shellcheck source=../../scripts/lib/procs.sh
. "$(dirname "$0")/../../scripts/lib/procs.sh"
bin=$1
loss=${2:-5}
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v nft >/dev/null; then
	echo "SKIP: needs root, iproute2 and nftables"
	exit 77
fi
ns=amrma-br$$
br=ambr$$
tmp=$(mktemp -d /tmp/amrma-brl-test.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]+"${pids[@]}"}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	# a namespace takes its links (and the bridge's nft table) with it
	for n in 0 1 2; do ip netns del "$ns-$n" 2>/dev/null || true; done
	ip netns del "$ns" 2>/dev/null || true
	rm_rundirs "amrma_brl_$$" 0 1 2 r1 r2
	[ -n "${AMRMA_KEEP_LOGS:-}" ] && cp -r "$tmp" "$AMRMA_KEEP_LOGS"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# root without CAP_NET_ADMIN/CAP_SYS_ADMIN (a default container) cannot: skip, not fail
if ! ip netns add "$ns" 2>"$tmp/ns.err"; then
	echo "SKIP: cannot create a network namespace: $(cat "$tmp/ns.err")"
	exit 77
fi
inns() { ip netns exec "$ns" "$@"; }
inns ip link add "$br" type bridge
# a port forwards at once (no STP), the bridge learns the three MACs from our traffic
inns ip link set "$br" type bridge stp_state 0 forward_delay 0
inns ip link set "$br" up
for n in 0 1 2; do
	host=am$$n$n
	port=am$$b$n
	ip netns add "$ns-$n"
	ip link add "$host" netns "$ns-$n" type veth peer name "$port" netns "$ns"
	inns ip link set "$port" master "$br"
	inns ip link set "$port" up
	ip -n "$ns-$n" link set "$host" address "02:00:00:00:00:0$((n + 1))"
	# the kernel must not answer or add to our traffic: no IPv6 chatter on our ends
	ip netns exec "$ns-$n" sysctl -qw "net.ipv6.conf.$host.disable_ipv6=1" 2>/dev/null || true
	ip -n "$ns-$n" link set "$host" up
done
inns nft -f - <<NFT
table bridge amrma_loss {
	chain forward {
		type filter hook forward priority 0;
		numgen random mod 100 < $loss counter drop
	}
}
NFT

# node N's configuration: node 0 knows both initiators, each initiator node 0
conf() {
	local n=$1 p
	cat <<INI
[node]
id = $n
port = net_af_packet$n
ip = 198.18.0.$((n + 1))
udp_base = 7000
contexts = 1
layout = compact
idle_spin = 200
idle_sleep_us = 20

[am]
csum = on
window = 32
rto_us = 2000
rto_max_us = 32000
max_retries = 12

INI
	# one region per initiator: their puts must not land on each other's
	[ "$n" -eq 0 ] && printf '\n[region.of1]\nsize = 4194304\nperm = rw\n\n[region.of2]\nsize = 4194304\nperm = rw\n'
	for p in 0 1 2; do
		[ "$p" -eq "$n" ] && continue
		[ "$n" -ne 0 ] && [ "$p" -ne 0 ] && continue
		printf '\n[peer.%d]\nmac = 02:00:00:00:00:0%d\nip = 198.18.0.%d\ncontexts = 1\n' \
			"$p" "$((p + 1))" "$((p + 1))"
	done
	if [ "$n" -eq 0 ]; then
		printf '\n[workload]\nrole = target\n'
	else
		printf '\n[workload]\nrole = initiator\npeer = 0\n'
	fi
}
for n in 0 1 2; do conf "$n" >"$tmp/node$n.ini"; done

eal=(--no-huge --no-pci --no-shconf -m 256 --log-level lib.eal:error)
ncpu=$(nproc)
cpu() { echo $(( $1 % ncpu )); }
dp() {	# N TAG LOG ARGS...: node N's dataplane, in the background
	local n=$1 tag=$2 log=$3
	shift 3
	ip netns exec "$ns-$n" "$bin" -l "$(cpu "$n")" "${eal[@]}" --file-prefix "amrma_brl_$$_$tag" \
		--vdev "net_af_packet$n,iface=am$$n$n" -- --config "$tmp/node$n.ini" "$@" \
		>"$log" 2>&1 &
	pids+=($!)
}
dp 0 0 "$tmp/target.log"
target=${pids[0]}
wait_banner "$target" "$tmp/target.log" '^amrma-dataplane: node 0' || exit 1

fail=0
# both initiators at once: AM echo with payloads verified, then RMA of every protocol
for n in 1 2; do
	(
		set +e
		ip netns exec "$ns-$n" "$bin" -l "$(cpu "$n")" "${eal[@]}" \
			--file-prefix "amrma_brl_$$_$n" \
			--vdev "net_af_packet$n,iface=am$$n$n" -- --config "$tmp/node$n.ini" \
			--count 4000 --window 16 --size 1000 --json >"$tmp/am$n.log" 2>&1 || exit 1
		ip netns exec "$ns-$n" "$bin" -l "$(cpu "$n")" "${eal[@]}" \
			--file-prefix "amrma_brl_$$_r$n" \
			--vdev "net_af_packet$n,iface=am$$n$n" -- --config "$tmp/node$n.ini" \
			--role rma --region $((n - 1)) --count 3 --sizes 1,1400,1401,65536,1048576 \
			>"$tmp/rma$n.log" 2>&1
	) &
	pids+=($!)
done
for k in 1 2; do
	wait "${pids[$k]}" || { echo "initiator $k failed"; fail=1; }
done
for n in 1 2; do
	json=$(grep '^{' "$tmp/am$n.log" || true)
	python3 - "$json" 4000 "$n" <<'PY' || fail=1
import json, sys
r = json.loads(sys.argv[1] or "{}"); n = int(sys.argv[2])
assert r.get("completed") == n and r.get("verified") == n and r.get("errors") == 0, r
print(f"node {sys.argv[3]}: {n} AM request/reply pairs verified")
PY
	grep -E '^(rma|reflect|stripe):' "$tmp/rma$n.log" || { cat "$tmp/rma$n.log"; fail=1; }
done
kill -TERM "$target"
wait "$target" || { echo "target did not exit cleanly"; fail=1; }
pids=()
# exactly once, both ways: what one side completed (requests answered, one-way messages
# acknowledged) the other side's handlers ran, once each, and nothing failed
sum() {	# COUNTER LOG...: the counter summed over the logs
	local c=$1 t=0 f
	shift
	for f in "$@"; do t=$((t + $(counter "$c" "$f"))); done
	echo "$t"
}
ini=("$tmp"/am1.log "$tmp"/am2.log "$tmp"/rma1.log "$tmp"/rma2.log)
done_i=$(sum ops_completed "${ini[@]}")
ran_t=$(sum requests_handled "$tmp/target.log")
ran_t=$((ran_t + $(counter sends_handled "$tmp/target.log")))
done_t=$(counter ops_completed "$tmp/target.log")
ran_i=$(( $(sum requests_handled "${ini[@]}") + $(sum sends_handled "${ini[@]}") ))
failed=$(sum ops_failed "${ini[@]}" "$tmp/target.log")
echo "initiators -> target: $done_i completed, $ran_t handled; target -> initiators:" \
	"$done_t completed, $ran_i handled; $failed failed"
[ "$done_i" -eq "$ran_t" ] && [ "$done_t" -eq "$ran_i" ] && [ "$failed" -eq 0 ] &&
	[ "$done_i" -gt 8000 ] || { echo "not exactly once"; fail=1; }
dropped=$(inns nft list table bridge amrma_loss | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
retx=$(counter retransmits "$tmp/target.log")
handled=$(counter requests_handled "$tmp/target.log")
echo "bridge dropped ${dropped:-0} frames; target: $retx retransmissions, $handled requests handled"
[ "${dropped:-0}" -gt 0 ] || { echo "the bridge dropped nothing"; fail=1; }
[ "$retx" -gt 0 ] || { echo "the target never retransmitted"; fail=1; }
grep -q 'rx_rejected_bad_udp_csum' "$tmp/target.log" && { echo "checksum rejections"; fail=1; }
if [ $fail -eq 0 ]; then
	echo "1 passed, 0 failed: two initiators verified through a bridge dropping $loss %"
else
	echo "0 passed, 1 failed"
	for f in "$tmp"/*.log; do echo "== $f"; tail -15 "$f"; done
fi
exit $fail
