#!/usr/bin/env bash
# bench-smoke: amrma-perf still runs end to end over net_memif (AM latency and rate, raw echo,
# RMA bandwidth) and prints JSON lines that parse, with positive values, and the plots that
# bench.sh --plot renders come out as PNGs, and scripts/bench/ab.sh compares two binaries.
# Short runs (--quick); the numbers are not judged.
# Usage: smoke.sh AMRMA_PERF RESULTS_PY
set -euo pipefail
perf=$1
check=$2
tmp=$(mktemp -d /tmp/amrma-bench-smoke.XXXXXX)
# shellcheck source=../../scripts/bench/pair.sh
. "$(dirname "$check")/pair.sh"
# shellcheck source=../../scripts/lib/procs.sh
. "$(dirname "$check")/../lib/procs.sh"
cleanup() {
	local p
	for p in "${pair_pids[@]+"${pair_pids[@]}"}"; do pair_stop "$p"; done
	rm -rf "$tmp"
	# testpmd leaves its EAL run directory behind: remove ours
	rm -rf /var/run/dpdk/amrma_smoke_*_$$ 2>/dev/null || true
}
trap cleanup EXIT
eal=(--no-huge --no-pci --no-shconf -m 256 --log-level lib.eal:error --log-level pmd.net.memif:error)
cpu_c=$(( $(nproc) > 1 ? 1 : 0 ))
backoff=()
[ "$cpu_c" -eq 0 ] && backoff=(--idle-sleep 20)
n=0

pair() {	# serve-mode client-args...
	local smode=$1
	shift
	n=$((n + 1))
	pair_run "$tmp/p$n" \
		"$perf" -l 0 "${eal[@]}" --file-prefix "amrma_smoke_s${n}_$$" \
		--vdev "net_memif0,role=server,socket=$tmp/s$n,mac=02:00:00:00:00:01" \
		-- --mode "$smode" "${backoff[@]+"${backoff[@]}"}" ::: \
		"$perf" -l "$cpu_c" "${eal[@]}" --file-prefix "amrma_smoke_c${n}_$$" \
		--vdev "net_memif0,role=client,socket=$tmp/s$n,mac=02:00:00:00:00:02" \
		-- --linger "${backoff[@]+"${backoff[@]}"}" "$@"
	cat "$tmp/p$n.out" >>"$tmp/out.jsonl"
}

pair serve --mode am-lat --quick --sizes 8,1400 --with-raw
pair serve --mode am-rate --quick
pair raw-serve --mode raw-echo --quick --sizes 8,1400
pair serve --mode rma-bw --quick --sizes 64K --memcpy
pair serve --mode rma-bw --quick --sizes 64K --ops put

# raw-place (bench.sh's ceiling of a put) against testpmd txonly: every 1514-byte frame's
# 1472 payload bytes are placed, and a rate comes out
n=$((n + 1))
"$perf" -l 0 "${eal[@]}" --file-prefix "amrma_smoke_s${n}_$$" \
	--vdev "net_memif0,role=server,socket=$tmp/s$n,mac=02:00:00:00:00:01" \
	-- --mode raw-place "${backoff[@]+"${backoff[@]}"}" >"$tmp/place.out" 2>"$tmp/place.err" &
place_pid=$!
pair_pids=("$place_pid")
wait_banner "$place_pid" "$tmp/place.err" ready || exit 1
mkfifo "$tmp/tp.in"
dpdk-testpmd --lcores "0@$cpu_c,1@$cpu_c" "${eal[@]}" --file-prefix "amrma_smoke_t${n}_$$" \
	--vdev "net_memif0,role=client,socket=$tmp/s$n" -- -i --forward-mode=txonly \
	--txpkts 1514 --nb-cores 1 --total-num-mbufs 8192 <"$tmp/tp.in" >"$tmp/tp.log" 2>&1 &
pair_pids+=("$!")
exec {tp_fd}>"$tmp/tp.in"
wait_banner "${pair_pids[-1]}" "$tmp/tp.log" 'testpmd>' || exit 1
echo start >&"$tp_fd"
sleep 5
echo stop >&"$tp_fd"
sleep 0.5
pair_stop "$place_pid"	# the receiver first, then the generator
place_rc=$pair_stop_rc
echo quit >&"$tp_fd"
exec {tp_fd}>&-
pair_stop "${pair_pids[1]}"
pair_pids=()
[ "$place_rc" -eq 0 ] || { echo "bench-smoke: raw-place failed:"; tail "$tmp/place.err"; exit 1; }
cat "$tmp/place.out" >>"$tmp/out.jsonl"
python3 - "$tmp/place.out" <<'PY' || exit 1
import json, sys
r = [json.loads(x) for x in open(sys.argv[1]) if x.startswith("{")][0]
assert r["name"] == "raw_place_pps" and r["value"] > 0 and r["frame"] == 1514, r
assert r["frames"] > 0 and r["placed_bytes"] == r["frames"] * 1472, r
print("bench-smoke: raw-place placed %d frames, %d bytes" % (r["frames"], r["placed_bytes"]))
PY

cat "$tmp/out.jsonl"
python3 "$check" check "$tmp/out.jsonl" --expect am_rtt_median am_rtt_p99 am_rate \
	raw_echo_rtt_median raw_echo_rtt_p99 rma_put_bw rma_get_bw memcpy_bw raw_place_pps

# the plots bench.sh --plot renders: each a non-empty PNG
python3 "$check" plot "$tmp/out.jsonl" "$tmp/plot"
for f in latency rate bandwidth; do
	png=$tmp/plot/$f.png
	[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		{ echo "bench-smoke: $png is not a PNG"; exit 1; }
	[ "$(stat -c %s "$png")" -gt 10000 ] || { echo "bench-smoke: $png is nearly empty"; exit 1; }
	echo "bench-smoke: $f.png $(stat -c %s "$png") bytes"
done

# the A/B tool (scripts/bench/ab.sh) on two copies of the same binary: one line per result
ab_out=$("$(dirname "$check")/ab.sh" --rounds 1 "$perf" "$perf" --mode am-lat --quick --sizes 8)
echo "$ab_out"
grep -Eq '^am_rtt_median +size 8 +A [0-9.]+ +B [0-9.]+ +B/A [0-9.]+' <<<"$ab_out" ||
	{ echo "bench-smoke: ab.sh printed no am_rtt_median comparison"; exit 1; }
