"""Experiment 2: incast, 8 senders to 1 receiver behind a 1 Gbps link.

Every sender s1..s8 starts at the same instant (`exec-at`) and runs
`--jobs` approximate jobs one after another (N messages of S bytes, MSR
`--msr`) to r, whose 1 Gbps switch port is the bottleneck. Schemes: ATP
(8 approxnet-perf clients, one server) and kernel TCP SampleSend /
EarlySend (cubic, bbr; 8 receivers on r). Recorded per scheme: JCT over all
jobs of all senders, the makespan (first start to last job done), drops per
queue on the bottleneck port (tc), and for ATP the measured loss and
delivered fraction.

ATP reports JCT percentiles per client, not per job: its overall mean and
max are exact, its p50 / p99 columns are the median / max of the eight
clients' p50 / p99.

Production (seed 000 sections 2.2, 7.1): by default each sender produces its
jobs' messages over time, exponential gaps of mean size x 8 /
`--produce-mbps` (default 62.5 Mbit/s per sender: the 8 senders together
offer 500 Mbit/s, half the receiver's link; 8.4 ms per 64 KiB message),
sender i with gap seed 1 + i in every scheme. JCT runs from a job's first
production until the receiver holds ceil(MSR N), seen at the sender.
`--gap-us none` is the old mode (every message ready at job start).

    sudo PYTHONPATH=python .venv/bin/python experiments/testbed/exp2_incast.py
    sudo PYTHONPATH=python .venv/bin/python experiments/testbed/exp2_incast.py --gap-us none
"""

from __future__ import annotations

from typing import Any

import driver as d

from approxnet.testbed import procs, schemes

SCHEMES = ["atp", "tcp-cubic-ss", "tcp-cubic-es", "tcp-bbr-ss", "tcp-bbr-es"]
START_DELAY_S = 1.5  # every sender process is up well before this
LINE = (
    "{scheme:<13} jct mean {jct_mean_ms:7.1f} ms  p99 {jct_p99_ms:7.1f} ms  makespan "
    "{makespan_s:.3f} s  delivered {delivered_fraction:.3f}  unsent {unsent_MB:.1f} MB  {error}"
)
CAPTURED = ("data", "late", "late_other_queue")


def main(argv: list[str] | None = None) -> int:
    p = d.parser(
        __doc__,
        "incast.toml",
        "exp2_incast",
        messages=16,
        jobs=4,
        jobs_help="jobs per sender, one at a time",
        produce_mbps=62.5,
        produce_what="per sender in Mbit/s",
    )
    p.add_argument("--msr", type=d.msr, default=0.5)
    p.add_argument("--schemes", type=d.scheme_list, default=",".join(SCHEMES))
    p.add_argument(
        "--capture",
        action="store_true",
        help="count ATP DATA packets arriving >= 3 seqs late at r, and ACKs at s1 (AF_PACKET)",
    )
    a = p.parse_args(argv)
    a.gap = d.gap_spec(a)
    cfg, env = d.setup(a)
    hosts = [h.name for h in cfg.hosts if h.name != "r"]
    bound = 10.0 + a.jobs * (5.0 + 2 * d.production_s(a.gap, a.messages))
    cases = [{"scheme": s, "msr": a.msr, "senders": len(hosts), "gap_us": a.gap} for s in a.schemes]

    def run(case: dict[str, Any]) -> dict[str, Any]:
        watch = []
        if a.capture and case["scheme"] == "atp":
            cap = [*procs.TRAFFIC, "capture", "--port", str(schemes.ATP_PORT)]
            cap += ["--seconds", str(bound)]
            watch = [("r", cap), (hosts[0], [*cap, "--acks"])]
        # Sender i: seed and gap seed 1 + i, in every scheme.
        j = d.jobs(a, a.msr)
        o = schemes.launch(tb, case["scheme"], hosts, "r", j, bound, START_DELAY_S, watch).wait()
        row = schemes.summarise(o)
        if o.watched:
            seen, acks = o.watched
            row |= {f"capture_{k}": v for k, v in seen.items() if k in CAPTURED}
            row |= {f"capture_{hosts[0]}_acks_{k}": v for k, v in acks.items() if k in CAPTURED}
        return row

    with d.testbed.up(cfg) as tb:
        rows = d.sweep(tb, cases, run, ("sw", "r"), LINE, "r")
    d.save_rows(a.out, env, a, rows)
    return 0 if all(r.get("jobs_failed", 1) == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
