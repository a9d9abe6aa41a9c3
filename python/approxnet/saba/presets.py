"""Saba's studies as ``approxnet repro saba/NAME [--quick]`` presets: the
package data ``approxnet/studies/saba/presets.toml`` names each preset's
kind (``flow``: :mod:`.flowstudy`; ``ctltime``: :mod:`.ctltime`) and its
parameters, with a ``quick`` table of CI-size replacements.

A run writes, under its output directory, ``table.csv`` / ``table.md``
(flow: the geometric-mean speed-up per seed and scheme and over all
seeds; ctltime: Fig. 12's rows), ``plot.png``, and for the flow study
``models.csv`` (the profiles) and ``jct.csv`` (every job's time).
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import SabaError

__all__ = ["Preset", "PresetResult", "presets", "preset", "run_preset", "PRESETS_FILE"]

PRESETS_FILE = Path(__file__).resolve().parents[1] / "studies" / "saba" / "presets.toml"
_KINDS = ("flow", "ctltime")


@dataclass(frozen=True)
class Preset:
    """One preset, its parameters resolved (``quick`` applied or not)."""

    name: str
    kind: str
    title: str
    params: dict[str, Any]


@dataclass(frozen=True)
class PresetResult:
    """What :func:`run_preset` wrote."""

    preset: Preset
    table: pd.DataFrame
    out_dir: Path
    table_csv: Path
    table_md: Path
    plot_png: Path | None


def _load(path: Path = PRESETS_FILE) -> dict[str, Any]:
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SabaError(f"cannot read the Saba presets {path}: {e}") from None


def presets(path: Path = PRESETS_FILE) -> dict[str, str]:
    """Every preset's name (``saba/NAME``) and title."""
    return {f"saba/{n}": str(d.get("title", n)) for n, d in _load(path).items()}


def preset(name: str, quick: bool = False, path: Path = PRESETS_FILE) -> Preset:
    """Preset `name` (``saba/NAME`` or ``NAME``) with its ``quick`` table
    applied when `quick`."""
    data = _load(path)
    key = name.removeprefix("saba/")
    if key not in data:
        known = ", ".join(f"saba/{n}" for n in data)
        raise SabaError(f"no Saba preset {name!r} (known: {known})")
    d = dict(data[key])
    quick_table = d.pop("quick", {})
    kind, title = d.pop("kind", None), str(d.pop("title", key))
    if kind not in _KINDS:
        raise SabaError(f"preset {key}: kind must be one of {_KINDS}, got {kind!r}")
    if quick:
        d.update(quick_table)
        title = f"{key} --quick (CI size, not the study's)"
    return Preset(f"saba/{key}", kind, title, d)


def _flow_study(p: Preset) -> Any:
    from .flowstudy import FlowStudy
    from .sim_backend import PAPER_SPINE_LEAF

    params = dict(p.params)
    topo = params.pop("topology", None)
    if topo == "seed003":
        topo = PAPER_SPINE_LEAF
    if not isinstance(topo, dict):
        raise SabaError(f'preset {p.name}: topology must be a table or "seed003", got {topo!r}')
    known = set(FlowStudy.__dataclass_fields__) - {"topology"}
    unknown = set(params) - known
    if unknown:
        raise SabaError(f"preset {p.name}: unknown key(s) {sorted(unknown)}")
    for key in ("seeds", "schemes"):
        if key in params:
            params[key] = tuple(params[key])
    return FlowStudy(topology=topo, **params)


def _run_flow(p: Preset, out: Path, log: Callable[[str], None]) -> tuple[pd.DataFrame, str]:
    from .flowstudy import geomean, run_study

    rows = run_study(_flow_study(p), log)
    pd.DataFrame(rows.models).to_csv(out / "models.csv", index=False)
    jct = pd.DataFrame(rows.jct)
    jct.to_csv(out / "jct.csv", index=False)
    table = rows.speedup.copy()
    base = jct[jct.scheme == "flow_maxmin"].set_index(["seed", "workload"]).jct_ns
    for scheme in dict.fromkeys(r["scheme"] for r in rows.speedup):
        got = jct[jct.scheme == scheme].set_index(["seed", "workload"]).jct_ns
        sp = list(base.loc[got.index] / got)
        table.append(
            {"seed": "all", "scheme": scheme, "geomean_speedup": geomean(sp),
             "min": min(sp), "max": max(sp)}
        )  # fmt: skip
    return pd.DataFrame(table), "geomean_speedup"


def _run_ctltime(p: Preset, log: Callable[[str], None]) -> tuple[pd.DataFrame, str]:
    from .ctltime import Cluster, sweep

    params = dict(p.params)
    cluster = Cluster(
        **{k: int(params.pop(k)) for k in ("racks", "per_rack", "instances") if k in params}
    )
    try:
        rows = sweep(
            apps=[int(a) for a in params.pop("apps")],
            degrees=[int(k) for k in params.pop("degrees")],
            seeds=int(params.pop("seeds")),
            ref_seeds=int(params.pop("ref_seeds", 1)),
            ref_ports=int(params.pop("ref_ports", 50)),
            cluster=cluster,
        )
    except KeyError as e:
        raise SabaError(f"preset {p.name}: missing key {e}") from None
    if params:
        raise SabaError(f"preset {p.name}: unknown key(s) {sorted(params)}")
    for r in rows:
        log(f"{r['apps']} apps, degree {r['degree']}: fast p99 {r['fast_p99_s']:.4f} s")
    return pd.DataFrame(rows), "fast_p99_s"


def _plot(p: Preset, df: pd.DataFrame, path: Path) -> Path | None:
    if df.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    if p.kind == "flow":
        allrows = df[df.seed.astype(str) == "all"]
        ax.bar(range(len(allrows)), allrows.geomean_speedup)
        ax.set_xticks(range(len(allrows)), list(allrows.scheme), rotation=30, ha="right")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_ylabel("speed-up over per-flow max-min (geo. mean)")
    else:
        for k, g in df.groupby("degree"):
            ax.plot(g.apps, g.fast_p99_s, marker="o", label=f"fast p99, degree {k}")
            ref = g.dropna(subset=["ref_p99_s"])
            ax.plot(
                ref.apps, ref.ref_p99_s, marker="x", ls="--", label=f"SLSQP p99 (est.), degree {k}"
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("active apps")
        ax.set_ylabel("calculation time (s)")
        ax.legend(fontsize=7)
    ax.set_title(p.title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run_preset(
    name: str,
    out: str | Path,
    *,
    quick: bool = False,
    log: Callable[[str], None] = lambda _m: None,
) -> PresetResult:
    """Runs preset `name` and writes its files under `out` (module doc)."""
    from ..repro import write_table

    p = preset(name, quick)
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if p.kind == "flow":
        table, _ = _run_flow(p, out_dir, log)
    else:
        table, _ = _run_ctltime(p, log)
    csv_path, md_path = out_dir / "table.csv", out_dir / "table.md"
    write_table(table, csv_path, md_path)
    png = _plot(p, table, out_dir / "plot.png")
    return PresetResult(p, table, out_dir, csv_path, md_path, png)
