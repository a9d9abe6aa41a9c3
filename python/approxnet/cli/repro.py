"""``approxnet repro [FIGURE | STUDY]``: run a seed figure's plan or a
study shipped with the package, and write its table and plot."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from .. import figures as figlib
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
    help="Directory of studies to use instead of the ones shipped with the package.",
)
@click.option(
    "--quick", is_flag=True, help="A figure at CI size (k = 4 fat-tree, 16 hosts, short runs)."
)
@click.option(
    "--only",
    metavar="LABEL,...",
    default="",
    help="Run only these runs of a figure (labels as in its table, e.g. atp-full-0.5-L0.2).",
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
    quick: bool,
    only: str,
    quiet: bool,
) -> None:
    """Reproduce a seed FIGURE (fig5 ... fig14, dml-table1, dml-fig3,
    dml-fig4, interconnect/fig6 ... interconnect/fig11: its runs) or a
    STUDY (a scenario shipped with the package, e.g. netapprox/demo: its
    sweep) through the simulator, and write table.csv, table.md and
    plot.png (default under results/repro/).

    A study named for a figure (netapprox/fig5_fbkv) runs that figure
    unless -p gives a sweep.

    \b
    Examples:
      approxnet repro --list
      approxnet repro fig5 --quick
      approxnet repro dml-table1 --quick
      approxnet repro netapprox/fig6_fbhd --quick --only atp-full-0.5-L0.5,dctcp-es-0.5-L0.5
      approxnet repro netapprox/demo --out results/repro/demo
      approxnet repro interconnect/fig6 --quick
      approxnet repro saba/flow-small --quick
      approxnet repro saba/controller-time
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
            ft = Table(title="seed figures (approxnet repro FIGURE [--quick])")
            ft.add_column("figure")
            ft.add_column("study")
            ft.add_column("runs")
            ft.add_column("what it shows")
            for f in figlib.FIGURES.values():
                ft.add_row(f.name, f.study, str(len(figlib.plan(f.name))), f.title)
            for name, title in _ic_figures().items():
                ft.add_row(f"interconnect/{name}", "interconnect/study", "-", title)
            for name, title in _saba_presets().items():
                ft.add_row(name, "saba/presets", "-", title)
            console.print(ft)
        else:
            for s in found:
                click.echo(f"{s.name}\t{s.title}")
            for f in figlib.FIGURES.values():
                click.echo(f"{f.name}\t{f.title}")
            for name, title in _ic_figures().items():
                click.echo(f"interconnect/{name}\t{title}")
            for name, title in _saba_presets().items():
                click.echo(f"{name}\t{title}")
        if study is None and not list_:
            click.echo("run one with: approxnet repro STUDY (see --help)")
        return
    if study.startswith("interconnect/"):
        if params or sets or only:
            raise click.UsageError(
                "-p / --set / --only apply to simulator studies; an interconnect figure "
                "takes --quick and --out (its points are in interconnect/study.toml)"
            )
        _interconnect(study.removeprefix("interconnect/"), out, quick)
        return
    if study.startswith("saba/"):
        if params or sets or only:
            raise click.UsageError(
                "-p / --set / --only apply to simulator studies; a Saba preset takes "
                "--quick and --out (its parameters are in saba/presets.toml)"
            )
        _saba(study, out, quick, quiet)
        return
    fig = figlib.FIGURES.get(study)
    if fig is None and not params:
        named = reprolib.find(study, root) if root else None
        fig = figlib.figure_of_study(named.name if named else study)
    if fig is not None and not params:
        _figure(fig, out, quick, [x for x in only.split(",") if x], workers, quiet, sets)
        return
    if quick or only:
        flag = "--quick" if quick else "--only"
        raise click.UsageError(f"{flag} applies to a figure; {study!r} is a study (see --list)")
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


def _figure(
    fig: figlib.Figure,
    out: str | None,
    quick: bool,
    only: list[str],
    workers: int | None,
    quiet: bool,
    sets: tuple[str, ...],
) -> None:
    n = len(only) if only else len(figlib.plan(fig.name, quick))
    tag = fig.name + ("-quick" if quick else "")
    dest = Path(out) if out else Path("results/repro") / tag
    with bar(f"repro {tag}", n, quiet=quiet) as on_done:
        count = [0]

        def step(label: str, rows: list[dict[str, object]]) -> None:
            count[0] += 1
            on_done(count[0], n)

        res = reprolib.run_figure(
            fig.name, dest, quick=quick, only=only, sets=sets, workers=workers, on_run=step
        )
    cols = ["run", "cls", "scheme", "msr", "load", "done", "jobs", "jct_mean_us", "jct_p99_us"]
    if fig.kind == "training":
        click.echo(res.table_md.read_text())
    elif console.is_terminal:
        t = Table(title=fig.title)
        for c in cols:
            t.add_column(c)
        for r in res.table[cols].itertuples(index=False):
            t.add_row(*(f"{v:.1f}" if isinstance(v, float) else str(v) for v in r))
        console.print(t)
    else:
        click.echo(res.table[cols].to_string(index=False))
    click.echo(f"table: {res.table_csv} ({res.table_md.name})")
    if res.plot_png is not None:
        click.echo(f"plot:  {res.plot_png}")


def _ic_figures() -> dict[str, str]:
    from ..interconnect import figures as icfig

    return {**{n: t for n, (_, t, _) in icfig.ANALYSES.items()}, **icfig.FIGURES}


def _interconnect(name: str, out: str | None, quick: bool) -> None:
    """Seed 004's execution-time figures (approxnet.interconnect.figures)."""
    from ..interconnect import figures as icfig

    if name not in icfig.FIGURES and name not in icfig.ANALYSES:
        known = ", ".join(f"interconnect/{n}" for n in _ic_figures())
        raise click.BadParameter(f"no figure interconnect/{name} (known: {known})")
    tag = f"interconnect-{name}" + ("-quick" if quick else "")
    dest = Path(out) if out else Path("results/repro") / tag
    if name in icfig.ANALYSES:
        for f in icfig.run_analysis(name, dest, quick=quick):
            click.echo(f"wrote {f}")
        return
    try:
        res = icfig.run_figure(name, dest, quick=quick)
    except (RuntimeError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(res.report)
    click.echo(f"table: {res.table_csv} ({res.table_md.name})")
    if res.plot_png is not None:
        click.echo(f"plot:  {res.plot_png}")


def _saba_presets() -> dict[str, str]:
    from ..saba.presets import presets

    return presets()


def _saba(name: str, out: str | None, quick: bool, quiet: bool) -> None:
    """Seed 003's studies (approxnet.saba.presets)."""
    from ..saba.errors import SabaError
    from ..saba.presets import run_preset

    tag = name.replace("/", "-") + ("-quick" if quick else "")
    dest = Path(out) if out else Path("results/repro") / tag
    log = (lambda _m: None) if quiet else (lambda m: click.echo(m, err=True))
    try:
        res = run_preset(name, dest, quick=quick, log=log)
    except SabaError as e:
        raise click.ClickException(str(e)) from None
    click.echo(res.table_md.read_text())
    click.echo(f"table: {res.table_csv} ({res.table_md.name})")
    if res.plot_png is not None:
        click.echo(f"plot:  {res.plot_png}")
