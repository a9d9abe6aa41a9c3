#!/usr/bin/env python3
"""approxnet-sim vs htsim (csg-htsim `htsim_tcp`), data packet-hops per second.

Issue 19's anchor: a k = 8 fat-tree (128 hosts), a permutation of 128 TCP
flows of 2 MB each, 10 Gbps links with 1 us latency, per-port queues large
enough that nothing drops. Both simulators run in one script run,
alternating, `--repeat` times each; the figure is the median.

htsim_tcp's ACKs return to the sender without crossing the network (its
reverse route is the source itself), so only data hops are comparable: for
htsim the count of `Pipe::receivePacket` calls, for approxnet-sim the data
packets sent times the links on their path (exact when nothing drops: a
resent packet crosses its whole path too and counts, as htsim's do; the
script refuses a run with a drop or a data packet sent and not delivered).
Ours runs in two ACK models (docs/performance.md, "Issue 19: htsim like
for like in the ACK model"): `instant` (`[transport] ack_path = "instant"`: the
receiver's ACK reaches the sender at the same simulated instant, crossing
nothing: htsim_tcp's own model, so the like-for-like figure) and our
default `network` (every ACK crosses NIC, queues and links back, ~half of
all hops; the heavier model). The script checks every run's hop total
against its model (default: every data hop has an ACK hop back; instant:
no ACK hop; both: the SYN / SYN-ACK hops), and that no ACK is missing.
A binary without the option (older than it) runs the default model only,
with a message.
Wall time is the event loop only on both sides (htsim: the `doNextEvent`
loop; ours: `Simulator::run`, summary.json `wall_s`). Both sides also get
their CPU time (whole process, getrusage) so that a loaded machine shows,
and with --cachegrind their instructions and simulated cache misses per
data hop (deterministic, so comparable across loads).

htsim needs a local build with a counter and the missing options (end
time, queue size, link speed, hop latency, flow size, seed; it prints
`BENCH pair SRC DST` per connection and `BENCH events E data_hops H
loop_wall_s W` at the end): build it with benches/sim/htsim_build.py over a scratch copy of csg-htsim. The
permutation is htsim's own (its `setPermutation`); ours replays it.

Usage: python3 benches/sim/htsim_compare.py --htsim /tmp/htsim/sim/datacenter/htsim_tcp
       [--bin target/release/approxnet-sim] [--repeat 3] [--out benches/sim/results/htsim.csv]
       [--cachegrind] [--k 8] [--flow-bytes 2000000] [--end-ms 20]
(--k / --flow-bytes / --end-ms: the same comparison off the shipped point.)
"""

import argparse
import csv
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
K = 8
HOSTS = K**3 // 4
FLOW_BYTES = 2_000_000
GBPS = 10.0
HOP_US = 1.0
QUEUE_PKTS = 20000
END_MS = 20.0
MSS = 1460
HEADER = 40  # 1500-byte frames, like htsim's default data packet
INSTANT_LABEL = "same ACK model as htsim (instant ACKs)"
NETWORK = "our default model (ACKs cross the network)"


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def timed(cmd: list[str]) -> tuple[str, float]:
    """Runs cmd; returns (stdout, its user + system CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return r.stdout, cpu


def cachegrind(cmd: list[str]) -> tuple[str, int, int]:
    """Runs cmd under cachegrind (48 KiB L1d, 1 MiB last level, as
    benches/sim/hop_misses.py); returns (stdout, instructions, LL data misses)."""
    with tempfile.TemporaryDirectory() as d:
        full = [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=yes",
            "--D1=49152,12,64",
            "--LL=1048576,16,64",
            f"--cachegrind-out-file={os.path.join(d, 'cg.out')}",
            *cmd,
        ]
        r = subprocess.run(full, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(full)} failed:\n{r.stderr[-2000:]}")
    i = re.search(r"I\s+refs:\s+([\d,]+)", r.stderr)
    m = re.search(r"LLd misses:\s+([\d,]+)", r.stderr)
    assert i and m, r.stderr
    return r.stdout, int(i.group(1).replace(",", "")), int(m.group(1).replace(",", ""))


def run_htsim(binary: str, workdir: str, grind: bool = False) -> dict[str, Any]:
    cmd = [
        binary,
        "-nodes", str(HOSTS),
        "-conns", str(HOSTS),
        "-linkspeed", str(GBPS * 1000),
        "-q", str(QUEUE_PKTS),
        "-end", str(END_MS * 1000),
        "-hoplat", str(HOP_US),
        "-flowsize", str(FLOW_BYTES),
        "-seed", "1",
        "-o", os.path.join(workdir, "htsim.log"),
    ]  # fmt: skip
    if grind:
        out, instr, misses = cachegrind(cmd)
        user = 0.0
    else:
        out, user = timed(cmd)
        instr = misses = 0
    pairs = [(int(a), int(b)) for a, b in re.findall(r"BENCH pair (\d+) (\d+)", out)]
    m = re.search(r"BENCH events (\d+) data_hops (\d+) loop_wall_s ([\d.e-]+)", out)
    if m is None or len(pairs) != HOSTS:
        sys.exit(f"htsim output lacks the BENCH lines (is it the counting build?):\n{out[-2000:]}")
    finished = len(re.findall(r"^Flow .* finished", out, re.M))
    return {
        "events": int(m.group(1)),
        "data_hops": int(m.group(2)),
        "wall_s": float(m.group(3)),
        "cpu_s": user,
        "instr": instr,
        "ll_misses": misses,
        "pairs": pairs,
        "flows_finished_lines": finished,
    }


def path_links(s: int, d: int) -> int:
    """Links between hosts s and d of a full k-ary fat-tree (rack-contiguous ids)."""
    half = K // 2
    if s // half == d // half:
        return 2
    if s // (half * half) == d // (half * half):
        return 4
    return 6


def scenario(pairs: list[tuple[int, int]]) -> str:
    lines = [
        'name = "htsim-permutation"',
        "seed = 1",
        f"duration_ms = {END_MS}",
        "[topology]",
        'kind = "fat_tree"',
        f"k = {K}",
        f"host_gbps = {GBPS}",
        f"link_delay_us = {HOP_US}",
        "[switch]",
        "queues = 1",
        'buffer_preset = "complete"',
        f"buffer_kb = {QUEUE_PKTS * 1.5 * 2 * K}",
        f"queue_buffer_kb = [{QUEUE_PKTS * 1.5}]",
        "[transport]",
        f"mss = {MSS}",
        f"header_bytes = {HEADER}",
    ]
    for s, d in pairs:
        lines += [
            "[[jobs]]",
            f'name = "p{s}"',
            'pattern = "bulk"',
            f"senders = [{s}]",
            f"target = {d}",
            f'sizes = "fixed:{FLOW_BYTES}"',
            "messages = 1",
            "load = 0.0",
            'scheme = "tcp"',
        ]
    return "\n".join(lines) + "\n"


INSTANT = 'transport.ack_path="instant"'


def has_instant_acks(binary: str, workdir: str) -> bool:
    """Whether `binary` knows `[transport] ack_path` (a 1 us run of the
    scenario with two flows; an older binary refuses the unknown key)."""
    path = os.path.join(workdir, "probe.toml")
    with open(path, "w") as f:
        text = scenario([(0, 1), (1, 0)])
        f.write(text.replace(f"duration_ms = {END_MS}", "duration_ms = 0.001"))
    out = os.path.join(workdir, "probe")
    cmd = [binary, "run", path, "--out", out, "--quiet", "--set", INSTANT]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 0:
        return True
    if "ack_path" in r.stderr:
        return False
    sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")


def run_ours(
    binary: str,
    pairs: list[tuple[int, int]],
    workdir: str,
    grind: bool = False,
    instant: bool = False,
) -> dict[str, Any]:
    """One run of ours; `instant`: in htsim's ACK model (`ack_path = "instant"`)."""
    path = os.path.join(workdir, "perm.toml")
    with open(path, "w") as f:
        f.write(scenario(pairs))
    out = os.path.join(workdir, "ours")
    cmd = [binary, "run", path, "--out", out, "--quiet"]
    if instant:
        cmd += ["--set", INSTANT]
    if grind:
        _, instr, misses = cachegrind(cmd)
        user = 0.0
    else:
        _, user = timed(cmd)
        instr = misses = 0
    with open(os.path.join(out, "summary.json")) as f:
        s = json.load(f)
    with open(os.path.join(out, "flows.csv")) as f:
        flows = list(csv.DictReader(f))
    done = sum(int(r["received_bytes"]) == FLOW_BYTES for r in flows)
    if s["drops"] != 0 or done != len(pairs) or len(flows) != len(pairs):
        sys.exit(
            f"ours: {s['drops']} drops, {done} of {len(flows)} flows done: data hops not exact"
        )
    # nothing dropped: every data packet sent (resends included) crossed its whole path
    data_hops = sum(int(r["sent_pkts"]) * path_links(int(r["src"]), int(r["dst"])) for r in flows)
    sent = sum(int(r["sent_pkts"]) for r in flows)
    # the SYN and the SYN-ACK of each flow's handshake cross its path once each
    syn_hops = 2 * sum(path_links(int(r["src"]), int(r["dst"])) for r in flows)
    # one ACK per data packet delivered: back through the network by
    # default (as many hops as its data), crossing nothing when instant
    ack_hops = 0 if instant else data_hops
    acks = s.get("instant_acks")
    if (
        sent != s["delivered_data"]
        or s["hops"] != data_hops + ack_hops + syn_hops
        or (acks is not None) != instant
        or (instant and acks != s["delivered_data"])
    ):
        sys.exit(
            f"ours ({'instant' if instant else 'network'} ACKs): {sent} data packets sent, "
            f"{s['delivered_data']} delivered, {s['hops']} hops against {data_hops} data + "
            f"{ack_hops} ACK + {syn_hops} SYN hops, instant_acks {acks}: hops not as counted"
        )
    return {
        "events": s["events"],
        "hops": s["hops"],
        "data_hops": data_hops,
        "wall_s": s["wall_s"],
        "cpu_s": user,
        "instr": instr,
        "ll_misses": misses,
    }


def main() -> None:
    global K, HOSTS, FLOW_BYTES, END_MS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--htsim", required=True, help="counting build of htsim_tcp")
    ap.add_argument(
        "--bin",
        default=os.path.join(ROOT, "target", "release", "approxnet-sim"),
        help="approxnet-sim binary; several, comma-separated, run side by side (before / after)",
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None, help="CSV to append one row per run to")
    ap.add_argument(
        "--cachegrind",
        action="store_true",
        help="also count instructions and 1 MiB-LL data misses per data hop (one run each)",
    )
    ap.add_argument(
        "--k", type=int, default=K, help="fat-tree arity (even, >= 4): k^3 / 4 hosts, one flow each"
    )
    ap.add_argument("--flow-bytes", type=int, default=FLOW_BYTES, help="bytes of each flow")
    ap.add_argument(
        "--end-ms", type=float, default=END_MS, help="simulated time; every flow must finish in it"
    )
    a = ap.parse_args()
    if a.k < 4 or a.k % 2 or a.flow_bytes <= 0 or a.end_ms <= 0:
        sys.exit("--k must be even and >= 4, --flow-bytes and --end-ms > 0")
    # the scenario's shape: module constants, read by the functions above
    K, HOSTS, FLOW_BYTES, END_MS = a.k, a.k**3 // 4, a.flow_bytes, a.end_ms
    print(f"k = {K} fat-tree, {HOSTS} hosts, {FLOW_BYTES} bytes a flow, {END_MS} ms simulated")
    rows = []
    bins = a.bin.split(",")
    with tempfile.TemporaryDirectory() as w:
        # (side label, binary, instant ACKs); each repeat runs htsim, then
        # every binary in the default model, then every one in htsim's
        sides = [(f"approxnet-sim {b} [{NETWORK}]", b, False) for b in bins]
        for b in bins:
            if has_instant_acks(b, w):
                sides.append((f"approxnet-sim {b} [{INSTANT_LABEL}]", b, True))
            else:
                print(f"{b}: no [transport] ack_path (older binary): default ACK model only")
        for i in range(a.repeat):
            h = run_htsim(a.htsim, w)
            runs = [("htsim", h)]
            runs += [(side, run_ours(b, h["pairs"], w, instant=x)) for side, b, x in sides]
            for side, r in runs:
                rows.append(
                    {
                        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                        "load1/5/15": load(),
                        "side": side,
                        "run": i,
                        "events": r["events"],
                        "data_hops": r["data_hops"],
                        "all_hops": r.get("hops", r["data_hops"]),
                        "loop_wall_s": round(r["wall_s"], 4),
                        "cpu_s": round(r["cpu_s"], 4),
                        "data_hops_per_s": round(r["data_hops"] / r["wall_s"]),
                    }
                )
                print(rows[-1], flush=True)
    labels = list(dict.fromkeys(r["side"] for r in rows))
    med = {
        s: statistics.median(r["data_hops_per_s"] for r in rows if r["side"] == s) for s in labels
    }
    cpu = {
        s: statistics.median(r["data_hops"] / r["cpu_s"] for r in rows if r["side"] == s)
        for s in labels
    }
    for label in (INSTANT_LABEL, NETWORK):
        print(f"-- {label}:")
        for s in [s for s in labels[1:] if s.endswith(f"[{label}]")]:
            print(
                f"{s}: median {med[s] / 1e6:.2f} M data hops per loop wall second vs htsim "
                f"{med['htsim'] / 1e6:.2f} M = {med[s] / med['htsim']:.2f}x; per CPU second (whole "
                f"process) {cpu[s] / cpu['htsim']:.2f}x; load {load()}"
            )
    if a.cachegrind:
        with tempfile.TemporaryDirectory() as w:
            h = run_htsim(a.htsim, w, grind=True)
            grinds = [("htsim", h)]
            grinds += [
                (f"approxnet-sim {b} [{INSTANT_LABEL if x else NETWORK}]",
                 run_ours(b, h["pairs"], w, grind=True, instant=x))
                for b in bins
                for x in (False, True)
                if not x or has_instant_acks(b, w)
            ]  # fmt: skip
        for side, r in grinds:
            print(
                f"cachegrind {side}: {r['instr'] / r['data_hops']:.0f} instructions and "
                f"{r['ll_misses'] / r['data_hops']:.2f} LL data misses per data hop "
                f"(whole process, {r['data_hops']} data hops)"
            )
            rows.append(
                {
                    "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "load1/5/15": load(),
                    "side": side + " (cachegrind)",
                    "run": 0,
                    "events": r["events"],
                    "data_hops": r["data_hops"],
                    "all_hops": r.get("hops", r["data_hops"]),
                    "loop_wall_s": "",
                    "cpu_s": "",
                    "data_hops_per_s": "",
                    "instr_per_data_hop": round(r["instr"] / r["data_hops"]),
                    "ll_misses_per_data_hop": round(r["ll_misses"] / r["data_hops"], 3),
                }
            )
        for side, o in grinds[1:]:
            ratio = h["instr"] / h["data_hops"] / (o["instr"] / o["data_hops"])
            print(f"instructions per data hop, htsim / {side}: {ratio:.2f}x")
    if a.out:
        append_csv(a.out, rows, list(rows[0]) + ["instr_per_data_hop", "ll_misses_per_data_hop"])


def append_csv(path: str, rows: list[dict[str, Any]], fields: list[str]) -> None:
    """Appends `rows` to the CSV at `path`, with a header if it is new."""
    new = not os.path.exists(path)
    with open(path, "a", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=fields, restval="")
        if new:
            wr.writeheader()
        wr.writerows(rows)


if __name__ == "__main__":
    main()
