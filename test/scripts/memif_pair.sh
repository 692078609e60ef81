#!/usr/bin/env bash
# Two amrma-dataplane processes over net_memif: COUNT request/reply pairs, every payload
# verified by the initiator (checksum of what the target received and the bytes echoed).
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

"$bin" -l 0 "${eal[@]}" --file-prefix "amrma_mt_t_$$" \
	--vdev "net_memif0,role=server,socket=$tmp/s,mac=02:00:00:00:00:01" \
	-- --config "$cfg/node0.ini" "${backoff[@]}" >"$tmp/target.log" 2>&1 &
pid=$!
for _ in $(seq 100); do
	grep -q '^amrma-dataplane: node 0' "$tmp/target.log" && break
	sleep 0.1
done
"$bin" -l "$cpu_i" "${eal[@]}" --file-prefix "amrma_mt_i_$$" \
	--vdev "net_memif0,role=client,socket=$tmp/s,mac=02:00:00:00:00:02" \
	-- --config "$cfg/node1.ini" --count "$count" --window 32 --size 64 --json \
	"${backoff[@]}" >"$tmp/init.log" 2>&1 || { cat "$tmp/init.log"; exit 1; }
json=$(grep '^{' "$tmp/init.log")
echo "$json"
kill -TERM "$pid"
wait "$pid" || { echo "target did not exit cleanly on SIGTERM"; cat "$tmp/target.log"; exit 1; }
pid=""
# csum = auto: memif is shared memory, so no UDP checksums
grep -q '^amrma-dataplane: node 0 .*udp checksums off$' "$tmp/target.log" ||
	{ echo "memif target with checksums:"; head -3 "$tmp/target.log"; exit 1; }
handled=$(awk '/requests_handled/ {print $2}' "$tmp/target.log")
python3 - "$json" "$count" "$handled" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); n = int(sys.argv[2]); handled = int(sys.argv[3] or 0)
assert r["completed"] == n and r["verified"] == n and r["errors"] == 0, r
assert handled == n, f"target handled {handled} requests, expected {n} (exactly once)"
print(f"1 passed, 0 failed: {n} request/reply pairs verified, target ran each handler once")
PY
