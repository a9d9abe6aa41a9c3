#!/usr/bin/env python3
"""Does ATP's loss stay within 1 - MSR for every job? (issue 3 section 5)

Reads every ATP job of the runs that run.py kept under
results/tmp/netapprox/<tag>/<run>/jobs.csv and prints one Markdown row per
figure: jobs, and for each of two meanings of "loss"

* messages: 1 - delivered / messages for finished jobs (ATP's guarantee:
  at least ceil(MSR N) whole messages delivered; unfinished jobs listed apart),
* packets: lost / sent DATA packets of the job (what the TLR steers),

the largest value of loss - (1 - MSR) and how many jobs exceed their budget.

  python3 experiments/netapprox/check_loss.py fig5-quick fig6-quick ...
"""

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def check(tag):
    base = os.path.join(ROOT, "results", "tmp", "netapprox", tag)
    s = dict(
        jobs=0, done=0, open=0, msg_over=0, msg_worst=-1.0, pkt_over=0, pkt_worst=-1.0, pkt_max=0.0
    )
    if not os.path.isdir(base):
        return None
    for run in sorted(os.listdir(base)):
        path = os.path.join(base, run, "jobs.csv")
        if not os.path.exists(path):
            continue
        with open(path) as f:
            for j in csv.DictReader(f):
                if not j["scheme"].startswith("atp"):
                    continue
                msr = float(j["msr"]) if j["approximate"] == "true" else 1.0
                budget = 1.0 - msr
                s["jobs"] += 1
                n, needed = int(j["messages"]), int(j["needed"])
                delivered = int(j["delivered_msgs"])
                if j["done_ns"]:
                    s["done"] += 1
                    if delivered < needed:
                        s["msg_over"] += 1
                    # the guarantee is ceil(MSR N) messages; compare with that
                    s["msg_worst"] = max(s["msg_worst"], (needed - delivered) / n)
                else:
                    s["open"] += 1
                sent = int(j["sent_pkts"])
                if sent > 0:
                    rho = int(j["lost_pkts"]) / sent
                    s["pkt_max"] = max(s["pkt_max"], rho)
                    s["pkt_worst"] = max(s["pkt_worst"], rho - budget)
                    if rho > budget + 1e-9:
                        s["pkt_over"] += 1
    return s


def main():
    tags = sys.argv[1:]
    print(
        "| figure | ATP jobs | finished | finished below ceil(MSR N) messages | "
        "jobs with packet loss > 1 - MSR | largest packet loss - (1 - MSR) | largest packet loss |"
    )
    print("|---|---|---|---|---|---|---|")
    for t in tags:
        s = check(t)
        if s is None or s["jobs"] == 0:
            print(f"| {t} | 0 | | | | | |")
            continue
        over = s["pkt_over"] / s["jobs"] * 100
        print(
            f"| {t} | {s['jobs']} | {s['done']} ({s['open']} open at the end) | {s['msg_over']} | "
            f"{s['pkt_over']} ({over:.1f} %) | {s['pkt_worst'] * 100:+.1f} pts | {s['pkt_max'] * 100:.1f} % |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
