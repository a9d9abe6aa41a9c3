"""``approxnet train ...``: bounded-loss distributed training (PyTorch DDP
with approxnet's gradient hook) against the stock Gloo all-reduce.

Needs the ``train`` extra (torch, scikit-learn); without it every command
fails with a one-line error naming the extra.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from .progress import bar

__all__ = ["group"]


def _lib() -> Any:
    try:
        from .. import torch as anx_torch
        from ..torch import experiment, launch, tolerance
    except ImportError as e:
        raise click.ClickException(
            f"{e.name or 'torch'} is missing: pip install 'approxnet[train]' (torch, scikit-learn)"
        ) from e
    return anx_torch, experiment, launch, tolerance


def _options(f: Any) -> Any:
    opts = [
        click.option("--mode", type=click.Choice(["loopback", "testbed"]), default="loopback",
                     show_default=True, help="127.0.0.1, or one testbed namespace host per rank."),
        click.option("--model", type=click.Choice(["mlp", "cnn", "logreg", "lstm"]), default="mlp",
                     show_default=True),
        click.option("--epochs", type=click.IntRange(1, 10_000), default=30, show_default=True),
        click.option("--batch", type=click.IntRange(1, 4096), default=16, show_default=True,
                     help="Samples per rank per step."),
        click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=0.05,
                     show_default=True),
        click.option("--target", type=click.FloatRange(0, 1), default=0.95, show_default=True,
                     help="Test accuracy whose first epoch counts as time to accuracy."),
        click.option("--loss-bound", "-p", type=click.FloatRange(0, 1, max_open=True),
                     default=0.1, show_default=True,
                     help="Fraction of each shard the transport may lose (MSR = 1 - p)."),
        click.option("--gather-loss-bound", type=click.FloatRange(0, 1, max_open=True),
                     default=None, help="Loss bound of the all-gather phase (default: -p)."),
        click.option("--policy", type=click.Choice(["uniform", "groups"]), default="uniform",
                     show_default=True,
                     help="uniform p (seed 001) or magnitude groups (seed 000 §6)."),
        click.option("--fill", type=click.Choice(["zero", "rescale", "previous"]),
                     default="rescale", show_default=True),
        click.option("--transform", type=click.Choice(["none", "permute", "hadamard"]),
                     default="permute", show_default=True),
        click.option("--seed", type=int, default=0, show_default=True),
        click.option("--world", type=click.IntRange(2, 16), default=4, show_default=True,
                     help="Ranks (loopback; the testbed has 4)."),
        click.option("--background", type=click.IntRange(0, 8), default=1, show_default=True,
                     help="Bulk TCP flows each way across the testbed trunk."),
        click.option("--trunk-rate", default=None,
                     help="Testbed bottleneck rate, e.g. 50mbit (default: the TOML's)."),
        click.option("--port-buffer", default=None,
                     help="Testbed switch port buffer, e.g. 32KiB (default: the TOML's)."),
        click.option("--line-rate-gbps", type=click.FloatRange(min=0, min_open=True),
                     default=1.0, show_default=True, help="approxnet's NIC rate."),
        click.option("--stop-at-target", is_flag=True, help="Stop once the target is reached."),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
    ]  # fmt: skip
    for o in reversed(opts):
        f = o(f)
    return f


def _spec(experiment: Any, transport: str, kw: dict[str, Any]) -> Any:
    spec = experiment.TrainSpec(
        model=kw["model"],
        epochs=kw["epochs"],
        batch=kw["batch"],
        lr=kw["lr"],
        target=kw["target"],
        transport=transport,
        policy=kw["policy"],
        loss_bound=kw["loss_bound"],
        gather_loss_bound=kw["gather_loss_bound"],
        fill=kw["fill"],
        transform=kw["transform"],
        seed=kw["seed"],
        line_rate_gbps=kw["line_rate_gbps"],
        stop_at_target=kw["stop_at_target"],
    )
    spec.validate()
    return spec


def _run(launch: Any, spec: Any, kw: dict[str, Any], label: str) -> dict[str, Any]:
    with bar(label, spec.epochs, quiet=kw["quiet"]) as on_done:

        def progress(ep: dict[str, Any]) -> None:
            on_done(int(ep["epoch"]), spec.epochs)

        if kw["mode"] == "testbed":
            res: dict[str, Any] = launch.run_testbed(
                spec, background=kw["background"], progress=progress,
                trunk_rate=kw["trunk_rate"], port_buffer=kw["port_buffer"],
            )  # fmt: skip
        else:
            res = launch.run_loopback(spec, world=kw["world"], progress=progress)
    res["load_average"] = list(os.getloadavg())
    return res


def _quantile(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    v = sorted(xs)
    return v[min(len(v) - 1, int(q * len(v)))]


def _row(name: str, res: dict[str, Any]) -> dict[str, Any]:
    reached = res.get("reached") or {}
    eps = res["epochs"]
    upto = eps[: reached["epoch"]] if reached else eps
    steps = [s for e in upto for s in e.get("step_s", [])]
    comm = [s for e in upto for s in e.get("comm_step_s", [])]
    queues = res.get("queues", [])
    return {
        "run": name,
        "time_to_target_s": reached.get("train_s"),
        "epochs_to_target": reached.get("epoch"),
        "final_accuracy": res["final_accuracy"],
        "epochs": len(eps),
        "train_s": res["train_s"],
        "s_per_epoch": res["train_s"] / max(1, len(eps)),
        "delivered": (sum(e.get("delivered", 1.0) for e in eps) / len(eps)) if eps else 1.0,
        # per iteration, epochs up to the target: compute + all-reduce, and
        # the all-reduce alone (approxnet's telemetry; Gloo's overlaps backward)
        "step_p50_ms": None if not steps else 1e3 * (_quantile(steps, 0.5) or 0.0),
        "step_p99_ms": None if not steps else 1e3 * (_quantile(steps, 0.99) or 0.0),
        "comm_p50_ms": None if not comm else 1e3 * (_quantile(comm, 0.5) or 0.0),
        "comm_p99_ms": None if not comm else 1e3 * (_quantile(comm, 0.99) or 0.0),
        "bytes_unsent": sum(e.get("bytes_unsent", 0) for e in eps),
        # testbed counters (whole run): bytes the switches sent to the workers
        "wire_bytes_to_workers": sum(
            q["sent_bytes"] for q in queues if str(q["port"]).startswith("w")
        ),
        "switch_drops": sum(q["dropped"] for q in queues),
        "load_average": (res.get("load_average") or [None])[0],
    }


def _print_rows(rows: list[dict[str, Any]]) -> None:
    click.echo(
        f"{'run':<28} {'to target (s)':>13} {'epochs':>6} {'final acc':>9} "
        f"{'s/epoch':>8} {'delivered':>9} {'step p50/p99 ms':>16} {'comm p50/p99 ms':>16}"
    )

    def pair(a: float | None, b: float | None) -> str:
        return "-" if a is None or b is None else f"{a:.1f}/{b:.1f}"

    for r in rows:
        tt = "-" if r["time_to_target_s"] is None else f"{r['time_to_target_s']:.2f}"
        et = "-" if r["epochs_to_target"] is None else str(r["epochs_to_target"])
        click.echo(
            f"{r['run']:<28} {tt:>13} {et:>6} {r['final_accuracy']:>9.4f} "
            f"{r['s_per_epoch']:>8.3f} {r['delivered']:>9.4f} "
            f"{pair(r['step_p50_ms'], r['step_p99_ms']):>16} "
            f"{pair(r['comm_p50_ms'], r['comm_p99_ms']):>16}"
        )


@click.group()
def group() -> None:
    """Bounded-loss distributed training over approxnet (PyTorch DDP hook).

    \b
    Examples:
      approxnet train run --transport approxnet -p 0.1 --epochs 10
      approxnet train compare --mode testbed --epochs 30 --out results/train
      approxnet train tolerance --model mlp --seeds 0,1,2
    """


@group.command("run")
@_options
@click.option("--transport", type=click.Choice(["approxnet", "gloo"]), default="approxnet",
              show_default=True,
              help="Gradients over approxnet's hook, or Gloo's all-reduce (TCP).")  # fmt: skip
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write rank 0's full record (JSON) here.")  # fmt: skip
def run_cmd(transport: str, out: Path | None, **kw: Any) -> None:
    """Train once with 4 worker processes (DDP); print time to target
    accuracy, final accuracy and epochs.

    \b
    Example:
      approxnet train run --transport approxnet -p 0.1 --epochs 10
      approxnet train run --mode testbed --transport gloo --epochs 30 --out gloo.json
    """
    _, experiment, launch, _ = _lib()
    spec = _spec(experiment, transport, kw)
    res = _run(launch, spec, kw, f"{transport} ({kw['mode']})")
    _print_rows([_row(transport, res)])
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(res, indent=1))


@group.command("compare")
@_options
@click.option("--with-reliable/--no-reliable", default=True, show_default=True,
              help="Also run approxnet with p = 0 (same all-reduce, no loss).")  # fmt: skip
@click.option(
    "--also-p",
    multiple=True,
    metavar="P[/G]",
    help="Further loss bounds to run in the same comparison (repeatable): P for "
    "both phases, P/G for reduce-scatter P and all-gather G.",
)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write runs.json and table.md here.")  # fmt: skip
def compare_cmd(with_reliable: bool, also_p: tuple[str, ...], out: Path | None, **kw: Any) -> None:
    """Same seed, same data: the stock Gloo all-reduce over TCP, then
    approxnet's hook with loss bound -p (and with p = 0); prints time to
    the target accuracy, final accuracy, epochs and the speedup over Gloo.

    \b
    Example:
      approxnet train compare --mode testbed --epochs 30 -p 0.1 --out results/train
    """
    _, experiment, launch, _ = _lib()
    runs: list[tuple[str, Any]] = [("gloo", _spec(experiment, "gloo", kw))]
    if with_reliable:
        rel = dict(kw, loss_bound=0.0, gather_loss_bound=None, policy="uniform")
        runs.append(("approxnet p=0", _spec(experiment, "approxnet", rel)))
    name = f"approxnet p={kw['loss_bound']:g}" if kw["policy"] == "uniform" else "approxnet groups"
    if kw["gather_loss_bound"] is not None:
        name += f" gather={kw['gather_loss_bound']:g}"
    runs.append((name, _spec(experiment, "approxnet", kw)))
    for text in also_p:
        parts = _floats(text.replace("/", ","))
        if len(parts) not in (1, 2) or any(not 0 <= x < 1 for x in parts):
            raise click.BadParameter(f"{text!r}: P or P/G, each in [0, 1)", param_hint="--also-p")
        g = parts[1] if len(parts) == 2 else None
        label = f"approxnet p={parts[0]:g}" + ("" if g is None else f" gather={g:g}")
        more = dict(kw, loss_bound=parts[0], gather_loss_bound=g, policy="uniform")
        runs.append((label, _spec(experiment, "approxnet", more)))
    rows, results = [], {}
    for i, (name, spec) in enumerate(runs):
        # a repeated setting (to interleave repetitions) keeps its own record
        if any(n == name for n, _ in runs[:i]):
            name = f"{name} (#{sum(n == name for n, _ in runs[:i]) + 1})"
        res = _run(launch, spec, kw, name)
        results[name] = res
        rows.append(_row(name, res))
    base = rows[0]["time_to_target_s"]
    for r in rows:
        t = r["time_to_target_s"]
        r["speedup_vs_gloo"] = base / t if base and t else None
    _print_rows(rows)
    for r in rows[1:]:
        sp = r["speedup_vs_gloo"]
        acc = (r["final_accuracy"] - rows[0]["final_accuracy"]) * 100
        click.echo(
            f"{r['run']}: speedup to target vs gloo "
            f"{'-' if sp is None else f'{sp:.2f}x'}, final accuracy {acc:+.1f} pp"
        )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "runs.json").write_text(json.dumps({"rows": rows, "runs": results}, indent=1))
        lines = [
            "| run | time to target (s) | epochs to target | final accuracy | s/epoch "
            "| step p50 / p99 (ms) | all-reduce p50 / p99 (ms) | MB to workers | unsent MB "
            "| switch drops | speedup | load avg |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]

        def f1(x: float | None) -> str:
            return "-" if x is None else f"{x:.1f}"

        for r in rows:
            sp = r["speedup_vs_gloo"]
            tt = r["time_to_target_s"]
            lines.append(
                f"| {r['run']} | {'-' if tt is None else f'{tt:.2f}'} "
                f"| {r['epochs_to_target'] or '-'} "
                f"| {r['final_accuracy']:.4f} | {r['s_per_epoch']:.3f} "
                f"| {f1(r['step_p50_ms'])} / {f1(r['step_p99_ms'])} "
                f"| {f1(r['comm_p50_ms'])} / {f1(r['comm_p99_ms'])} "
                f"| {r['wire_bytes_to_workers'] / 1e6:.1f} | {r['bytes_unsent'] / 1e6:.2f} "
                f"| {r['switch_drops']} | {'-' if sp is None else f'{sp:.2f}x'} "
                f"| {f1(r['load_average'])} |"
            )
        (out / "table.md").write_text("\n".join(lines) + "\n")


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError as e:
        raise click.BadParameter(f"{text!r}: comma-separated numbers") from e


@group.command("tolerance")
@click.option("--model", type=click.Choice(["mlp", "cnn", "logreg", "lstm"]), default="mlp",
              show_default=True)  # fmt: skip
@click.option("--epochs", type=click.IntRange(1, 10_000), default=30, show_default=True)
@click.option("--target", type=click.FloatRange(0, 1), default=0.95, show_default=True)
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=0.05, show_default=True)
@click.option("--fill", type=click.Choice(["zero", "rescale"]), default="rescale",
              show_default=True)  # fmt: skip
@click.option("--ps", default="0,0.05,0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.45,0.5", show_default=True,
              help="Loss fractions to sweep (must start at 0).")  # fmt: skip
@click.option("--seeds", default="0,1,2", show_default=True, help="Seeds (median over them).")
@click.option("--granularity", type=click.Choice(["packet", "element"]), default="packet",
              show_default=True,
              help="Lose whole packets (--elems-per-packet values) or single values.")  # fmt: skip
@click.option("--elems-per-packet", type=click.IntRange(min=1), default=362, show_default=True,
              help="float32 values per packet (362 = 1448 payload bytes).")  # fmt: skip
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the sweep (JSON) here.")  # fmt: skip
@click.option("--quiet", "-q", is_flag=True)
def tolerance_cmd(
    model: str, epochs: int, target: float, lr: float, fill: str, ps: str, seeds: str,
    granularity: str, elems_per_packet: int, out: Path | None, quiet: bool,
) -> None:  # fmt: skip
    """Measure a model's loss-tolerance bound x1 as seed 001 §2.2 does:
    4 simulated workers lose a random fraction p of their gradient packets
    (or single values, --granularity element) every step; x1 is the largest
    p that still reaches the target accuracy in the epochs p = 0 needs.

    \b
    Example:
      approxnet train tolerance --model mlp --target 0.95 --seeds 0,1,2
    """
    _, experiment, _, tolerance = _lib()
    plist = _floats(ps)
    if not plist or plist[0] != 0.0 or any(not 0 <= p < 1 for p in plist):
        raise click.BadParameter("must start at 0 and lie in [0, 1)", param_hint="--ps")
    try:
        slist = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError as e:
        raise click.BadParameter(f"{seeds!r}: comma-separated ints", param_hint="--seeds") from e
    if not slist:
        raise click.BadParameter("at least one seed", param_hint="--seeds")
    spec = experiment.TrainSpec(model=model, epochs=epochs, target=target, lr=lr, fill=fill)
    spec.validate()
    with bar(f"x1 sweep ({model})", len(plist), quiet=quiet) as on_done:
        done = [0]

        def progress(_pt: Any) -> None:
            done[0] += 1
            on_done(done[0], len(plist))

        points = tolerance.sweep(
            spec, plist, slist, progress=progress, granularity=granularity,
            elems_per_packet=elems_per_packet,
        )  # fmt: skip
    x1 = tolerance.loss_tolerance_bound(points)
    click.echo(f"{'p':>5} {'median epochs':>13} {'epochs per seed':<24} final accuracy")
    for pt in points:
        med = "-" if pt.median_epochs == float("inf") else f"{pt.median_epochs:g}"
        eps = ",".join("-" if e is None else str(e) for e in pt.epochs)
        accs = ",".join(f"{a:.3f}" for a in pt.final_accuracy)
        click.echo(f"{pt.p:>5.2f} {med:>13} {eps:<24} {accs}")
    click.echo(
        f"x1 ({model}, target {target}): {'-' if x1 is None else f'{x1:g}'} ({granularity} loss)"
    )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            json.dumps(
                {
                    "model": model, "target": target, "fill": fill, "seeds": slist, "x1": x1,
                    "granularity": granularity, "elems_per_packet": elems_per_packet,
                    "points": [
                        {"p": q.p, "epochs": q.epochs, "final_accuracy": q.final_accuracy}
                        for q in points
                    ],
                },
                indent=1,
            )
        )  # fmt: skip
