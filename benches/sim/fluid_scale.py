#!/usr/bin/env python3
"""Flow mode at scale: wall time and peak memory of ``approxnet-sim run``.

Three series, one release binary, one script run (the machine is shared:
compare rows of one run):
  * ``saba``: seed 003 §8's 1,944-server three-tier spine-leaf (54 spine,
    102 leaf, 108 ToR x 18, 56 Gbps), ``--flows`` (100,000) flows of
    100 KB - 1 MB, Poisson at 50 % load (benches/sim/fluid_flows.py);
  * ``hosts``: the same spine-leaf cut to 12 / 36 / 108 racks, 50 flows per
    host, Poisson at 50 % load: how wall time grows with hosts;
  * ``concurrent``: 128-host leaf-spine, N flows all starting at t = 0 (N
    concurrent flows, every departure re-solves the rest): how wall time
    grows with concurrent flows.
Wall = the whole process (/usr/bin/time), loop = the event loop alone
(summary.json wall_s), user CPU seconds (steadier than wall on a shared
machine); peak RSS from /usr/bin/time.

Usage: python3 benches/sim/fluid_scale.py [--bin target-sim/release/approxnet-sim]
       [--flows 100000] [--out results/fluid_scale.csv]
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fluid_flows  # noqa: E402

SPINE_LEAF = """
mode = "flow"
duration_ms = 100000.0
[topology]
kind = "spine_leaf3"
spines = 54
leaves = 102
tors = {tors}
hosts_per_tor = 18
host_gbps = 56.0
link_delay_us = 0.025
switch_delay_ns = 60.0
[fluid]
flows_csv = "{flows}"
"""

LEAF_SPINE = """
mode = "flow"
duration_ms = 100000.0
[topology]
kind = "leaf_spine"
spines = 8
leaves = 8
hosts_per_leaf = 16
host_gbps = 10.0
link_delay_us = 0.0
[fluid]
flows_csv = "{flows}"
"""


def timed(binary: str, scenario: str, work: Path) -> dict[str, float]:
    path = work / "scenario.toml"
    path.write_text(scenario)
    cmd = [
        "/usr/bin/time",
        "-v",
        binary,
        "run",
        str(path),
        "--out",
        str(work / "out"),
        "--quiet",
        "--no-flows",
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    el = re.search(
        r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", r.stderr
    )
    user = re.search(r"User time \(seconds\): ([\d.]+)", r.stderr)
    assert rss and el and user, r.stderr
    wall = int(el.group(1) or 0) * 3600 + int(el.group(2)) * 60 + float(el.group(3))
    s = json.loads((work / "out" / "summary.json").read_text())
    return {
        "wall_s": wall,
        "user_cpu_s": float(user.group(1)),
        "loop_s": round(s["wall_s"], 3),
        "rss_mb": round(int(rss.group(1)) / 1024, 1),
        "sim_ms": round(s["sim_s"] * 1e3, 3),
        "flows_done": s["flows_done"],
        "peak_active": s["peak_active_flows"],
        "solves": s["solves"],
        "solved_flows": s["solved_flows"],
        "fct_mean_us": round(s["fct_mean_us"], 2),
        "fct_p99_us": round(s["fct_p99_us"], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "target-sim/release/approxnet-sim"))
    ap.add_argument("--flows", type=int, default=100_000)
    ap.add_argument("--series", default="saba,hosts,concurrent")
    ap.add_argument("--out", default=str(ROOT / "results/fluid_scale.csv"))
    a = ap.parse_args()
    rows: list[dict[str, object]] = []
    series = a.series.split(",")
    with tempfile.TemporaryDirectory(prefix="fluid-scale-") as tmp:
        work = Path(tmp)
        flows = work / "flows.csv"

        def point(name: str, hosts: int, n: int, arrivals: str, scenario: str, gbps: float) -> None:
            fluid_flows.write(str(flows), fluid_flows.flows(hosts, n, gbps, 0.5, arrivals, 1))
            r: dict[str, object] = {
                "series": name,
                "hosts": hosts,
                "flows": n,
                "arrivals": arrivals,
            }
            r.update(timed(a.bin, scenario, work))
            print(json.dumps(r), flush=True)
            rows.append(r)

        if "saba" in series:
            point("saba", 1944, a.flows, "poisson", SPINE_LEAF.format(tors=108, flows=flows), 56.0)
        if "hosts" in series:
            for tors in (12, 36, 108):
                h = tors * 18
                point(
                    "hosts", h, 50 * h, "poisson", SPINE_LEAF.format(tors=tors, flows=flows), 56.0
                )
        if "concurrent" in series:
            for n in (1000, 2500, 5000, 10_000):
                point("concurrent", 128, n, "once", LEAF_SPINE.format(flows=flows), 10.0)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"results in {a.out}")


if __name__ == "__main__":
    main()
