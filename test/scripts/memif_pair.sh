#!/usr/bin/env bash
# Two amrma-dataplane processes over net_memif: COUNT request/reply pairs, every payload
# verified by the initiator (checksum of what the target received and the bytes echoed).
# Then the same with a two-context initiator in the production layout (the main lcore
# polls context 0, a worker lcore context 1), 20 000 pairs.
# Usage: memif_pair.sh DATAPLANE_BINARY CONFIG_DIR [COUNT]
set -euo pipefail
bin=$1
cfg=$2
count=${3:-100000}
tmp=$(mktemp -d /tmp/amrma-memif-test.XXXXXX)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
eal=(--no-huge --no-pci --no-shconf -m 256 --log-level lib.eal:error --log-level pmd.net.memif:error)
cpu_i=$(( $(nproc) > 1 ? 1 : 0 ))
backoff=()
[ "$cpu_i" -eq 0 ] && backoff=(--idle-sleep 20)

# run NAME TARGET_INI INITIATOR_INI INITIATOR_LCORES COUNT [OPTIONS...]: one target, one
# initiator run, the target stopped by SIGTERM; checks both sides' counts
run() {
	local name=$1 t_ini=$2 i_ini=$3 lcores=$4 n=$5 json handled
	shift 5
	"$bin" -l 0 "${eal[@]}" --file-prefix "amrma_mt_t_$$" \
		--vdev "net_memif0,role=server,socket=$tmp/$name.sock,mac=02:00:00:00:00:01" \
		-- --config "$t_ini" "$@" >"$tmp/$name.target.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		grep -q '^amrma-dataplane: node 0' "$tmp/$name.target.log" && break
		sleep 0.1
	done
	"$bin" -l "$lcores" "${eal[@]}" --file-prefix "amrma_mt_i_$$" \
		--vdev "net_memif0,role=client,socket=$tmp/$name.sock,mac=02:00:00:00:00:02" \
		-- --config "$i_ini" --count "$n" --window 32 --size 64 --json "$@" \
		>"$tmp/$name.init.log" 2>&1 || { cat "$tmp/$name.init.log"; exit 1; }
	json=$(grep '^{' "$tmp/$name.init.log")
	echo "$name: $json"
	kill -TERM "$pid"
	wait "$pid" || { echo "target did not exit cleanly on SIGTERM"; cat "$tmp/$name.target.log"; exit 1; }
	pid=""
	# csum = auto: memif is shared memory, so no UDP checksums
	grep -q '^amrma-dataplane: node 0 .*udp checksums off$' "$tmp/$name.target.log" ||
		{ echo "memif target with checksums:"; head -3 "$tmp/$name.target.log"; exit 1; }
	# the initiator left settled: every ack it owed sent, everything it sent acknowledged
	# (not on the target: in 2 of 12 runs of the production phase its last replies were
	# still unacknowledged at SIGTERM although the initiator had sent its acks, most
	# likely still in the memif ring when the initiator's disconnect emptied it)
	! grep 'unacknowledged at exit' "$tmp/$name.init.log" || exit 1
	handled=$(awk '/requests_handled/ {print $2}' "$tmp/$name.target.log")
	python3 - "$json" "$n" "$handled" "$name" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); n = int(sys.argv[2]); handled = int(sys.argv[3] or 0)
assert r["completed"] == n and r["verified"] == n and r["errors"] == 0, r
assert handled == n, f"target handled {handled} requests, expected {n} (exactly once)"
print(f"{sys.argv[4]}: {n} request/reply pairs verified, target ran each handler once")
PY
}

run compact "$cfg/node0.ini" "$cfg/node1.ini" "$cpu_i" "$count" "${backoff[@]}"

# production layout: two contexts on both sides; the initiator's two lcores share the
# CPUs with the target, so everyone backs off when idle
if [ "$(nproc)" -lt 2 ]; then
	echo "production: skipped (needs two CPUs for the initiator's two lcores)"
	exit 0
fi
sed 's/^contexts = 1$/contexts = 2/' "$cfg/node0.ini" >"$tmp/t2.ini"
sed 's/^contexts = 1$/contexts = 2/; s/^layout = compact$/layout = production\nlcores = 0,1/' \
	"$cfg/node1.ini" >"$tmp/i2.ini"
grep -q '^layout = production' "$tmp/i2.ini" || { echo "node1.ini: no layout line to change"; exit 1; }
run production "$tmp/t2.ini" "$tmp/i2.ini" 0,1 20000 --idle-sleep 20
grep -q 'context 1 polled by lcore 1' "$tmp/production.init.log" ||
	{ echo "production layout: no worker lcore for context 1"; cat "$tmp/production.init.log"; exit 1; }
echo "2 passed, 0 failed"
