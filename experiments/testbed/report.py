"""Markdown tables from experiments/testbed/results/*.json (no root needed).

    python3 experiments/testbed/report.py [RESULTS_DIR] > experiments/testbed/results/tables.md

Results not present in the directory are listed as "not run".
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def fmt(v: Any, nd: int = 1) -> str:
    if v is None or v == "":
        return ""
    if isinstance(v, bool):
        return "yes" if v else "**no**"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.{nd}f}"
    return str(v)


def table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def env_line(env: dict[str, Any]) -> str:
    gap = env.get("args", {}).get("gap", "none (all at once)")
    return (
        f"_{env['utc']}, load average {env['loadavg_start']} -> "
        f"{env.get('loadavg_end')} on {env['cpus']} CPUs, kernel {env['kernel']}, "
        f"production gaps {gap} us_"
    )


def drops(r: dict[str, Any]) -> str:
    d = [f"q{q}:{r[f'q{q}_drops']}" for q in range(8) if r.get(f"q{q}_drops")]
    return " ".join(d) or "0"


def exp1(name: str = "exp1_msr_jct") -> str:
    d = json.loads((RESULTS / f"{name}.json").read_text())
    rows = []
    for r in d["rows"]:
        rows.append(
            [
                fmt(r["msr"], 2),
                r["scheme"],
                fmt(r.get("jobs_done")),
                fmt(r.get("jct_p50_ms")),
                fmt(r.get("jct_mean_ms")),
                fmt(r.get("jct_p99_ms")),
                fmt(r.get("delivered_fraction"), 3),
                fmt(r.get("loss"), 4),
                fmt(r.get("loss_ok")),
                fmt(r.get("sent_MB_per_job"), 2),
                fmt(r.get("unsent_MB_per_job"), 3),
                fmt(r.get("production_ms")),
                drops(r),
                fmt(r.get("rx_udp_RcvbufErrors")),
                fmt(r.get("bg_achieved_mbps"), 0),
                r.get("queues", ""),
                r.get("error", ""),
            ]
        )
    return (
        env_line(d["environment"])
        + "\n\n"
        + table(
            [
                "MSR",
                "scheme",
                "jobs",
                "JCT p50 ms",
                "mean",
                "p99",
                "delivered",
                "pkt loss",
                "delivered >= MSR",
                "MB sent/job",
                "MB unsent/job",
                "production ms",
                "bottleneck drops",
                "rcvbuf drops",
                "bg Mbit/s",
                "ATP queue time",
                "note",
            ],
            rows,
        )
    )


def exp2(name: str = "exp2_incast") -> str:
    d = json.loads((RESULTS / f"{name}.json").read_text())
    rows = []
    for r in d["rows"]:
        rows.append(
            [
                r["scheme"],
                fmt(r.get("jobs_done")),
                fmt(r.get("jct_p50_ms")),
                fmt(r.get("jct_mean_ms")),
                fmt(r.get("jct_p99_ms")),
                fmt(r.get("makespan_s"), 3),
                fmt(r.get("delivered_fraction"), 3),
                fmt(r.get("loss"), 3),
                fmt(r.get("retransmissions")),
                fmt(r.get("unsent_MB"), 1),
                fmt(r.get("production_ms")),
                drops(r),
                fmt(r.get("rx_udp_RcvbufErrors")),
                f"{r.get('atp_server_datagrams_received', '')}/{r.get('atp_datagrams_sent', '')}"
                if "atp_datagrams_sent" in r
                else "",
            ]
        )
    return (
        env_line(d["environment"])
        + "\n\n"
        + table(
            [
                "scheme",
                "jobs",
                "JCT p50 ms",
                "mean",
                "p99",
                "makespan s",
                "delivered",
                "ATP declared loss",
                "retx",
                "MB unsent",
                "production ms",
                "bottleneck drops",
                "rcvbuf drops",
                "ATP datagrams recv/sent",
            ],
            rows,
        )
    )


def exp3(name: str) -> str:
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return f"({name}: not run)"
    d = json.loads(path.read_text())
    rows = []
    for p in d["phases"]:
        qs = " ".join(
            f"q{q} {p[f'q{q}_mbps_mean']:.0f}/{p[f'q{q}_drops']}"
            for q in range(8)
            if f"q{q}_mbps_mean" in p
        )
        rows.append(
            [
                f"{p['from_s']:.2f}-{p['to_s']:.2f}",
                str(p["bg_queue"]),
                fmt(p.get("atp_queue_mode")),
                p.get("atp_queues_seen", ""),
                fmt(p.get("atp_tlr_mean"), 3),
                fmt(p.get("atp_rho_mean"), 3),
                fmt(p.get("atp_rate_gbps_mean"), 3),
                qs,
            ]
        )
    bg = d["background"]
    cl = d["atp_client"]
    head = (
        env_line(d["environment"]) + f"; background achieved {bg['achieved_mbps']:.0f} of "
        f"{bg['rate_mbps']:.0f} Mbit/s; ATP {cl['jobs_completed']} jobs, "
        f"measured loss {cl['measured_loss']:.3f}, goodput {cl['goodput_gbps']:.3f} Gbit/s"
    )
    return (
        head
        + "\n\n"
        + table(
            [
                "phase s",
                "bg queue",
                "ATP queue (mode)",
                "ATP queue: epochs",
                "TLR mean",
                "rho mean",
                "rate Gbit/s",
                "tc per queue: Mbit/s / drops",
            ],
            rows,
        )
    )


def exp4(name: str = "exp4_nonapprox_fct") -> str:
    d = json.loads((RESULTS / f"{name}.json").read_text())
    rows = []
    for r in d["rows"]:
        rows.append(
            [
                r["mode"],
                fmt(r.get("msr"), 2),
                f"{r.get('overlapped')}/{r.get('flows')}",
                fmt(r.get("fct_p50_ms"), 2),
                fmt(r.get("fct_mean_ms"), 2),
                fmt(r.get("fct_p90_ms"), 2),
                fmt(r.get("fct_max_ms"), 2),
                fmt(r.get("approx_goodput_mbps"), 0),
                drops(r),
                r.get("approx_queues", ""),
                r.get("error", ""),
            ]
        )
    return (
        env_line(d["environment"])
        + "\n\n"
        + table(
            [
                "approximate traffic",
                "MSR",
                "flows",
                "FCT p50 ms",
                "mean",
                "p90",
                "max",
                "approx goodput Mbit/s",
                "bottleneck drops",
                "ATP queue time",
                "note",
            ],
            rows,
        )
    )


def main() -> int:
    global RESULTS
    if len(sys.argv) > 1:
        RESULTS = Path(sys.argv[1])
    parts: list[tuple[str, Callable[[], str]]] = [
        ("Experiment 1: JCT across MSR (1 Gbit/s)", exp1),
        ("Experiment 1: JCT across MSR (200 Mbit/s)", lambda: exp1("exp1_msr_jct_200m")),
        (
            "Experiment 1: JCT across MSR (200 Mbit/s, second run)",
            lambda: exp1("exp1_msr_jct_200m_run2"),
        ),
        ("Experiment 2: incast", exp2),
        (
            "Experiment 1: JCT across MSR (1 Gbit/s), every message ready at job start",
            lambda: exp1("exp1_msr_jct_allatonce"),
        ),
        (
            "Experiment 2: incast, every message ready at job start",
            lambda: exp2("exp2_incast_allatonce"),
        ),
        ("Experiment 3: dynamic priority (1 Gbit/s)", lambda: exp3("exp3_dynamic_priority")),
        ("Experiment 3: dynamic priority (200 Mbit/s)", lambda: exp3("exp3_dynamic_priority_200m")),
        (
            "Ablation: ATP alone above a queue-7 background, pacing lookahead 1000 us",
            lambda: exp3("ablation_lookahead_1000us"),
        ),
        (
            "Ablation: ATP alone above a queue-7 background, pacing lookahead 100 us",
            lambda: exp3("ablation_lookahead_100us"),
        ),
        ("Experiment 4: non-approximate FCT (1 Gbit/s)", exp4),
        ("Experiment 4: non-approximate FCT (200 Mbit/s)", lambda: exp4("exp4_nonapprox_fct_200m")),
        (
            "Experiment 4: non-approximate FCT (200 Mbit/s, second run)",
            lambda: exp4("exp4_nonapprox_fct_200m_run2"),
        ),
        (
            "Ablation: incast with ATP min RTO 20 ms",
            lambda: exp2("ablation_incast_min_rto_20000us"),
        ),
        (
            "Ablation: incast with ATP min RTO 100 ms",
            lambda: exp2("ablation_incast_min_rto_100000us"),
        ),
    ]
    for title, f in parts:
        try:
            body = f()
        except FileNotFoundError as e:
            body = f"(not run: {e.filename})"
        print(f"### {title}\n\n{body}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
