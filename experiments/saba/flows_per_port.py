"""Why per-app queues ("ideal max-min", `app_maxmin`) lose against per-flow
max-min at 1,944 servers and not at 288 (docs/experiments/saba.md, "What
differs from the seed"): per-app queues give an app 1 / (apps) of a port
whatever its number of flows there, per-flow max-min k / (flows) for its k
flows, so an app with more than its share of a port's flows loses there.

For each scale and placement (the flow study's, ``uniform`` mix):

* **counts** — every job's stage flows on their routes: per shared port
  (two apps or more) its apps and flows; per app its *flow excess*
  ``k * apps / flows`` at each shared port it crosses (> 1: per-app
  queueing gives it less than per-flow sharing would, at equal demand);
* **snapshot** — every job's stage in flight at once, allocated both ways;
  per app the ratio of its slowest flow's rate under per-app queues to
  under per-flow max-min (a bulk-synchronous stage ends with its slowest
  flow, so this is the stage's speed-up at that instant);
* next to each app's measured `app_maxmin` speed-up over the whole run,
  read from the study's CSVs (results/saba/sim_{scale}*_jct.csv).

    .venv/bin/python experiments/saba/flows_per_port.py --scale small --seeds 1 2 3
    .venv/bin/python experiments/saba/flows_per_port.py --scale full --seeds 1

Writes results/saba/flows_per_port_{scale}.csv (one row per seed and app)
and prints the summary table.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import sim_study as study

from approxnet.saba.fluidexact import solve
from approxnet.saba.fluidshare import Entries, allocate
from approxnet.saba.sim_backend import FlowFair, Job, Policy, PortQueues, Routes, routes_from_sim

OUT = Path(__file__).resolve().parents[2] / "results" / "saba"


def stage_flows(jobs: list[Job], routes: Routes) -> tuple[list[int], list[np.ndarray]]:
    """(job, path) of every flow of every job's first stage."""
    fj, fp = [], []
    for j, job in enumerate(jobs):
        for a, b in job.stages[0].pairs:
            if job.hosts[a] != job.hosts[b]:
                fj.append(j)
                fp.append(routes.path(job.hosts[a], job.hosts[b]))
    return fj, fp


def rates(fj: list[int], fp: list[np.ndarray], routes: Routes, pol: Policy) -> np.ndarray:
    """Every flow's rate, all in flight at once, under `pol`."""
    from approxnet.saba.sim_backend import Flows

    ef = np.concatenate([np.full(len(p), i, dtype=np.int64) for i, p in enumerate(fp)])
    el = np.concatenate(fp)
    n = len(fj)
    flows = Flows(
        np.array(fj, dtype=np.int64),
        np.ones(n),
        np.ones(n),
        np.array(fj, dtype=np.int64) * 1_000_000,
        ef,
        el,
    )
    level, queue, qw = pol.entries(flows, routes)
    ent = Entries(ef, el, level, queue, qw, routes.capacity, n)
    got = solve(ent)
    return got.rates if got.exact else allocate(ent).rates


def measured(scale: str, tag: str = "") -> dict[tuple[int, str], float]:
    """app_maxmin speed-up per (seed, workload) from the study's CSVs (of
    run `tag` only, or of the default runs: untagged and seeds 2-3)."""
    base: dict[tuple[int, str], float] = {}
    app: dict[tuple[int, str], float] = {}
    names = (
        [f"sim_{scale}{tag}_jct.csv"]
        if tag
        else [f"sim_{scale}{t}_jct.csv" for t in ("", "_s23", "_ref")]
    )
    for path in [OUT / n for n in names if (OUT / n).exists()]:
        with open(path) as f:
            for r in csv.DictReader(f):
                key = (int(r["seed"]), r["workload"])
                if r["scheme"] == "flow_maxmin":
                    base.setdefault(key, float(r["jct_ns"]))
                elif r["scheme"] == "app_maxmin":
                    app.setdefault(key, float(r["jct_ns"]))
    return {k: base[k] / app[k] for k in app if k in base}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default="small", choices=sorted(study.SCALES))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1])
    ap.add_argument("--fanout", type=int, default=study.FANOUT)
    ap.add_argument("--tag", default="", help="read app_maxmin speed-ups of this run tag only")
    args = ap.parse_args(argv)
    sc = study.SCALES[args.scale]
    specs = study.workload_specs(fanout=args.fanout)
    speed = measured(args.scale, args.tag)
    rows = []
    for seed in args.seeds:
        jobs = study.placement(specs, sc.hosts, seed)
        routes = routes_from_sim(sc.topology, set().union(*(j.host_pairs() for j in jobs)))
        fj, fp = stage_flows(jobs, routes)
        on: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        for j, p in zip(fj, fp, strict=True):
            for link in p.tolist():
                on[link][j] += 1
        excess: dict[int, list[float]] = defaultdict(list)
        flows_at: dict[int, list[int]] = defaultdict(list)
        apps_at: dict[int, list[int]] = defaultdict(list)
        for per in on.values():
            if len(per) < 2:
                continue
            total = sum(per.values())
            for j, k in per.items():
                excess[j].append(k * len(per) / total)
                flows_at[j].append(k)
                apps_at[j].append(len(per))
        flow = rates(fj, fp, routes, FlowFair())
        app = rates(fj, fp, routes, PortQueues.per_app(jobs, routes))
        fja = np.array(fj)
        for j, job in enumerate(jobs):
            mine = fja == j
            rows.append(
                {
                    "seed": seed,
                    "workload": job.name,
                    "flows_per_stage": int(mine.sum()),
                    "shared_ports": len(excess[j]),
                    "mean_flows_per_shared_port": float(np.mean(flows_at[j])),
                    "mean_apps_per_shared_port": float(np.mean(apps_at[j])),
                    "geo_flow_excess": float(np.exp(np.mean(np.log(excess[j])))),
                    "max_flow_excess": float(np.max(excess[j])),
                    "snapshot_stage_speedup": float(app[mine].min() / flow[mine].min()),
                    "app_maxmin_speedup": speed.get((seed, job.name), float("nan")),
                }
            )
        print(f"seed {seed}: {len(fj)} flows in flight, {len(on)} ports", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"flows_per_port_{args.scale}{args.tag}.csv"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    def col(name: str) -> np.ndarray:
        return np.array([r[name] for r in rows], dtype=float)

    sp, snap, ex, mx = (
        col("app_maxmin_speedup"),
        col("snapshot_stage_speedup"),
        col("geo_flow_excess"),
        col("max_flow_excess"),
    )
    ok = np.isfinite(sp)

    def corr(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.corrcoef(a[ok], b[ok])[0, 1]) if ok.sum() > 2 else float("nan")

    print(f"{args.scale}: {len(rows)} (seed, app) rows -> {out}")
    print(
        f"flows per app per shared port: mean {col('mean_flows_per_shared_port').mean():.2f}; "
        f"apps per shared port: mean {col('mean_apps_per_shared_port').mean():.2f}"
    )
    print(
        f"flow excess (geo. mean over an app's shared ports): mean {ex.mean():.3f}, "
        f"worst port: mean {mx.mean():.2f}, max {mx.max():.2f}"
    )
    gm = float(np.exp(np.mean(np.log(snap))))
    print(f"snapshot stage speed-up per-app vs per-flow: geo. mean {gm:.3f}, min {snap.min():.3f}")
    if ok.any():
        gm_sp = float(np.exp(np.mean(np.log(sp[ok]))))
        print(f"measured app_maxmin speed-up: geo. mean {gm_sp:.3f} over {ok.sum()} rows")
        print(
            f"correlation with measured speed-up: worst-port excess {corr(mx, sp):+.2f}, "
            f"geo. excess {corr(ex, sp):+.2f}, snapshot {corr(snap, sp):+.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
