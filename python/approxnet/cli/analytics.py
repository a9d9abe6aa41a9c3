"""``approxnet analytics run|stream|compare|generate``: approximate analytics
over approxnet (seed 000 §3.3 and §6; docs/experiments/analytics.md)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np

from .._native import Config
from ..analytics import Accuracy, AnalyticsError, Bottleneck, Settings, inputs, parse_query, taxi
from ..analytics.demo import SCHEMES, Row, compare, default_queries, row_of_run, truths
from ..analytics.runner import Run, run_virtual
from .progress import bar, console, spinner

__all__ = ["group"]


def _emax(_ctx: click.Context, _p: click.Parameter, v: float) -> float:
    if not (v > 0 and math.isfinite(v)):
        raise click.BadParameter(f"must be a finite number > 0, got {v}")
    return v


def _confidence(_ctx: click.Context, _p: click.Parameter, v: float) -> float:
    if not 0.0 < v < 1.0:
        raise click.BadParameter(f"must be within (0, 1), got {v}")
    return v


def _msr(_ctx: click.Context, _p: click.Parameter, v: float | None) -> float | None:
    if v is not None and not 0.0 <= v <= 1.0:
        raise click.BadParameter(f"must be within [0, 1], got {v}")
    return v


def _data_options(f: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        click.option(
            "--records",
            "-n",
            type=click.IntRange(min=1),
            default=200_000,
            show_default=True,
            help="Trips in the generated data set.",
        ),
        click.option(
            "--sources",
            "-s",
            type=click.IntRange(min=1, max=64),
            default=4,
            show_default=True,
            help="Sources the trips are dealt out to.",
        ),
        click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True),
        click.option(
            "--emax",
            type=float,
            default=0.05,
            show_default=True,
            callback=_emax,
            help="Largest acceptable relative error of every answer (> 0).",
        ),
        click.option(
            "--confidence",
            type=float,
            default=0.95,
            show_default=True,
            callback=_confidence,
            help="Confidence level of the error bound, in (0, 1).",
        ),
        click.option(
            "--no-groups",
            is_flag=True,
            help="One group for all data (no stratification; Fig. 16's baseline).",
        ),
        click.option(
            "--line-rate-gbps",
            type=click.FloatRange(min=0.001),
            default=10.0,
            show_default=True,
            help="ATP's line rate Rmax at every endpoint.",
        ),
        click.option("-q", "--quiet", is_flag=True, help="No progress bar or spinner."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _bottleneck_options(f: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        click.option(
            "--rate-gbps",
            type=click.FloatRange(min=0.001),
            default=1.0,
            show_default=True,
            help="Virtual mode: bottleneck rate.",
        ),
        click.option(
            "--loss",
            type=click.FloatRange(0.0, 0.99),
            default=0.0,
            show_default=True,
            help="Virtual mode: random loss at the bottleneck.",
        ),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return "inf" if math.isinf(v) else f"{v:.4g}"
    return str(v)


def _execute(
    label: str,
    mode: str,
    parts: Any,
    settings: Settings,
    rate_gbps: float,
    loss: float,
    line_rate_gbps: float,
    seed: int,
    quiet: bool,
) -> Run:
    """Runs the sources and the aggregator in `mode` (virtual or loopback)
    behind a spinner."""
    config = Config(line_rate_gbps=line_rate_gbps)

    def work() -> Run:
        if mode == "virtual":
            return run_virtual(
                parts, settings, Bottleneck(rate_gbps=rate_gbps, loss=loss), config, seed
            )
        from ..analytics.sockets import run_loopback

        return run_loopback(parts, settings, config, seed=seed)

    return spinner(label, work, quiet=quiet)


def _table(title: str, cols: list[str], rows: list[list[Any]]) -> None:
    if console.is_terminal:
        from rich.table import Table

        t = Table(title=title)
        for c in cols:
            t.add_column(c)
        for r in rows:
            t.add_row(*(_fmt(v) for v in r))
        console.print(t)
    else:
        click.echo(title)
        click.echo("  ".join(cols))
        for r in rows:
            click.echo("  ".join(_fmt(v) for v in r))


@click.group(name="analytics")
def group() -> None:
    """Approximate analytics: emax -> MSR, stratified groups, error bounds.

    \b
    Sources send taxi-like trip records to an aggregator as approxnet jobs;
    the aggregator estimates each answer's error from what arrived and asks
    for more data until every answer is within --emax (seed 000, section 6).

    \b
    Example:
      approxnet analytics run --records 200000 --sources 4 --emax 0.05
      approxnet analytics compare --mode loopback --records 1000000 --out results/analytics
    """


@group.command()
@_data_options
@_bottleneck_options
@click.option(
    "--mode",
    type=click.Choice(["virtual", "loopback"]),
    default="virtual",
    show_default=True,
    help="Virtual time (deterministic) or real UDP on 127.0.0.1.",
)
@click.option(
    "--query",
    "queries",
    multiple=True,
    metavar="SPEC",
    help="mean:F, sum:F, mean_by:F:BY, count:BY, top_k:BY:K, quantile:F:Q[:BY] "
    "(repeatable; default mean_by:distance:hour and top_k:zone:15).",
)
@click.option("--msr", type=float, callback=_msr, help="Fixed MSR, no adjust loop (1: reliable).")
@click.option(
    "--round-msr",
    type=float,
    callback=_msr,
    help="MSR of the rounds after the pilot (default: 1 - emax, seed 000 section 6).",
)
@click.option(
    "--input",
    "input_path",
    type=click.Path(dir_okay=False),
    help="Your trips: a CSV or Parquet file (columns: see docs/python.md) instead of "
    "--records generated ones.",
)
@click.option(
    "--truth",
    type=click.Choice(["auto", "duckdb", "numpy"]),
    default="auto",
    show_default=True,
    help="Engine of the exact answers: DuckDB over the --input file (auto: when "
    "installed), or numpy over the records.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object instead of tables.")
def run(
    records: int,
    sources: int,
    seed: int,
    emax: float,
    confidence: float,
    no_groups: bool,
    line_rate_gbps: float,
    quiet: bool,
    rate_gbps: float,
    loss: float,
    mode: str,
    queries: tuple[str, ...],
    msr: float | None,
    round_msr: float | None,
    input_path: str | None,
    truth: str,
    as_json: bool,
) -> None:
    """One analytics job over ATP; prints every estimate with its error bound.

    \b
    Example:
      approxnet analytics run -n 100000 --emax 0.05 --query mean_by:distance:hour
      approxnet analytics run --mode loopback --query quantile:fare:0.5:hour --json
      approxnet analytics run --input trips.parquet --query top_k:zone:10
    """
    try:
        qs = tuple(parse_query(q) for q in queries) or default_queries()
    except AnalyticsError as e:
        raise click.BadParameter(str(e), param_hint="--query") from None
    if round_msr == 0.0:
        raise click.BadParameter("must be > 0", param_hint="--round-msr")
    strata = None if no_groups else "hour"
    settings = Settings(
        Accuracy(emax, confidence), qs, strata_field=strata, msr=msr, round_msr=round_msr
    )
    ctx = click.get_current_context()
    if input_path is not None:
        if ctx.get_parameter_source("records") == click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("give --records or --input, not both")
        try:
            data = inputs.load_input(input_path)
        except AnalyticsError as e:
            raise click.BadParameter(str(e), param_hint="--input") from None
        records = len(data)
    else:
        if truth == "duckdb":
            raise click.UsageError("--truth duckdb reads the --input file: give --input")
        data = taxi.generate(records, seed=seed)
    parts = taxi.partition(data, sources)
    r = _execute(
        f"analytics ({mode})", mode, parts, settings, rate_gbps, loss, line_rate_gbps, seed, quiet
    )
    engine = "numpy"
    if input_path is not None and truth != "numpy":
        try:
            exact = inputs.exact_sql(input_path, qs)
            engine = "duckdb"
        except AnalyticsError:
            if truth == "duckdb":
                raise
    if engine == "numpy":
        exact = truths(data, qs, strata)
    truth_of = exact
    row = row_of_run(r, mode, qs, truth_of, emax)
    res = r.results[-1]
    if as_json:
        click.echo(
            json.dumps(
                {
                    "summary": row.flat(),
                    "truth_engine": engine,
                    "input": input_path,
                    "rounds": [
                        {
                            "round": s.round,
                            "records_sent": s.records_sent,
                            "records_arrived": s.records_arrived,
                            "bound": s.bound,
                            "seconds": s.ended_s - s.started_s,
                        }
                        for s in r.rounds
                    ],
                    "estimates": {
                        q: {str(k): [e.value, e.low, e.high, e.rel_bound] for k, e in d.items()}
                        for q, d in res.estimates.items()
                    },
                },
                default=str,
            )
        )
        return
    for q in qs:
        est = res.estimates[q.name]
        rows = [
            [
                k,
                e.value,
                e.half_width,
                e.rel_bound,
                truth_of[q.name].get(k, math.nan),
                e.rel_error(truth_of[q.name][k]) if k in truth_of[q.name] else math.nan,
            ]
            for k, e in est.items()
        ]
        _table(
            f"{q.name} ({', '.join(q.fields())})",
            ["key", "estimate", "+-", "bound", f"exact ({engine})", "error"],
            rows,
        )
    _table(
        "rounds",
        ["round", "sent", "arrived", "dropped msgs", "bound", "seconds"],
        [
            [
                s.round,
                s.records_sent,
                s.records_arrived,
                s.messages_abandoned,
                s.bound,
                s.ended_s - s.started_s,
            ]
            for s in r.rounds
        ],
    )
    click.echo(
        f"JCT {row.jct_s * 1e3:.2f} ms ({mode}); sent {row.sent_fraction:.1%}, arrived "
        f"{row.arrived_fraction:.1%} of {records} records; largest estimated error "
        f"{row.bound:.4f}, achieved {row.max_error:.4f} (emax {emax}); "
        f"{row.within:.1%} of answers within emax"
    )


@group.command()
@_data_options
@_bottleneck_options
@click.option(
    "--window-s",
    type=click.IntRange(min=1),
    default=3600,
    show_default=True,
    help="Window length in seconds of pickup time (one job per window).",
)
@click.option(
    "--query",
    "queries",
    multiple=True,
    metavar="SPEC",
    help="As for 'run' (default mean:distance).",
)
@click.option(
    "--mode", type=click.Choice(["virtual", "loopback"]), default="virtual", show_default=True
)
def stream(
    records: int,
    sources: int,
    seed: int,
    emax: float,
    confidence: float,
    no_groups: bool,
    line_rate_gbps: float,
    quiet: bool,
    rate_gbps: float,
    loss: float,
    window_s: int,
    queries: tuple[str, ...],
    mode: str,
) -> None:
    """Windowed streaming: one job per window, its MSR from the last window.

    \b
    Example:
      approxnet analytics stream -n 200000 --window-s 3600 --emax 0.05
    """
    try:
        qs = tuple(parse_query(q) for q in queries) or (parse_query("mean:distance"),)
    except AnalyticsError as e:
        raise click.BadParameter(str(e), param_hint="--query") from None
    data = taxi.generate(records, seed=seed)
    windows = int(data["t"].max()) // window_s + 1
    strata = None if no_groups else "hour"
    settings = Settings(
        Accuracy(emax, confidence), qs, strata_field=strata, window_s=window_s, windows=windows
    )
    parts = taxi.partition(data, sources)
    r = _execute(
        f"streaming ({mode}, {windows} windows)",
        mode,
        parts,
        settings,
        rate_gbps,
        loss,
        line_rate_gbps,
        seed,
        quiet,
    )
    w_of = (data["t"] // window_s).astype(np.int64)
    rows = []
    worst = 0.0
    for res in r.results:
        wd = data[w_of == res.window]
        plan = res.rounds[0].plan if res.rounds else {}
        msr = max((m for _, m in plan.values()), default=math.nan)
        if res.window > 0:  # Cochran's n0 per source -> the MSR a source applies
            share = res.population / sources
            msr = min(1.0, msr / (1.0 + msr / share) / share) if share else math.nan
        errs = []
        for q in qs:
            truth = q.exact(wd, strata)
            errs += list(q.achieved(res.estimates[q.name], truth).values())
        worst = max(worst, max(errs, default=0.0))
        rows.append(
            [
                res.window,
                res.population,
                res.arrived / max(res.population, 1),
                msr,
                res.bound,
                max(errs, default=0.0),
                res.jct_s * 1e3,
            ]
        )
    _table("windows", ["window", "records", "arrived", "msr", "bound", "error", "ms"], rows)
    click.echo(
        f"{len(r.results)} windows in {r.jct_s * 1e3:.1f} ms; arrived "
        f"{r.arrived_fraction:.1%} of {records} records; worst achieved error "
        f"{worst:.4f} (emax {emax})"
    )


@group.command(name="compare")
@_data_options
@_bottleneck_options
@click.option(
    "--mode",
    type=click.Choice(["virtual", "loopback", "testbed"]),
    default="virtual",
    show_default=True,
    help="Where the sources and the aggregator run.",
)
@click.option(
    "--schemes",
    default=",".join(SCHEMES),
    show_default=True,
    help="Comma-separated subset of the schemes.",
)
@click.option(
    "--repeat",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Runs per scheme (seeds seed, seed+1, ...).",
)
@click.option(
    "--testbed",
    "testbed_config",
    type=click.Path(exists=True, dir_okay=False),
    help="Testbed TOML (default: the dumbbell example; needs root).",
)
@click.option("--cc", help="Kernel TCP congestion control for tcp-* (default: the system's).")
@click.option(
    "--bg-mbps",
    type=click.FloatRange(min=0.0),
    default=0.0,
    show_default=True,
    help="Testbed: paced UDP background through the trunk in queue 0.",
)
@click.option("--round-msr", type=float, callback=_msr, help="As for 'run'.")
@click.option("--out", type=click.Path(file_okay=False), help="Write rows.csv / rows.json here.")
def compare_cmd(
    records: int,
    sources: int,
    seed: int,
    emax: float,
    confidence: float,
    no_groups: bool,
    line_rate_gbps: float,
    quiet: bool,
    rate_gbps: float,
    loss: float,
    mode: str,
    schemes: str,
    repeat: int,
    testbed_config: str | None,
    cc: str | None,
    bg_mbps: float,
    round_msr: float | None,
    out: str | None,
) -> None:
    """JCT and achieved error: ATP's adjust loop vs reliable and SS / ES over TCP.

    \b
    Example:
      approxnet analytics compare --mode loopback -n 1000000 --out results/analytics/loopback
      sudo approxnet analytics compare --mode testbed -n 1000000 --line-rate-gbps 1 \
          --testbed experiments/analytics/dumbbell.toml --bg-mbps 700
    """
    names = [s.strip() for s in schemes.split(",") if s.strip()]
    bad = [s for s in names if s not in SCHEMES]
    if bad or not names:
        raise click.BadParameter(
            f"unknown scheme {bad[0] if bad else ''!r} (known: {', '.join(SCHEMES)})",
            param_hint="--schemes",
        )
    if round_msr == 0.0:
        raise click.BadParameter("must be > 0", param_hint="--round-msr")
    acc = Accuracy(emax, confidence)
    todo = len(names) if mode != "virtual" else len([n for n in names if n.startswith("atp")])
    rows: list[dict[str, Any]] = []
    with bar(f"analytics compare ({mode})", todo * repeat, quiet=quiet) as on_done:

        def done(r: Row | dict[str, Any]) -> None:
            d = r.flat() if isinstance(r, Row) else r
            rows.append(d)
            on_done(len(rows), todo * repeat)

        for k in range(repeat):
            if mode == "testbed":
                from ..analytics.nodes import Spec
                from ..analytics.testbed_run import DEFAULT_CONFIG, compare_testbed

                spec = Spec(
                    records,
                    sources,
                    seed + k,
                    emax,
                    confidence,
                    not no_groups,
                    None,
                    round_msr,
                    line_rate_gbps,
                )
                compare_testbed(
                    spec, names, Path(testbed_config or DEFAULT_CONFIG), cc, done, bg_mbps
                )
            else:
                data = taxi.generate(records, seed=seed + k)
                settings_q = default_queries()
                compare(
                    data,
                    sources,
                    acc,
                    mode,
                    names,
                    seed + k,
                    not no_groups,
                    settings_q,
                    Bottleneck(rate_gbps=rate_gbps, loss=loss),
                    Config(line_rate_gbps=line_rate_gbps),
                    on_done=done,
                    round_msr=round_msr,
                )
    cols = [
        "scheme",
        "jct_s",
        "sent_fraction",
        "arrived_fraction",
        "dropped_messages",
        "rounds",
        "bound",
        "max_error",
        "mean_error",
        "within",
        "recall",
    ]
    _table(
        f"{records} trips, {sources} sources, emax {emax} at {confidence:.0%} ({mode})",
        cols,
        [[r.get(c, "") for c in cols] for r in rows],
    )
    if out:
        d = Path(out)
        d.mkdir(parents=True, exist_ok=True)
        keys = list(dict.fromkeys(k for r in rows for k in r))
        with (d / "rows.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
        (d / "rows.json").write_text(json.dumps(rows, indent=1, default=str) + "\n")
        click.echo(f"rows: {d / 'rows.csv'}")


@group.command()
@click.option("--records", "-n", type=click.IntRange(min=1), default=200_000, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    required=True,
    help="FILE.npy (structured array) or FILE.csv.",
)
def generate(records: int, seed: int, out: str) -> None:
    """Writes the generated taxi-trip data set.

    \b
    Example:
      approxnet analytics generate -n 100000 --out trips.csv
    """
    data = taxi.generate(records, seed=seed)
    p = Path(out)
    if p.suffix == ".npy":
        np.save(p, data)
    elif p.suffix == ".csv":
        names = list(data.dtype.names or ())
        with p.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(names)
            w.writerows(zip(*(data[n].tolist() for n in names), strict=True))
    else:
        raise click.BadParameter(f"must end in .npy or .csv, got {out!r}", param_hint="--out")
    click.echo(f"{records} trips -> {p}")


# ----------------------------------------------------------------------------- node


def _spec_options(f: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        click.option("--records", type=int, required=True),
        click.option("--sources", type=int, required=True),
        click.option("--seed", type=int, required=True),
        click.option("--emax", type=float, required=True, callback=_emax),
        click.option("--confidence", type=float, default=0.95, callback=_confidence),
        click.option("--no-groups", is_flag=True),
        click.option("--msr", type=float, callback=_msr),
        click.option("--round-msr", type=float, callback=_msr),
        click.option("--line-rate-gbps", type=float, default=1.0),
        click.option("--timeout", type=float, default=120.0),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _spec(kw: dict[str, Any]) -> Any:
    from ..analytics.nodes import Spec

    return Spec(
        kw.pop("records"),
        kw.pop("sources"),
        kw.pop("seed"),
        kw.pop("emax"),
        kw.pop("confidence"),
        not kw.pop("no_groups"),
        kw.pop("msr"),
        kw.pop("round_msr"),
        kw.pop("line_rate_gbps"),
        kw.pop("timeout"),
    )


@group.group(hidden=True)
def node() -> None:
    """One process of a testbed run (used by 'compare --mode testbed').

    \b
    Example:
      approxnet analytics node aggregator --bind 10.77.3.2:7811 --records 1000 ...
    """


@node.command(name="aggregator")
@_spec_options
@click.option("--bind", required=True)
@click.option("--scheme", default="atp")
def node_aggregator(bind: str, scheme: str, **kw: Any) -> None:
    """ATP aggregator. Example: approxnet analytics node aggregator --bind IP:PORT ..."""
    from ..analytics import nodes

    click.echo(json.dumps(nodes.aggregator(_spec(kw), bind, scheme), default=str))


@node.command(name="source")
@_spec_options
@click.option("--index", type=int, required=True)
@click.option("--connect", required=True)
def node_source(index: int, connect: str, **kw: Any) -> None:
    """ATP source. Example: approxnet analytics node source --index 0 --connect IP:PORT ..."""
    from ..analytics import nodes

    click.echo(json.dumps(nodes.source(_spec(kw), index, connect)))


@node.command(name="tcp-aggregator")
@_spec_options
@click.option("--port", type=int, required=True)
@click.option("--mode", type=click.Choice(["ss", "es", "all"]), required=True)
def node_tcp_aggregator(port: int, mode: str, **kw: Any) -> None:
    """TCP aggregator. Example: approxnet analytics node tcp-aggregator --port 7812 --mode ss"""
    from ..analytics import nodes

    click.echo(json.dumps(nodes.tcp_aggregator(_spec(kw), port, mode), default=str))


@node.command(name="tcp-source")
@_spec_options
@click.option("--index", type=int, required=True)
@click.option("--host", required=True)
@click.option("--port", type=int, required=True)
@click.option("--mode", type=click.Choice(["ss", "es", "all"]), required=True)
@click.option("--cc")
def node_tcp_source(index: int, host: str, port: int, mode: str, cc: str | None, **kw: Any) -> None:
    """TCP source. Example: approxnet analytics node tcp-source --index 0 --host IP ..."""
    from ..analytics import nodes

    click.echo(json.dumps(nodes.tcp_source_main(_spec(kw), index, host, port, mode, cc)))
