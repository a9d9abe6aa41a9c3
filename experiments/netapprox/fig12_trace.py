"""Per-job trace of Fig. 12's FBHD ablation: which queues ATP Full chose,
its TLR / rate / loss per epoch, and where each job's time went, against
MRDF / FixPrio / RC on the same jobs and the JCT floor.

  .venv/bin/python experiments/netapprox/fig12_trace.py              # k = 12, MSR 0.75, load 0.5
  .venv/bin/python experiments/netapprox/fig12_trace.py --quick      # k = 4
  .venv/bin/python experiments/netapprox/fig12_trace.py --set seed=2 --load 0.7
  .venv/bin/python experiments/netapprox/fig12_trace.py --job 1795   # one job's epochs

Runs the study `netapprox/fig6_fbhd` once per variant with
`atp.record_epochs = true` (epochs.csv: one row per connection epoch with
TLR, measured loss rho, next rate and queue) and once as the floor run of
`run.py fig6bound` (the same jobs sent as produced over links 100x faster
that never drop). Runs land in results/tmp/netapprox/fig12trace-<tag>/ and
are reused when present (--fresh re-runs them). Connections are per
(sender, receiver) and carry later jobs too; a job's epochs are those of
its connection between its start and its completion.
"""

import argparse
import collections
import csv
import os
import statistics as st
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from approxnet import binaries, figures

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STUDY = os.path.join(ROOT, "python", "approxnet", "studies", "netapprox", "fig6_fbhd.toml")
VARIANTS = ("rc", "mrdf", "fixprio", "full")


def run(sim, out, sets):
    if os.path.exists(os.path.join(out, "jobs.csv")):
        return
    cmd = [sim, "run", STUDY, "--out", out, "--quiet", "--no-flows"]
    for s in sets:
        cmd += ["--set", s]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def jobs(path):
    with open(os.path.join(path, "jobs.csv")) as f:
        return {r["job"]: r for r in csv.DictReader(f) if r["jct_ns"]}


def epochs(path):
    per = collections.defaultdict(list)
    with open(os.path.join(path, "epochs.csv")) as f:
        for r in csv.DictReader(f):
            per[(r["host"], r["peer"])].append(
                (
                    int(r["t_ns"]),
                    float(r["tlr"]),
                    float(r["rho"]),
                    float(r["rate_bps"]),
                    int(r["queue"]),
                )
            )
    return per


def job_epochs(ep, r):
    s, d = int(r["start_ns"]), int(r["done_ns"])
    return [e for e in ep[(r["src"], r["dst"])] if s <= e[0] <= d]


def us(ns):
    return ns / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--msr", type=float, default=0.75)
    ap.add_argument("--load", type=float, default=0.5)
    ap.add_argument("--quick", action="store_true", help="k = 4, 16 hosts (run.py --quick's size)")
    ap.add_argument(
        "--set", action="append", default=[], dest="sets", help="extra scenario override"
    )
    ap.add_argument("--job", default="", help="print this job's epochs under every variant")
    ap.add_argument("--fresh", action="store_true", help="re-run even if the runs exist")
    ap.add_argument("-j", "--workers", type=int, default=2)
    a = ap.parse_args()
    sim = str(binaries.build("approxnet-sim"))
    q = list(figures.QUICK) if a.quick else []
    tag = f"m{a.msr}-L{a.load}" + ("-quick" if a.quick else "") + "".join(f"-{s}" for s in a.sets)
    base = os.path.join(ROOT, "results", "tmp", "netapprox", f"fig12trace-{tag}".replace('"', ""))
    runs = {}
    for v in VARIANTS:
        runs[v] = [
            f'jobs.0.scheme="atp-{v}"',
            f"jobs.0.msr={a.msr}",
            f"jobs.0.load={a.load}",
            "atp.record_epochs=true",
            *q,
            *a.sets,
        ]
    gbps = 40.0 * figures.BOUND_SPEEDUP
    runs["floor"] = [
        'jobs.0.scheme="udp"',
        f"topology.host_gbps={gbps:g}",
        "switch.buffer_kb=1000000.0",
        f"jobs.0.msr={a.msr}",
        *q,
        *a.sets,
        f"jobs.0.load={a.load / figures.BOUND_SPEEDUP:g}",
    ]
    if a.fresh:
        for v in runs:
            p = os.path.join(base, v, "jobs.csv")
            if os.path.exists(p):
                os.remove(p)
    with ThreadPoolExecutor(a.workers) as ex:
        list(ex.map(lambda kv: run(sim, os.path.join(base, kv[0]), kv[1]), runs.items()))
    J = {v: jobs(os.path.join(base, v)) for v in runs}
    E = {v: epochs(os.path.join(base, v)) for v in VARIANTS}
    floor = J["floor"]
    common = [j for j in floor if all(j in J[v] for v in VARIANTS)]
    print(f"runs in {os.path.relpath(base, ROOT)}; {len(common)} jobs finished by every variant")
    print(
        "mean JCT (us) on them: "
        + ", ".join(
            f"{v} {st.mean(us(int(J[v][j]['jct_ns'])) for j in common):.1f}" for v in VARIANTS
        )
    )
    msr_queue = max(1, int((1 - a.msr) * 8))
    F = J["full"]
    up: list[str] = []
    stay: list[str] = []
    pre: list[float] = []
    post: list[float] = []
    for j in common:
        ep = job_epochs(E["full"], F[j])
        higher = [e[0] for e in ep if e[4] < msr_queue]
        (up if higher else stay).append(j)
        if higher:
            pre.append(us(min(higher) - int(F[j]["start_ns"])))
            post.append(us(int(F[j]["done_ns"]) - min(higher)))

    def excess(v, js):
        return (
            st.mean(us(int(J[v][j]["jct_ns"]) - int(floor[j]["jct_ns"])) for j in js)
            if js
            else float("nan")
        )

    def pkts(v, js, col):
        return sum(int(J[v][j][col]) for j in js)

    print(
        f"\nATP Full: jobs whose queue rose above the MSR's queue {msr_queue} (TLR fell with their losses):"
    )
    for name, js in (("rose", up), ("stayed", stay)):
        print(
            f"  {name:<6} {len(js):>5} jobs; mean excess over the floor (us): "
            + ", ".join(f"{v} {excess(v, js):.0f}" for v in VARIANTS)
            + "; sum Full - FixPrio "
            + f"{sum(us(int(F[j]['jct_ns']) - int(J['fixprio'][j]['jct_ns'])) for j in js) / 1e3:.1f} ms"
        )
        print(
            "         packets sent / lost: "
            + ", ".join(
                f"{v} {pkts(v, js, 'sent_pkts')} / {pkts(v, js, 'lost_pkts')}" for v in VARIANTS
            )
        )
    if pre:
        print(
            f"  the risen jobs under Full: {st.mean(pre):.0f} us before the move, {st.mean(post):.0f} us after "
            f"(p50 / p90 / p99 after: {st.quantiles(post, n=100)[49]:.0f} / {st.quantiles(post, n=100)[89]:.0f} / "
            f"{st.quantiles(post, n=100)[98]:.0f})"
        )
    # queue occupancy of every Full epoch
    qc = collections.Counter(e[4] for per in E["full"].values() for e in per)
    print("  Full epochs per queue: " + ", ".join(f"q{k} {n}" for k, n in sorted(qc.items())))
    if a.job:
        for v in VARIANTS:
            r = J[v].get(a.job)
            if r is None:
                print(f"\n{v}: job {a.job} not finished")
                continue
            s = int(r["start_ns"])
            print(
                f"\n{v} job {a.job}: {r['src']} -> {r['dst']}, {r['bytes']} B, JCT {us(int(r['jct_ns'])):.0f} us "
                f"(floor {us(int(floor[a.job]['jct_ns'])):.0f}), sent {r['sent_pkts']}, lost {r['lost_pkts']}"
            )
            for t, tlr, rho, rate, qq in job_epochs(E[v], r):
                print(
                    f"  t={us(t - s):7.1f} us  TLR {tlr:.3f}  rho {rho:.3f}  rate {rate / 1e9:5.1f} G  queue {qq}"
                )


if __name__ == "__main__":
    sys.exit(main())
