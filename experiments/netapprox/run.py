#!/usr/bin/env python3
"""Sweep the NetApprox study (seed 000 section 7.1) over schemes and MSRs.

Each figure is one scenario file here plus a sweep; every run writes its
CSVs under results/tmp/netapprox/<fig>/<scheme>-<msr>/ and one line to
experiments/netapprox/results/<fig>[-quick].csv.

  .venv/bin/python experiments/netapprox/run.py fig5 --quick     # k = 4, 16 hosts, 4 ms
  .venv/bin/python experiments/netapprox/run.py fig5             # full k = 12, 192 hosts, 20 ms
  .venv/bin/python experiments/netapprox/run.py all --quick
  .venv/bin/python experiments/netapprox/run.py fig5 --only atp-full-0.5,dctcp-es-0.5   # some runs only
  .venv/bin/python experiments/netapprox/run.py fig14 --quick --set 'atp.queue_rule="msr-bounded"' --tag bounded

--only re-runs the named runs and merges them, by label, into the
figure's results file (the other rows stay); --set adds a scenario
override to every run, and --tag NAME writes results/<fig>[-quick]-NAME.csv
(and its own tmp folder) so that a variant sits beside the default's file.

Figures: fig5 (FBKV JCT vs MSR; also Fig. 7 queue), fig6 (FBHD; Fig. 8),
fig9 (incast), fig10 (TLR / rate / queue timeline), fig11 (FixTLR / FixPrio /
Full), fig12 (Base -> RC -> MRDF -> Full; fig12hd the same on FBHD), fig13 (non-approximate co-runner),
fig14 (fairness), dml (seed 001 section 3.1), dmltrain (seed 001 with parameter-server
training jobs), iw (the baselines' initial window, 2 vs 10), fbhdgap (FBHD's
production gap, 39 / 78 / 156 us).
"""

import argparse
import csv
import json
import os
import subprocess
import sys

from approxnet import binaries

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

MSRS = [0.125, 0.25, 0.5, 0.75, 1.0]
BASELINES = [
    "atp-full",
    "dctcp-ss",
    "dctcp-es",
    "pfabric-ss",
    "pfabric-es",
    "aeolus-ss",
    "aeolus-es",
    "udp",
]
# Offered loads swept per workload (fraction of a host link, application
# bytes). The paper gives no load; it calls FBKV the lighter workload
# (seed 000 section 7.1.1), so FBKV is swept lower than FBHD.
LOADS = {"fig5": [0.1, 0.2, 0.3], "fig6": [0.3, 0.5, 0.7], "fig12": [0.2], "fig12hd": [0.5]}
# FBKV jobs take ~1 ms to produce their 50 messages: runs last 3 ms past
# the last arrival so that no scheme's jobs are cut off.
QUICK = ["topology.k=4", "topology.hosts=16", "duration_ms=6.0", "jobs.0.stop_ms=3.0"]


def sweep(scenario, schemes, msrs, job=0, extra=(), loads=(None,)):
    for load in loads:
        for s in schemes:
            for m in msrs:
                sets = [f'jobs.{job}.scheme="{s}"', f"jobs.{job}.msr={m}"] + list(extra)
                if s.startswith("pfabric"):
                    sets.append('switch.buffer_preset="pfabric"')
                label = f"{s}-{m}"
                if load is not None:
                    sets.append(f"jobs.{job}.load={load}")
                    label += f"-L{load}"
                yield label, scenario, sets


def plan(fig, quick):
    q = QUICK if quick else []
    if fig in ("fig5", "fig6"):
        scen = "fig5_fbkv.toml" if fig == "fig5" else "fig6_fbhd.toml"
        return list(sweep(scen, BASELINES, MSRS, extra=q, loads=LOADS[fig]))
    if fig == "iw":
        # the baselines' initial window: ns-2's 2 (the default) against 10
        runs = []
        for iw in [2, 10]:
            for lbl, scen, sets in sweep(
                "fig5_fbkv.toml", ["dctcp-ss", "dctcp-es", "atp-full"], [0.25, 0.5], extra=q
            ):
                runs.append((f"{lbl}-iw{iw}", scen, sets + [f"transport.init_cwnd_pkts={iw}"]))
        return runs
    if fig == "fbhdgap":
        # FBHD's production gap (no published model): mean 39 / 78 / 156 us
        runs = []
        for gap in [39, 78, 156]:
            for lbl, scen, sets in sweep(
                "fig6_fbhd.toml", ["atp-full", "dctcp-ss", "dctcp-es"], [0.25, 0.5], extra=q
            ):
                runs.append((f"{lbl}-gap{gap}", scen, sets + [f'jobs.0.gaps="exp:{gap}"']))
        return runs
    if fig == "fig9":
        return list(sweep("fig9_incast.toml", ["atp-full", "dctcp-ss", "dctcp-es"], MSRS, extra=q))
    if fig == "fig10":
        return [("atp-full-0.5", "fig10_timeline.toml", [])]  # a dumbbell: --quick changes nothing
    if fig == "fig11":
        # one long job under background that starts in its queue and moves up
        # halfway (a dumbbell: --quick changes nothing)
        return list(
            sweep("fig11_shift.toml", ["dctcp-es", "atp-fixtlr", "atp-fixprio", "atp-full"], MSRS)
        )
    if fig == "fig12":
        return list(
            sweep(
                "fig5_fbkv.toml",
                ["atp-base", "atp-rc", "atp-mrdf", "atp-full"],
                MSRS,
                extra=q,
                loads=LOADS["fig12"],
            )
        )
    if fig == "fig12hd":
        # the same ablation on FBHD, where the network (not production) sets the pace
        return list(
            sweep(
                "fig6_fbhd.toml",
                ["atp-base", "atp-rc", "atp-mrdf", "atp-full"],
                MSRS,
                extra=q,
                loads=LOADS["fig12hd"],
            )
        )
    if fig == "fig13":
        runs = []
        for s in ["atp-full", "dctcp-es"]:
            for ratio in [0.25, 0.5, 0.75]:
                tot = 0.5
                sets = [
                    f'jobs.1.scheme="{s}"',
                    f"jobs.0.load={tot * (1 - ratio)}",
                    f"jobs.1.load={tot * ratio}",
                    "jobs.1.msr=0.5",
                ]
                runs.append((f"{s}-approx{ratio}", "fig13_nonapprox.toml", sets))
        return runs
    if fig == "fig14":
        runs = []
        for s in ["atp-full", "atp-fixprio", "atp-fixtlr"]:
            sets = [f'jobs.{i}.scheme="{s}"' for i in range(3)]
            runs.append((s, "fig14_fairness.toml", sets))
            runs.append(
                (s + "-alone", "fig14_fairness.toml", sets + ["jobs.1.load=0.0", "jobs.2.load=0.0"])
            )
        return runs
    if fig == "dml":
        runs = [("dctcp", "dml_seed001.toml", ['jobs.1.scheme="dctcp"', "jobs.1.msr=1.0"])]
        for b in [0.10, 0.15, 0.20, 0.25, 0.30, 0.35]:
            runs.append((f"bounded-{b}", "dml_seed001.toml", [f"jobs.1.msr={1 - b:.2f}"]))
        if quick:
            for r in runs:
                r[2].extend(["duration_ms=5.0", "jobs.0.stop_ms=3.0", "jobs.1.stop_ms=3.0"])
        return runs
    if fig == "dmltrain":
        runs = []
        for b in [0.0, 0.10, 0.20, 0.30]:
            sets = []
            for i in range(8):
                if b > 0:
                    sets += [f'training.{i}.scheme="dctcp-es"', f"training.{i}.msr={1 - b:.2f}"]
            if quick:
                sets += ["duration_ms=10.0", "jobs.0.stop_ms=8.0"] + [
                    f"training.{i}.iterations=3" for i in range(8)
                ]
            runs.append((f"bound-{b}", "dml_training.toml", sets))
        return runs
    raise SystemExit(f"unknown figure {fig!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fig")
    ap.add_argument("--quick", action="store_true", help="k = 4 fat-tree, short runs (CI size)")
    ap.add_argument(
        "--only",
        default="",
        help="comma-separated run labels to keep, e.g. atp-full-0.5,dctcp-es-0.5",
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        dest="sets",
        help="scenario override added to every run (repeatable), e.g. 'atp.ecn_reaction=true'",
    )
    ap.add_argument("--tag", default="", help="suffix of the results file: <fig>[-quick]-<tag>.csv")
    a = ap.parse_args()
    only = {x for x in a.only.split(",") if x}
    if os.environ.get(binaries.env_var("approxnet-sim")):
        sim = str(binaries.require("approxnet-sim"))
    else:  # this checkout's, rebuilt if stale (a no-op when it is not)
        sim = str(binaries.build("approxnet-sim"))
    figs = (
        ["fig5", "fig6", "fig9", "fig10", "fig11", "fig12", "fig13", "fig14", "dml", "dmltrain"]
        if a.fig == "all"
        else [a.fig]
    )
    for fig in figs:
        tag = fig + ("-quick" if a.quick else "") + (f"-{a.tag}" if a.tag else "")
        planned = plan(fig, a.quick)
        unknown = only - {label for label, _, _ in planned}
        if unknown:
            raise SystemExit(f"--only: no run called {', '.join(sorted(unknown))} in {fig}")
        rows = []
        for label, scen, sets in planned:
            if only and label not in only:
                continue
            sets = list(sets) + a.sets
            out = os.path.join(ROOT, "results", "tmp", "netapprox", tag, label)
            cmd = [sim, "run", os.path.join(HERE, scen), "--out", out, "--quiet", "--no-flows"]
            for s in sets:
                cmd += ["--set", s]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(out, "summary.json")) as f:
                summ = json.load(f)
            for t in summ.get("trainings", []):
                print(
                    f"{tag:<14} {label:<22} {t['name']:<12} iterations {t['iterations']}/{t['of']}  "
                    f"mean iteration {t['iter_mean_us'] or float('nan'):.1f} us  JCT {t['jct_us'] or float('nan'):.1f} us",
                    flush=True,
                )
                rows.append(
                    dict(
                        run=label,
                        cls=t["name"],
                        scheme="training",
                        msr="",
                        load="",
                        jobs=t["of"],
                        done=t["iterations"],
                        jct_mean_us=t["jct_us"],
                        jct_p50_us="",
                        jct_p99_us=t["iter_mean_us"],
                        loss_rate=0,
                        max_job_loss=0,
                        delivered_fraction="",
                        queue_mean_bytes=summ["queue_mean_bytes"],
                        queue_p99_bytes=summ["queue_p99_bytes"],
                        drops=summ["drops"],
                        wall_s=summ["wall_s"],
                    )
                )
            for c in summ["classes"]:
                load = next((x.split("=")[1] for x in sets if x.startswith("jobs.0.load=")), "")
                row = dict(
                    run=label,
                    cls=c["name"],
                    scheme=c["scheme"],
                    msr=c["msr"],
                    load=load,
                    jobs=c["jobs"],
                    done=c["done"],
                    jct_mean_us=c["jct_mean_us"],
                    jct_p50_us=c["jct_p50_us"],
                    jct_p99_us=c["jct_p99_us"],
                    loss_rate=c["loss_rate"],
                    max_job_loss=c["max_job_loss"],
                    delivered_fraction=c["delivered_fraction"],
                    queue_mean_bytes=summ["queue_mean_bytes"],
                    queue_p99_bytes=summ["queue_p99_bytes"],
                    drops=summ["drops"],
                    wall_s=summ["wall_s"],
                )
                rows.append(row)
                print(
                    f"{tag:<14} {label:<22} {c['name']:<12} done {c['done']:>7}/{c['jobs']:<7} "
                    f"jct {c['jct_mean_us'] or float('nan'):>9.1f} us  p99 {c['jct_p99_us'] or float('nan'):>9.1f}  "
                    f"loss {c['loss_rate']:.4f}  q {summ['queue_mean_bytes']:.0f} B",
                    flush=True,
                )
        path = os.path.join(HERE, "results", f"{tag}.csv")
        if only and os.path.exists(path):
            # merge by label: the re-run runs replace their old rows, every
            # other run of the earlier sweep stays, in the plan's order
            with open(path) as f:
                old = [r for r in csv.DictReader(f) if r["run"] not in only]
            order = {label: i for i, (label, _, _) in enumerate(planned)}
            merged = old + rows
            rows = sorted(merged, key=lambda r: order.get(r["run"], len(order)))
        # an earlier sweep's rows may lack later columns (e.g. load)
        fields = list(dict.fromkeys(k for r in rows for k in r))
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, restval="")
            w.writeheader()
            w.writerows(rows)
        print(f"written {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
