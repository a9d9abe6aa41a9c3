#!/usr/bin/env python3
"""approxnet-sim's flow mode against SimGrid 4.1, same flows, one run.

For each case (Poisson arrivals at ``--load``, and every flow at t = 0):
  1. benches/sim/fluid_flows.py draws the flow list (src, dst, bytes, start);
  2. ``approxnet-sim run`` (mode = "flow", ``fluid.record_paths``) replays it
     on a two-level fat-tree (leaf-spine) and writes every flow's links;
  3. a SimGrid worker (this script, in a subprocess, so each side has a
     fresh process) builds the same links (one SimGrid link per egress
     port, SHARED) and per-pair routes from those paths, and starts each
     flow with ``Comm.sendto_async`` at its start time.
SimGrid's model is set so both compute plain max-min sharing:
``network/model:CM02`` (max-min, no TCP corrections), latency factor 1,
bandwidth factor 1, ``network/TCP-gamma:0`` (no window bound),
``network/crosstraffic:0`` (no reverse ACK traffic). With zero link latency
(the default here) the two models are the same. With latency
(``--delay-us``) CM02 differs twice: a flow waits its route latency before
it shares bandwidth (approxnet-sim adds the latency after), and it then
shares in proportion to 1 / route latency (its "sharing penalty" is the
latency: TCP's RTT unfairness); ``--latency-weights`` gives each flow that
weight, leaving only the first difference (docs/simulator-fluid.md).

Reported per case: each side's wall time (whole process, and approxnet's
event loop alone) and CPU time (user + system of the process: steadier
than wall time on a loaded machine), the speed ratios, and per-flow
completion-time agreement (share of flows within 1 %, median and max
relative error); the
1-minute load average before and after the case (the machine may be
shared: compare ratios of one run). ``--baseline-bin`` times a second
approxnet-sim build on the same flows in the same run (its speed ratio to
SimGrid, and the largest FCT difference between the two builds).

Needs SimGrid's Python bindings (``--simgrid-python``, default
/work/simgrid-venv/bin/python; see /work/shared/anchors/README.md) and a
release build: ``CARGO_TARGET_DIR=target-sim cargo build --release -p
approxnet-sim``.

Usage: python3 benches/sim/fluid_vs_simgrid.py [--flows 10000] [--hosts 128]
       [--baseline-bin OTHER_BUILD] [--out results/fluid_vs_simgrid.csv]
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import fluid_flows  # noqa: E402

SCENARIO = """
name = "fluid_vs_simgrid_{case}"
mode = "flow"
duration_ms = 100000.0
seed = 1
[topology]
kind = "leaf_spine"
spines = {spines}
leaves = {leaves}
hosts_per_leaf = {per_leaf}
host_gbps = {gbps}
link_delay_us = {delay_us}
[fluid]
flows_csv = "{flows}"
record_paths = true
"""


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path) as f:
        return list(csv.DictReader(f))


def simgrid_worker(workdir: Path) -> None:
    """Runs the flows of ``workdir`` in SimGrid; writes simgrid.csv."""
    import simgrid as sg  # type: ignore[import-not-found]

    links = read_csv(workdir / "out" / "links.csv")
    flows = read_csv(workdir / "out" / "flows.csv")
    t0 = time.perf_counter()
    e = sg.Engine(
        [
            "fluid_vs_simgrid",
            "--cfg=network/model:CM02",
            "--cfg=network/crosstraffic:0",
            "--cfg=network/TCP-gamma:0",
            "--cfg=network/latency-factor:1",
            "--cfg=network/bandwidth-factor:1",
            "--log=root.thres:critical",
        ]
    )
    zone = e.netzone_root.add_netzone_full("net")
    n_hosts = 1 + max(max(int(f["src"]), int(f["dst"])) for f in flows)
    hosts = [zone.add_host(f"h{i}", 1.0) for i in range(n_hosts)]
    sg_links = {}
    for row in links:
        link = zone.add_link(f"p{row['port']}", float(row["gbps"]) * 1e9 / 8)
        sg_links[row["port"]] = link.set_latency(float(row["delay_ns"]) * 1e-9).seal()
    seen = set()
    for f in flows:
        pair = (int(f["src"]), int(f["dst"]))
        if pair in seen:
            continue
        seen.add(pair)
        route = [sg.LinkInRoute(sg_links[p]) for p in f["path"].split()]
        zone.add_route(hosts[pair[0]], hosts[pair[1]], route, False)
    zone.seal()
    order = sorted(range(len(flows)), key=lambda i: float(flows[i]["start_ns"]))
    comms: list[tuple[int, object]] = []

    def starter() -> None:
        for i in order:
            f = flows[i]
            sg.this_actor.sleep_until(float(f["start_ns"]) * 1e-9)
            c = sg.Comm.sendto_async(
                hosts[int(f["src"])], hosts[int(f["dst"])], int(float(f["bytes"]))
            )
            comms.append((i, c))
        for _, c in comms:
            c.wait()  # type: ignore[attr-defined]

    with warnings.catch_warnings():
        # Engine.add_actor, its advertised replacement, takes no function in 4.1's bindings
        warnings.simplefilter("ignore", DeprecationWarning)
        sg.Actor.create("starter", hosts[0], starter)
    e.run()
    wall = time.perf_counter() - t0
    with open(workdir / "simgrid.csv", "w") as out:
        out.write("flow,fct_ns\n")
        for i, c in comms:
            fct = (c.finish_time - float(flows[i]["start_ns"]) * 1e-9) * 1e9  # type: ignore[attr-defined]
            out.write(f"{flows[i]['flow']},{fct}\n")
    (workdir / "simgrid.json").write_text(json.dumps({"wall_s": wall, "sim_s": e.clock}))


def simgrid_env(python: str) -> dict[str, str]:
    """The worker's environment: libsimgrid.so sits beside the module."""
    env = dict(os.environ)
    code = "import importlib.util;print(importlib.util.find_spec('simgrid').origin)"
    origin = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    libdir = str(Path(origin.stdout.strip()).parent)
    env["LD_LIBRARY_PATH"] = libdir + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    return env


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Runs ``cmd``; returns its wall seconds and CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def run_case(a: argparse.Namespace, case: str, tmp: Path) -> dict[str, object]:
    work = tmp / case
    work.mkdir()
    rows = fluid_flows.flows(a.hosts, a.flows, a.gbps, a.load, case, a.seed)
    fluid_flows.write(str(work / "flows.csv"), rows)
    leaves = a.hosts // a.per_leaf
    scen = SCENARIO.format(
        case=case,
        spines=a.spines,
        leaves=leaves,
        per_leaf=a.per_leaf,
        gbps=a.gbps,
        delay_us=a.delay_us,
        flows=work / "flows.csv",
    )
    (work / "scenario.toml").write_text(scen)
    if a.latency_weights:
        # CM02 shares in proportion to 1 / route latency once the latency is
        # paid: give each flow that weight (path latencies from a first run)
        subprocess.run(
            [a.bin, "run", str(work / "scenario.toml"), "--out", str(work / "lat"), "--quiet"],
            check=True,
        )
        lat = [float(r["latency_ns"]) for r in read_csv(work / "lat" / "flows.csv")]
        with open(work / "flows.csv", "w") as f:
            f.write("src,dst,bytes,start_ns,weight\n")
            for (src, dst, size, start), ns in zip(rows, lat, strict=True):
                f.write(f"{src},{dst},{size},{start},{1e3 / ns}\n")
    load_before = os.getloadavg()[0]
    base: dict[str, object] = {}
    if a.baseline_bin:
        # another approxnet-sim build (e.g. before a solver change) on the same flows
        base_wall, base_cpu = timed(
            [a.baseline_bin, "run", str(work / "scenario.toml"), "--out", str(work / "base")]
            + ["--quiet"]
        )
        base_fct = {
            r["flow"]: float(r["fct_ns"])
            for r in read_csv(work / "base" / "flows.csv")
            if r["fct_ns"]
        }
    ours_wall, ours_cpu = timed(
        [a.bin, "run", str(work / "scenario.toml"), "--out", str(work / "out"), "--quiet"]
    )
    summary = json.loads((work / "out" / "summary.json").read_text())
    sg_wall, sg_cpu = timed(
        [a.simgrid_python, __file__, "--simgrid-worker", str(work)],
        env=simgrid_env(a.simgrid_python),
    )
    sg_json = json.loads((work / "simgrid.json").read_text())
    ours = {
        r["flow"]: float(r["fct_ns"]) for r in read_csv(work / "out" / "flows.csv") if r["fct_ns"]
    }
    theirs = {r["flow"]: float(r["fct_ns"]) for r in read_csv(work / "simgrid.csv")}
    rel = [abs(ours[k] - theirs[k]) / theirs[k] for k in theirs if k in ours and theirs[k] > 0]
    if a.baseline_bin:
        base_rel = [abs(ours[k] - base_fct[k]) / base_fct[k] for k in ours if base_fct.get(k)]
        base = {
            "wall_s_baseline_process": round(base_wall, 3),
            "speedup_baseline_process": round(sg_wall / base_wall, 1),
            "cpu_s_baseline": round(base_cpu, 3),
            "speedup_baseline_cpu": round(sg_cpu / max(base_cpu, 1e-3), 1),
            "rel_err_max_vs_baseline": max(base_rel) if base_rel else float("nan"),
        }
    return {
        "case": case,
        "hosts": a.hosts,
        "flows": len(rows),
        "compared": len(rel),
        "sim_s_ours": summary["sim_s"],
        "sim_s_simgrid": sg_json["sim_s"],
        "wall_s_ours_process": round(ours_wall, 3),
        "wall_s_ours_loop": round(summary["wall_s"], 3),
        "wall_s_simgrid_process": round(sg_wall, 3),
        "wall_s_simgrid_run": round(sg_json["wall_s"], 3),
        "speedup_process": round(sg_wall / ours_wall, 1),
        "cpu_s_ours": round(ours_cpu, 3),
        "cpu_s_simgrid": round(sg_cpu, 3),
        "speedup_cpu": round(sg_cpu / max(ours_cpu, 1e-3), 1),
        "within_1pct": round(sum(r <= 0.01 for r in rel) / max(len(rel), 1), 5),
        "rel_err_median": statistics.median(rel) if rel else float("nan"),
        "rel_err_max": max(rel) if rel else float("nan"),
        "fct_mean_us_ours": statistics.fmean(ours.values()) / 1e3,
        "fct_mean_us_simgrid": statistics.fmean(theirs.values()) / 1e3,
        "peak_active_flows": summary["peak_active_flows"],
        "solved_flows": summary["solved_flows"],
        "load_avg_1min": f"{load_before:.1f}-{os.getloadavg()[0]:.1f}",
        **base,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--simgrid-worker", help=argparse.SUPPRESS)
    ap.add_argument("--bin", default=str(ROOT / "target-sim/release/approxnet-sim"))
    ap.add_argument("--simgrid-python", default="/work/simgrid-venv/bin/python")
    ap.add_argument(
        "--latency-weights",
        action="store_true",
        help="weight each flow 1 / its path latency, as CM02 does (needs --delay-us > 0)",
    )
    ap.add_argument(
        "--baseline-bin",
        help="also time this approxnet-sim build on the same flows (before / after a change)",
    )
    ap.add_argument("--hosts", type=int, default=128)
    ap.add_argument("--per-leaf", type=int, default=16)
    ap.add_argument("--spines", type=int, default=8)
    ap.add_argument("--gbps", type=float, default=10.0)
    ap.add_argument("--delay-us", type=float, default=0.0)
    ap.add_argument("--flows", type=int, default=10_000)
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", default="poisson,once")
    ap.add_argument("--out", default=str(ROOT / "results/fluid_vs_simgrid.csv"))
    a = ap.parse_args()
    if a.simgrid_worker:
        simgrid_worker(Path(a.simgrid_worker))
        return
    if a.latency_weights and a.delay_us <= 0:
        sys.exit("--latency-weights needs --delay-us > 0")
    if importlib.util.find_spec("simgrid") is None and not Path(a.simgrid_python).exists():
        sys.exit(f"no SimGrid: {a.simgrid_python} not found (see the docstring)")
    results = []
    with tempfile.TemporaryDirectory(prefix="fluid-vs-simgrid-") as tmp:
        for case in a.cases.split(","):
            r = run_case(a, case, Path(tmp))
            print(json.dumps(r), flush=True)
            results.append(r)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    print(f"results in {a.out}")


if __name__ == "__main__":
    main()
