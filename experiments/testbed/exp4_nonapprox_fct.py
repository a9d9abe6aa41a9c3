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

import argparse
import math
import time
from pathlib import Path
from typing import Any

import common as c

MODES = ["alone", "atp", "tcp-es", "tcp-ss"]
FCT_PORT, TCP_PORT = 7850, 7800


def one(tb: c.testbed.Testbed, mode: str, msr: float, a: argparse.Namespace) -> dict[str, Any]:
    bound = a.seconds + 30
    fsrv = c.start(
        tb, "h4", [*c.TOOLS, "fct-server", "--port", str(FCT_PORT), "--timeout", str(bound)]
    )
    procs: list[Any] = []
    approx: dict[str, Any] = {}
    try:
        if mode == "atp":
            srv = c.atp_server(tb, "h3", jobs=1_000_000, idle=1.0)
            procs.append(srv)
            cli = tb.exec(
                "h1",
                c.atp_client_argv(
                    tb.address("h3"),
                    msr,
                    a.messages,
                    a.size,
                    1_000_000,
                    a.line_rate_gbps,
                    duration=a.seconds,
                    window=2,
                ),
                stdout=c.PIPE,
                stderr=c.PIPE,
                text=True,
            )
            procs.append(cli)
        elif mode.startswith("tcp-"):
            srv = c.start(
                tb,
                "h3",
                [*c.TOOLS, "tcp-job-server", "--port", str(TCP_PORT), "--timeout", str(bound)],
            )
            procs.append(srv)
            cli = tb.exec(
                "h1",
                [
                    *c.TOOLS,
                    "tcp-job-send",
                    "--dst",
                    tb.address("h3"),
                    "--port",
                    str(TCP_PORT),
                    "--mode",
                    mode[4:],
                    "--msr",
                    str(msr),
                    "--messages",
                    str(a.messages),
                    "--size",
                    str(a.size),
                    "--jobs",
                    "1000000",
                    "--cc",
                    "cubic",
                    "--seconds",
                    str(a.seconds),
                    "--timeout",
                    str(bound),
                ],
                stdout=c.PIPE,
                stderr=c.PIPE,
                text=True,
            )
            procs.append(cli)
        t_approx = time.monotonic()
        if mode != "alone":
            time.sleep(a.lead)
        flows = c.run(
            tb,
            "h2",
            [
                *c.TOOLS,
                "fct-send",
                "--dst",
                tb.address("h4"),
                "--port",
                str(FCT_PORT),
                "--flows",
                str(a.flows),
                "--size",
                str(a.flow_size),
                "--gap",
                str(a.gap),
                "--cc",
                "cubic",
                "--timeout",
                str(bound),
            ],
            timeout=bound,
        )
        if mode != "alone":
            approx = c.finish(procs[1], timeout=bound)
            c.finish(procs[0], timeout=10)
        c.stop(fsrv)
    finally:
        for p in procs:
            c.kill(p)
        c.kill(fsrv)
    # The approximate sender's active window.
    if mode == "atp":
        end = t_approx + approx.get("elapsed_s", 0.0)
    elif mode.startswith("tcp-"):
        end = approx.get("end", t_approx)
    else:
        end = math.inf
    inside = [f for f in flows["flows"] if f["ok"] and f["t0"] + f["fct_s"] <= end]
    s = c.summary([f["fct_s"] * 1e3 for f in inside])
    row: dict[str, Any] = {
        "mode": mode,
        "msr": msr if mode != "alone" else "",
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
    elif mode.startswith("tcp-"):
        secs = max(approx["end"] - approx["start"], 1e-9)
        row.update(
            approx_jobs=len(approx["jobs"]),
            approx_goodput_mbps=round(
                len(approx["jobs"]) * approx["need"] * a.size * 8 / secs / 1e6, 1
            ),
        )
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--config", type=Path, default=c.HERE / "dumbbell.toml")
    p.add_argument("--name", help="testbed name (default: the config's)")
    p.add_argument("--msrs", default="0.5,0.9")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--flows", type=int, default=50)
    p.add_argument("--flow-size", type=int, default=100_000)
    p.add_argument("--gap", type=float, default=0.01)
    p.add_argument("--seconds", type=float, default=2.0, help="approximate traffic duration")
    p.add_argument("--lead", type=float, default=0.3)
    p.add_argument("--messages", type=int, default=32)
    p.add_argument("--size", type=int, default=65536)
    p.add_argument("--line-rate-gbps", type=float, default=1.0)
    p.add_argument("--out", type=Path, default=c.RESULTS / "exp4_nonapprox_fct")
    a = p.parse_args(argv)
    c.require_root()
    c.require_perf()
    env = c.environment()
    cfg = c.load_config(a.config, a.name)
    rows = []
    with c.testbed.up(cfg) as tb:
        for mode in a.modes.split(","):
            for msr in [float(x) for x in a.msrs.split(",")] if mode != "alone" else [1.0]:
                before = c.port_counters(tb, "xl", "xr")
                try:
                    row = one(tb, mode, msr, a)
                except (c.ExperimentError, OSError, KeyError, ValueError) as e:
                    row = {"mode": mode, "msr": msr, "error": str(e)[:200]}
                row.update(c.counter_delta(before, c.port_counters(tb, "xl", "xr")))
                row["loadavg1"] = c.loadavg()[0]
                rows.append(row)
                print(
                    f"{mode:<6} msr {row.get('msr', '')!s:<4} FCT p50 "
                    f"{row.get('fct_p50_ms', math.nan):7.2f} ms  p90 "
                    f"{row.get('fct_p90_ms', math.nan):7.2f} ms  max "
                    f"{row.get('fct_max_ms', math.nan):7.2f} ms  ({row.get('overlapped')}"
                    f"/{row.get('flows')} overlapped)  approx "
                    f"{row.get('approx_goodput_mbps', '')} Mbit/s {row.get('error', '')}",
                    flush=True,
                )
    c.save_rows(a.out, env, a, rows)
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
