#!/usr/bin/env python3
"""stripe-bench-smoke: amrma-stripe-bench runs end to end (--quick: 64 KiB to 1 MiB, three
paired runs) and prints JSON lines that parse, with every result, each value finite and
positive, for every size. It exits non-zero itself when a transfer's bytes differ from the
source. The numbers are not judged. Skipped (77) with fewer than two CPUs: its two lcores
busy-poll. Usage: stripe_smoke.py AMRMA_STRIPE_BENCH"""
import json
import math
import os
import subprocess
import sys

if len(os.sched_getaffinity(0)) < 2:
    print("stripe-bench-smoke: needs two CPUs")
    sys.exit(77)
eal = ["-l", "0,1", "--no-huge", "--no-pci", "--no-shconf", "-m", "256",
       "--log-level", "lib.eal:error"]
out = subprocess.run([sys.argv[1]] + eal + ["--", "--quick"], check=True,
                     capture_output=True, text=True, timeout=120).stdout
rows = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
want = {"get_us", "stripe_us", "stripe1_us", "stripe_vs_get", "stripe1_vs_get"}
sizes = {65536, 262144, 1048576}
for name in want:
    got = sorted(r["size"] for r in rows if r["name"] == name)
    assert set(got) == sizes and len(got) == len(sizes), (name, got)
for r in rows:
    assert r["name"] in want, r
    v = float(r["value"])
    assert math.isfinite(v) and v > 0, r
    assert r["unit"] in ("us", "ratio"), r
print("stripe-bench-smoke: %d JSON lines" % len(rows))
