#!/usr/bin/env bash
# Two amrma-dataplane processes over net_memif: COUNT request/reply pairs, every payload
# verified by the initiator (checksum of what the target received and the bytes echoed),
# twice against one target: the first initiator leaves (amrma_node_leave()), the target
# parks its context until the link went down and up, then serves the second. Then the
# same with a two-context initiator in the production layout (the main lcore polls
# context 0, a worker lcore context 1), 20 000 pairs, once.
# Usage: memif_pair.sh DATAPLANE_BINARY CONFIG_DIR [COUNT]
set -euo pipefail
# shellcheck source=../../scripts/lib/procs.sh
. "$(dirname "$0")/../../scripts/lib/procs.sh"
bin=$1
cfg=$2
count=${3:-100000}
tmp=$(mktemp -d /tmp/amrma-memif-test.XXXXXX)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm_rundirs "amrma_mt_$$" t i
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM	# Ctrl-C stops the run (cleanup on the way out)
eal=(--no-huge --no-pci --no-shconf -m 256 --log-level lib.eal:error --log-level pmd.net.memif:error)
cpu_i=$(( $(nproc) > 1 ? 1 : 0 ))
backoff=()
[ "$cpu_i" -eq 0 ] && backoff=(--idle-sleep 20)

# run NAME TARGET_INI INITIATOR_INI INITIATOR_LCORES COUNT RUNS [OPTIONS...]: one target,
# RUNS initiator runs one after the other, the target stopped by SIGTERM; checks both
# sides' counts
run() {
	local name=$1 t_ini=$2 i_ini=$3 lcores=$4 n=$5 runs=$6 json handled left parks nctx r log
	shift 6
	"$bin" -l 0 "${eal[@]}" --file-prefix "amrma_mt_$$_t" \
		--vdev "net_memif0,role=server,socket=$tmp/$name.sock,mac=02:00:00:00:00:01" \
		-- --config "$t_ini" "$@" >"$tmp/$name.target.log" 2>&1 &
	pid=$!
	wait_banner "$pid" "$tmp/$name.target.log" '^amrma-dataplane: node 0' || exit 1
	for r in $(seq "$runs"); do
		log=$tmp/$name.init$r.log
		"$bin" -l "$lcores" "${eal[@]}" --file-prefix "amrma_mt_$$_i" \
			--vdev "net_memif0,role=client,socket=$tmp/$name.sock,mac=02:00:00:00:00:02" \
			-- --config "$i_ini" --count "$n" --window 32 --size 64 --json "$@" \
			>"$log" 2>&1 || { cat "$log"; exit 1; }
		json=$(grep '^{' "$log")
		echo "$name run $r: $json"
		# the initiator left settled (every ack it owed sent, everything it sent
		# acknowledged) and its leaving was answered
		! grep -E 'unacknowledged at exit|leaving:' "$log" || exit 1
		python3 - "$json" "$n" <<'PY'
import json, sys
r = json.loads(sys.argv[1]); n = int(sys.argv[2])
assert r["completed"] == n and r["verified"] == n and r["errors"] == 0, r
PY
	done
	kill -TERM "$pid"
	wait "$pid" || { echo "target did not exit cleanly on SIGTERM"; cat "$tmp/$name.target.log"; exit 1; }
	pid=""
	# csum = auto: memif is shared memory, so no UDP checksums
	grep -q '^amrma-dataplane: node 0 .*udp checksums off$' "$tmp/$name.target.log" ||
		{ echo "memif target with checksums:"; head -3 "$tmp/$name.target.log"; exit 1; }
	! grep -E 'unacknowledged at exit|leaving:' "$tmp/$name.target.log" ||
		{ cat "$tmp/$name.target.log"; exit 1; }
	# each initiator's LEAVE is a one-way message (not among the requests); every
	# context of the target took one and parked (memif: the link goes with the peer)
	handled=$(counter requests_handled "$tmp/$name.target.log")
	left=$(counter peers_left "$tmp/$name.target.log")
	parks=$(counter parks "$tmp/$name.target.log")
	nctx=$(sed -n 's/.* \([0-9]*\) context(s).*/\1/p' "$tmp/$name.target.log")
	python3 - "$n" "$runs" "$handled" "$left" "$parks" "$nctx" "$name" <<'PY'
import sys
n, runs, handled, left, parks, nctx = (int(x) for x in sys.argv[1:7])
assert left == runs * nctx, f"target took {left} LEAVEs, expected {runs * nctx}"
assert parks == left, f"target parked {parks} times, expected {left}"
assert handled == runs * n, \
    f"target handled {handled} echo requests, expected {runs * n} (exactly once)"
print(f"{sys.argv[7]}: {runs} x {n} request/reply pairs verified, target ran each handler "
      f"once and parked for each leaving initiator")
PY
}

run compact "$cfg/node0.ini" "$cfg/node1.ini" "$cpu_i" "$count" 2 "${backoff[@]}"

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
run production "$tmp/t2.ini" "$tmp/i2.ini" 0,1 20000 1 --idle-sleep 20
grep -q 'context 1 polled by lcore 1' "$tmp/production.init1.log" ||
	{ echo "production layout: no worker lcore for context 1"; cat "$tmp/production.init1.log"
	  exit 1; }
echo "2 passed, 0 failed"
