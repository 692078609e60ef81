#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Helpers for the testpmd scripts: read a dataplane's counters through DPDK telemetry,
parse testpmd's forward statistics and compare what a replay did with a pcapgen manifest.

  amrma_check.py stats PREFIX [CMD]        print the reply of CMD (default /amrma/stats)
  amrma_check.py wait PREFIX KEY VALUE S   wait up to S seconds until KEY >= VALUE
  amrma_check.py wait-replay PREFIX BEFORE MANIFEST S
                                           wait until rx_frames grew by the manifest's frames
  amrma_check.py wait-link PREFIX PORT S   wait until ethdev PORT of that process is up
  amrma_check.py replay MANIFEST BEFORE AFTER TESTPMD_LOG
                                           check the counter deltas against the manifest
  amrma_check.py fwd TESTPMD_LOG           print testpmd's per-port forward statistics

stats/wait use dpdk-telemetry.py (the -f argument is the EAL --file-prefix).
"""
import json
import re
import subprocess
import sys
import time

TELEMETRY = "dpdk-telemetry.py"


def telemetry(prefix, cmd="/amrma/stats"):
    """One telemetry command; returns the reply's value (a dict) or raises."""
    out = subprocess.run([TELEMETRY, "-f", prefix], input=cmd + "\n", capture_output=True,
                         text=True, timeout=10)
    for line in out.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            reply = json.loads(line)
            key = cmd.split(",")[0]	# the reply is keyed without the parameter
            if key in reply:
                return reply[key]
    raise RuntimeError(f"telemetry {prefix} {cmd}: no reply (rc {out.returncode}): "
                       f"{out.stdout.strip()} {out.stderr.strip()}")


def fwd_stats(path):
    """testpmd 'Forward statistics for port N' blocks: {port: {RX-packets: n, ...}}."""
    ports = {}
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            m = re.search(r"Forward statistics for port (\d+)", line)
            if m:
                cur = ports.setdefault(int(m.group(1)), {})
                continue
            if cur is not None:
                pairs = re.findall(r"([A-Za-z-]+):\s+(\d+)", line)
                if not pairs:
                    if "-----" in line and cur:
                        cur = None
                    continue
                for k, v in pairs:
                    cur[k] = int(v)
    return ports


def check_replay(manifest_path, before_path, after_path, testpmd_log):
    with open(manifest_path) as f:
        man = json.load(f)
    with open(before_path) as f:
        before = json.load(f)
    with open(after_path) as f:
        after = json.load(f)
    delta = {k: after[k] - before.get(k, 0) for k in after}
    fails = []
    ok = 0

    def expect(name, got, want):
        nonlocal ok
        if got == want:
            ok += 1
        else:
            fails.append(f"{name}: {got}, expected {want}")

    total = man["totals"]["frames"]
    good = man["good"]
    # testpmd: every frame of the file left the pcap port and entered the memif port
    fwd = fwd_stats(testpmd_log)
    expect("testpmd port 0 RX-packets (pcap)", fwd.get(0, {}).get("RX-packets"), total)
    expect("testpmd port 1 TX-packets (memif)", fwd.get(1, {}).get("TX-packets"), total)
    expect("testpmd port 1 TX-dropped (memif)", fwd.get(1, {}).get("TX-dropped"), 0)
    # and the target's answers went back out through testpmd to the pcap port (tx_pcap):
    # at least one REPLY per request handled (plus acks and retransmissions)
    handled = good["request_short"] + good["request_medium"]
    back = fwd.get(0, {}).get("TX-packets", 0)
    expect(f"testpmd port 0 TX-packets (pcap) >= {handled}", back >= handled, True)
    # the dataplane: every frame seen, each rejection under its reason, each request
    # handled once, each replayed REPLY refused (no operation of ours waits for it)
    expect("rx_frames", delta["rx_frames"], total)
    for reason, n in man["bad"].items():
        expect(f"rx_rejected_{reason}", delta[f"rx_rejected_{reason}"], n)
    extra = [k for k in delta if k.startswith("rx_rejected_") and
             k[len("rx_rejected_"):] not in man["bad"] and delta[k] != 0]
    for k in extra:
        fails.append(f"{k}: {delta[k]}, expected 0 (reason not in the manifest)")
    expect("requests_handled", delta["requests_handled"], handled)
    expect("bad_token (replayed REPLYs)", delta["bad_token"], good["reply"])
    for k in ("unknown_peer", "unknown_handler", "duplicates", "out_of_window",
              "no_reply_room", "stale_epoch", "redirect_drops", "rule_violations"):
        expect(k, delta[k], 0)
    accepted = total - sum(man["bad"].values())
    print(f"  {man['kind']}: {total} frames replayed, {accepted} accepted, "
          f"{delta['requests_handled']} handlers run, "
          f"{sum(man['bad'].values())} rejected under "
          f"{sum(1 for n in man['bad'].values() if n)} reasons; {ok} checks passed")
    for fmsg in fails:
        print(f"  FAIL {fmsg}")
    return 1 if fails else 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "stats":
        print(json.dumps(telemetry(argv[2], argv[3] if len(argv) > 3 else "/amrma/stats")))
        return 0
    if len(argv) == 6 and argv[1] in ("wait", "wait-replay"):
        if argv[1] == "wait":
            prefix, key, want = argv[2], argv[3], int(argv[4])
        else:
            with open(argv[3]) as f:
                before = json.load(f)
            with open(argv[4]) as f:
                man = json.load(f)
            prefix, key = argv[2], "rx_frames"
            want = before["rx_frames"] + man["totals"]["frames"]
        end = time.time() + float(argv[5])
        got = None
        while time.time() < end:
            got = telemetry(prefix).get(key, 0)
            if got >= want:
                return 0
            time.sleep(0.1)
        print(f"timeout: {key} = {got}, waited for {want}", file=sys.stderr)
        return 1
    if len(argv) == 5 and argv[1] == "wait-link":
        end = time.time() + float(argv[4])
        status = None
        while time.time() < end:
            try:
                status = telemetry(argv[2], f"/ethdev/link_status,{argv[3]}").get("status")
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as e:
                status = str(e)	# the process may not listen yet
            if status == "UP":
                return 0
            time.sleep(0.1)
        print(f"timeout: {argv[2]} port {argv[3]} link: {status}", file=sys.stderr)
        return 1
    if len(argv) == 6 and argv[1] == "replay":
        return check_replay(*argv[2:6])
    if len(argv) == 3 and argv[1] == "fwd":
        print(json.dumps(fwd_stats(argv[2])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
