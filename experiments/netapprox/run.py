"""Sweep the NetApprox study (seed 000 section 7.1) over schemes and MSRs.

Each figure's runs are its plan in the package (`approxnet.figures`, the
scenario files under python/approxnet/studies/netapprox/); every run writes
its CSVs under results/tmp/netapprox/<fig>/<label>/ and one line per job
class to experiments/netapprox/results/<fig>[-quick].csv, the files the
docs quote. `approxnet repro FIGURE` runs the same plans from an installed
package.

  .venv/bin/python experiments/netapprox/run.py fig5 --quick     # k = 4, 16 hosts, 6 ms
  .venv/bin/python experiments/netapprox/run.py fig5             # full k = 12, 192 hosts, 20 ms
  .venv/bin/python experiments/netapprox/run.py all --quick
  .venv/bin/python experiments/netapprox/run.py fig5 --only atp-full-0.5-L0.2,dctcp-es-0.5-L0.2
  .venv/bin/python experiments/netapprox/run.py fig14 --quick --set 'atp.queue_rule="eq1"' --tag eq1

--only re-runs the named runs and merges them, by label, into the
figure's results file (the other rows stay, in the plan's order); --set
adds a scenario override to every run, and --tag NAME writes
results/<fig>[-quick]-NAME.csv (and its own tmp folder) so that a variant
sits beside the default's file.

Figures: fig5 (FBKV JCT vs MSR; also Fig. 7 queue), fig6 (FBHD; Fig. 8),
fig9 (incast), fig10 (TLR / rate / queue timeline), fig11 (FixTLR / FixPrio /
Full), fig12 (Base -> RC -> MRDF -> Full; fig12hd the same on FBHD), fig13 (non-approximate co-runner),
fig14 (fairness), dml (seed 001 section 3.1), dmltrain (seed 001 with parameter-server
training jobs), iw (the baselines' initial window, 2 vs 10), fbhdgap (FBHD's
production gap, 39 / 78 / 156 us).
"""

import argparse
import csv
import fcntl
import functools
import os
import sys

from approxnet import binaries, figures, repro

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ALL = ["fig5", "fig6", "fig9", "fig10", "fig11", "fig12", "fig13", "fig14", "dml", "dmltrain"]


def num(v):
    return float("nan") if v in ("", None) else float(v)


def claim(tag):
    """Hold an exclusive lock on the sweep's tag for this process's life.

    Two sweeps with one tag would share a tmp folder and overwrite each
    other's results file; the second one is refused instead.
    """
    lock_dir = os.path.join(ROOT, "results", "tmp", "netapprox")
    os.makedirs(lock_dir, exist_ok=True)
    f = open(os.path.join(lock_dir, f"{tag}.lock"), "w")  # noqa: SIM115 (held until exit)
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        sys.exit(f"run.py: another sweep is writing {tag} now; wait for it or pick another --tag")
    return f


def report(tag, label, rows):
    for r in rows:
        if r["scheme"] == "training":
            print(
                f"{tag:<14} {label:<22} {r['cls']:<12} iterations {r['done']}/{r['jobs']}  "
                f"mean iteration {num(r['jct_p99_us']):.1f} us  JCT {num(r['jct_mean_us']):.1f} us",
                flush=True,
            )
        else:
            print(
                f"{tag:<14} {label:<22} {r['cls']:<12} done {r['done']:>7}/{r['jobs']:<7} "
                f"jct {num(r['jct_mean_us']):>9.1f} us  p99 {num(r['jct_p99_us']):>9.1f}  "
                f"loss {r['loss_rate']:.4f}  q {num(r['queue_mean_bytes']):.0f} B",
                flush=True,
            )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fig", help="a figure (" + ", ".join(figures.FIGURES) + ") or all")
    ap.add_argument("--quick", action="store_true", help="k = 4 fat-tree, short runs (CI size)")
    ap.add_argument(
        "--only",
        default="",
        help="comma-separated run labels to keep, e.g. atp-full-0.5,dctcp-es-0.5",
    )
    ap.add_argument("-j", "--workers", type=int, default=1, help="runs in parallel (default 1)")
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        dest="sets",
        help="scenario override added to every run (repeatable), e.g. 'atp.ecn_reaction=true'",
    )
    ap.add_argument("--tag", default="", help="suffix of the results file: <fig>[-quick]-<tag>.csv")
    a = ap.parse_args()
    only = [x for x in a.only.split(",") if x]
    if os.environ.get(binaries.env_var("approxnet-sim")):
        sim = str(binaries.require("approxnet-sim"))
    else:  # this checkout's, rebuilt if stale (a no-op when it is not)
        sim = str(binaries.build("approxnet-sim"))
    for fig in ALL if a.fig == "all" else [a.fig]:
        tag = fig + ("-quick" if a.quick else "") + (f"-{a.tag}" if a.tag else "")
        held = claim(tag)
        out = os.path.join(ROOT, "results", "tmp", "netapprox", tag)
        res = repro.run_figure(
            fig,
            out,
            quick=a.quick,
            only=only,
            sets=a.sets,
            workers=a.workers,
            binary=sim,
            on_run=functools.partial(report, tag),
        )
        rows = [{k: ("" if v is None else v) for k, v in r.items()} for r in res.rows]
        path = os.path.join(HERE, "results", f"{tag}.csv")
        if only and os.path.exists(path):
            # merge by label: the re-run runs replace their old rows, every
            # other run of the earlier sweep stays, in the plan's order
            with open(path) as f:
                old = [r for r in csv.DictReader(f) if r["run"] not in set(only)]
            order = {r.label: i for i, r in enumerate(figures.plan(fig, a.quick))}
            rows = sorted(old + rows, key=lambda r: order.get(r["run"], len(order)))
        # an earlier sweep's rows may lack later columns (e.g. load)
        fields = list(dict.fromkeys(k for r in rows for k in r))
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, restval="")
            w.writeheader()
            w.writerows(rows)
        print(f"written {os.path.relpath(path, ROOT)}")
        held.close()


if __name__ == "__main__":
    sys.exit(main())
