"""Saba's eq. 2 weights against what each app can use at each port
(docs/experiments/saba.md, "What differs from the seed").

Eq. 2 (seed 003 §5.1) gives an app a share w of a port as if w were its
whole bandwidth (its model D is profiled with every NIC of the app capped
at w, §4.1). At a switch port the app has k of its flows; alone, each of
them runs at its rank's rate / fanout, so what it can use there is
``d = k * demand / fanout`` of the link (demand: the mix's sending rate,
1 = line rate). Favouring an app above d gives it nothing there (WFQ
hands the rest to the others), while an app pushed below min(d, 1 / n)
of a port with n apps loses at that port whenever the port is busy.

Per workload, over the shared ports (two apps or more) of one placement,
with the 8-queue controller's eq. 2 weights: the fraction of its ports
where it is favoured (w > 1/n), where that favour is above what it can
use (w > d, and the favour w - max(d, 1/n) that is unusable), and where
it is held below min(d, 1/n); next to its measured saba8 speed-up
(results/saba/sim_small{tag}_jct.csv).

    .venv/bin/python experiments/saba/weight_demand.py --mix uniform --seed 1
    .venv/bin/python experiments/saba/weight_demand.py --mix paper --seed 1 --tag _mix_paper

Writes results/saba/weight_demand_{mix}_ws{W}_s{seed}.csv.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import sim_study as study

from approxnet.saba import flowstudy
from approxnet.saba.sim_backend import SabaPolicy, routes_from_sim

OUT = Path(__file__).resolve().parents[2] / "results" / "saba"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mix", default="uniform", choices=flowstudy.MIXES)
    ap.add_argument("--workload-seed", type=int, default=7)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tag", default="", help="the study run's tag (its jct CSV)")
    args = ap.parse_args(argv)
    sc = study.SCALES["small"]
    specs = study.workload_specs(args.workload_seed, args.mix)
    jobs = study.placement(specs, sc.hosts, args.seed)
    rack_jobs = [study.make_job(s, list(range(sc.rack))) for s in specs]
    pairs = set().union(*(j.host_pairs() for j in jobs + rack_jobs))
    routes = routes_from_sim(sc.topology, pairs)
    prof = flowstudy.profile(specs, routes, sc.rack)
    models = {n: list(fits[3].coeffs) for n, (_, fits) in prof.items()}
    net = routes.capped_egress(flowstudy.demand_caps(specs, jobs, routes))
    pol = SabaPolicy(jobs, models, net, queues=8, seed=args.seed)
    index = {j.name: i for i, j in enumerate(jobs)}
    flows_on: dict[tuple[int, int], int] = defaultdict(int)
    for j, job in enumerate(jobs):
        for a, b in job.stages[0].pairs:
            for link in net.path(job.hosts[a], job.hosts[b]).tolist():
                flows_on[(link, j)] += 1
    stat: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for cfg in pol.ctls[0].port_configs():
        w = dict(cfg.app_weights)
        if len(w) < 2:
            continue
        port = int(cfg.key.rsplit(":p", 1)[1])
        n = len(w)
        for app, wa in w.items():
            j = index[app]
            d = flows_on[(port, j)] * specs[j].demand / len(specs[j].shifts)
            s = stat[app]
            s["ports"] += 1
            s["demand"] += d
            if wa > 1.0 / n + 1e-9:
                s["favoured"] += 1
                if wa > d:
                    s["favour_unusable"] += 1
                    s["unusable_weight"] += wa - max(d, 1.0 / n)
            if wa < min(d, 1.0 / n) - 1e-9:
                s["held_below"] += 1
    speed: dict[str, float] = {}
    jct = OUT / f"sim_small{args.tag}_jct.csv"
    if jct.exists():
        with open(jct) as f:
            rows = [r for r in csv.DictReader(f) if r["seed"] == str(args.seed)]
        base = {r["workload"]: float(r["jct_ns"]) for r in rows if r["scheme"] == "flow_maxmin"}
        got = {r["workload"]: float(r["jct_ns"]) for r in rows if r["scheme"] == "saba8"}
        speed = {a: base[a] / got[a] for a in got if a in base}
    out_rows = []
    for spec in sorted(specs, key=lambda s: -dict(prof[s.name][0])[0.25]):
        s = stat[spec.name]
        p = max(s["ports"], 1.0)
        fav = max(s["favoured"], 1.0)
        out_rows.append(
            {
                "workload": spec.name,
                "d25": dict(prof[spec.name][0])[0.25],
                "shared_ports": int(s["ports"]),
                "mean_port_demand": s["demand"] / p,
                "favoured": s["favoured"] / p,
                "favour_unusable": s["favour_unusable"] / fav,
                "mean_unusable_weight": s["unusable_weight"] / fav,
                "held_below": s["held_below"] / p,
                "saba8_speedup": speed.get(spec.name, float("nan")),
            }
        )
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"weight_demand_{args.mix}_ws{args.workload_seed}_s{args.seed}.csv"
    with open(out, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=list(out_rows[0]))
        wr.writeheader()
        wr.writerows(out_rows)
    print(
        "| workload | D(25 %) | shared ports | mean demand there | favoured | of which unusable "
        "| unusable weight | held below min(d, 1/n) | saba8 speed-up |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in out_rows:
        print(
            f"| {r['workload']} | {r['d25']:.2f} | {r['shared_ports']} | "
            f"{r['mean_port_demand']:.2f} | {r['favoured']:.2f} | {r['favour_unusable']:.2f} | "
            f"{r['mean_unusable_weight']:.2f} | {r['held_below']:.2f} | {r['saba8_speedup']:.3f} |"
        )
    tot_p = sum(stat[a]["ports"] for a in stat)
    tot_f = sum(stat[a]["favoured"] for a in stat)
    print(
        f"all: {tot_p:.0f} (port, app) entries; favoured {tot_f / tot_p:.2f}, of which above "
        f"usable {sum(stat[a]['favour_unusable'] for a in stat) / max(tot_f, 1):.2f}; "
        f"held below min(d, 1/n) {sum(stat[a]['held_below'] for a in stat) / tot_p:.2f}"
    )
    sp = np.array([r["saba8_speedup"] for r in out_rows])
    hb = np.array([r["held_below"] for r in out_rows])
    if np.isfinite(sp).all():
        print(f"correlation held-below vs saba8 speed-up: {float(np.corrcoef(hb, sp)[0, 1]):+.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
