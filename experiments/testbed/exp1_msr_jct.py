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

import argparse
import math
import time
from pathlib import Path
from typing import Any

import common as c

SCHEMES = ["atp", "atp:10", "tcp-cubic-ss", "tcp-cubic-es", "tcp-bbr-ss", "tcp-bbr-es", "udp"]
TCP_PORT, UDP_PORT, BG_PORT = 7800, 7900, 7950


def run_scheme(
    tb: c.testbed.Testbed, scheme: str, msr: float, a: argparse.Namespace, seed: int, gap_seed: int
) -> dict[str, Any]:
    dst = tb.address("h3")
    bound = 5.0 + a.jobs * (3.0 + 2 * c.production_s(a.gap, a.messages))
    row: dict[str, Any] = {"msr": msr, "scheme": scheme, "gap_us": a.gap}
    payload = a.messages * a.size
    if scheme == "atp" or scheme.startswith("atp:"):
        rate = float(scheme[4:]) if scheme.startswith("atp:") else a.line_rate_gbps
        srv = c.atp_server(tb, "h3", jobs=a.jobs)
        try:
            r = c.run(
                tb,
                "h1",
                c.atp_client_argv(
                    dst,
                    msr,
                    a.messages,
                    a.size,
                    a.jobs,
                    rate,
                    seed=seed,
                    gap_us=a.gap,
                    gap_seed=gap_seed,
                ),
                timeout=bound,
            )
            c.finish(srv, timeout=10)
        finally:
            c.kill(srv)
        g = r["groups"][0] if r["groups"] else {}
        row.update(
            jobs_done=r["jobs_completed"],
            jobs_failed=r["jobs_failed"],
            jct_mean_ms=r["jct_ms"]["mean"],
            jct_p50_ms=r["jct_ms"]["p50"],
            jct_p99_ms=r["jct_ms"]["p99"],
            jct_max_ms=r["jct_ms"]["max"],
            delivered_fraction=g.get("delivered_fraction", math.nan),
            loss=r["measured_loss"],
            loss_bound=round(1 - msr, 6),
            # The guarantee: messages lost <= 1 - MSR (every job).
            loss_ok=g.get("delivered", 0) >= g.get("must_deliver", 1) and r["jobs_failed"] == 0,
            # Network loss (packets declared lost / sent) vs the same bound;
            # with MSR = 1 any drop exceeds 0 and is retransmitted.
            packet_loss_ok=r["measured_loss"] <= 1 - msr + 1e-12,
            retransmissions=r["retransmissions"],
            sent_MB_per_job=r["packets"] * a.mtu / 1e6 / max(r["jobs_completed"], 1),
            # payload never sent: the job met its MSR first
            unsent_MB_per_job=r["bytes_unsent"] / 1e6 / max(r["jobs_completed"], 1),
            production_ms=r.get("production_ms_mean") or 0.0,
            queues=";".join(
                f"{q['queue']}:{q['time_fraction']:.2f}" for q in r["queue_time_fraction"]
            ),
            error=r.get("error", ""),
        )
        return row
    if scheme.startswith("tcp-"):
        _, cc, mode = scheme.split("-")
        srv = c.start(
            tb, "h3", [*c.TOOLS, "tcp-job-server", "--port", str(TCP_PORT), "--timeout", str(bound)]
        )
        try:
            r = c.run(
                tb,
                "h1",
                c.tcp_send_argv(
                    dst,
                    TCP_PORT,
                    mode,
                    cc,
                    msr,
                    a.messages,
                    a.size,
                    a.jobs,
                    seed=seed,
                    timeout=bound,
                    gap_us=a.gap,
                    gap_seed=gap_seed,
                ),
                timeout=bound + 5,
            )
            c.finish(srv, timeout=10)
        finally:
            c.kill(srv)
        jcts = [j["jct_s"] * 1e3 for j in r["jobs"]]
        s = c.summary(jcts)
        sent = sum(j["bytes_sent"] for j in r["jobs"])
        row.update(
            jobs_done=len(jcts),
            jobs_failed=a.jobs - len(jcts),
            jct_mean_ms=s["mean"],
            jct_p50_ms=s["p50"],
            jct_p99_ms=s["p99"],
            jct_max_ms=s["max"],
            delivered_fraction=r["need"] / a.messages,
            loss=0.0,
            loss_bound=round(1 - msr, 6),
            loss_ok=True,
            packet_loss_ok=True,
            retransmissions="",
            sent_MB_per_job=sent / 1e6 / max(len(jcts), 1),
            queues="0:1.00",
            error="",
            unsent_MB_per_job=sum(payload - j["messages_sent"] * a.size for j in r["jobs"])
            / 1e6
            / max(len(jcts), 1),
            production_ms=1e3 * sum(j["produced_s"] for j in r["jobs"]) / max(len(r["jobs"]), 1),
            cc=r["cc"],
        )
        return row
    # plain UDP
    rcv = c.start(
        tb,
        "h3",
        [
            *c.TOOLS,
            "udp-job-recv",
            "--port",
            str(UDP_PORT),
            "--timeout",
            str(bound),
            "--idle",
            "0.5",
        ],
    )
    try:
        snd = c.run(
            tb,
            "h1",
            [
                *c.TOOLS,
                "udp-job-send",
                "--dst",
                dst,
                "--port",
                str(UDP_PORT),
                "--messages",
                str(a.messages),
                "--size",
                str(a.size),
                "--jobs",
                str(a.jobs),
                "--gap-us",
                a.gap,
                "--gap-seed",
                str(gap_seed),
            ],
            timeout=bound,
        )
        got = c.finish(rcv, timeout=bound)
    finally:
        c.kill(rcv)
    jcts, deliv, dgrams = [], [], 0
    per = snd["frags_per_message"]
    need = max(1, math.ceil(msr * a.messages - 1e-9))
    for j in snd["jobs"]:
        rj = got["jobs"].get(str(j["job"]))
        if rj is None:
            deliv.append(0.0)
            continue
        done_at = sorted(rj["complete_at"])
        if len(done_at) >= need:
            jcts.append((done_at[need - 1] - j["t0"]) * 1e3)
        deliv.append(rj["complete"] / a.messages)
        dgrams += rj["datagrams"]
    s = c.summary(jcts)
    sent = a.jobs * a.messages * per
    enough = sum(d >= msr for d in deliv)
    row.update(
        jobs_done=enough,
        jobs_failed=a.jobs - enough,
        jct_mean_ms=s["mean"],
        jct_p50_ms=s["p50"],
        jct_p99_ms=s["p99"],
        jct_max_ms=s["max"],
        delivered_fraction=sum(deliv) / len(deliv),
        loss=1 - dgrams / sent,
        loss_bound=round(1 - msr, 6),
        loss_ok=enough == a.jobs,
        packet_loss_ok=(1 - dgrams / sent) <= 1 - msr,
        retransmissions=0,
        sent_MB_per_job=a.messages * a.size / 1e6,
        queues="0:1.00",
        unsent_MB_per_job=0.0,
        error="" if enough == a.jobs else f"{a.jobs - enough} jobs below MSR",
    )
    return row


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
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--config", type=Path, default=c.HERE / "dumbbell.toml")
    p.add_argument("--name", help="testbed name (default: the config's)")
    p.add_argument("--msrs", default="0.25,0.5,0.75,1")
    p.add_argument("--schemes", default=",".join(SCHEMES))
    p.add_argument("--messages", type=int, default=32, help="messages per job")
    p.add_argument("--size", type=int, default=65536, help="bytes per message")
    p.add_argument("--jobs", type=int, default=12, help="jobs per (MSR, scheme), one at a time")
    p.add_argument("--bg-mbps", type=float, default=300.0, help="background rate (0: none)")
    p.add_argument("--bg-queue", type=int, default=0)
    p.add_argument(
        "--line-rate-gbps",
        type=float,
        default=1.0,
        help="ATP's line rate Rmax in Gbit/s (default: the bottleneck's 1)",
    )
    p.add_argument("--mtu", type=int, default=1500)
    p.add_argument("--out", type=Path, default=c.RESULTS / "exp1_msr_jct")
    p.add_argument("--no-plot", action="store_true")
    c.production_arg(p, 500.0, "per job in Mbit/s")
    a = p.parse_args(argv)
    a.gap = c.gap_spec(a)
    c.require_root()
    c.require_perf()
    msrs = [float(x) for x in a.msrs.split(",")]
    schemes = a.schemes.split(",")
    env = c.environment()
    rows: list[dict[str, Any]] = []
    cfg = c.load_config(a.config, a.name)
    t_start = time.monotonic()
    with c.testbed.up(cfg) as tb:
        bg_sink = c.start(tb, "h4", [*c.TOOLS, "sink", "--port", str(BG_PORT), "--seconds", "600"])
        try:
            for i, msr in enumerate(msrs):
                for k, scheme in enumerate(schemes):
                    bg = None
                    if a.bg_mbps > 0:
                        bg = c.start(
                            tb,
                            "h2",
                            [
                                *c.TOOLS,
                                "cbr",
                                "--dst",
                                tb.address("h4"),
                                "--port",
                                str(BG_PORT),
                                "--rate-mbps",
                                str(a.bg_mbps),
                                "--seconds",
                                "120",
                                "--schedule",
                                f"0:{a.bg_queue}",
                            ],
                        )
                        time.sleep(0.2)
                    before = c.port_counters(tb, "xl", "xr")
                    snmp0 = c.udp_snmp(tb, "h3")
                    t0 = time.monotonic()
                    try:
                        # One production sequence per MSR, shared by every scheme.
                        row = run_scheme(
                            tb, scheme, msr, a, seed=1 + 100 * i + k, gap_seed=1 + 100 * i
                        )
                    except (c.ExperimentError, OSError, KeyError) as e:
                        row = {"msr": msr, "scheme": scheme, "error": str(e)[:200]}
                    finally:
                        bg_out = c.stop(bg) if bg is not None else {}
                    row["wall_s"] = round(time.monotonic() - t0, 2)
                    row["bg_achieved_mbps"] = round(bg_out.get("achieved_mbps", 0.0), 1)
                    row.update(c.counter_delta(before, c.port_counters(tb, "xl", "xr")))
                    row.update(c.snmp_delta(snmp0, c.udp_snmp(tb, "h3")))
                    row["loadavg1"] = c.loadavg()[0]
                    rows.append(row)
                    print(
                        f"msr {msr:<5} {scheme:<13} jct p50 "
                        f"{row.get('jct_p50_ms', math.nan):8.1f} ms  p99 "
                        f"{row.get('jct_p99_ms', math.nan):8.1f} ms  delivered "
                        f"{row.get('delivered_fraction', math.nan):.3f}  loss "
                        f"{row.get('loss', math.nan):.4f}  unsent MB/job "
                        f"{row.get('unsent_MB_per_job', math.nan):.3f}  {row.get('error', '')}",
                        flush=True,
                    )
        finally:
            c.stop(bg_sink)
    env["wall_s"] = round(time.monotonic() - t_start, 1)
    c.save_rows(a.out, env, a, rows)
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
    return 1 if bad or len(atp) < sum(s.startswith("atp") for s in schemes) * len(msrs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
