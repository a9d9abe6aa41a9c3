"""The one driver of the testbed experiments (experiments/testbed/exp*.py).

Everything that runs traffic is the package's: `approxnet.testbed.schemes`
(approximate jobs under ATP, kernel TCP SampleSend / EarlySend, UDP),
`approxnet.testbed.procs` (tools in hosts, the background),
`approxnet.testbed.counters` (tc and UDP counters), with the tools of
`approxnet.testbed.traffic` inside the hosts. Here: the options every
experiment shares (`parser`), the jobs a run's options describe (`jobs`),
the loop over an experiment's cases with the bottleneck counters around
each (`sweep`), and the record written with every result (`save_rows`).
An experiment is its defaults, its cases and what it adds to a row.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import hashlib
import json
import math
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from approxnet import ApproxnetError, binaries, must_deliver
from approxnet import testbed as testbed
from approxnet.testbed import counters, procs, schemes
from approxnet.testbed.errors import ProcessError, TestbedError
from approxnet.testbed.traffic.production import parse_gap

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RESULTS = HERE / "results"

#: What a failed case records as its error instead of ending the experiment.
CASE_ERRORS = (ProcessError, TestbedError, OSError, KeyError, ValueError)


def parser(doc: str | None, config: str, out: str, **defaults: Any) -> argparse.ArgumentParser:
    """The options every experiment has, with its `defaults` (keys: messages,
    jobs, line_rate_gbps; a `produce_mbps` default adds the production
    options, `plot` the --no-plot switch)."""
    p = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--config", type=Path, default=HERE / config)
    p.add_argument("--name", help="testbed name (default: the config's)")
    p.add_argument(
        "--messages", type=int, default=defaults.get("messages", 32), help="messages per job"
    )
    p.add_argument("--size", type=int, default=65536, help="bytes per message")
    if "jobs" in defaults:
        p.add_argument("--jobs", type=int, default=defaults["jobs"], help=defaults.get("jobs_help"))
    p.add_argument(
        "--line-rate-gbps",
        type=float,
        default=1.0,
        help="ATP's line rate Rmax in Gbit/s (default: the bottleneck's 1)",
    )
    p.add_argument("--out", type=Path, default=RESULTS / out)
    if defaults.get("plot"):
        p.add_argument("--no-plot", action="store_true")
    if "produce_mbps" in defaults:
        mbps = defaults["produce_mbps"]
        p.add_argument(
            "--produce-mbps",
            type=float,
            default=mbps,
            help=f"production rate {defaults['produce_what']}: exponential gaps of mean size x 8 "
            f"/ rate (default {mbps:g}; see docs/experiments/testbed.md)",
        )
        p.add_argument(
            "--gap-us",
            default=None,
            help="production gaps instead: none (every message ready at job start, "
            "the old mode), fixed:US or exp:US",
        )
    return p


def msr(text: str) -> float:
    """An MSR option, checked by the core's rule (`approxnet.must_deliver`)
    before any testbed is built."""
    try:
        v = float(text)
        must_deliver(v, 0)
    except (ValueError, ApproxnetError) as e:
        raise argparse.ArgumentTypeError(f"{text!r}: {e}") from None
    return v


def msrs(text: str) -> list[float]:
    """A comma-separated list of MSRs, each checked as `msr`."""
    return [msr(x) for x in text.split(",")]


def scheme_list(text: str) -> list[str]:
    """A comma-separated list of schemes (`approxnet.testbed.schemes`)."""
    names = text.split(",")
    for s in names:
        try:
            schemes.parse_scheme(s)
        except TestbedError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return names


def gap_spec(a: argparse.Namespace) -> str:
    """The `--gap-us` value every scheme of a run gets, checked here (a bad
    value is a usage error before any testbed is built)."""
    spec: str
    if a.gap_us is not None:
        spec = str(a.gap_us)
    elif a.produce_mbps > 0 and math.isfinite(a.produce_mbps):
        spec = f"exp:{a.size * 8 / a.produce_mbps:g}"
    else:
        raise SystemExit(f"--produce-mbps {a.produce_mbps}: give a rate > 0 (or --gap-us none)")
    try:
        parse_gap(spec)
    except ValueError as e:
        raise SystemExit(str(e)) from None
    return spec


def production_s(spec: str, messages: int) -> float:
    """Mean time a job of `messages` takes to be produced (for time bounds)."""
    return (messages - 1) * parse_gap(spec)[1] / 1e9


def jobs(a: argparse.Namespace, msr: float, **over: Any) -> schemes.Jobs:
    """The jobs the options `a` describe at `msr` (`over`: other fields);
    extra approxnet-perf client options from $ATP_ARGS (e.g.
    ATP_ARGS="--lookahead-us 200")."""
    base: dict[str, Any] = {
        "msr": msr,
        "messages": a.messages,
        "size": a.size,
        "jobs": getattr(a, "jobs", 1),
        # the production spec of experiments with production options
        "gap": a.gap if hasattr(a, "produce_mbps") else "none",
        "line_rate_gbps": a.line_rate_gbps,
        "atp_args": tuple(shlex.split(os.environ.get("ATP_ARGS", ""))),
    }
    return schemes.Jobs(**{**base, **over})


def setup(a: argparse.Namespace) -> tuple[testbed.Config, dict[str, Any]]:
    """Checks root and the approxnet-perf binary; the testbed config
    (renamed by --name) and the run's environment record."""
    if os.geteuid() != 0:
        raise SystemExit("run as root (network namespaces, tc)")
    try:
        schemes.perf_binary()
    except TestbedError as e:
        raise SystemExit(str(e)) from None
    cfg = testbed.load(a.config)
    return (dataclasses.replace(cfg, name=a.name) if a.name else cfg), environment()


class _Row(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        return "" if key == "error" else math.nan


def sweep(
    tb: testbed.Testbed,
    cases: Sequence[dict[str, Any]],
    run: Callable[[dict[str, Any]], dict[str, Any]],
    port: tuple[str, str],
    line: str,
    snmp_host: str | None = None,
    before_case: Callable[[], Callable[[], dict[str, Any]]] | None = None,
) -> list[dict[str, Any]]:
    """One row per case: the case's fields, what `run(case)` returns (or
    its error), its wall time, the packets and drops per queue of the
    bottleneck `port` (switch, egress) and the receiver's UDP counters
    (`snmp_host`) over the case, the load average; printed with `line`
    (format fields: row keys). `before_case` starts something for the
    case (a background) and returns what stops it and gives its fields."""
    rows = []
    for case in cases:
        stop = before_case() if before_case is not None else None
        before = counters.port_counters(tb, *port)
        snmp0 = counters.udp_snmp(tb, snmp_host) if snmp_host else {}
        t0 = time.monotonic()
        try:
            row = {**case, **run(case)}
        except CASE_ERRORS as e:
            row = {**case, "error": str(e)[:200]}
        finally:
            extra = stop() if stop is not None else {}
        row["wall_s"] = round(time.monotonic() - t0, 2)
        row.update(extra)
        row.update(counters.counter_delta(before, counters.port_counters(tb, *port)))
        if snmp_host:
            row.update(counters.snmp_delta(snmp0, counters.udp_snmp(tb, snmp_host)))
        row["loadavg1"] = loadavg()[0]
        rows.append(row)
        print(line.format_map(_Row(row)), flush=True)
    return rows


def background(
    tb: testbed.Testbed, src: str, dst: str, port: int, mbps: float, queue: int
) -> Callable[[], Callable[[], dict[str, Any]]]:
    """A `before_case` for `sweep`: paced UDP `src` -> `dst` at `mbps` in
    `queue` during each case (0.2 s to settle first); adds
    `bg_achieved_mbps` to the row."""

    def start() -> Callable[[], dict[str, Any]]:
        bg = procs.cbr(tb, src, dst, port, mbps, 120, f"0:{queue}")
        time.sleep(0.2)
        return lambda: {"bg_achieved_mbps": round(procs.stop(bg).get("achieved_mbps", 0.0), 1)}

    return start


# --------------------------------------------------------------------------
# files and the environment record


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()})


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, default=str) + "\n")


def close_env(env: dict[str, Any], args: argparse.Namespace) -> None:
    """Records the end load and the arguments of the run."""
    env["loadavg_end"] = loadavg()
    env["args"] = {k: str(v) for k, v in vars(args).items()}


def save_rows(
    out: Path, env: dict[str, Any], args: argparse.Namespace, rows: Sequence[dict[str, Any]]
) -> None:
    """Closes the run's environment record (end load, arguments), writes
    `out`.csv / `out`.json and says where they are."""
    close_env(env, args)
    write_csv(out.with_suffix(".csv"), rows)
    write_json(out.with_suffix(".json"), {"environment": env, "rows": rows})
    print(
        f"results in {out}.csv / .json; load average {env['loadavg_start']} -> {env['loadavg_end']}"
    )


def _provenance() -> dict[str, str]:
    """Git commit of the checkout and a hash / mtime of the binary used."""
    out: dict[str, str] = {}
    git = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    out["git_head"] = git.stdout.strip()
    b = binaries.find("approxnet-perf")
    if b is not None:
        out["approxnet_perf_sha256"] = hashlib.sha256(b.read_bytes()).hexdigest()[:16]
        out["approxnet_perf_mtime"] = time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(b.stat().st_mtime)
        )
    return out


def environment() -> dict[str, Any]:
    """What to record with every result: time, load average, binary, kernel."""
    return {
        **_provenance(),
        "utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "loadavg_start": loadavg(),
        "cpus": os.cpu_count(),
        "kernel": os.uname().release,
        "approxnet_perf": str(binaries.find("approxnet-perf")),
        "python": sys.executable,
        "atp_args": os.environ.get("ATP_ARGS", ""),
    }
