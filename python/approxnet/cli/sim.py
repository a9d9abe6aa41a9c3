"""``approxnet sim run|sweep|schemes``: the simulator."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
import pandas as pd
from rich.table import Table

from .. import sim as simlib
from .._native import ScenarioError
from .progress import bar, console, spinner

__all__ = ["group"]

CLASS_COLUMNS = [
    ("name", "class"),
    ("scheme", "scheme"),
    ("msr", "msr"),
    ("done", "done"),
    ("jobs", "jobs"),
    ("jct_mean_us", "JCT mean us"),
    ("jct_p99_us", "JCT p99 us"),
    ("loss_rate", "loss"),
    ("delivered_fraction", "delivered"),
]


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def print_classes(title: str, classes: pd.DataFrame, params: list[str] | None = None) -> None:
    """One table row per job class (and sweep point)."""
    cols = [(p, p.rsplit(".", 1)[-1]) for p in params or []]
    swept = {h for _, h in cols}
    cols += [(c, h) for c, h in CLASS_COLUMNS if c in classes.columns and h not in swept]
    if "class_name" in classes.columns:
        cols = [(("class_name" if c == "name" else c), h) for c, h in cols]
        cols = [(c, h) for c, h in cols if c in classes.columns]
    t = Table(title=title)
    for _, h in cols:
        t.add_column(h)
    for _, row in classes.iterrows():
        t.add_row(*(_fmt(row[c]) for c, _ in cols))
    console.print(t) if console.is_terminal else click.echo(_plain(cols, classes))


def _plain(cols: list[tuple[str, str]], df: pd.DataFrame) -> str:
    lines = ["  ".join(h for _, h in cols)]
    for _, row in df.iterrows():
        lines.append("  ".join(_fmt(row[c]) for c, _ in cols))
    return "\n".join(lines)


SET = click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a scenario key, e.g. --set jobs.0.msr=0.5 --set seed=3 (repeatable).",
)


class ScenarioPath(click.ParamType):  # type: ignore[type-arg]
    """A scenario file, or the name of a study shipped with the package
    (``netapprox/demo``, see ``approxnet repro --list``)."""

    name = "scenario"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> str:
        text = str(value)
        if Path(text).is_file():
            return text
        if Path(text).exists():
            self.fail(f"{text} is not a file", param, ctx)
        from .. import repro

        try:
            return str(repro.find(text, repro.studies_root()).path)
        except ScenarioError:
            self.fail(
                f"{text}: no such file, nor a shipped study (see: approxnet repro --list)",
                param,
                ctx,
            )


SCENARIO = click.argument("scenario", type=ScenarioPath())


@click.group(name="sim")
def group() -> None:
    """Packet-level datacenter simulator (scenario TOML -> CSV records).

    \b
    Example:
      approxnet sim run netapprox/demo --out results/demo
    """


@group.command()
@SCENARIO
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Directory for the records (default results/tmp/<name>).",
)
@SET
@click.option("--no-flows", is_flag=True, help="Skip flows.csv.")
@click.option("-q", "--quiet", is_flag=True, help="No progress spinner.")
def run(scenario: str, out: str | None, sets: tuple[str, ...], no_flows: bool, quiet: bool) -> None:
    """Run one SCENARIO (a TOML file or a shipped study) and write jobs.csv, flows.csv, queues.csv,
    summary.txt and summary.json.

    \b
    Example:
      approxnet sim run netapprox/demo --out results/demo \\
          --set jobs.0.scheme=dctcp-ss --set jobs.0.msr=0.5
    """
    for s in sets:
        if "=" not in s:
            raise click.BadParameter(f"{s!r} is not KEY=VALUE", param_hint="--set")
    dest = Path(out) if out else Path("results/tmp") / Path(scenario).stem
    res = spinner(
        f"simulating {scenario}",
        lambda: simlib.run(scenario, overrides=list(sets), out=dest, flows=not no_flows),
        quiet=quiet,
    )
    sm = res.summary
    print_classes(f"{res.name} ({sm.get('sim_s', 0) * 1e3:.3f} ms simulated)", res.classes)
    click.echo(
        f"simulated {sm.get('sim_s', 0) * 1e3:.3f} ms in {sm.get('wall_s', 0):.2f} s wall: "
        f"{sm.get('events', 0)} events, {sm.get('hops', 0)} packet-hops, {sm.get('drops', 0)} drops"
    )
    click.echo(f"results in {dest}")


@group.command()
@SCENARIO
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="A swept key and its values (repeatable; every combination runs).",
)
@SET
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Directory for sweep.csv and one record directory per point.",
)
@click.option(
    "-j", "--workers", type=click.IntRange(min=1), help="Worker processes (default: one per core)."
)
@click.option(
    "--ray",
    "ray_address",
    metavar="ADDRESS",
    help="Run the points on a Ray cluster (e.g. auto, ray://host:10001).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def sweep(
    scenario: str,
    params: tuple[str, ...],
    sets: tuple[str, ...],
    out: str | None,
    workers: int | None,
    ray_address: str | None,
    quiet: bool,
) -> None:
    """Run SCENARIO once per combination of the --param values, in parallel
    processes (or on Ray), and write one table of per-class results.

    \b
    Example:
      approxnet sim sweep netapprox/demo \\
          -p jobs.0.scheme=atp-full,dctcp-ss -p jobs.0.msr=0.25,0.5,1 \\
          --set duration_ms=2.0 --out results/sweep
    """
    if not params:
        raise click.UsageError("give at least one --param KEY=V1,V2,...")
    try:
        grid = dict(simlib.parse_param(p) for p in params)
    except ScenarioError as e:
        raise click.BadParameter(str(e), param_hint="--param") from None
    total = 1
    for v in grid.values():
        total *= len(v)
    if ray_address:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise click.ClickException(
                "--ray needs Ray, which is not installed: pip install 'ray[default]'"
            ) from None
        with bar("sweep (ray)", total, quiet=quiet) as on_done:
            df = simlib.sweep_ray(
                ray_address, scenario, grid, overrides=list(sets), on_done=on_done
            )
        if out:
            os.makedirs(out, exist_ok=True)
            df.to_csv(Path(out) / "sweep.csv", index=False)
    else:
        with bar("sweep", total, quiet=quiet) as on_done:
            df = simlib.sweep(
                scenario, grid, overrides=list(sets), out=out, workers=workers, on_done=on_done
            )
    print_classes(f"sweep of {scenario} ({total} points)", df, list(grid))
    if out:
        click.echo(f"results in {Path(out) / 'sweep.csv'}")


@group.command()
def schemes() -> None:
    """List the transports / schemes and message-size distributions a
    scenario may name.

    \b
    Example:
      approxnet sim schemes
    """
    click.echo("schemes: " + ", ".join(simlib.schemes()))
    click.echo("sizes:   " + ", ".join(simlib.sizes()))
