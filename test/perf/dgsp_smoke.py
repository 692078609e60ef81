#!/usr/bin/env python3
"""dgsp-bench-smoke: amrma-dgsp-bench runs end to end on small buffers (--quick, 1 MiB) and
prints JSON lines that parse, with every result the dgsp suite reports, each value finite
and positive, one gather/scatter ratio per layout and chunk size. The numbers are not
judged. Usage: dgsp_smoke.py AMRMA_DGSP_BENCH"""
import json
import math
import subprocess
import sys

out = subprocess.run([sys.argv[1], "--quick", "--bytes", "1048576"], check=True,
                     capture_output=True, text=True, timeout=120).stdout
rows = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
names = {r["name"] for r in rows}
want = {"gather_vs_memcpy", "scatter_vs_memcpy", "direct_vs_staged", "read_pattern_vs_span",
        "memcpy_gbps", "gather_gbps", "scatter_gbps", "crossover_bytes"}
missing = want - names
assert not missing, "missing results: %s" % sorted(missing)
for r in rows:
    v = float(r["value"])
    # a crossover is 0 when direct never beats staging in the sweep
    assert math.isfinite(v) and (v > 0 or (v == 0 and r["name"].startswith("crossover"))), r
    for k in ("unit", "size", "layout"):
        assert k in r, (k, r)
for layout in ("strided", "indexed", "struct_vector"):
    for name in ("gather_vs_memcpy", "scatter_vs_memcpy"):
        sizes = sorted(r["size"] for r in rows if r["name"] == name and r["layout"] == layout)
        assert len(sizes) == len(set(sizes)) >= 5 and sizes[0] <= 8 and sizes[-1] >= 65536, \
            (layout, name, sizes)
    # the diagnostic covers the target's chunk sizes (>= 256 B) only
    rp = [r["size"] for r in rows if r["name"] == "read_pattern_vs_span" and r["layout"] == layout]
    assert rp and min(rp) >= 256, (layout, rp)
print("dgsp-bench-smoke: %d JSON lines, %d result names" % (len(rows), len(names)))
