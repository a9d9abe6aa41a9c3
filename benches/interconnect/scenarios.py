#!/usr/bin/env python3
"""Built-in collectives vs the same messages as explicit ``flows`` pairs,
one run (issue 17: the FFT scenario at 1,024 processes was ~12 MB of TOML).

For each application of the interconnect study at 1,024 processes (df11,
the approximate network): the scenario as the study writes it (built-in
collectives, one line each) and the baseline with every collective
expanded into one explicit ``flows`` phase per step (the form the study
used before). Both are written and run by the same approxnet-sim binary in
this process; reported: TOML size, time to write it (Python), the
simulator process's wall and CPU time, their ratios, and that both give
the same JCT. Also the 1-minute load average (the machine is shared:
compare ratios within one run).

  .venv/bin/python benches/interconnect/scenarios.py [--apps fft,cg] [--out CSV]
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from approxnet.interconnect import study as S

ROOT = Path(__file__).resolve().parents[2]


def expanded(fn: Callable[[dict[str, Any], int], list[S.Phase]]) -> Callable[..., list[S.Phase]]:
    """A skeleton whose collectives are explicit flow pairs, step by step."""

    def wrap(app: dict[str, Any], procs: int) -> list[S.Phase]:
        out: list[S.Phase] = []
        for p in fn(app, procs):
            if isinstance(p, S.Comm) and p.kind != "flows":
                out += [S.Comm("flows", p.bytes, p.approximable, tuple(s)) for s in p.steps(procs)]
            else:
                out.append(p)
        return out

    return wrap


def timed_run(text: str) -> tuple[S.PointResult, float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = S.run_scenario(text)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r, wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--apps", default="fft,cg,kmeans,ftcg,ftmm")
    ap.add_argument("--topology", default="df11")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "interconnect" / "scenarios.csv")
    args = ap.parse_args()
    st = S.load()
    rows = []
    for app in args.apps.split(","):
        row: dict[str, Any] = {"app": app, "load_before": os.getloadavg()[0]}
        for form in ("builtin", "explicit"):
            saved = S._SKELETONS[app]
            if form == "explicit":
                S._SKELETONS[app] = expanded(saved)
            try:
                t = time.perf_counter()
                text = S.scenario(st, "approx", args.topology, app)
                write_s = time.perf_counter() - t
            finally:
                S._SKELETONS[app] = saved
            r, wall, cpu = timed_run(text)
            row |= {
                f"{form}_bytes": len(text),
                f"{form}_write_s": round(write_s, 4),
                f"{form}_sim_wall_s": round(wall, 3),
                f"{form}_sim_cpu_s": round(cpu, 3),
                f"{form}_jct_us": r.jct_us,
                f"{form}_flows": r.flows,
            }
        assert row["builtin_jct_us"] == row["explicit_jct_us"], row
        assert row["builtin_flows"] == row["explicit_flows"], row
        row["load_after"] = os.getloadavg()[0]
        row["wall_ratio"] = round(
            (row["explicit_write_s"] + row["explicit_sim_wall_s"])
            / (row["builtin_write_s"] + row["builtin_sim_wall_s"]),
            2,
        )
        row["cpu_ratio"] = round(row["explicit_sim_cpu_s"] / row["builtin_sim_cpu_s"], 2)
        rows.append(row)
        print(
            f"{app}: {row['explicit_bytes']:,} -> {row['builtin_bytes']:,} B; "
            f"write {row['explicit_write_s']:.2f} -> {row['builtin_write_s']:.3f} s; "
            f"sim wall {row['explicit_sim_wall_s']:.2f} -> {row['builtin_sim_wall_s']:.2f} s, "
            f"cpu {row['explicit_sim_cpu_s']:.2f} -> {row['builtin_sim_cpu_s']:.2f} s; "
            f"same JCT {row['builtin_jct_us']:.1f} us; load {row['load_before']:.1f}",
            flush=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
