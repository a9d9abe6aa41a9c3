"""Experiment 3: slack-based priority on the kernel switch (seed 000 Fig. 10).

One ATP client h1 -> h3 runs one large job (MSR 0.5: initial TLR 0.5 ->
queue 4; `--jobs` more one after another, none started after `--seconds`),
while a paced UDP background h2 -> h4
(`--bg-mbps`, default 600) moves between switch queues on a schedule
(default: queue 4, then 3 at T/3, then 2 at 2T/3, kept until the job
ends), like the seed's foreground / background experiment. Recorded:

* the ATP sender's per-epoch TLR, measured loss (rho), rate and queue
  (`approxnet-perf client --json` "timeline": up to 200 samples, core time
  since its first epoch, aligned here to the launch time of the client);
* the bottleneck port's per-queue throughput, drops and backlog from
  `tc -s -j qdisc show` every `--period` s (port xl -> xr).

    sudo PYTHONPATH=python .venv/bin/python experiments/testbed/exp3_dynamic_priority.py
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import driver as d

from approxnet.testbed import counters, procs, schemes

BG_PORT = 7950


def phases(schedule: list[tuple[float, int]], seconds: float) -> list[tuple[float, float, int]]:
    ends = [t for t, _ in schedule[1:]] + [seconds]
    return [(t, e, q) for (t, q), e in zip(schedule, ends, strict=True)]


def summarise(
    timeline: list[dict[str, Any]],
    tc_rows: list[dict[str, Any]],
    schedule: list[tuple[float, int]],
    seconds: float,
) -> list[dict[str, Any]]:
    out = []
    for t0, t1, bq in phases(schedule, seconds):
        ep = [s for s in timeline if t0 <= s["t_s"] < t1]
        tc = [r for r in tc_rows if t0 <= r["t_s"] < t1]
        row: dict[str, Any] = {"from_s": t0, "to_s": t1, "bg_queue": bq, "epochs": len(ep)}
        if ep:
            qs = [s["queue"] for s in ep]
            row["atp_queue_mode"] = statistics.mode(qs)
            row["atp_queues_seen"] = ";".join(f"{q}:{qs.count(q)}" for q in sorted(set(qs)))
            row["atp_tlr_mean"] = statistics.fmean(s["tlr"] for s in ep)
            row["atp_rho_mean"] = statistics.fmean(s["rho"] for s in ep)
            row["atp_rate_gbps_mean"] = statistics.fmean(s["rate_gbps"] for s in ep)
        for q in range(8):
            v = [r.get(f"q{q}_mbps", 0.0) for r in tc]
            d = sum(r.get(f"q{q}_drops", 0) for r in tc)
            if v and (max(v) > 1 or d):
                row[f"q{q}_mbps_mean"] = round(statistics.fmean(v), 1)
                row[f"q{q}_drops"] = d
        out.append(row)
    return out


def plot(
    path: Path,
    timeline: list[dict[str, Any]],
    tc_rows: list[dict[str, Any]],
    schedule: list[tuple[float, int]],
    seconds: float,
    msr: float,
    bg_mbps: float,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(4, 1, figsize=(8, 9), sharex=True)
    t = [s["t_s"] for s in timeline]
    ax[0].plot(t, [s["tlr"] for s in timeline], label="TLR", drawstyle="steps-post")
    ax[0].plot(t, [s["rho"] for s in timeline], ".", ms=3, label="measured loss (epoch)")
    ax[0].set_ylabel("loss rate")
    ax[0].set_ylim(-0.02, 1.02)
    ax[0].legend(loc="upper right", fontsize=8)
    ax[1].plot(t, [s["rate_gbps"] for s in timeline], drawstyle="steps-post")
    ax[1].set_ylabel("ATP rate (Gbit/s)")
    bt = [x for p in phases(schedule, seconds) for x in (p[0], p[1])]
    bq = [p[2] for p in phases(schedule, seconds) for _ in (0, 1)]
    ax[2].plot(t, [s["queue"] for s in timeline], drawstyle="steps-post", label="ATP job")
    ax[2].plot(bt, bq, "--", color="gray", label="background")
    ax[2].set_ylabel("queue (0 = highest)")
    ax[2].set_ylim(7.5, -0.5)
    ax[2].legend(loc="upper right", fontsize=8)
    tt = [r["t_s"] for r in tc_rows]
    for q in range(8):
        v = [r.get(f"q{q}_mbps", 0.0) for r in tc_rows]
        if v and max(v) > 20:
            ax[3].plot(tt, v, label=f"queue {q}", lw=1, color=f"C{q}")
    ax[3].set_ylabel("bottleneck tx (Mbit/s)")
    ax[3].set_xlabel("time (s)")
    ax[3].legend(loc="upper right", fontsize=8, ncol=4)
    for a in ax:
        for p in schedule[1:]:
            a.axvline(p[0], color="k", lw=0.5, ls=":")
    fig.suptitle(
        f"ATP MSR {msr} vs a {bg_mbps:.0f} Mbit/s background moved between queues "
        "(tc + endpoint epochs)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = d.parser(
        __doc__,
        "dumbbell.toml",
        "exp3_dynamic_priority",
        messages=1536,
        jobs=1,
        jobs_help="jobs, one after another",
        plot=True,
    )
    p.add_argument("--msr", type=d.msr, default=0.5)
    p.add_argument(
        "--seconds",
        type=float,
        default=3.0,
        help="span of the background schedule; no new job after it",
    )
    p.add_argument("--bg-mbps", type=float, default=600.0)
    p.add_argument("--schedule", help="t:queue,... (default 0:4,T/3:3,2T/3:2)")
    p.add_argument("--period", type=float, default=0.025, help="tc sampling period (s)")
    a = p.parse_args(argv)
    cfg, env = d.setup(a)
    T = a.seconds
    sched_s = a.schedule or f"0:4,{T / 3:.3f}:3,{2 * T / 3:.3f}:2"
    schedule = sorted((float(x), int(q)) for x, q in (s.split(":") for s in sched_s.split(",")))
    with d.testbed.up(cfg) as tb:
        sink = procs.sink(tb, "h4", BG_PORT, T + 30)
        try:
            with counters.QueueSampler(tb, "xl", "xr", period=a.period, limit_s=T + 30) as sampler:
                # The background runs until the job is done (stdin closed), at
                # most T + 30 s; its last queue holds after the schedule ends.
                bg = procs.cbr(tb, "h2", "h4", BG_PORT, a.bg_mbps, T + 30, sched_s)
                j = d.jobs(a, a.msr, seconds=T)
                run = schemes.launch(tb, "atp", ["h1"], "h3", j, bound_s=T + 25)
                r = run.wait_senders()[0]
                bg_out = procs.stop(bg, timeout=10)
                time.sleep(0.1)
            server = run.wait().receivers[0]
        finally:
            procs.stop(sink)
    origin = bg_out["t0"]
    offset = run.started - origin
    timeline = [{**s, "t_s": round(offset + s["t_ms"] / 1e3, 4)} for s in r["timeline"]]
    tc_rows = sampler.rows(origin)
    end = max([T] + [s["t_s"] for s in timeline])
    summary = summarise(timeline, tc_rows, schedule, end)
    d.close_env(env, a)
    keep = {k: v for k, v in r.items() if k != "timeline"}
    d.write_csv(a.out.parent / (a.out.name + "_atp.csv"), timeline)
    d.write_csv(a.out.parent / (a.out.name + "_tc.csv"), tc_rows)
    d.write_csv(a.out.parent / (a.out.name + "_phases.csv"), summary)
    d.write_json(
        a.out.with_suffix(".json"),
        {
            "environment": env,
            "schedule": schedule,
            "client_offset_s": offset,
            "background": bg_out,
            "atp_client": keep,
            "atp_server": server,
            "phases": summary,
        },
    )
    if not a.no_plot:
        plot(a.out.with_suffix(".png"), timeline, tc_rows, schedule, end, a.msr, a.bg_mbps)
    for row in summary:
        print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()})
    print(
        f"ATP: {r['jobs_completed']} jobs, failed {r['jobs_failed']}, measured loss "
        f"{r['measured_loss']:.4f}, background achieved {bg_out['achieved_mbps']:.0f} Mbit/s; "
        f"load average {env['loadavg_start']} -> {env['loadavg_end']}; results {a.out}*"
    )
    return 0 if r["jobs_failed"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
