"""``approxnet repro [STUDY]``: run a study from experiments/ and write its
table and plot."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from .. import repro as reprolib
from .. import sim as simlib
from .._native import ScenarioError
from .progress import bar, console
from .sim import print_classes

__all__ = ["command"]


@click.command()
@click.argument("study", required=False)
@click.option("-l", "--list", "list_", is_flag=True, help="List the available studies.")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="KEY=V1,V2,...",
    help="Sweep a key (repeatable); default: the study's preset sweep, else one run.",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a scenario key (repeatable).",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    help="Output directory (default results/repro/<study>).",
)
@click.option(
    "-j", "--workers", type=click.IntRange(min=1), help="Worker processes (default: one per core)."
)
@click.option("--metric", default="jct_mean_us", show_default=True, help="Column plotted.")
@click.option(
    "--experiments",
    "root",
    type=click.Path(file_okay=False),
    help="Experiments directory (default ./experiments).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def command(
    study: str | None,
    list_: bool,
    params: tuple[str, ...],
    sets: tuple[str, ...],
    out: str | None,
    workers: int | None,
    metric: str,
    root: str | None,
    quiet: bool,
) -> None:
    """Reproduce STUDY (a scenario under experiments/, e.g. netapprox/demo):
    run its sweep through the simulator and write table.csv, table.md and
    plot.png.

    \b
    Examples:
      approxnet repro --list
      approxnet repro netapprox/demo --out results/repro/demo
      approxnet repro fig5_fbkv -p jobs.0.scheme=atp-full,dctcp-ss \\
          -p jobs.0.msr=0.25,0.5,1 --set topology.k=4 --set topology.hosts=16
    """
    if list_ or study is None:
        found = reprolib.studies(root)
        if not found:
            raise click.ClickException(f"no studies under {reprolib.experiments_root(root)}")
        if console.is_terminal:
            t = Table(title=f"studies in {reprolib.experiments_root(root)}")
            t.add_column("study")
            t.add_column("preset sweep")
            t.add_column("description")
            for s in found:
                preset = reprolib.PRESETS.get(s.name, {})
                t.add_row(s.name, ", ".join(preset) or "-", s.title)
            console.print(t)
        else:
            for s in found:
                click.echo(f"{s.name}\t{s.title}")
        if study is None and not list_:
            click.echo("run one with: approxnet repro STUDY (see --help)")
        return
    s = reprolib.find(study, root)
    try:
        grid = dict(simlib.parse_param(p) for p in params)
    except ScenarioError as e:
        raise click.BadParameter(str(e), param_hint="--param") from None
    points = 1
    for v in (grid or reprolib.PRESETS.get(s.name, {})).values():
        points *= len(v)
    dest = Path(out) if out else Path("results/repro") / s.name.replace("/", "-")
    with bar(f"repro {s.name}", points, quiet=quiet) as on_done:
        res = reprolib.run(
            s,
            dest,
            params=grid,
            overrides=list(sets),
            workers=workers,
            metric=metric,
            on_done=on_done,
        )
    print_classes(s.title, res.table, list(grid or reprolib.PRESETS.get(s.name, {})))
    click.echo(f"table: {res.table_csv} ({res.table_md.name})")
    if res.plot_png is not None:
        click.echo(f"plot:  {res.plot_png}")
