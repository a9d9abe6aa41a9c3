"""Saba vs the baseline over random cluster setups on the namespace testbed
(seed 003 §7.2, Fig. 8a-b), and the homogeneous setups of Fig. 9.

A setup: `--jobs` jobs drawn with replacement from the profiled workloads,
each with a dataset size drawn from `--scales` (x the profiled one) and
an instance count drawn from `--instances`, its instances on distinct
hosts chosen at random (seed 003 §7.2: "at most one instance of a given
job is assigned to a server"). Every host has one link of `--link` to
one switch; each job's workers talk over kernel TCP.

Each setup runs twice, on a fresh testbed each time, in an order that
alternates between setups:

* baseline: the testbed as built — DSCP 0, one FIFO per switch port,
  kernel TCP (cubic) shares per flow;
* saba: the controller with the degree-`--degree` models of the
  sensitivity table (profiled at 1x data on 4 nodes) and the HTB
  backend; every job registered, its connections opened, its traffic
  marked with its PL's DSCP;
* htb1 (a control, with `--modes baseline,saba,htb1`): the same
  controller, backend and marking, but every app registered with the
  same model, so all share one HTB queue — what Saba's qdiscs change
  without its weights;
* baseline2 (the noise floor, with `--modes baseline,baseline2` instead
  of Saba): the baseline run a second time, so the "speed-up"
  baseline / baseline2 is what two runs of the same thing differ by.

Speed-up of a job = baseline time / Saba time; a setup's average speed-up
is the mean over its jobs (Fig. 8b). Each setup is one JSON line in
`--out` (appended, so runs accumulate; `--first` skips setups already
done). The paper's count is 500 (`--setups 500`).

    sudo .venv/bin/python experiments/saba/setups.py --setups 500 \\
        --out results/saba/setups.jsonl
    sudo .venv/bin/python experiments/saba/setups.py --homogeneous \\
        --scales 1 --degree 3 --out results/saba/fig9.jsonl   # Fig. 9: one cell

`--homogeneous`: one setup, every workload once on every host (§7.3),
all at the first of `--scales`, repeated `--reps` times (setup indices
`--first` onward, so the order of the runs alternates between
repetitions); Fig. 9's cells are runs with different `--scales`,
`--hosts` and `--degree`, read against the same cells run with
`--modes baseline,baseline2` (`fig9_report.py`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from approxnet.saba.controller import Controller
from approxnet.saba.enforce import HtbBackend
from approxnet.saba.profiler import run_together
from approxnet.saba.table import SensitivityTable
from approxnet.saba.topology import TestbedTopology
from approxnet.saba.workloads import WORKLOADS, Workload
from approxnet.testbed import lifecycle, parse
from approxnet.testbed.config import Config

#: the model every app gets in the `htb1` control: identical models put
#: every app in one PL, so one HTB queue holds them all
FLAT = (2.0, -1.0)


@dataclass(frozen=True)
class Job:
    """One job of a setup."""

    name: str
    workload: str
    scale: float
    hosts: tuple[int, ...]

    def work(self) -> Workload:
        return WORKLOADS[self.workload].scaled(self.scale)

    def pairs(self) -> list[tuple[int, int]]:
        """(source, destination) host indices of its connections: a ring
        for the staged ring workloads, every ordered pair otherwise."""
        h = self.hosts
        if WORKLOADS[self.workload].kind == "ring":
            return [(h[i], h[(i + 1) % len(h)]) for i in range(len(h))]
        return [(a, b) for a in h for b in h if a != b]


def draw(
    rng: random.Random,
    workloads: Sequence[str],
    jobs: int,
    hosts: int,
    scales: Sequence[float],
    instances: tuple[int, int],
) -> list[Job]:
    """One random setup."""
    out = []
    for k in range(jobs):
        w = rng.choice(list(workloads))
        m = rng.randint(instances[0], min(instances[1], hosts))
        out.append(
            Job(f"j{k}-{w}", w, rng.choice(list(scales)), tuple(rng.sample(range(hosts), m)))
        )
    return out


def homogeneous(workloads: Sequence[str], hosts: int, scale: float) -> list[Job]:
    """Every workload once, on every host."""
    return [Job(f"j{k}-{w}", w, scale, tuple(range(hosts))) for k, w in enumerate(workloads)]


def cluster(name: str, hosts: int, link: str) -> Config:
    return parse(
        {"testbed": {"name": name}, "host": [{"name": f"n{i}", "rate": link} for i in range(hosts)]}
    )


def run(
    mode: str, jobs: list[Job], hosts: int, args: argparse.Namespace, table: SensitivityTable
) -> dict[str, Any]:
    cfg = cluster(f"su{os.getpid() % 100000}", hosts, args.link)
    tb = lifecycle.up(cfg)
    try:
        dscp = {j.name: 0 for j in jobs}
        if mode in ("saba", "htb1"):
            ctl = Controller(
                TestbedTopology(cfg),
                backend=HtbBackend(cfg.namespace, leaf_bytes=args.leaf_bytes),
                queues=args.queues,
                seed=args.seed,
            )
            for j in jobs:
                coeffs = (
                    list(table.get(j.workload, args.degree).model.coeffs)
                    if mode == "saba"
                    else list(FLAT)
                )
                ctl.register(j.name, coeffs)
                for a, b in j.pairs():
                    ctl.open_connection(j.name, f"n{a}", f"n{b}")
            dscp = {j.name: ctl.app(j.name).dscp for j in jobs}
        spec = [(j.work(), 7000 + 100 * k, dscp[j.name]) for k, j in enumerate(jobs)]
        placement = [[f"n{i}" for i in j.hosts] for j in jobs]
        done = run_together(tb, spec, timeout=600.0, placement=placement)
        times = {j.name: t for j, t in zip(jobs, done, strict=True)}
    finally:
        tb.down()
    return {"mode": mode, "times": times, "dscp": dscp}


#: the run sets `--modes` accepts: Saba against the baseline (optionally
#: with the one-queue control), or the baseline against itself
MODE_SETS = ({"baseline", "saba"}, {"baseline", "saba", "htb1"}, {"baseline", "baseline2"})


def parse_modes(text: str) -> list[str]:
    """`--modes`: a comma list naming one of MODE_SETS, each mode once."""
    modes = text.split(",")
    if len(set(modes)) != len(modes) or set(modes) not in MODE_SETS:
        raise ValueError(
            f"--modes: {text!r} is not baseline,saba[,htb1] or baseline,baseline2 (each mode once)"
        )
    return modes


def parse_scales(text: str) -> list[float]:
    """`--scales`: dataset sizes (x the profiled one), each finite and > 0."""
    out = []
    for part in text.split(","):
        try:
            x = float(part)
        except ValueError:
            raise ValueError(f"--scales: {part!r} is not a number") from None
        if not (x > 0 and x < float("inf")):
            raise ValueError(f"--scales: {part!r} must be a finite size > 0")
        out.append(x)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--table", default="results/saba/sensitivity.db")
    ap.add_argument("--workloads", default="shuffle,iterative,lr,join,wordcount")
    ap.add_argument("--setups", type=int, default=500, help="setups to run (the paper: 500)")
    ap.add_argument("--first", type=int, default=0, help="index of the first setup")
    ap.add_argument("--hosts", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--scales", default="0.5,1,2", help="dataset sizes drawn (x profiled)")
    ap.add_argument("--instances", default="2,6", help="instance count range (profiled: 4)")
    ap.add_argument("--degree", type=int, default=3, choices=(1, 2, 3))
    ap.add_argument("--queues", type=int, default=8)
    ap.add_argument("--link", default="200mbit")
    ap.add_argument("--leaf-bytes", type=int, default=262144, help="bfifo per Saba queue")
    ap.add_argument("--homogeneous", action="store_true", help="Fig. 9: all workloads, all hosts")
    ap.add_argument("--reps", type=int, default=1, help="repetitions of a --homogeneous setup")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("results/saba/setups.jsonl"))
    ap.add_argument("--budget-s", type=float, help="start no new setup after this many seconds")
    ap.add_argument(
        "--modes",
        default="baseline,saba",
        help="runs per setup: baseline,saba (+ htb1), or baseline,baseline2 (noise floor)",
    )
    args = ap.parse_args()
    try:
        modes = parse_modes(args.modes)
        scales = parse_scales(args.scales)
    except ValueError as e:
        ap.error(str(e))
    if args.reps < 1:
        ap.error(f"--reps: {args.reps} must be >= 1")
    if args.reps > 1 and not args.homogeneous:
        ap.error("--reps: only with --homogeneous (random setups differ by index already)")
    if args.hosts < 2:
        ap.error(f"--hosts: {args.hosts} must be >= 2 (every job talks between hosts)")
    workloads = args.workloads.split(",")
    for w in workloads:
        if w not in WORKLOADS:
            ap.error(f"--workloads: unknown workload {w!r}")
    lo, hi = (int(x) for x in args.instances.split(","))
    if not 2 <= lo <= hi:
        ap.error("--instances: need 2 <= LOW <= HIGH")
    table = SensitivityTable(args.table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    count = args.reps if args.homogeneous else args.setups
    other = "saba" if "saba" in modes else "baseline2"
    began = time.monotonic()
    for i in range(args.first, args.first + count):
        if args.budget_s is not None and time.monotonic() - began > args.budget_s:
            print(f"budget spent: stopped before setup {i}", flush=True)
            break
        if args.homogeneous:
            jobs = homogeneous(workloads, args.hosts, scales[0])
        else:
            rng = random.Random(args.seed * 1_000_003 + i)
            jobs = draw(rng, workloads, args.jobs, args.hosts, scales, (lo, hi))
        order = tuple(modes) if i % 2 == 0 else tuple(reversed(modes))
        load0, t0 = os.getloadavg()[0], time.time()
        try:
            runs = {m: run(m, jobs, args.hosts, args, table) for m in order}
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            # one failed setup (e.g. a worker starved past its timeout) is
            # recorded and skipped, not retried: the study moves on
            with args.out.open("a") as f:
                f.write(json.dumps({"setup": i, "seed": args.seed, "error": str(e)}) + "\n")
            print(f"setup {i}: failed: {e}", flush=True)
            continue
        speedup = {
            j.name: runs["baseline"]["times"][j.name] / runs[other]["times"][j.name] for j in jobs
        }
        rec = {
            "setup": i,
            "seed": args.seed,
            "homogeneous": args.homogeneous,
            "degree": args.degree,
            "hosts": args.hosts,
            "link": args.link,
            "jobs": [j.__dict__ for j in jobs],
            "baseline": runs["baseline"]["times"],
            "compare": other,
            other: runs[other]["times"],
            "htb1": runs["htb1"]["times"] if "htb1" in runs else None,
            "dscp": runs[other]["dscp"],
            "speedup": speedup,
            "avg_speedup": sum(speedup.values()) / len(speedup),
            "order": order,
            "load_before": load0,
            "load_after": os.getloadavg()[0],
            "wall_s": time.time() - t0,
        }
        with args.out.open("a") as f:
            f.write(json.dumps(rec) + "\n")
        print(f"setup {i}: avg speed-up {rec['avg_speedup']:.3f} {speedup}", flush=True)


if __name__ == "__main__":
    main()
