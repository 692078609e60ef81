#!/usr/bin/env python3
"""Helpers of scripts/bench.sh: parse testpmd, derive the ratios, plot, check JSON lines.

  results.py testpmd LOG --name N --size S --frame F --mode M   one JSON line from Rx-pps
  results.py ratios RESULTS --mode M                            ratio JSON lines
  results.py plot RESULTS DIR                                   latency.png, rate.png
  results.py merge ROUNDS                                       one line per result
  results.py check RESULTS [--expect NAME...]                   exit 1 on a bad line
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys

# Targets of issue 2 (benchmarks, not tests): AM round trip within 1.5x of the raw echo,
# small-AM rate at least 40 % of the raw packet rate.
RTT_TARGET = 1.5
RATE_TARGET = 0.4
# issue 3: put/get bandwidth at 1 MiB and above at least 80 % of raw memif goodput for the
# same frame size; 8-byte put latency within 1.5x of the AM round trip.
BW_TARGET = 0.8
LAT_TARGET = 1.5


def load(path):
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                out.append(json.loads(line))
    return out


def find(res, name, size, mode):
    for r in res:
        if r.get("name") == name and r.get("size") == size and r.get("mode") == mode:
            return r
    return None


def line(obj):
    print(json.dumps(obj, separators=(",", ":")))


def cmd_testpmd(a):
    text = open(a.log, errors="replace").read()
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    samples = [int(x) for x in re.findall(r"Rx-pps:\s+(\d+)", text)]
    samples = [x for x in samples if x > 0]
    # the first non-zero sample covers the connection coming up: drop it when we can
    if len(samples) > 2:
        samples = samples[1:]
    if not samples:
        print("no Rx-pps samples in %s" % a.log, file=sys.stderr)
        return 1
    line({"name": a.name, "value": round(statistics.median(samples)), "unit": "pps",
          "size": a.size, "frame": a.frame, "mode": a.mode, "repeat": len(samples),
          "stat": "median of 1 s samples", "runs": samples, "tool": "dpdk-testpmd"})
    return 0


def ratio(num, den, digits, scale=1.0):
    """num / den as value, repeat, stat (and runs): the median of per-round ratios when
    both have one run per round (round i of each ran seconds apart, so a slow spell of the
    machine cancels out), else the ratio of the medians."""
    n_runs, d_runs = num.get("runs", []), den.get("runs", [])
    if len(n_runs) == len(d_runs) > 1 and all(y > 0 for y in d_runs):
        runs = [round(x / (y * scale), digits) for x, y in zip(n_runs, d_runs)]
        return {"value": round(statistics.median(runs), digits), "repeat": len(runs),
                "stat": "median of per-round ratios", "runs": runs}
    return {"value": round(num["value"] / (den["value"] * scale), digits),
            "repeat": num.get("repeat"), "stat": "ratio of medians"}


# A round whose raw yardstick is this many times worse than the run's best ran while the
# VM had slowed the link between its vCPUs (docs/bench.md, session 27): such rounds
# understate the AM round-trip ratio and void the rate ratio.
SLOWED_FACTOR = 2.0


def slowed_rounds(den_runs, lower_is_better):
    """1-based rounds whose yardstick is SLOWED_FACTOR times worse than the best round."""
    if len(den_runs) < 2 or not all(y > 0 for y in den_runs):
        return []
    if lower_is_better:
        best = min(den_runs)
        return [i + 1 for i, y in enumerate(den_runs) if y > SLOWED_FACTOR * best]
    best = max(den_runs)
    return [i + 1 for i, y in enumerate(den_runs) if y * SLOWED_FACTOR < best]


def judge(obj, den, limit, lower_is_better, fmt="%.1f"):
    """Set target and met on a ratio object against den, its per-round yardstick: met only
    if the median of all rounds and the median of the rounds the VM did not slow (when it
    slowed some) both meet the limit. A lower ratio is better where den is a time."""
    def within(v):
        return v <= limit if lower_is_better else v >= limit

    obj["target"] = ("<= " if lower_is_better else ">= ") + fmt % limit
    met = within(obj["value"])
    slow = slowed_rounds(den.get("runs", []), lower_is_better)
    runs = obj.get("runs", [])
    if slow and len(runs) == len(den.get("runs", [])):
        kept = [x for i, x in enumerate(runs) if i + 1 not in slow]
        obj["slowed_rounds"] = slow
        # the best round is never slowed: kept is not empty
        v = round(statistics.median(kept), 4)
        obj["value_unslowed"] = v
        met = met and within(v)
    obj["met"] = met


def cmd_ratios(a):
    res = load(a.results)
    m = a.mode
    raw = find(res, "raw_echo_rtt_median", 8, m)
    # other work on the machine moves these numbers more than anything amrma does
    with open("/proc/loadavg") as f:
        load1 = float(f.read().split()[0])
    # the headline ratios first (csum = auto: none on memif), then the same with UDP
    # checksums (suffix _csum)
    for sfx in ("", "_csum"):
        am = find(res, "am_rtt_median" + sfx, 8, m)
        if am and raw and raw["value"] > 0:
            obj = {"name": "am_rtt%s_vs_raw_echo" % sfx, "unit": "x", "size": 8, "mode": m}
            obj.update(ratio(am, raw, 3))
            judge(obj, raw, RTT_TARGET, True)
            obj["load1"] = load1
            line(obj)
        rate = find(res, "am_rate" + sfx, 64, m)
        for pps_name, name in (("raw_pps", "am_rate%s_vs_raw_pps" % sfx),
                               ("raw_pps_am_frame", "am_rate%s_vs_raw_pps_am_frame" % sfx)):
            pps = find(res, pps_name, 64, m)
            if rate and pps and pps["value"] > 0:
                obj = {"name": name, "unit": "x", "size": 64, "mode": m,
                       "frame": pps.get("frame"), "load1": load1}
                obj.update(ratio(rate, pps, 4))
                if pps_name == "raw_pps":
                    judge(obj, pps, RATE_TARGET, False, "%.2f")
                line(obj)
    # one message per frame (coalescing off), against the raw rate and against coalescing
    rate = find(res, "am_rate", 64, m)
    single = find(res, "am_rate_nocoalesce", 64, m)
    pps = find(res, "raw_pps", 64, m)
    if single and pps and pps["value"] > 0:
        obj = {"name": "am_rate_nocoalesce_vs_raw_pps", "unit": "x", "size": 64, "mode": m,
               "frame": pps.get("frame"), "load1": load1}
        obj.update(ratio(single, pps, 4))
        line(obj)
    if single and rate and single["value"] > 0:
        obj = {"name": "am_rate_vs_nocoalesce", "unit": "x", "size": 64, "mode": m,
               "load1": load1}
        obj.update(ratio(rate, single, 3))
        line(obj)
    return 0


def cmd_rma_ratios(a):
    res = load(a.results)
    m = a.mode
    with open("/proc/loadavg") as f:
        load1 = float(f.read().split()[0])
    # raw goodput: UDP payload bytes per second of full-size frames over the same link
    pps = find(res, "raw_pps_1514", 1472, m)
    goodput = pps["value"] * 1472 / 1e6 if pps and pps["value"] > 0 else 0
    if goodput:
        line({"name": "raw_goodput", "value": round(goodput, 1), "unit": "MB/s", "size": 1472,
              "frame": 1514, "mode": m, "repeat": pps.get("repeat"),
              "stat": "raw_pps_1514 x 1472 B UDP payload"})
    # the ceilings of any put over this link, each measured in every round:
    # raw_place_pps: the same generator's frames, each payload copied into a region
    # (the link's copies and the one placement copy, no protocol); memcpy_bw: the same
    # bytes moved by memcpy in the same buffers (memory alone, no link)
    place = find(res, "raw_place_pps", 1472, m)
    if goodput and place and place["value"] > 0:
        line({"name": "raw_place_goodput", "value": round(place["value"] * 1472 / 1e6, 1),
              "unit": "MB/s", "size": 1472, "frame": 1514, "mode": m,
              "repeat": place.get("repeat"), "stat": "raw_place_pps x 1472 B UDP payload"})
        obj = {"name": "raw_place_vs_raw", "unit": "x", "size": 1472, "mode": m,
               "load1": load1}
        obj.update(ratio(place, pps, 3))
        line(obj)
    for sz in sorted({r["size"] for r in res if r.get("name") == "memcpy_bw" and
                      r.get("mode") == m}) if goodput else []:
        mc = find(res, "memcpy_bw", sz, m)
        obj = {"name": "memcpy_vs_raw", "unit": "x", "size": sz, "mode": m, "load1": load1}
        obj.update(ratio(mc, pps, 3, 1472 / 1e6))
        line(obj)
        if place and sz >= 65536:
            # a put can beat neither: the lower of the two, round by round
            a = ratio(mc, pps, 3, 1472 / 1e6)
            b = ratio(place, pps, 3)
            ra, rb = a.get("runs", [a["value"]]), b.get("runs", [b["value"]])
            runs = [min(x, y) for x, y in zip(ra, rb)] if len(ra) == len(rb) else \
                [min(a["value"], b["value"])]
            obj = {"name": "bw_ceiling_vs_raw", "unit": "x", "size": sz, "mode": m,
                   "value": round(statistics.median(runs), 3), "repeat": len(runs),
                   "stat": "median of per-round min(memcpy_vs_raw, raw_place_vs_raw)",
                   "runs": runs, "load1": load1}
            if sz >= (1 << 20):
                obj["below_target"] = obj["value"] < BW_TARGET
            line(obj)
    # headline with csum = auto (none: memif cannot corrupt frames), then with checksums
    for sfx in ("", "_csum"):
        sizes = sorted({r["size"] for r in res
                        if r.get("name") == "rma_put_bw" + sfx and r.get("mode") == m})
        for sz in sizes if goodput else []:
            if sz < 65536:
                continue
            for op in ("put", "get"):
                bw = find(res, "rma_%s_bw%s" % (op, sfx), sz, m)
                if bw:
                    # round i's bandwidth against round i's raw goodput (pps x 1472 B)
                    obj = {"name": "%s_bw%s_vs_raw" % (op, sfx), "unit": "x", "size": sz,
                           "mode": m, "load1": load1}
                    obj.update(ratio(bw, pps, 3, 1472 / 1e6))
                    if sz >= (1 << 20):
                        judge(obj, pps, BW_TARGET, False)
                    line(obj)
                    if place and place["value"] > 0:
                        # the share of the ceiling the protocol leaves
                        obj = {"name": "%s_bw%s_vs_raw_place" % (op, sfx), "unit": "x",
                               "size": sz, "mode": m, "load1": load1}
                        obj.update(ratio(bw, place, 3, 1472 / 1e6))
                        line(obj)
        for op in ("put", "get"):
            lat = find(res, "rma_%s_lat%s" % (op, sfx), 8, m)
            am = find(res, "rma_am_rtt" + sfx, 8, m)
            if lat and am and am["value"] > 0:
                # both in the same processes: slowed or not together, nothing to set
                # aside
                obj = {"name": "%s_lat%s_vs_am_rtt" % (op, sfx),
                       "value": round(lat["value"] / am["value"], 3), "unit": "x", "size": 8,
                       "mode": m, "repeat": lat.get("repeat"),
                       "stat": "ratio of medians (same processes)"}
                judge(obj, am, LAT_TARGET, True)
                obj["load1"] = load1
                line(obj)
    return 0


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def series_plots(res, outdir, mode, series):
    """A gnuplot clause per (name, title, style) series with results in this memif mode,
    each reading a .dat file of (size, value) written here."""
    plots = []
    for name, title, style in series:
        pts = sorted((r["size"], r["value"]) for r in res
                     if r.get("name") == name and r.get("mode") == mode)
        if not pts:
            continue
        dat = os.path.join(outdir, "%s_%s.dat" % (name, mode))
        with open(dat, "w") as f:
            for size, v in pts:
                f.write("%d %g\n" % (size, v))
        plots.append("'%s' using 1:2 with linespoints %s title '%s'" % (dat, style, title))
    return plots


def multiplot(png, title, settings, panels):
    """One PNG, a panel per memif mode side by side; panels: (mode, plot clauses)."""
    body = "".join("set title 'memif %s mode'\nplot %s\n" % (m, ", \\\n     ".join(p))
                   for m, p in panels if p)
    n = sum(1 for _, p in panels if p)
    if n == 0:
        return
    gnuplot("""set terminal pngcairo noenhanced size %d,620 font 'DejaVu Sans,11'
set output '%s'
set multiplot layout 1,%d title '%s'
%s
set grid
set key left top
%sunset multiplot
""" % (200 + 600 * n, png, n, title, settings, body))
    print("plot: %s" % png, file=sys.stderr)


def plot_bandwidth(res, outdir):
    """RMA put/get bandwidth vs size beside the raw link's goodput, one panel per mode."""
    series = [("rma_put_bw", "RMA put", "lw 2 lc rgb '#8e24aa' pt 7"),
              ("rma_get_bw", "RMA get", "lw 2 lc rgb '#1565c0' pt 5"),
              ("rma_put_bw_csum", "RMA put, UDP csum", "lw 1 dt 2 lc rgb '#8e24aa' pt 6"),
              ("rma_get_bw_csum", "RMA get, UDP csum", "lw 1 dt 2 lc rgb '#1565c0' pt 4")]
    panels = []
    for m in sorted({r["mode"] for r in res if r.get("name", "").startswith("rma_")}):
        plots = series_plots(res, outdir, m, series)
        pps = find(res, "raw_pps_1514", 1472, m)
        if pps:
            plots.append("%g with lines lw 2 lc rgb '#2e7d32' title 'raw memif goodput "
                         "(testpmd, 1514 B frames)'" % (pps["value"] * 1472 / 1e6))
        panels.append((m, plots))
    multiplot(os.path.join(outdir, "bandwidth.png"),
              "RMA bandwidth over net_memif beside the raw link (medians)",
              "set xlabel 'operation size [bytes]'\nset ylabel 'MB/s'\nset logscale x 2\n"
              "set format x '%.0b%B'\nset logscale y", panels)


def cmd_plot(a):
    res = load(a.results)
    os.makedirs(a.dir, exist_ok=True)
    plot_bandwidth(res, a.dir)
    modes = sorted({r["mode"] for r in res if r.get("name", "").startswith(("am_", "raw_"))})
    if not modes:
        print("plot: no am suite results, nothing more to plot", file=sys.stderr)
        return 0
    # latency vs size: one panel per memif mode, same colours in each
    series = [("am_rtt_median", "amrma AM median", "lw 2 lc rgb '#8e24aa' pt 7"),
              ("am_rtt_p99", "amrma AM p99", "lw 1 dt 2 lc rgb '#8e24aa' pt 6"),
              ("am_rtt_median_csum", "amrma AM median, UDP csum",
               "lw 2 lc rgb '#ef6c00' pt 9"),
              ("raw_echo_rtt_median", "raw echo median", "lw 2 lc rgb '#2e7d32' pt 5"),
              ("raw_echo_rtt_p99", "raw echo p99", "lw 1 dt 2 lc rgb '#2e7d32' pt 4")]
    multiplot(os.path.join(a.dir, "latency.png"),
              "Round trip over net_memif: amrma AM echo vs raw frame echo (median over rounds)",
              "set xlabel 'payload bytes (the raw frame is as long as the AM request)'\n"
              "set ylabel 'round trip [us]'\nset logscale x 2\nset xrange [6:2048]\n"
              "set yrange [0:*]\nset offsets 0, 0, graph 0.25, 0",
              [(m, series_plots(res, a.dir, m, series)) for m in modes])
    # rates: bars in millions per second, one cluster per mode
    bars = [("am_rate", "amrma AM req/reply pairs, 64 B"),
            ("am_rate_csum", "the same with UDP csum"),
            ("am_rate_nocoalesce", "the same, one message per frame"),
            ("raw_pps", "testpmd pkts, 64 B frames"),
            ("raw_pps_am_frame", "testpmd pkts, 146 B frames")]
    # a column with no value at all crashes gnuplot 5.4's histogram labels: leave it out
    bars = [b for b in bars if any(find(res, b[0], 64, m) for m in modes)]
    dat = os.path.join(a.dir, "rate.dat")
    rows = 0
    with open(dat, "w") as f:
        for m in modes:
            vals = []
            for name, _ in bars:
                r = find(res, name, 64, m)
                vals.append("%.4f" % (r["value"] / 1e6) if r else "NaN")
            f.write("%s %s\n" % (m, " ".join(vals)))
            rows += 1
    if rows:
        png = os.path.join(a.dir, "rate.png")
        cols = ", \\\n     ".join(
            "'%s' using %d:xtic(1) title '%s', '' using ($0+%.2f):%d:(sprintf('%%.2f', $%d)) "
            "with labels offset 0,0.7 notitle"
            % (dat, i + 2, t, (i - (len(bars) - 1) / 2) / (len(bars) + 1), i + 2, i + 2) for i, (_, t) in enumerate(bars))
        gnuplot("""set terminal pngcairo noenhanced size 1000,620 font 'DejaVu Sans,11'
set output '%s'
set title 'Message and packet rates over net_memif (medians; log scale)'
set ylabel 'millions per second'
set logscale y
set yrange [0.05:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set offsets 0, 0, graph 0.1, 0
set grid y
set key below
set xrange [-0.6:%g]
plot %s
""" % (png, rows - 0.4, cols))
        print("plot: %s" % png, file=sys.stderr)
    return 0


# extras summed over the rounds; every other numeric extra is the median of the rounds
SUMMED = ("errors", "lost", "retransmits")


def cmd_merge(a):
    groups = {}
    for r in load(a.rounds):
        groups.setdefault((r["name"], r.get("size"), r["mode"]), []).append(r)
    for rows in groups.values():
        out = dict(rows[0])
        vals = [r["value"] for r in rows]
        out["value"] = statistics.median(vals)
        out["runs"] = vals
        out["repeat"] = len(vals)
        if out.get("tool") == "dpdk-testpmd":
            out["stat"] = "median of %d rounds (each the median of its 1 s samples), " \
                          "interleaved with the amrma runs" % len(vals)
            out.pop("samples", None)
        else:
            out["stat"] = "median of %d rounds (one process pair each, interleaved with " \
                          "the raw echo)" % len(vals)
        for k, v in rows[0].items():
            if k in ("value", "size", "repeat", "runs") or isinstance(v, bool) or \
                    not isinstance(v, (int, float)):
                continue
            xs = [r[k] for r in rows if isinstance(r.get(k), (int, float))]
            out[k] = sum(xs) if k in SUMMED else statistics.median(xs)
        line(out)
    return 0


def cmd_check(a):
    bad = 0
    names = set()
    with open(a.results) as f:
        lines = [x.strip() for x in f if x.strip()]
    for x in lines:
        try:
            r = json.loads(x)
            for k in ("name", "value", "unit", "mode", "repeat"):
                if k not in r:
                    raise ValueError("missing %s" % k)
            v = float(r["value"])
            if not math.isfinite(v) or v <= 0:
                raise ValueError("value %r not positive" % r["value"])
            names.add(r["name"])
        except (ValueError, TypeError) as e:
            print("bad line: %s: %s" % (x, e), file=sys.stderr)
            bad += 1
    missing = [n for n in a.expect if n not in names]
    if missing:
        print("missing results: %s" % ", ".join(missing), file=sys.stderr)
    ok = bad == 0 and not missing and lines
    print("%d JSON lines, %d bad, %d expected names missing" % (len(lines), bad, len(missing)))
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("testpmd")
    t.add_argument("log")
    t.add_argument("--name", required=True)
    t.add_argument("--size", type=int, required=True)
    t.add_argument("--frame", type=int, required=True)
    t.add_argument("--mode", required=True)
    r = sub.add_parser("ratios")
    r.add_argument("results")
    r.add_argument("--mode", required=True)
    g = sub.add_parser("plot")
    g.add_argument("results")
    g.add_argument("dir")
    m = sub.add_parser("merge")
    m.add_argument("rounds")
    q = sub.add_parser("rma-ratios")
    q.add_argument("results")
    q.add_argument("--mode", required=True)
    c = sub.add_parser("check")
    c.add_argument("results")
    c.add_argument("--expect", nargs="*", default=[])
    a = p.parse_args()
    return {"testpmd": cmd_testpmd, "ratios": cmd_ratios, "plot": cmd_plot,
            "merge": cmd_merge, "check": cmd_check, "rma-ratios": cmd_rma_ratios}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
