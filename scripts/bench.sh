#!/usr/bin/env bash
# Benchmarks: amrma and the raw capability of the same link, in one run.
#
# Usage: scripts/bench.sh [--plot DIR] [--quick] [--memif copy|zero-copy|auto|both]
#                         [--build-dir DIR] [SUITE...]
# Suites: am (AM latency/rate against raw echo and testpmd), rma, dgsp, stripe. None = all.
# --memif auto (default): copy mode, plus zero-copy when running as root and it works.
# stdout: JSON lines only (one result per line); progress goes to stderr.
# See docs/bench.md for what each number means.
set -euo pipefail
caller_dir=$PWD
cd "$(dirname "$0")/.."

SUITES_ALL=(am rma dgsp stripe)
plot_dir=""
quick=0
memif=auto
build_dir=build
suites=()
while [ $# -gt 0 ]; do
	case $1 in
	--plot) plot_dir=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--memif) memif=$2; shift 2 ;;
	--build-dir) build_dir=$2; shift 2 ;;
	-h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench: unknown option $1" >&2; exit 2 ;;
	*) suites+=("$1"); shift ;;
	esac
done
[ ${#suites[@]} -gt 0 ] || suites=("${SUITES_ALL[@]}")
for s in "${suites[@]}"; do
	case " ${SUITES_ALL[*]} " in *" $s "*) ;; *)
		echo "bench: unknown suite '$s' (have: ${SUITES_ALL[*]})" >&2; exit 2 ;;
	esac
done
# --plot DIR is relative to where the script was called from
case $plot_dir in ""|/*) ;; *) plot_dir=$caller_dir/$plot_dir ;; esac
case $memif in copy|zero-copy|auto|both) ;; *) echo "bench: --memif copy|zero-copy|auto|both" >&2; exit 2 ;; esac

log() { echo "bench: $*" >&2; }

tmp=$(mktemp -d /tmp/amrma-bench.XXXXXX)
results=$tmp/results.jsonl
: >"$results"
pids=()		# every process we started, killed by PID at exit
huge_mounted=""
huge_prev=""

# shellcheck source=bench/pair.sh
. scripts/bench/pair.sh	# pair_run, pair_stop

stop_pid() {	# pid: SIGTERM, then SIGKILL after 5 s; forget it
	local pid=$1 keep=() p
	pair_stop "$pid"
	for p in "${pids[@]+"${pids[@]}"}"; do [ "$p" = "$pid" ] || keep+=("$p"); done
	pids=("${keep[@]+"${keep[@]}"}")
}

cleanup() {
	local p
	for p in "${pids[@]+"${pids[@]}"}" "${pair_pids[@]+"${pair_pids[@]}"}"; do
		stop_pid "$p"
	done
	if [ -n "$huge_mounted" ]; then
		umount "$huge_mounted" 2>/dev/null || log "could not unmount $huge_mounted"
	fi
	if [ -n "$huge_prev" ]; then
		echo "$huge_prev" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	fi
	rm -rf "$tmp"
	# EAL (testpmd included) leaves /var/run/dpdk/<file-prefix> behind: remove ours
	rm -rf /var/run/dpdk/amrma_bench_*_$$ 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "setup and build ($build_dir)"
./scripts/setup.sh >&2
./scripts/build.sh "$build_dir" >&2
perf=$build_dir/app/perf/amrma-perf
[ -x "$perf" ] || { log "$perf was not built"; exit 1; }

# Each busy poller gets a CPU of its own; two pollers on one CPU measure the scheduler.
if [ "$(nproc)" -ge 2 ]; then
	cpu_s=0; cpu_c=1; backoff=()
else
	cpu_s=0; cpu_c=0; backoff=(--idle-sleep 20)
	log "WARNING: one CPU: both sides share it, numbers are not meaningful"
fi

if [ $quick -eq 1 ]; then
	rounds=3
	lat_opts=(--iters 2000 --warmup 1000)
	rate_opts=(--count 500000)
	pmd_secs=3
	rma_iters=2000
	rma_bw_sizes=4K,64K,1M,16M
else
	rounds=5
	lat_opts=(--iters 20000 --warmup 2000)
	rate_opts=(--count 2000000)
	pmd_secs=8
	rma_iters=8000
	rma_bw_sizes=4K,64K,256K,1M,4M,16M,64M
fi
sizes=8,64,256,1024,1400
# requests in flight for the AM rate: enough that the initiator never waits on an empty
# pipe (at 32 it idled between batches; 256 measured 10-15 % more pairs/s)
rate_window=256
round_pmd_secs=3		# testpmd's packet rate within each AM round
quiet=(--log-level lib.eal:error --log-level pmd.net.memif:error)
eal_copy=(--no-huge --no-pci --no-shconf -m 256 "${quiet[@]}")
eal_zc=()	# filled by zc_setup
run_id=0

collect=""	# set: emit appends to this file instead (per-round results, merged later)
emit() {	# JSON lines from a file (or stdin): to stdout and to the results file
	if [ -n "$collect" ]; then
		grep '^{' "${1:-/dev/stdin}" >>"$collect" || true
	else
		grep '^{' "${1:-/dev/stdin}" | tee -a "$results" || true
	fi
}

wait_for() {	# file pattern pid what: until pattern shows in file (10 s)
	local i
	for i in $(seq 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { log "$4 exited early:"; cat "$1" >&2; return 1; }
		sleep 0.1
	done
	log "$4 did not come up:"; cat "$1" >&2
	return 1
}

# The memif server is always a copy-mode --no-huge process (only a memif client can be
# zero-copy); the client side uses the mode under test.
client_eal() {	# mode
	if [ "$1" = zero-copy ]; then
		printf '%s\n' "${eal_zc[@]}"
	else
		printf '%s\n' "${eal_copy[@]}"
	fi
}
client_vdev_opt() { [ "$1" = zero-copy ] && echo ",zero-copy=yes" || true; }

# perf_pair MODE SERVE_MODE [SERVER_ARGS... --] CLIENT_ARGS...: amrma-perf server + one
# client run (scripts/bench/pair.sh); the client's JSON lines are emitted
perf_pair() {
	local mode=$1 smode=$2 sock sargs=() eal
	shift 2
	if [[ " $* " == *" -- "* ]]; then
		while [ "$1" != -- ]; do sargs+=("$1"); shift; done
		shift
	fi
	run_id=$((run_id + 1))
	sock=$tmp/memif$run_id.sock
	mapfile -t eal < <(client_eal "$mode")
	# timeout bounds a run whose peer vanished
	pair_run "$tmp/perf$run_id" \
		"$perf" -l $cpu_s "${eal_copy[@]}" --file-prefix "amrma_bench_s${run_id}_$$" \
		--vdev "net_memif0,role=server,socket=$sock,mac=02:00:00:00:00:01" \
		-- --mode "$smode" "${sargs[@]+"${sargs[@]}"}" "${backoff[@]+"${backoff[@]}"}" ::: \
		timeout --preserve-status 900 "$perf" -l $cpu_c "${eal[@]}" \
		--file-prefix "amrma_bench_c${run_id}_$$" \
		--vdev "net_memif0,role=client,socket=$sock,mac=02:00:00:00:00:02$(client_vdev_opt "$mode")" \
		-- --memif-mode "$mode" --linger "${backoff[@]+"${backoff[@]}"}" "$@" ||
		{ log "amrma-perf $* failed"; return 1; }
	grep -E '^(am-|raw-)' "$tmp/perf$run_id.err" | sed 's/^/  /' >&2 || true
	emit "$tmp/perf$run_id.out"
}

# tp_start NAME CPU EAL/testpmd args...: interactive testpmd on CPU (main and forwarding
# lcore), commands through a fifo whose write end we hold (fd in tp_fd, pid in tp_pid)
tp_start() {
	local name=$1 cpu=$2
	shift 2
	mkfifo "$tmp/$name.in"
	dpdk-testpmd --lcores "0@$cpu,1@$cpu" "$@" <"$tmp/$name.in" >"$tmp/$name.log" 2>&1 &
	tp_pid=$!
	pids+=("$tp_pid")
	exec {tp_fd}>"$tmp/$name.in"
	wait_for "$tmp/$name.log" "testpmd>" "$tp_pid" "$name"
}

tp_quit() {	# pid fd: "quit", give it 5 s, then stop_pid; close the fifo
	local pid=$1 fd=$2 i
	echo quit >&"$fd" 2>/dev/null || true
	for i in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	stop_pid "$pid"
	exec {fd}>&-
}

# testpmd_rate MODE FRAME NAME PAYLOAD [SECS]: txonly -> rxonly over memif, frames of FRAME
# bytes, for SECS seconds (default pmd_secs); the value is the median of the rxonly side's
# Rx-pps, read once a second. Forwarding is stopped on both sides before either closes its
# port (see perf_pair).
testpmd_rate() {
	local mode=$1 frame=$2 name=$3 payload=$4 secs=${5:-$pmd_secs} sock eal rx_pid rx_fd
	local tx_pid tx_fd i
	run_id=$((run_id + 1))
	sock=$tmp/memif$run_id.sock
	tp_start "testpmd-rx-$run_id" "$cpu_s" "${eal_copy[@]}" \
		--file-prefix "amrma_bench_r${run_id}_$$" --vdev "net_memif0,role=server,socket=$sock" \
		-- -i --forward-mode=rxonly --nb-cores 1 --total-num-mbufs 16384 || return 1
	rx_pid=$tp_pid
	rx_fd=$tp_fd
	echo start >&"$rx_fd"
	mapfile -t eal < <(client_eal "$mode")
	if ! tp_start "testpmd-tx-$run_id" "$cpu_c" "${eal[@]}" \
		--file-prefix "amrma_bench_t${run_id}_$$" \
		--vdev "net_memif0,role=client,socket=$sock$(client_vdev_opt "$mode")" \
		-- -i --forward-mode=txonly --txpkts "$frame" --nb-cores 1 --total-num-mbufs 16384
	then
		tp_quit "$rx_pid" "$rx_fd"
		return 1
	fi
	tx_pid=$tp_pid
	tx_fd=$tp_fd
	echo start >&"$tx_fd"
	for i in $(seq $((secs + 1))); do
		sleep 1
		echo "show port stats 0" >&"$rx_fd"
	done
	echo stop >&"$tx_fd"
	echo stop >&"$rx_fd"
	sleep 0.5
	tp_quit "$tx_pid" "$tx_fd"
	tp_quit "$rx_pid" "$rx_fd"
	python3 scripts/bench/results.py testpmd "$tmp/testpmd-rx-$run_id.log" \
		--name "$name" --size "$payload" --frame "$frame" --mode "$mode" >"$tmp/pmd$run_id.json" ||
		{ log "testpmd ($mode, $frame B) gave no rate:"; tail -30 "$tmp/testpmd-tx-$run_id.log" >&2; return 1; }
	emit "$tmp/pmd$run_id.json"
}

# place_rate MODE SECS: the ceiling of a put over this link. testpmd txonly (1514-byte
# frames, the client side as in testpmd_rate) against amrma-perf --mode raw-place, which
# copies each frame's payload into a 2 MiB region and nothing else (raw_place_pps).
place_rate() {
	local mode=$1 secs=$2 sock srv_pid eal tx_pid tx_fd out
	run_id=$((run_id + 1))
	sock=$tmp/memif$run_id.sock
	out=$tmp/place$run_id
	"$perf" -l "$cpu_s" "${eal_copy[@]}" --file-prefix "amrma_bench_p${run_id}_$$" \
		--vdev "net_memif0,role=server,socket=$sock,mac=02:00:00:00:00:01" \
		-- --mode raw-place --memif-mode "$mode" "${backoff[@]+"${backoff[@]}"}" \
		>"$out.out" 2>"$out.err" &
	srv_pid=$!
	pids+=("$srv_pid")
	wait_for "$out.err" "ready" "$srv_pid" "raw-place" || { stop_pid "$srv_pid"; return 1; }
	mapfile -t eal < <(client_eal "$mode")
	if ! tp_start "testpmd-tx-$run_id" "$cpu_c" "${eal[@]}" \
		--file-prefix "amrma_bench_t${run_id}_$$" \
		--vdev "net_memif0,role=client,socket=$sock$(client_vdev_opt "$mode")" \
		-- -i --forward-mode=txonly --txpkts 1514 --nb-cores 1 --total-num-mbufs 16384
	then
		stop_pid "$srv_pid"
		return 1
	fi
	tx_pid=$tp_pid
	tx_fd=$tp_fd
	echo start >&"$tx_fd"
	sleep $((secs + 2))
	echo stop >&"$tx_fd"
	sleep 0.5
	# the receiver first (it only receives), then the generator
	stop_pid "$srv_pid"
	tp_quit "$tx_pid" "$tx_fd"
	grep -q '"raw_place_pps"' "$out.out" ||
		{ log "raw-place gave no rate:"; tail -5 "$out.err" >&2; return 1; }
	emit "$out.out"
}

# Hugepages for memif zero-copy (root only): reserve, mount a private hugetlbfs, then
# check that a zero-copy client really passes traffic before any result relies on it.
zc_setup() {
	if [ -n "${eal_zc[*]}" ]; then
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		log "zero-copy needs hugepages and root to set them up: skipped"
		return 1
	fi
	local have
	have=$(cat /proc/sys/vm/nr_hugepages)
	if [ "$have" -lt 512 ]; then
		huge_prev=$have
		echo 1024 >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	fi
	if [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -lt 256 ]; then
		log "zero-copy: could not reserve hugepages"
		return 1
	fi
	mkdir -p "$tmp/huge"
	mount -t hugetlbfs -o pagesize=2M nodev "$tmp/huge" 2>/dev/null || {
		log "zero-copy: cannot mount hugetlbfs"; return 1; }
	huge_mounted=$tmp/huge
	eal_zc=(--no-pci --no-shconf --socket-mem 512 --single-file-segments
		--huge-dir "$tmp/huge" "${quiet[@]}")
	log "zero-copy: verifying with short amrma-perf and testpmd runs"
	# the check's numbers are not results
	local keep=$results ok=1
	results=$tmp/zc-check.jsonl
	perf_pair zero-copy serve --mode am-lat --sizes 8,1400 --iters 200 --warmup 20 \
		--repeat 1 >/dev/null || ok=0
	[ $ok -eq 1 ] && { testpmd_rate zero-copy 64 raw_pps 64 2 >/dev/null || ok=0; }
	results=$keep
	if [ $ok -eq 0 ]; then
		log "zero-copy: the check failed, falling back to copy mode"
		eal_zc=()
		return 1
	fi
	log "zero-copy: works (amrma-perf and testpmd passed traffic)"
	return 0
}

# ---- suites: a function suite_NAME each ----

# AM latency and rate, and the same link without amrma: raw echo and testpmd packet rate.
am_compare() {	# mode
	local mode=$1 r one=(--repeat 1)
	# AM and raw echo runs alternate within one process pair, seconds apart, so both see
	# the same machine: a slow spell of a shared host slows both alike instead of skewing
	# the ratio. Each round is a fresh pair of processes; the reported value is the median
	# over the rounds.
	collect=$tmp/rounds-$mode.jsonl
	: >"$collect"
	for r in $(seq "$rounds"); do
		# am-lat --with-raw: after each AM run the server echoes raw frames of the same
		# length for the raw run, then goes back to AM (same processes, same link)
		log "am ($mode): round $r/$rounds: AM and raw echo round trips (sizes $sizes)," \
			"AM rate (64 B, window $rate_window), the same rate with coalescing off"
		perf_pair "$mode" serve --mode am-lat --with-raw --sizes $sizes "${lat_opts[@]}" \
			"${one[@]}" &&
		perf_pair "$mode" serve --mode am-rate --size 64 --window "$rate_window" \
			"${rate_opts[@]}" "${one[@]}" &&
		perf_pair "$mode" serve --coalesce 0 -- --mode am-rate --coalesce 0 --size 64 \
			--window "$rate_window" "${rate_opts[@]}" "${one[@]}" ||
			{ collect=""; return 1; }
		# the same with UDP checksums, which csum = auto leaves off on memif (it cannot
		# corrupt frames): what they cost on a link that needs them
		log "am ($mode): round $r/$rounds: the same with --csum on (names *_csum)"
		perf_pair "$mode" serve --csum on -- --mode am-lat --csum on --sizes 8,64,1400 \
			"${lat_opts[@]}" "${one[@]}" &&
		perf_pair "$mode" serve --csum on -- --mode am-rate --csum on --size 64 \
			--window "$rate_window" "${rate_opts[@]}" "${one[@]}" ||
			{ collect=""; return 1; }
		# the raw packet rate in every round too: the VM's speed drifts by 2-3x over
		# minutes, so the rate ratio is taken per round, like the latency ratio
		log "am ($mode): round $r/$rounds: testpmd txonly -> rxonly, 64 B frames," \
			"${round_pmd_secs} s"
		testpmd_rate "$mode" 64 raw_pps 64 "$round_pmd_secs" || { collect=""; return 1; }
	done
	collect=""
	python3 scripts/bench/results.py merge "$tmp/rounds-$mode.jsonl" | emit
	log "am ($mode): testpmd txonly -> rxonly, 146 B frames (an AM request of 64 B)"
	testpmd_rate "$mode" 146 raw_pps_am_frame 64 || return 1
	python3 scripts/bench/results.py ratios "$results" --mode "$mode" | emit
}

suite_am() {
	local modes=()
	case $memif in
	copy) modes=(copy) ;;
	zero-copy) zc_setup || { log "zero-copy requested but not available"; return 1; }
		modes=(zero-copy) ;;
	auto) modes=(copy); zc_setup && modes+=(zero-copy) ;;
	both) modes=(copy); zc_setup || { log "zero-copy requested but not available"; return 1; }
		modes+=(zero-copy) ;;
	esac
	local m
	for m in "${modes[@]}"; do
		am_compare "$m" || return 1
	done
}

# RMA put/get latency (beside the AM round trip of the same processes) and bandwidth, and
# the raw goodput of the same link at the same frame size (testpmd txonly -> rxonly).
rma_compare() {	# mode
	local mode=$1 csum
	for csum in auto on; do
		log "rma ($mode, checksums $csum): put/get latency 8 B - 4 KiB"
		perf_pair "$mode" serve --csum "$csum" -- --mode rma-lat --csum "$csum" \
			--sizes 8,64,256,1024,4096 --iters "$rma_iters" --repeat "$rounds" || return 1
	done
	# bandwidth in rounds, each followed by the raw goodput (testpmd, 1514-byte frames):
	# the VM's speed moves testpmd by 3-5x within minutes, so each round's RMA numbers
	# are compared with the raw run next to them (median of per-round ratios)
	local r
	collect=$tmp/rma-rounds-$mode.jsonl
	: >"$collect"
	for r in $(seq "$rounds"); do
		for csum in auto on; do
			log "rma ($mode): round $r/$rounds: put/get bandwidth $rma_bw_sizes," \
				"checksums $csum"
			# the headline run also times memcpy of the same bytes (memcpy_bw)
			perf_pair "$mode" serve --csum "$csum" -- --mode rma-bw --csum "$csum" \
				--sizes "$rma_bw_sizes" --repeat 1 \
				$([ "$csum" = auto ] && echo --memcpy) ||
				{ collect=""; return 1; }
		done
		log "rma ($mode): round $r/$rounds: raw memif goodput, testpmd, 1514-byte frames"
		testpmd_rate "$mode" 1514 raw_pps_1514 1472 "$round_pmd_secs" ||
			{ collect=""; return 1; }
		log "rma ($mode): round $r/$rounds: raw goodput placed into a region (raw-place)"
		place_rate "$mode" "$round_pmd_secs" || { collect=""; return 1; }
	done
	collect=""
	python3 scripts/bench/results.py merge "$tmp/rma-rounds-$mode.jsonl" | emit
	python3 scripts/bench/results.py rma-ratios "$results" --mode "$mode" | emit
}

suite_rma() {
	local modes=(copy) m
	case $memif in
	zero-copy) zc_setup || return 1; modes=(zero-copy) ;;
	auto|both) zc_setup && modes+=(zero-copy) ;;
	esac
	for m in "${modes[@]}"; do
		rma_compare "$m" || return 1
	done
}

suite_dgsp() {
	local bin=$build_dir/app/dgsp-bench/amrma-dgsp-bench
	if [ ! -x "$bin" ]; then
		log "dgsp: $bin not built, skipped"
		return 0
	fi
	log "dgsp: $bin"
	local args=()
	[ $quick -eq 1 ] && args=(--quick)
	"$bin" "${args[@]+"${args[@]}"}" >"$tmp/dgsp.out" 2>"$tmp/dgsp.err" ||
		{ log "dgsp bench failed:"; tail -20 "$tmp/dgsp.err" >&2; return 1; }
	emit "$tmp/dgsp.out"
	# the same gathers and scatters on 1 MiB, which stays in the caches (a packet
	# path's working set): the 32 MiB run above is bound by DRAM, where over-fetch
	# around short unaligned blocks costs what the machine does not show in cache.
	# Names get the suffix _1mib.
	log "dgsp: gather/scatter of 1 MiB (cache-resident)"
	local l
	: >"$tmp/dgsp-1mib.out"
	for l in strided indexed struct_vector; do
		"$bin" "${args[@]+"${args[@]}"}" --bytes 1048576 --layout "$l" \
			>>"$tmp/dgsp-1mib.out" 2>"$tmp/dgsp.err" ||
			{ log "dgsp bench failed:"; tail -20 "$tmp/dgsp.err" >&2; return 1; }
	done
	sed -E 's/"name":"([a-z_0-9]+)"/"name":"\1_1mib"/' "$tmp/dgsp-1mib.out" >"$tmp/dgsp-1mib.jsonl"
	emit "$tmp/dgsp-1mib.jsonl"
}

# Striped SEND against a plain get: two lcores, one per CPU, two nodes of two contexts in
# one process on crossed net_ring ports (amrma-stripe-bench).
suite_stripe() {
	local bin=$build_dir/app/stripe-bench/amrma-stripe-bench
	if [ "$(nproc)" -lt 2 ]; then
		log "stripe: needs two CPUs, skipped"
		return 0
	fi
	log "stripe: $bin (lcores on CPUs 0 and 1)"
	local args=()
	[ $quick -eq 1 ] && args=(--quick)
	"$bin" -l 0,1 "${eal_copy[@]}" -- "${args[@]+"${args[@]}"}" >"$tmp/stripe.out" \
		2>"$tmp/stripe.err" ||
		{ log "stripe bench failed:"; tail -20 "$tmp/stripe.err" >&2; return 1; }
	emit "$tmp/stripe.out"
}

status=0
for s in "${suites[@]}"; do
	log "== suite $s ($(date -u +%H:%M:%SZ), load $(cut -d' ' -f1-3 /proc/loadavg))"
	"suite_$s" || { log "suite $s FAILED"; status=1; }
done

if [ -n "$plot_dir" ]; then
	mkdir -p "$plot_dir"
	python3 scripts/bench/results.py plot "$results" "$plot_dir" >&2 || status=1
	cp "$results" "$plot_dir/results.jsonl"
fi
exit $status
