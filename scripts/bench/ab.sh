#!/usr/bin/env bash
# A/B of two amrma-perf binaries on this machine: runs them in turn (A, B, A, B, ...), each
# run a fresh server + client pair over net_memif (copy mode, no hugepages), and prints
# every run and, per result, the median of A, the median of B and the median of the
# per-round ratios B/A. Taking turns is what makes the comparison hold on a VM whose speed
# moves by 2-8x within seconds (docs/bench.md).
#
# Usage: scripts/bench/ab.sh [--rounds N] A_PERF B_PERF [amrma-perf client options]
#   default client options: --mode am-lat --sizes 8 --iters 20000 --repeat 3
# Example (a change's effect on the round trip and the rate):
#   scripts/bench/ab.sh --rounds 5 /tmp/old/app/perf/amrma-perf build/app/perf/amrma-perf
#   scripts/bench/ab.sh /tmp/old/app/perf/amrma-perf build/app/perf/amrma-perf \
#       --mode am-rate --count 2000000 --repeat 3 --window 256
set -euo pipefail
rounds=4
if [ "${1:-}" = --rounds ]; then
	rounds=$2
	shift 2
fi
[ $# -ge 2 ] || { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
bin_a=$1
bin_b=$2
shift 2
client_args=("$@")
[ ${#client_args[@]} -gt 0 ] || client_args=(--mode am-lat --sizes 8 --iters 20000 --repeat 3)
for b in "$bin_a" "$bin_b"; do
	[ -x "$b" ] || { echo "ab: $b is not an executable" >&2; exit 2; }
done

tmp=$(mktemp -d /tmp/amrma-ab.XXXXXX)
# shellcheck source=pair.sh
. "$(dirname "$0")/pair.sh"
cleanup() {
	local p
	for p in "${pair_pids[@]+"${pair_pids[@]}"}"; do pair_stop "$p"; done
	rm -rf "$tmp"
	rm -rf "/var/run/dpdk/amrma_ab_"*"_$$" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

eal=(--no-huge --no-pci --no-shconf -m 256 --log-level lib.eal:error
	--log-level pmd.net.memif:error)
cpu_c=$(( $(nproc) > 1 ? 1 : 0 ))

run() {	# tag binary round: one pair; the client's JSON in $tmp/TAG.ROUND.json
	local tag=$1 bin=$2 n=$3
	if pair_run "$tmp/$tag$n" \
		"$bin" -l 0 "${eal[@]}" --file-prefix "amrma_ab_s${tag}${n}_$$" \
		--vdev "net_memif0,role=server,socket=$tmp/$tag$n.sock,mac=02:00:00:00:00:01" \
		-- --mode serve ::: \
		"$bin" -l "$cpu_c" "${eal[@]}" --file-prefix "amrma_ab_c${tag}${n}_$$" \
		--vdev "net_memif0,role=client,socket=$tmp/$tag$n.sock,mac=02:00:00:00:00:02" \
		-- --linger "${client_args[@]}"; then
		mv "$tmp/$tag$n.out" "$tmp/$tag.$n.json"
	else
		echo "ab: run $tag$n left out" >&2
	fi
}

for n in $(seq "$rounds"); do
	run a "$bin_a" "$n"
	run b "$bin_b" "$n"
done

python3 - "$tmp" "$rounds" <<'EOF'
import glob, json, os, statistics, sys

tmp, rounds = sys.argv[1], int(sys.argv[2])
res = {}  # (name, size) -> {"a": {round: value}, "b": {...}}
for side in ("a", "b"):
    for n in range(1, rounds + 1):
        path = os.path.join(tmp, "%s.%d.json" % (side, n))
        if not os.path.exists(path):
            continue
        for line in open(path):
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            key = (r["name"], r.get("size"))
            res.setdefault(key, {"a": {}, "b": {}, "unit": r.get("unit", "")})[side][n] = r["value"]
for (name, size), v in sorted(res.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
    a, b = v["a"], v["b"]
    both = sorted(set(a) & set(b))
    runs = " ".join("%g/%g" % (a[n], b[n]) for n in both)
    if not both:
        continue
    ratio = statistics.median(b[n] / a[n] for n in both if a[n])
    print("%-28s size %-8s A %-10g B %-10g B/A %.3f  (%s; per round A/B: %s)"
          % (name, size, statistics.median(a.values()), statistics.median(b.values()),
             ratio, v["unit"], runs))
EOF
