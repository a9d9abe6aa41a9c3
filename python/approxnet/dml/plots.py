"""The study's plots: Table 1 as bars, Fig. 3 (a: drop at the
application, b: PS vs ring, c: TCP / UDP / bounded), Fig. 4 (speed-up per
model) and Fig. 4c (the MLP transfers' completion time CDF)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .tables import all_speedups, mean_by, ref_scale, table1

__all__ = ["plot_fig3", "plot_fig4", "plot_fig4c", "plot_table1"]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    _plt().close(fig)
    return path


def plot_table1(runs: pd.DataFrame, path: Path) -> Path:
    """Tail / average slowdown per model, ours (TCP, DCTCP; PS, ring) and
    the paper's."""
    plt = _plt()
    t = table1(runs)
    models = list(dict.fromkeys(t.model))
    keys = list(dict.fromkeys(zip(t.collective, t.scheme, strict=True)))
    fig, ax = plt.subplots(figsize=(8, 4))
    wd = 0.8 / (len(keys) + 1)
    for i, (c, s) in enumerate(keys):
        v = t[(t.collective == c) & (t.scheme == s)].set_index("model").slowdown.reindex(models)
        ax.bar([j + i * wd for j in range(len(models))], v.values, wd, label=f"{s} {c}")
    paper = t.drop_duplicates("model").set_index("model").paper.reindex(models)
    ax.bar([j + len(keys) * wd for j in range(len(models))], paper.values, wd, label="paper")
    ax.set_xticks([j + 0.4 - wd / 2 for j in range(len(models))], models)
    ax.axhline(1.0, color="k", lw=0.5)
    ax.set_ylabel("JCT at the tail / at the average FCT")
    ax.set_title("Seed 001 Table 1: slowdown from the tail transfer")
    ax.legend(fontsize=7)
    return _save(fig, path)


def plot_fig3(runs: pd.DataFrame, path: Path) -> Path:
    """The three panels of Fig. 3, iteration time relative to TCP."""
    plt = _plt()
    one = runs[runs.compute_scale == ref_scale(runs)]
    g = mean_by(one, ["model", "collective", "scheme"])
    models = list(dict.fromkeys(g.model))

    def bars(ax: Any, coll: str, keys: list[str], title: str) -> None:
        sub = g[g.collective == coll]
        base = sub[sub.scheme == "tcp"].set_index("model").iter_us
        keys = [k for k in keys if k in set(sub.scheme)]
        wd = 0.8 / max(len(keys), 1)
        for i, k in enumerate(keys):
            v = sub[sub.scheme == k].set_index("model").iter_us.reindex(models)
            v = v / base.reindex(models)
            ax.bar([j + i * wd for j in range(len(models))], v.values, wd, label=k)
        ax.set_xticks([j + 0.4 - wd / 2 for j in range(len(models))], models)
        ax.set_title(title)
        ax.set_ylabel("iteration time / TCP")
        ax.legend(fontsize=7)

    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    keys_a = ["tcp", "appdrop-tcp", "dctcp", "appdrop-dctcp", "atp-bounded"]
    bars(ax[0], "ps", keys_a, "(a) drop at the app, PS")
    for j, c in enumerate(["ps", "ring"]):
        sel = (g.collective == c) & (g.scheme == "tcp")
        sub = g[sel].set_index("model").iter_us.reindex(models)
        xs = [i + j * 0.4 for i in range(len(models))]
        ax[1].bar(xs, sub.values / 1e3, 0.4, label=f"TCP {c}")
    ax[1].set_xticks([i + 0.2 for i in range(len(models))], models)
    ax[1].set_ylabel("iteration time (ms)")
    ax[1].set_title("(b) PS vs ring, TCP")
    ax[1].legend(fontsize=7)
    bars(ax[2], "ps", ["tcp", "udp", "atp-bounded", "dctcp-es"], "(c) TCP, UDP, bounded, PS")
    udp = g[(g.collective == "ps") & (g.scheme == "udp")].set_index("model").frac_mean
    for i, f in enumerate(udp.reindex(models).values):
        if f == f:  # not NaN
            ax[2].annotate(f"UDP got {f:.2f}", (i + 0.15, 0.05), fontsize=7, rotation=90)
    return _save(fig, path)


def plot_fig4(runs: pd.DataFrame, path: Path) -> Path:
    """ATP bounded's speed-up over TCP, DCTCP and ATP reliable per model."""
    plt = _plt()
    sp = all_speedups(runs)
    sp = sp[(sp.compute_scale == ref_scale(runs)) & (sp.over == "atp-bounded")]
    models = list(dict.fromkeys(runs.model))
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for k, c in enumerate(["ps", "ring"]):
        for j, b in enumerate(["tcp", "dctcp", "atp"]):
            s = sp[(sp.collective == c) & (sp.base == b)].set_index("model").speedup.reindex(models)
            ax[k].bar([i + j * 0.27 for i in range(len(models))], s.values, 0.27, label=f"vs {b}")
        ax[k].axhline(1.0, color="k", lw=0.5)
        ax[k].set_xticks([i + 0.27 for i in range(len(models))], models)
        ax[k].set_title(f"ATP bounded (MSR 1 - x1) speed-up, {c}")
        ax[k].legend(fontsize=7)
    return _save(fig, path)


def plot_fig4c(transfers: pd.DataFrame, path: Path) -> Path | None:
    """The MLP transfers' completion time CDF per scheme."""
    if transfers.empty:
        return None
    plt = _plt()
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for k, c in enumerate(["ps", "ring"]):
        for s in ["tcp", "dctcp", "atp", "atp-bounded", "dctcp-es"]:
            v = transfers[(transfers.collective == c) & (transfers.scheme == s)].fct_us
            v = v.sort_values()
            if len(v):
                cdf = [(i + 1) / len(v) for i in range(len(v))]
                ax[k].plot(v.values / 1e3, cdf, label=f"{s} (mean {v.mean() / 1e3:.2f} ms)")
        ax[k].set_xlabel("transfer completion time (ms)")
        ax[k].set_ylabel("CDF")
        ax[k].set_title(f"(c) MLP transfers, {c}")
        ax[k].legend(fontsize=7)
    return _save(fig, path)
