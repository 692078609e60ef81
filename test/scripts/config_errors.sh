#!/usr/bin/env bash
# amrma-dataplane refuses bad configs with file:line, the key and why; exit 2, no crash.
# Usage: config_errors.sh DATAPLANE_BINARY CONFIG_DIR
set -euo pipefail
bin=$1
cfgdir=$2
tmp=$(mktemp -d /tmp/amrma-cfg-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# case NAME EXPECTED-MESSAGE-REGEX: the config comes on stdin
case_() {
	local name=$1 want=$2 out rc=0
	cat >"$tmp/$name.ini"
	out=$("$bin" --no-huge --no-pci --no-shconf -m 64 --file-prefix "amrma_cfg_$$_$name" \
		--log-level lib.eal:error -- --config "$tmp/$name.ini" 2>&1) || rc=$?
	if [ $rc -eq 2 ] && grep -Eq "$want" <<<"$out"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $name (exit $rc), wanted /$want/, got:"
		echo "$out" | tail -3
	fi
}

case_ bad_ip '[.]ini:3: \[node\] ip = .1[.]2[.]3.: not an IPv4 address' <<'INI'
[node]
id = 0
ip = 1.2.3
INI
case_ bad_number '[.]ini:4: \[am\] window = .lots.: not a number' <<'INI'
[node]
ip = 198.18.0.1
[am]
window = lots
INI
case_ out_of_range '[.]ini:4: \[am\] window = .65.: out of range \[1, 64\]' <<'INI'
[node]
ip = 198.18.0.1
[am]
window = 65
INI
case_ bad_mac '[.]ini:5: \[peer[.]1\] mac = .02:00.: not a MAC address' <<'INI'
[node]
id = 0
ip = 198.18.0.1
[peer.1]
mac = 02:00
ip = 198.18.0.2
INI
case_ unknown_section '[.]ini:3: unknown section \[nodes\]' <<'INI'
[node]
ip = 198.18.0.1
[nodes]
x = 1
INI
case_ bad_role '[.]ini:4: \[workload\] role = .boss.: expected target, initiator, echo or rma' <<'INI'
[node]
ip = 198.18.0.1
[workload]
role = boss
INI
case_ bad_layout '[.]ini:3: \[node\] layout = .tiny.: expected compact or production' <<'INI'
[node]
ip = 198.18.0.1
layout = tiny
INI
case_ bad_csum '[.]ini:4: \[am\] csum = .maybe.: expected auto, on or off' <<'INI'
[node]
ip = 198.18.0.1
[am]
csum = maybe
INI
case_ old_csum_key '[.]ini:4: \[am\] tx_csum = .1.: replaced by csum = auto[|]on[|]off' <<'INI'
[node]
ip = 198.18.0.1
[am]
tx_csum = 1
INI
case_ missing_node 'missing \[node\] section' <<'INI'
[am]
window = 8
INI
case_ bad_progress_ctx '\[rma\] progress_ctx = .3.: not one of this node.s contexts' <<'INI'
[node]
ip = 198.18.0.1
contexts = 2
[rma]
progress_ctx = 3
INI
case_ bad_completion_slots '\[rma\] completion_slots = .1000.: not a power of two' <<'INI'
[node]
ip = 198.18.0.1
[rma]
completion_slots = 1000
INI
case_ bad_stream_min '[.]ini:4: \[rma\] stream_min = .8M.: not a number' <<'INI'
[node]
ip = 198.18.0.1
[rma]
stream_min = 8M
INI
case_ bad_rndv_put_threshold '[.]ini:4: \[rma\] rndv_put_threshold = .4M.: not a number' <<'INI'
[node]
ip = 198.18.0.1
[rma]
rndv_put_threshold = 4M
INI
# the shipped samples all parse (they fail later, at the port, with exit 1)
for f in "$cfgdir"/*.ini; do
	rc=0
	"$bin" --no-huge --no-pci --no-shconf -m 64 --file-prefix "amrma_cfg_$$_s" \
		--log-level lib.eal:error -- --config "$f" >"$tmp/sample.out" 2>&1 || rc=$?
	if [ $rc -eq 2 ]; then
		fail=$((fail + 1))
		echo "FAIL sample $f refused:"
		tail -2 "$tmp/sample.out"
	else
		pass=$((pass + 1))
	fi
done
# a valid MTU the port cannot take (net_ring keeps its own) is said, not silently dropped
cat >"$tmp/mtu.ini" <<'INI'
[node]
ip = 198.18.0.1
port = net_ring0
mtu = 9000
[workload]
role = target
duration = 0.2
INI
rc=0
"$bin" --no-huge --no-pci --no-shconf -m 128 --file-prefix "amrma_cfg_$$_mtu" \
	--log-level lib.eal:error --vdev net_ring0 -- --config "$tmp/mtu.ini" >"$tmp/mtu.out" 2>&1 ||
	rc=$?
if [ $rc -eq 0 ] && grep -q 'MTU 9000 configured, the port keeps 1500: frames use 1500' \
	"$tmp/mtu.out"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL mtu_kept (exit $rc):"
	tail -3 "$tmp/mtu.out"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
