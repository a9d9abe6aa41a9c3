#!/usr/bin/env python3
"""Send more (seed 000 section 7.2): what the extra data bought and cost.

  python3 experiments/netapprox/send_more.py fig6-quick-sm-off fig6-quick-sm-on

Compares two sweeps that differ only in `atp.send_more` (run.py --set
atp.send_more=true --tag ...), run by run, from the runs' files under
results/tmp/netapprox/<tag>/: messages the receivers reported delivered
(atp_delivered.csv) against the messages the jobs had, and the JCT of the
jobs both runs finished (mean, and the largest change of one job).
"""

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TMP = os.path.join(os.path.dirname(os.path.dirname(HERE)), "results", "tmp", "netapprox")


def totals(run_dir):
    with open(os.path.join(run_dir, "atp_delivered.csv")) as f:
        return {k: int(v) for k, v in next(csv.DictReader(f)).items()}


def jobs(run_dir):
    with open(os.path.join(run_dir, "jobs.csv")) as f:
        return {(j["class"], j["src"], j["dst"], j["start_ns"]): j for j in csv.DictReader(f)}


def finished(j):
    return j["done_ns"] not in ("", "nan")


def main():
    off, on = sys.argv[1], sys.argv[2]
    print(
        "| run | class | messages | delivered off | delivered on | jobs both finished "
        "| mean JCT off / on us | change | one job: most slower / faster us |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for run in sorted(os.listdir(os.path.join(TMP, on))):
        a_dir, b_dir = os.path.join(TMP, off, run), os.path.join(TMP, on, run)
        if not os.path.isdir(a_dir):
            continue
        ta, tb = totals(a_dir), totals(b_dir)
        ja, jb = jobs(a_dir), jobs(b_dir)
        msgs = sum(int(j["messages"]) for j in ja.values())
        for cls in sorted({k[0] for k in ja}):
            keys = [
                k for k in ja if k[0] == cls and k in jb and finished(ja[k]) and finished(jb[k])
            ]
            if not keys:
                continue
            x = [float(ja[k]["jct_ns"]) / 1e3 for k in keys]
            y = [float(jb[k]["jct_ns"]) / 1e3 for k in keys]
            d = [b - a for a, b in zip(x, y, strict=True)]
            ma, mb = sum(x) / len(x), sum(y) / len(y)
            print(
                f"| {run} | {cls} | {msgs} | {ta['delivered']} | {tb['delivered']} | {len(keys)} "
                f"| {ma:.1f} / {mb:.1f} | {(mb / ma - 1) * 100:+.2f} % "
                f"| {max(d):.1f} / {-min(d):.1f} |"
            )


if __name__ == "__main__":
    main()
