"""Experiment 4: FCT of co-running non-approximate TCP flows.

h2 -> h4 runs `--flows` short kernel-TCP flows (cubic, DSCP 0 = queue 0,
`--flow-size` bytes each, one after another `--gap` s apart; FCT includes
the handshake and a 1-byte reply) through the 1 Gbps trunk, while h1 -> h3
runs approximate jobs back to back with one of:

* `alone`: no approximate traffic (the baseline);
* `atp`: approxnet-perf (ATP; approximate groups sit in queues 1..7, below
  the non-approximate queue 0);
* `tcp-es` / `tcp-ss`: kernel TCP (cubic) EarlySend / SampleSend, which
  shares queue 0 (and its 219 KB buffer) with the non-approximate flows.

The approximate sender starts `--lead` s before the first flow and stops
starting jobs after `--seconds`; only flows that finished while it was
running count (the `overlapped` column says how many).

    sudo PYTHONPATH=python .venv/bin/python experiments/testbed/exp4_nonapprox_fct.py
"""

from __future__ import annotations

import math
import time
from typing import Any

import driver as d

from approxnet.testbed import Testbed, procs, schemes

MODES = ["alone", "atp", "tcp-es", "tcp-ss"]
FCT_PORT = 7850
#: the approximate scheme of each mode (kernel TCP: cubic)
SCHEME = {"atp": "atp", "tcp-es": "tcp-cubic-es", "tcp-ss": "tcp-cubic-ss"}
LINE = (
    "{mode:<6} msr {msr!s:<4} FCT p50 {fct_p50_ms:7.2f} ms  p90 {fct_p90_ms:7.2f} ms  max "
    "{fct_max_ms:7.2f} ms  ({overlapped}/{flows} overlapped)  approx "
    "{approx_goodput_mbps} Mbit/s {error}"
)


def one(tb: Testbed, case: dict[str, Any], a: Any) -> dict[str, Any]:
    mode, msr = case["mode"], case["msr"]
    bound = a.seconds + 30
    fsrv = procs.start(
        tb, "h4", [*procs.TRAFFIC, "fct-server", "--port", str(FCT_PORT), "--timeout", str(bound)]
    )
    run = None
    try:
        if mode != "alone":
            # Jobs back to back (ATP: two at a time) until --seconds.
            j = d.jobs(a, msr, jobs=1_000_000, seconds=a.seconds, window=2 if mode == "atp" else 1)
            run = schemes.launch(tb, SCHEME[mode], ["h1"], "h3", j, bound_s=bound)
            time.sleep(a.lead)
        flows = procs.run(
            tb,
            "h2",
            [*procs.TRAFFIC, "fct-send", "--dst", tb.address("h4"), "--port", str(FCT_PORT)]
            + ["--flows", str(a.flows), "--size", str(a.flow_size), "--gap", str(a.gap)]
            + ["--cc", "cubic", "--timeout", str(bound)],
            timeout=bound,
        )
        approx = run.wait().clients[0] if run is not None else {}
        procs.stop(fsrv)
    finally:
        if run is not None:
            run.kill()
        procs.kill(fsrv)
    # The approximate sender's active window.
    if mode == "atp":
        assert run is not None
        end = run.started + approx.get("elapsed_s", 0.0)
    elif run is not None:
        end = approx.get("end", run.started)
    else:
        end = math.inf
    inside = [f for f in flows["flows"] if f["ok"] and f["t0"] + f["fct_s"] <= end]
    s = schemes.summary([f["fct_s"] * 1e3 for f in inside])
    row: dict[str, Any] = {
        "flows": len(flows["flows"]),
        "overlapped": len(inside),
        "fct_mean_ms": s["mean"],
        "fct_p50_ms": s["p50"],
        "fct_p90_ms": s["p90"],
        "fct_max_ms": s["max"],
    }
    if mode == "atp":
        row.update(
            approx_jobs=approx["jobs_completed"],
            approx_goodput_mbps=round(approx["goodput_gbps"] * 1e3, 1),
            approx_loss=approx["measured_loss"],
            approx_queues=";".join(
                f"{q['queue']}:{q['time_fraction']:.2f}" for q in approx["queue_time_fraction"]
            ),
        )
    elif run is not None:
        secs = max(approx["end"] - approx["start"], 1e-9)
        row.update(
            approx_jobs=len(approx["jobs"]),
            approx_goodput_mbps=round(
                len(approx["jobs"]) * approx["need"] * a.size * 8 / secs / 1e6, 1
            ),
        )
    return row


def main(argv: list[str] | None = None) -> int:
    p = d.parser(__doc__, "dumbbell.toml", "exp4_nonapprox_fct")
    p.add_argument("--msrs", type=d.msrs, default="0.5,0.9")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--flows", type=int, default=50)
    p.add_argument("--flow-size", type=int, default=100_000)
    p.add_argument("--gap", type=float, default=0.01)
    p.add_argument("--seconds", type=float, default=2.0, help="approximate traffic duration")
    p.add_argument("--lead", type=float, default=0.3)
    a = p.parse_args(argv)
    cfg, env = d.setup(a)
    msrs = a.msrs
    cases = [
        {"mode": mode, "msr": msr if mode != "alone" else ""}
        for mode in a.modes.split(",")
        for msr in (msrs if mode != "alone" else [1.0])
    ]
    with d.testbed.up(cfg) as tb:
        rows = d.sweep(tb, cases, lambda case: one(tb, case, a), ("xl", "xr"), LINE)
    d.save_rows(a.out, env, a, rows)
    return 0 if all(not r.get("error") for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
