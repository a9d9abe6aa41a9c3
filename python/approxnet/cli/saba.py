"""``approxnet saba ...``: Saba (seed 003) — fit sensitivity models into the
table, solve eq. 2 for one port, run the controller service, read its
per-port configuration."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import testbed as tbm
from ..saba import Entry, SensitivityTable, default_floors, fit, slowdowns, solve
from ..saba.controller import Controller
from ..saba.enforce import Backend, HtbBackend, JsonBackend, NullBackend
from ..saba.service import Service, serve
from ..saba.store import open_store
from ..saba.topology import TestbedTopology
from ..saba.workloads import WORKLOADS

__all__ = ["group"]


def _floats(text: str, what: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"{what} must be comma-separated numbers, got {text!r}") from None


@click.group()
def group() -> None:
    """Saba: application-aware bandwidth allocation (seed 003).

    \b
    Examples:
      approxnet saba fit lr --times 0.05=9.1,0.1=5.2,0.25=2.9,0.5=2.1,0.75=1.8,0.9=1.7,1=1.6
      approxnet saba solve --model 5,-8,3 --model 1.5,-0.5
      approxnet saba controller --topology python/approxnet/testbed/examples/dumbbell.toml
      approxnet saba ports --url http://127.0.0.1:7800
      approxnet saba profile shuffle --nodes 4 --out results/saba/profile_shuffle.json
      approxnet saba run --app sort --model 5,-8,3 --netns h1 -- ./sort --input data
    """


@group.command("fit")
@click.argument("workload")
@click.option(
    "--times", required=True, help="share=seconds pairs, comma-separated (share 1 needed)"
)
@click.option("--degree", type=click.IntRange(1, 3), default=3, show_default=True)
@click.option("--table", "table_path", default="saba-sensitivity.db", show_default=True)
@click.option("--dataset", default="", help="dataset-size parameter of the runs")
@click.option("--nodes", type=click.IntRange(0), default=0, help="node count of the runs")
def fit_cmd(
    workload: str, times: str, degree: int, table_path: str, dataset: str, nodes: int
) -> None:
    """Fit eq. 1 to measured completion times and store it in the table."""
    pairs: dict[float, float] = {}
    for item in times.split(","):
        share, sep, secs = item.partition("=")
        try:
            pairs[float(share)] = float(secs)
        except ValueError:
            raise click.BadParameter(f"expected share=seconds, got {item!r}") from None
        if not sep:
            raise click.BadParameter(f"expected share=seconds, got {item!r}")
    samples = slowdowns(pairs)
    model = fit(samples, degree)
    table = SensitivityTable(table_path)
    table.put(Entry(workload, model, tuple(samples), dataset, nodes, "manual"))
    click.echo(json.dumps({"workload": workload, "coeffs": model.coeffs, "r2": model.r2}))


@group.command("solve")
@click.option("--model", "models", multiple=True, required=True, help="c0,c1,... of one app")
@click.option("--capacity", type=float, default=1.0, show_default=True, help="C_Saba")
@click.option("--solver", type=click.Choice(["fast", "reference"]), default="fast")
def solve_cmd(models: tuple[str, ...], capacity: float, solver: str) -> None:
    """Eq. 2 for one port: the weight of each app (floors: the controller's)."""
    coeffs = [_floats(m, "--model") for m in models]
    a = solve(coeffs, default_floors(len(coeffs), capacity), capacity, solver)  # type: ignore[arg-type]
    click.echo(json.dumps({"weights": a.weights, "objective": a.objective, "method": a.method}))


@group.command("controller")
@click.option("--topology", "topology_path", required=True, type=click.Path(exists=True))
@click.option(
    "--store",
    "--db",
    "db",
    default="saba-state.db",
    show_default=True,
    help="state store: a SQLite file, or postgresql://user@host:port/dbname",
)
@click.option("--table", "table_path", help="sensitivity table for registration by workload")
@click.option(
    "--enforce",
    type=click.Choice(["none", "htb", "json"]),
    default="none",
    show_default=True,
    help="htb: the running namespace testbed's switch ports; json: --export file",
)
@click.option("--export", "export_path", default="saba-ports.json", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(0, 65535), default=7800, show_default=True)
@click.option("--levels", type=click.IntRange(1, 16), default=8, show_default=True)
@click.option("--queues", type=click.IntRange(1, 16), default=8, show_default=True)
@click.option("--capacity", type=click.FloatRange(0, 1, min_open=True), default=1.0)
@click.option("--solver", type=click.Choice(["fast", "reference"]), default="fast")
@click.option(
    "--lease",
    type=click.FloatRange(0, min_open=True),
    help="seconds a connection lives unless renewed (default: until closed)",
)
def controller_cmd(
    topology_path: str,
    db: str,
    table_path: str | None,
    enforce: str,
    export_path: str,
    host: str,
    port: int,
    levels: int,
    queues: int,
    capacity: float,
    solver: str,
    lease: float | None,
) -> None:
    """Run the controller service (HTTP/JSON) over a testbed topology."""
    config = tbm.load(topology_path)
    backend: Backend = NullBackend()
    if enforce == "htb":
        backend = HtbBackend(config.namespace, queues, capacity)
    elif enforce == "json":
        backend = JsonBackend(Path(export_path))
    ctl = Controller(
        TestbedTopology(config),
        open_store(db),
        backend,
        levels=levels,
        queues=queues,
        capacity=capacity,
        solver=solver,  # type: ignore[arg-type]
        lease_s=lease,
    )
    table = SensitivityTable(table_path) if table_path else None
    service = Service(ctl, host, port, table)
    click.echo(f"saba controller on {service.url} ({len(ctl.apps())} apps recovered)", err=True)
    serve(service)


@group.command("ports")
@click.option("--url", default="http://127.0.0.1:7800", show_default=True)
def ports_cmd(url: str) -> None:
    """Print a running controller's per-port configuration (JSON)."""
    from ..saba.client import SabaClient

    click.echo(json.dumps(SabaClient(url).ports(), indent=1))


@group.command("run")
@click.option("--app", required=True, help="the app's name at the controller")
@click.option("--controller", "url", default="http://127.0.0.1:7800", show_default=True)
@click.option("--model", help="the app's eq. 1 coefficients c0,c1,... (lowest power first)")
@click.option("--workload", help="or: a workload of the controller's sensitivity table")
@click.option("--degree", type=click.IntRange(1, 3), default=3, show_default=True)
@click.option("--netns", help="run the program in this network namespace (/run/netns/NAME)")
@click.option(
    "--poll",
    type=click.FloatRange(0, min_open=True),
    default=0.2,
    show_default=True,
    help="seconds between checks of the app's DSCP and leases (flows are reported as they come)",
)
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED)
def run_cmd(
    app: str,
    url: str,
    model: str | None,
    workload: str | None,
    degree: int,
    netns: str | None,
    poll: float,
    argv: tuple[str, ...],
) -> None:
    """Run CMD as a Saba app (root): register it, mark its packets with its
    PL's DSCP (its own cgroup v2 + an nftables rule), report its TCP, UDP
    and UDP-Lite flows (conntrack events), deregister and clean up when it
    ends (a dead wrapper's leftovers: the next run or 'saba cleanup'). Exits with CMD's
    status (128 + N after signal N; 125 if the set-up failed).

    \b
    approxnet saba run --app NAME [--model c0,c1,...|--workload W] -- CMD ARGS...
    """
    import sys

    from ..saba.client import SabaClient
    from ..saba.runner import RunSpec, run

    coeffs = _floats(model, "--model") if model is not None else None
    spec = RunSpec(app, argv, coeffs, workload, degree, netns, poll)
    with SabaClient(url) as client:
        status = run(spec, client)
    sys.exit(status)


@group.command("cleanup")
@click.option(
    "--drop-unreachable",
    is_flag=True,
    help="also forget the records whose controller cannot be reached (kept otherwise)",
)
def cleanup_cmd(drop_unreachable: bool) -> None:
    """Remove what dead 'saba run' wrappers left (root): the cgroup, the
    nftables table and the app's registration of each wrapper whose
    process is gone (its record in $APPROXNET_SABA_STATE, default
    /run/approxnet-saba). Every 'saba run' does this as it starts."""
    from ..saba import stale

    n = stale.sweep(lambda m: click.echo(m, err=True), drop_unreachable)
    click.echo(f"{n} dead wrapper(s) cleaned up", err=True)


@group.command("profile")
@click.argument("workload", type=click.Choice(sorted(WORKLOADS)))
@click.option("--nodes", type=click.IntRange(2, 16), default=4, show_default=True)
@click.option("--link", default="200mbit", show_default=True, help="every host's link rate")
@click.option("--scale", type=click.FloatRange(0.01, 100), default=1.0, help="dataset size x")
@click.option("--table", "table_path", default="saba-sensitivity.db", show_default=True)
@click.option("--out", "out_path", type=click.Path(), help="also write the profile as JSON")
@click.option(
    "--reps",
    type=click.IntRange(1, 9),
    default=1,
    show_default=True,
    help="runs per share (median)",
)
def profile_cmd(
    workload: str,
    nodes: int,
    link: str,
    scale: float,
    table_path: str,
    out_path: str | None,
    reps: int,
) -> None:
    """Profile WORKLOAD on a fresh namespace testbed (root): completion time
    at each bandwidth share, slowdowns, eq. 1 fits of degree 1-3 with R²,
    stored in the sensitivity table."""
    import os

    from ..saba.profiler import cluster, profile
    from ..testbed import lifecycle

    w = WORKLOADS[workload].scaled(scale)
    cfg = cluster(f"sp{os.getpid() % 100000}", nodes, link)
    tb = lifecycle.up(cfg)
    try:
        p = profile(
            tb,
            w,
            table=SensitivityTable(table_path),
            dataset=f"{scale:g}x",
            progress=lambda s, t: click.echo(f"share {s:4.2f}: {t:7.2f} s", err=True),
            reps=reps,
        )
    finally:
        tb.down()
    doc = {
        "workload": workload,
        "nodes": nodes,
        "link": link,
        "scale": scale,
        "reps": reps,
        "load_average": os.getloadavg()[0],
        "times": {str(k): v for k, v in p.times.items()},
        "slowdowns": p.samples,
        "models": {str(k): {"coeffs": m.coeffs, "r2": m.r2} for k, m in p.models.items()},
    }
    text = json.dumps(doc, indent=1)
    if out_path:
        Path(out_path).parent.mkdir(parents=True, exist_ok=True)
        Path(out_path).write_text(text + "\n")
    click.echo(text)
