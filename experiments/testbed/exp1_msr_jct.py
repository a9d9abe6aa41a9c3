"""Experiment 1: approximate jobs across MSR through a 1 Gbps bottleneck.

h1 -> h3 runs `--jobs` jobs one after another (N messages of S bytes each)
with every scheme, while h2 -> h4 sends a paced UDP background (default
300 Mbit/s in queue 0, i.e. non-approximate, highest priority) through the
same 1 Gbps trunk. Schemes (seed 000 section 7.1):

* `atp`: approxnet-perf client/server (ATP, MSR, slack-based queue) with
  line rate `--line-rate-gbps` (default 1, the bottleneck); `atp:10` the
  same with a 10 Gbit/s line rate (h1's NIC);
* `tcp-<cc>-ss`: kernel TCP SampleSend (send ceil(MSR N) sampled messages);
* `tcp-<cc>-es`: kernel TCP EarlySend (send all, stop once the receiver has
  ceil(MSR N));
* `udp`: plain UDP, every datagram as fast as one `sendto` goes, no feedback.

Production (seed 000 sections 2.2, 7.1): by default each job's messages are
produced over time, exponential gaps of mean size x 8 / `--produce-mbps`
(default 500 Mbit/s, half the bottleneck: 1.05 ms per 64 KiB message), the
same gaps for every scheme at one MSR (`--gap-seed`-style seed 1 + 100 i);
ATP opens a streaming job and stops at its MSR, SampleSend sends its
sampled messages as they are produced, EarlySend each one as produced,
UDP too. `--gap-us none` is the old mode (every message ready at job
start); `--gap-us fixed:US` / `exp:US` set the gaps directly.

JCT is one definition for all: from the job's first production (job start)
until the receiver holds ceil(MSR N), seen at the sender (ATP: the core's
job report, ended by the receiver's SATISFIED flag; TCP: the receiver's
"done"); for UDP, which has no feedback, the ceil(MSR N)-th whole message
at the receiver - job start (one shared clock). Checks and records that
ATP's measured loss <= 1 - MSR.

    sudo PYTHONPATH=python .venv/bin/python experiments/testbed/exp1_msr_jct.py
    sudo PYTHONPATH=python .venv/bin/python experiments/testbed/exp1_msr_jct.py --gap-us none
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import driver as d

from approxnet.testbed import procs, schemes

SCHEMES = ["atp", "atp:10", "tcp-cubic-ss", "tcp-cubic-es", "tcp-bbr-ss", "tcp-bbr-es", "udp"]
BG_PORT = 7950
LINE = (
    "msr {msr:<5} {scheme:<13} jct p50 {jct_p50_ms:8.1f} ms  p99 {jct_p99_ms:8.1f} ms  "
    "delivered {delivered_fraction:.3f}  loss {loss:.4f}  unsent MB/job "
    "{unsent_MB_per_job:.3f}  {error}"
)


def plot(path: Path, rows: list[dict[str, Any]], title: str) -> None:
    """JCT (median, bar to p99) against MSR, one line per scheme."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for k, scheme in enumerate(dict.fromkeys(r["scheme"] for r in rows)):
        rs = [r for r in rows if r["scheme"] == scheme and "jct_p50_ms" in r]
        x = [r["msr"] + (k - 3) * 0.006 for r in rs]
        y = [r["jct_p50_ms"] for r in rs]
        hi = [max(r["jct_p99_ms"] - r["jct_p50_ms"], 0.0) for r in rs]
        ax.errorbar(x, y, yerr=[[0.0] * len(y), hi], marker="o", ms=4, capsize=2, label=scheme)
    ax.set_xlabel("MSR")
    ax.set_ylabel("JCT (ms): median, bar to p99")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = d.parser(
        __doc__,
        "dumbbell.toml",
        "exp1_msr_jct",
        jobs=12,
        jobs_help="jobs per (MSR, scheme), one at a time",
        plot=True,
        produce_mbps=500.0,
        produce_what="per job in Mbit/s",
    )
    p.add_argument("--msrs", type=d.msrs, default="0.25,0.5,0.75,1")
    p.add_argument("--schemes", type=d.scheme_list, default=",".join(SCHEMES))
    p.add_argument("--bg-mbps", type=float, default=300.0, help="background rate (0: none)")
    p.add_argument("--bg-queue", type=int, default=0)
    p.add_argument("--mtu", type=int, default=1500)
    a = p.parse_args(argv)
    a.gap = d.gap_spec(a)
    msrs = a.msrs
    names = a.schemes
    cfg, env = d.setup(a)
    bound = 5.0 + a.jobs * (3.0 + 2 * d.production_s(a.gap, a.messages))
    # One production sequence per MSR (gap seed), shared by every scheme.
    cases = [
        {"msr": msr, "scheme": s, "gap_us": a.gap, "seed": 1 + 100 * i + k, "gap_seed": 1 + 100 * i}
        for i, msr in enumerate(msrs)
        for k, s in enumerate(names)
    ]

    def run(case: dict[str, Any]) -> dict[str, Any]:
        j = d.jobs(a, case["msr"], seed=case["seed"], gap_seed=case["gap_seed"], mtu=a.mtu)
        return schemes.summarise(schemes.launch(tb, case["scheme"], ["h1"], "h3", j, bound).wait())

    t_start = time.monotonic()
    with d.testbed.up(cfg) as tb:
        bg_sink = procs.sink(tb, "h4", BG_PORT, 600)
        try:
            bg = d.background(tb, "h2", "h4", BG_PORT, a.bg_mbps, a.bg_queue)
            rows = d.sweep(tb, cases, run, ("xl", "xr"), LINE, "h3", bg if a.bg_mbps > 0 else None)
        finally:
            procs.stop(bg_sink)
    env["wall_s"] = round(time.monotonic() - t_start, 1)
    d.save_rows(a.out, env, a, rows)
    if not a.no_plot:
        trunk = cfg.trunks[0].rate_bps / 1e6 if cfg.trunks else math.nan
        plot(
            a.out.with_suffix(".png"),
            rows,
            f"{a.jobs} jobs of {a.messages} x {a.size} B through a {trunk:.0f} Mbit/s "
            f"bottleneck, {a.bg_mbps:.0f} Mbit/s background, gaps {a.gap} us",
        )
    atp = [r for r in rows if r["scheme"].startswith("atp") and "loss" in r]
    bad = [r for r in atp if not r["loss_ok"]]
    pk = [r for r in atp if r["msr"] < 1 and not r["packet_loss_ok"]]
    print(
        f"ATP: delivered >= MSR in {len(atp) - len(bad)} of {len(atp)} runs; packet loss > "
        f"1 - MSR in {len(pk)} runs with MSR < 1"
    )
    return 1 if bad or len(atp) < sum(s.startswith("atp") for s in names) * len(msrs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
