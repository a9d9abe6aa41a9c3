#!/usr/bin/env python3
"""Where each transport process's wall time went, over runs of veth_goodput.sh.

    python3 benches/net/veth_sched_summary.py "hog=/tmp/abba/*_A" "quiet=/tmp/q0"

Each argument is LABEL=GLOB: the GLOB names veth_goodput.sh output folders
(an ABBA's block folders, e.g. "$OUT/*_B"). Per label, medians over all runs
of: goodput (kernel TCP cubic and ATP), ATP/TCP, each process's time on a
CPU, waiting for one (runnable, from /proc/PID/schedstat as the script
sampled it, to the last 0.1 s before exit) and asleep (the rest of its life;
the ATP server's includes its 2 s idle end), and CPU seconds per GB of each
process. On a CPU-starved host the two clients get about the same CPU time,
so ATP/TCP goodput follows the ratio of the clients' CPU per GB.
"""

import glob
import json
import statistics as st
import sys
from typing import Any

PROCS = ("tcp_client", "tcp_server", "atp_client", "atp_server")


def runs(folders):
    out = []
    for d in folders:
        for f in sorted(glob.glob(f"{d}/atp_client_[0-9]*.json")):
            r = f.rsplit("_", 1)[1].split(".")[0]
            try:
                x: dict[str, Any] = {}
                for n in PROCS:
                    run, wait, _, wall = map(int, open(f"{d}/{n}_sched_{r}").read().split())
                    x[n] = (run / 1e9, wait / 1e9, max(wall - run - wait, 0) / 1e9)
                j = {n: json.load(open(f"{d}/{n}_{r}.json")) for n in PROCS}
            except (OSError, ValueError):
                continue  # a run without schedstat samples (older script) or a failed one
            gt = j["tcp_server"]["bytes"] / 1e9
            ga = max(j["atp_client"]["bytes_delivered"] / 1e9, 1e-9)
            x["cpu"] = {
                "tcp_client": j["tcp_client"]["cpu_s"] / gt,
                "tcp_server": j["tcp_server"]["cpu_s"] / gt,
                "atp_client": j["atp_client"]["cpu_s"] / ga,
                "atp_server": j["atp_server"]["cpu_s"] / ga,
            }
            x["gbps"] = (j["tcp_server"]["goodput_gbps"], j["atp_client"]["goodput_gbps"])
            out.append(x)
    return out


def med(values):
    """Median of an iterable of numbers."""
    return st.median(list(values))


def main(args):
    if not args:
        print(__doc__)
        return 2
    for arg in args:
        label, pattern = arg.rsplit("=", 1)
        rs = runs(sorted(glob.glob(pattern)))
        if not rs:
            print(f"{label}: no runs with schedstat samples under {pattern}")
            continue
        tcp = med(x["gbps"][0] for x in rs)
        atp = med(x["gbps"][1] for x in rs)
        ratio = med(x["gbps"][1] / x["gbps"][0] for x in rs)
        print(
            f"{label}: {len(rs)} runs; goodput TCP {tcp:.1f}, ATP {atp:.1f} Gbit/s, ATP/TCP {ratio:.2f}"
        )
        for n in PROCS:
            on, wait, asleep = (med(x[n][k] for x in rs) for k in range(3))
            cpu = med(x["cpu"][n] for x in rs)
            print(
                f"   {n:10} on a CPU {on:.2f} s, waiting for one {wait:.2f} s, "
                f"asleep {asleep:.2f} s, {cpu:.3f} CPU-s/GB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
