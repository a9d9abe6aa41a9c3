"""Experiment 2: incast, 8 senders to 1 receiver behind a 1 Gbps link.

Every sender s1..s8 starts at the same instant (`tools.py exec-at`) and runs
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

import argparse
import math
import statistics
import time
from pathlib import Path
from typing import Any

import common as c

SCHEMES = ["atp", "tcp-cubic-ss", "tcp-cubic-es", "tcp-bbr-ss", "tcp-bbr-es"]
TCP_PORT = 7800
START_DELAY_S = 1.5  # every sender process is up well before this


def senders(cfg: c.testbed.Config) -> list[str]:
    return [h.name for h in cfg.hosts if h.name != "r"]


def bound_s(a: argparse.Namespace) -> float:
    return float(10.0 + a.jobs * (5.0 + 2 * c.production_s(a.gap, a.messages)))


def run_atp(tb: c.testbed.Testbed, hosts: list[str], a: argparse.Namespace) -> dict[str, Any]:
    bound = bound_s(a)
    srv = c.atp_server(tb, "r", jobs=a.jobs * len(hosts), idle=START_DELAY_S + 3.0)
    procs = []
    cap = ack_cap = None
    if a.capture:
        cap = c.start(
            tb, "r", [*c.TOOLS, "capture", "--port", str(c.ATP_PORT), "--seconds", str(bound)]
        )
        ack_cap = c.start(
            tb,
            hosts[0],
            [*c.TOOLS, "capture", "--acks", "--port", str(c.ATP_PORT), "--seconds", str(bound)],
        )
    try:
        at = time.monotonic() + START_DELAY_S
        for i, h in enumerate(hosts):
            argv = c.atp_client_argv(
                tb.address("r"),
                a.msr,
                a.messages,
                a.size,
                a.jobs,
                a.line_rate_gbps,
                seed=1 + i,
                gap_us=a.gap,
                gap_seed=1 + i,
            )
            procs.append(
                tb.exec(
                    h,
                    [*c.TOOLS, "exec-at", str(at), *argv],
                    stdout=c.PIPE,
                    stderr=c.PIPE,
                    text=True,
                )
            )
        outs = [c.finish(p, timeout=bound) for p in procs]
        server = c.finish(srv, timeout=10)
        seen = c.stop(cap) if cap is not None else {}
        ack_seen = c.stop(ack_cap) if ack_cap is not None else {}
    finally:
        for p in procs:
            c.kill(p)
        c.kill(srv)
        for p_cap in (cap, ack_cap):
            if p_cap is not None:
                c.kill(p_cap)
    done = sum(o["jobs_completed"] for o in outs)
    mean = sum(o["jct_ms"]["mean"] * o["jobs_completed"] for o in outs) / max(done, 1)
    pk = sum(o["packets"] for o in outs)
    lost = sum(o["lost_packets"] for o in outs)
    deliv = [g["delivered"] for o in outs for g in o["groups"]]
    msgs = [g["messages"] for o in outs for g in o["groups"]]
    must = [g["must_deliver"] for o in outs for g in o["groups"]]
    return {
        "jobs_done": done,
        "jobs_failed": sum(o["jobs_failed"] for o in outs),
        "jct_mean_ms": mean,
        "jct_p50_ms": statistics.median(o["jct_ms"]["p50"] for o in outs),
        "jct_p99_ms": max(o["jct_ms"]["p99"] for o in outs),
        "jct_max_ms": max(o["jct_ms"]["max"] for o in outs),
        "makespan_s": max(o["elapsed_s"] for o in outs) + 0.0,
        "delivered_fraction": sum(deliv) / max(sum(msgs), 1),
        "guarantee_held": all(d >= m for d, m in zip(deliv, must, strict=True)),
        "loss": lost / max(pk, 1),
        "retransmissions": sum(o["retransmissions"] for o in outs),
        # Declared losses by cause: the retransmission timer (the rest: fast
        # detection), and those whose ACK came afterwards (spurious).
        "lost_by_timer": sum(o.get("lost_by_timer", 0) for o in outs),
        "spurious_losses": sum(o.get("spurious_losses", 0) for o in outs),
        "errors": ";".join(o["error"] for o in outs if o.get("error")),
        # payload the jobs never sent: they met their MSR first
        "unsent_MB": sum(o.get("bytes_unsent", 0) for o in outs) / 1e6,
        "production_ms": statistics.mean(o.get("production_ms_mean") or 0.0 for o in outs),
        "atp_datagrams_sent": sum(o["runtime"]["datagrams_sent"] for o in outs),
        "atp_server_datagrams_received": server["runtime"]["datagrams_received"],
        "atp_server_cpu_s": server["cpu_s"],
        # The ACK path: datagrams the receiver sent back, and what the senders got.
        "atp_server_datagrams_sent": server["runtime"]["datagrams_sent"],
        "atp_server_send_would_block": server["runtime"]["send_would_block"],
        "atp_server_send_errors": server["runtime"]["send_errors"],
        "atp_clients_datagrams_received": sum(o["runtime"]["datagrams_received"] for o in outs),
        "atp_clients_core_drops": sum(sum(o["runtime"]["core_drops"].values()) for o in outs),
        **{f"capture_{k}": v for k, v in seen.items() if k in ("data", "late", "late_other_queue")},
        **{
            f"capture_{hosts[0]}_acks_{k}": v
            for k, v in ack_seen.items()
            if k in ("data", "late", "late_other_queue")
        },
        f"{hosts[0]}_lost_packets": outs[0]["lost_packets"],
        f"{hosts[0]}_packets": outs[0]["packets"],
    }


def run_tcp(
    tb: c.testbed.Testbed, hosts: list[str], cc: str, mode: str, a: argparse.Namespace
) -> dict[str, Any]:
    bound = bound_s(a)
    servers, procs = [], []
    try:
        for i, _ in enumerate(hosts):
            servers.append(
                c.start(
                    tb,
                    "r",
                    [
                        *c.TOOLS,
                        "tcp-job-server",
                        "--port",
                        str(TCP_PORT + i),
                        "--timeout",
                        str(bound),
                    ],
                )
            )
        at = time.monotonic() + START_DELAY_S
        for i, h in enumerate(hosts):
            argv = c.tcp_send_argv(
                tb.address("r"),
                TCP_PORT + i,
                mode,
                cc,
                a.msr,
                a.messages,
                a.size,
                a.jobs,
                seed=1 + i,
                timeout=bound,
                gap_us=a.gap,
                gap_seed=1 + i,
                job_base=1000 * i,
            )
            procs.append(
                tb.exec(
                    h,
                    [*c.TOOLS, "exec-at", str(at), *argv],
                    stdout=c.PIPE,
                    stderr=c.PIPE,
                    text=True,
                )
            )
        outs = [c.finish(p, timeout=bound + 5) for p in procs]
        for s in servers:
            c.finish(s, timeout=10)
    finally:
        for proc in procs + servers:
            c.kill(proc)
    jobs = [j for o in outs for j in o["jobs"]]
    jcts = [j["jct_s"] * 1e3 for j in jobs]
    stats = c.summary(jcts)
    t0 = min(j["t0"] for j in jobs)
    return {
        "jobs_done": len(jobs),
        "jobs_failed": a.jobs * len(hosts) - len(jobs),
        "jct_mean_ms": stats["mean"],
        "jct_p50_ms": stats["p50"],
        "jct_p99_ms": stats["p99"],
        "jct_max_ms": stats["max"],
        "makespan_s": max(j["t0"] + j["jct_s"] for j in jobs) - t0,
        "delivered_fraction": outs[0]["need"] / a.messages,
        "guarantee_held": True,
        "loss": 0.0,
        "retransmissions": "",
        "errors": "",
        "sent_MB": sum(j["bytes_sent"] for j in jobs) / 1e6,
        "unsent_MB": sum((a.messages - j["messages_sent"]) * a.size for j in jobs) / 1e6,
        "production_ms": 1e3 * statistics.mean(j["produced_s"] for j in jobs),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--config", type=Path, default=c.HERE / "incast.toml")
    p.add_argument("--name", help="testbed name (default: the config's)")
    p.add_argument("--msr", type=float, default=0.5)
    p.add_argument("--schemes", default=",".join(SCHEMES))
    p.add_argument("--messages", type=int, default=16)
    p.add_argument("--size", type=int, default=65536)
    p.add_argument("--jobs", type=int, default=4, help="jobs per sender, one at a time")
    p.add_argument(
        "--line-rate-gbps",
        type=float,
        default=1.0,
        help="each ATP sender's Rmax (default: the receiver link's 1)",
    )
    p.add_argument(
        "--capture",
        action="store_true",
        help="count ATP DATA packets arriving >= 3 seqs late at r, and ACKs at s1 (AF_PACKET)",
    )
    p.add_argument("--out", type=Path, default=c.RESULTS / "exp2_incast")
    c.production_arg(p, 62.5, "per sender in Mbit/s")
    a = p.parse_args(argv)
    a.gap = c.gap_spec(a)
    c.require_root()
    c.require_perf()
    env = c.environment()
    cfg = c.load_config(a.config, a.name)
    hosts = senders(cfg)
    rows = []
    with c.testbed.up(cfg) as tb:
        for scheme in a.schemes.split(","):
            before = c.port_counters(tb, "sw", "r")
            snmp0 = c.udp_snmp(tb, "r")
            t0 = time.monotonic()
            try:
                if scheme == "atp":
                    row = run_atp(tb, hosts, a)
                else:
                    _, cc, mode = scheme.split("-")
                    row = run_tcp(tb, hosts, cc, mode, a)
            except (c.ExperimentError, OSError, KeyError, ValueError) as e:
                row = {"errors": str(e)[:200]}
            row = {
                "scheme": scheme,
                "msr": a.msr,
                "senders": len(hosts),
                "gap_us": a.gap,
                **row,
                "wall_s": round(time.monotonic() - t0, 2),
            }
            row.update(c.counter_delta(before, c.port_counters(tb, "sw", "r")))
            row.update(c.snmp_delta(snmp0, c.udp_snmp(tb, "r")))
            row["loadavg1"] = c.loadavg()[0]
            rows.append(row)
            print(
                f"{scheme:<13} jct mean {row.get('jct_mean_ms', math.nan):7.1f} ms  p99 "
                f"{row.get('jct_p99_ms', math.nan):7.1f} ms  makespan "
                f"{row.get('makespan_s', math.nan):.3f} s  delivered "
                f"{row.get('delivered_fraction', math.nan):.3f}  unsent "
                f"{row.get('unsent_MB', math.nan):.1f} MB  {row.get('errors', '')}",
                flush=True,
            )
    c.save_rows(a.out, env, a, rows)
    return 0 if all(r.get("jobs_failed", 1) == 0 for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
