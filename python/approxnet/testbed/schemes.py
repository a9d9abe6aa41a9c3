"""Approximate jobs from senders to one receiver under each scheme of
seed 000 section 7.1, run in testbed hosts and summarised in one row.

Schemes: `atp` (approxnet-perf client / server: ATP, MSR, slack-based
queue) and `atp:R` (the same with a line rate of R Gbit/s);
`tcp-<cc>-ss` / `tcp-<cc>-es` (kernel TCP SampleSend / EarlySend with
congestion control `cc`, `traffic.jobs`); `udp` (plain UDP, every
datagram unpaced, no feedback). What the senders do is a `Jobs` value;
sender `i` gets seed `seed + i` and gap seed `gap_seed + i`, so one gap
seed gives every scheme the same production times.

    run = launch(tb, "tcp-cubic-es", ["h1"], "h3", Jobs(msr=0.5, messages=32,
                 size=65536, jobs=4, gap="exp:1000"), bound_s=30)
    row = summarise(run.wait(), jobs)

JCT is one definition for all: from the job's first production until the
receiver holds ceil(MSR N) (`approxnet.must_deliver`), seen at the sender
(ATP: the core's job report; TCP: the receiver's "done"); for UDP, which
has no feedback, the ceil(MSR N)-th whole message at the receiver minus
the job start (one shared monotonic clock).
"""

from __future__ import annotations

import math
import statistics
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import binaries, must_deliver
from . import procs
from .errors import ProcessError, TestbedError
from .lifecycle import Testbed

ATP_PORT, TCP_PORT, UDP_PORT = 7700, 7800, 7900


@dataclass(frozen=True)
class Jobs:
    """What every sender of a run does."""

    msr: float
    messages: int
    size: int
    #: jobs per sender, one after another (`window` at a time for ATP)
    jobs: int
    #: message production: none, fixed:US or exp:US (`traffic.production`)
    gap: str = "none"
    #: ATP's line rate Rmax (Gbit/s); `atp:R` overrides it
    line_rate_gbps: float = 1.0
    window: int = 1
    #: no new job after this many seconds (None: the job count alone)
    seconds: float | None = None
    seed: int = 1
    gap_seed: int = 1
    #: extra approxnet-perf client options
    atp_args: tuple[str, ...] = ()
    #: IP packet size, for the MB each ATP job sent
    mtu: int = 1500


def perf_binary() -> str:
    """The approxnet-perf binary (`approxnet.binaries`); a `TestbedError`
    saying how to build it when there is none."""
    try:
        return str(binaries.require("approxnet-perf"))
    except FileNotFoundError as e:
        raise TestbedError(str(e)) from None


def atp_server_argv(jobs: int, idle: float, port: int = ATP_PORT) -> list[str]:
    """approxnet-perf server: exits after `jobs` jobs or `idle` s without one."""
    return [perf_binary(), "server", "--bind", f"0.0.0.0:{port}"] + [
        *("--jobs", str(jobs), "--idle", str(idle), "--json"),
    ]


def atp_client_argv(server: str, j: Jobs, rate_gbps: float, i: int = 0) -> list[str]:
    """approxnet-perf client `i` of a run, to `server` (an address)."""
    duration = 60.0 if j.seconds is None else j.seconds
    return [
        perf_binary(),
        "client",
        *("--server", f"{server}:{ATP_PORT}", "--msr", str(j.msr)),
        *("--messages", str(j.messages), "--sizes", f"fixed:{j.size}", "--jobs", str(j.jobs)),
        *("--window", str(j.window), "--duration", str(duration)),
        *("--line-rate-gbps", str(rate_gbps), "--seed", str(j.seed + i), "--json"),
        *("--gap-us", j.gap, "--gap-seed", str(j.gap_seed + i)),
        *j.atp_args,
    ]


def tcp_send_argv(
    dst: str, port: int, mode: str, cc: str, j: Jobs, i: int, bound: float
) -> list[str]:
    """traffic `tcp-job-send` of sender `i`: SampleSend (`ss`) or EarlySend
    (`es`), the same production gaps as `atp_client_argv` for that sender."""
    argv = [*procs.TRAFFIC, "tcp-job-send", "--dst", dst, "--port", str(port)]
    argv += ["--mode", mode, "--cc", cc, "--msr", str(j.msr), "--messages", str(j.messages)]
    argv += ["--size", str(j.size), "--jobs", str(j.jobs), "--seed", str(j.seed + i)]
    argv += ["--timeout", str(bound), "--job-base", str(1000 * i)]
    argv += ["--gap-us", j.gap, "--gap-seed", str(j.gap_seed + i)]
    if j.seconds is not None:
        argv += ["--seconds", str(j.seconds)]
    return argv


def parse_scheme(scheme: str) -> tuple[str, str, str]:
    """(`atp` | `tcp` | `udp`, cc or line rate, mode); a `TestbedError`
    naming the scheme if it is none of the forms."""
    if scheme == "atp" or scheme == "udp":
        return (scheme, "", "")
    if scheme.startswith("atp:"):
        try:
            float(scheme[4:])
        except ValueError:
            raise TestbedError(f"scheme {scheme!r}: atp:R needs a rate in Gbit/s") from None
        return ("atp", scheme[4:], "")
    parts = scheme.split("-")
    if len(parts) == 3 and parts[0] == "tcp" and parts[1] and parts[2] in ("ss", "es"):
        return ("tcp", parts[1], parts[2])
    raise TestbedError(f"scheme {scheme!r}: expected atp, atp:R, tcp-<cc>-ss, tcp-<cc>-es or udp")


@dataclass
class Run:
    """The processes of one launched scheme; `wait` collects their JSON."""

    scheme: str
    jobs: Jobs
    senders: list[str]
    bound_s: float
    #: monotonic time the senders were started
    started: float = 0.0
    receivers: list[subprocess.Popen[str]] = field(default_factory=list)
    clients: list[subprocess.Popen[str]] = field(default_factory=list)
    watchers: list[subprocess.Popen[str]] = field(default_factory=list)
    _sent: list[dict[str, Any]] | None = None

    def wait_senders(self) -> list[dict[str, Any]]:
        """Waits (bounded: `bound_s` + 5 s) for every sender's JSON; the
        receivers and watchers keep running."""
        if self._sent is None:
            try:
                self._sent = [procs.finish(p, timeout=self.bound_s + 5) for p in self.clients]
            except BaseException:
                self.kill()
                raise
        return self._sent

    def wait(self) -> Outcome:
        """Waits (bounded) for every sender, then the receivers; stops the
        watchers. Kills whatever is left on the way out."""
        try:
            clients = self.wait_senders()
            udp = self.scheme == "udp"
            receivers = [
                procs.finish(p, timeout=self.bound_s if udp else 10) for p in self.receivers
            ]
            watched = [procs.stop(p) for p in self.watchers]
        finally:
            self.kill()
        return Outcome(self.scheme, self.jobs, self.senders, clients, receivers, watched)

    def kill(self) -> None:
        """Ends every process of the run."""
        for p in self.clients + self.receivers + self.watchers:
            procs.kill(p)


@dataclass(frozen=True)
class Outcome:
    """The JSON of every process of a run."""

    scheme: str
    jobs: Jobs
    senders: list[str]
    clients: list[dict[str, Any]]
    receivers: list[dict[str, Any]]
    watched: list[dict[str, Any]]


def launch(
    tb: Testbed,
    scheme: str,
    senders: Sequence[str],
    receiver: str,
    j: Jobs,
    bound_s: float,
    sync_s: float | None = None,
    watchers: Sequence[tuple[str, list[str]]] = (),
) -> Run:
    """Starts the receiver side in `receiver`, the `watchers` (host, argv:
    tools that run until stopped), then one sender per host of `senders`
    — all at once `sync_s` from now (`exec-at`) when given."""
    kind, arg, mode = parse_scheme(scheme)
    run = Run(scheme, j, list(senders), bound_s)
    dst = tb.address(receiver)
    n = len(senders)
    try:
        if kind == "atp":
            idle = 1.0 if sync_s is None else sync_s + 3.0
            run.receivers.append(
                procs.start(
                    tb,
                    receiver,
                    atp_server_argv(j.jobs * n, idle),
                    ready="approxnet-perf server on",
                    on_stderr=True,
                )
            )
            rate = float(arg) if arg else j.line_rate_gbps
            argvs = [atp_client_argv(dst, j, rate, i) for i in range(n)]
        elif kind == "tcp":
            for i in range(n):
                argv = [*procs.TRAFFIC, "tcp-job-server", "--port", str(TCP_PORT + i)]
                run.receivers.append(procs.start(tb, receiver, [*argv, "--timeout", str(bound_s)]))
            argvs = [tcp_send_argv(dst, TCP_PORT + i, mode, arg, j, i, bound_s) for i in range(n)]
        else:
            argvs = []
            for i in range(n):
                port = str(UDP_PORT + i)
                argv = [*procs.TRAFFIC, "udp-job-recv", "--port", port, "--timeout", str(bound_s)]
                run.receivers.append(procs.start(tb, receiver, [*argv, "--idle", "0.5"]))
                argvs.append(
                    [*procs.TRAFFIC, "udp-job-send", "--dst", dst, "--port", port]
                    + ["--messages", str(j.messages), "--size", str(j.size), "--jobs", str(j.jobs)]
                    + ["--job-base", str(1000 * i), "--gap-us", j.gap]
                    + ["--gap-seed", str(j.gap_seed + i)]
                )
        for host, argv in watchers:
            run.watchers.append(procs.start(tb, host, argv))
        run.started = time.monotonic()
        if sync_s is not None:
            at = str(run.started + sync_s)
            argvs = [[*procs.TRAFFIC, "exec-at", at, *argv] for argv in argvs]
        for host, argv in zip(senders, argvs, strict=True):
            run.clients.append(
                tb.exec(host, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            )
    except BaseException:
        run.kill()
        raise
    return run


def summary(values: Sequence[float]) -> dict[str, float]:
    """n, mean, p50, p90, p99 (nearest rank) and max of `values` (NaN if none)."""
    v = sorted(values)
    if not v:
        return {k: math.nan for k in ("mean", "p50", "p90", "p99", "max")} | {"n": 0}

    def q(p: float) -> float:
        return v[min(len(v) - 1, max(0, math.ceil(p * len(v)) - 1))]

    return {
        "n": len(v),
        "mean": statistics.fmean(v),
        "p50": q(0.5),
        "p90": q(0.9),
        "p99": q(0.99),
        "max": v[-1],
    }


def summarise(o: Outcome) -> dict[str, Any]:
    """One row for a run: jobs done / failed, JCT (ms), makespan, delivered
    fraction, loss against 1 - MSR, bytes sent and never sent, production
    time, the queues ATP used, errors; per scheme extras."""
    kind = parse_scheme(o.scheme)[0]
    row = _atp_row(o) if kind == "atp" else _tcp_row(o) if kind == "tcp" else _udp_row(o)
    row["loss_bound"] = round(1 - o.jobs.msr, 6)
    return row


def _atp_row(o: Outcome) -> dict[str, Any]:
    outs, j = o.clients, o.jobs
    done = sum(c["jobs_completed"] for c in outs)
    lost = sum(c["lost_packets"] for c in outs)
    pk = sum(c["packets"] for c in outs)
    groups = [g for c in outs for g in c["groups"]]
    held = all(g["delivered"] >= g["must_deliver"] for g in groups)
    failed = sum(c["jobs_failed"] for c in outs)
    server = o.receivers[0] if o.receivers else {}
    row: dict[str, Any] = {
        "jobs_done": done,
        "jobs_failed": failed,
        # ATP reports JCT percentiles per client: with several senders p50 /
        # p99 are the median / max of theirs; mean and max are exact.
        "jct_mean_ms": sum(c["jct_ms"]["mean"] * c["jobs_completed"] for c in outs) / max(done, 1)
        if len(outs) > 1
        else outs[0]["jct_ms"]["mean"],
        "jct_p50_ms": statistics.median(c["jct_ms"]["p50"] for c in outs),
        "jct_p99_ms": max(c["jct_ms"]["p99"] for c in outs),
        "jct_max_ms": max(c["jct_ms"]["max"] for c in outs),
        "makespan_s": max(c["elapsed_s"] for c in outs) + 0.0,
        "delivered_fraction": sum(g["delivered"] for g in groups)
        / max(sum(g["messages"] for g in groups), 1)
        if groups
        else math.nan,
        "loss": lost / max(pk, 1),
        # The guarantee: messages lost <= 1 - MSR (every job).
        "loss_ok": held and bool(groups) and failed == 0,
        # Network loss (packets declared lost / sent) vs the same bound;
        # with MSR = 1 any drop exceeds 0 and is retransmitted.
        "packet_loss_ok": lost / max(pk, 1) <= 1 - j.msr + 1e-12,
        "retransmissions": sum(c["retransmissions"] for c in outs),
        # Declared losses by cause: the retransmission timer (the rest: fast
        # detection), and those whose ACK came afterwards (spurious).
        "lost_by_timer": sum(c.get("lost_by_timer", 0) for c in outs),
        "spurious_losses": sum(c.get("spurious_losses", 0) for c in outs),
        "sent_MB_per_job": pk * j.mtu / 1e6 / max(done, 1),
        # payload never sent: the job met its MSR first
        "unsent_MB_per_job": sum(c.get("bytes_unsent", 0) for c in outs) / 1e6 / max(done, 1),
        "unsent_MB": sum(c.get("bytes_unsent", 0) for c in outs) / 1e6,
        "production_ms": statistics.mean(c.get("production_ms_mean") or 0.0 for c in outs),
        "queues": ";".join(
            f"{q['queue']}:{q['time_fraction']:.2f}" for q in outs[0]["queue_time_fraction"]
        ),
        "error": ";".join(c["error"] for c in outs if c.get("error")),
        "atp_datagrams_sent": sum(c["runtime"]["datagrams_sent"] for c in outs),
        "atp_clients_datagrams_received": sum(c["runtime"]["datagrams_received"] for c in outs),
        "atp_clients_core_drops": sum(sum(c["runtime"]["core_drops"].values()) for c in outs),
    }
    if server:
        row["atp_server_datagrams_received"] = server["runtime"]["datagrams_received"]
        row["atp_server_cpu_s"] = server["cpu_s"]
        # The ACK path: datagrams the receiver sent back.
        row["atp_server_datagrams_sent"] = server["runtime"]["datagrams_sent"]
        row["atp_server_send_would_block"] = server["runtime"]["send_would_block"]
        row["atp_server_send_errors"] = server["runtime"]["send_errors"]
    if len(outs) > 1:
        row[f"{o.senders[0]}_lost_packets"] = outs[0]["lost_packets"]
        row[f"{o.senders[0]}_packets"] = outs[0]["packets"]
    return row


def _tcp_row(o: Outcome) -> dict[str, Any]:
    j = o.jobs
    jobs = [x for c in o.clients for x in c["jobs"]]
    s = summary([x["jct_s"] * 1e3 for x in jobs])
    done = len(jobs)
    sent = sum(x["bytes_sent"] for x in jobs)
    unsent = sum((j.messages - x["messages_sent"]) * j.size for x in jobs)
    return {
        "jobs_done": done,
        "jobs_failed": j.jobs * len(o.clients) - done,
        "jct_mean_ms": s["mean"],
        "jct_p50_ms": s["p50"],
        "jct_p99_ms": s["p99"],
        "jct_max_ms": s["max"],
        "makespan_s": max(x["t0"] + x["jct_s"] for x in jobs) - min(x["t0"] for x in jobs)
        if jobs
        else math.nan,
        "delivered_fraction": o.clients[0]["need"] / j.messages,
        "loss": 0.0,
        "loss_ok": True,
        "packet_loss_ok": True,
        "retransmissions": "",
        "sent_MB_per_job": sent / 1e6 / max(done, 1),
        "unsent_MB_per_job": unsent / 1e6 / max(done, 1),
        "sent_MB": sent / 1e6,
        "unsent_MB": unsent / 1e6,
        "production_ms": 1e3 * sum(x["produced_s"] for x in jobs) / max(done, 1),
        "queues": "0:1.00",
        "error": "",
        "cc": o.clients[0]["cc"],
    }


def _udp_row(o: Outcome) -> dict[str, Any]:
    j = o.jobs
    need = must_deliver(j.msr, j.messages)
    jcts, deliv, dgrams, sent, enough = [], [], 0, 0, 0
    for snd, got in zip(o.clients, o.receivers, strict=True):
        sent += len(snd["jobs"]) * j.messages * snd["frags_per_message"]
        for x in snd["jobs"]:
            rj = got["jobs"].get(str(x["job"]))
            if rj is None:
                deliv.append(0.0)
                continue
            done_at = sorted(rj["complete_at"])
            if len(done_at) >= need:
                # MSR 0: nothing to wait for
                jcts.append((done_at[need - 1] - x["t0"]) * 1e3 if need else 0.0)
            deliv.append(rj["complete"] / j.messages)
            enough += rj["complete"] >= need
            dgrams += rj["datagrams"]
    s = summary(jcts)
    total = j.jobs * len(o.clients)
    return {
        "jobs_done": enough,
        "jobs_failed": total - enough,
        "jct_mean_ms": s["mean"],
        "jct_p50_ms": s["p50"],
        "jct_p99_ms": s["p99"],
        "jct_max_ms": s["max"],
        "delivered_fraction": sum(deliv) / max(len(deliv), 1),
        "loss": 1 - dgrams / max(sent, 1),
        "loss_ok": enough == total,
        "packet_loss_ok": (1 - dgrams / max(sent, 1)) <= 1 - j.msr,
        "retransmissions": 0,
        "sent_MB_per_job": j.messages * j.size / 1e6,
        "unsent_MB_per_job": 0.0,
        "queues": "0:1.00",
        "error": "" if enough == total else f"{total - enough} jobs below MSR",
    }


__all__ = [
    "ATP_PORT",
    "Jobs",
    "Outcome",
    "ProcessError",
    "Run",
    "atp_client_argv",
    "atp_server_argv",
    "launch",
    "parse_scheme",
    "perf_binary",
    "summarise",
    "summary",
    "tcp_send_argv",
]
