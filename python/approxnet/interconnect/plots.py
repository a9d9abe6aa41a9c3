"""The interconnect figures' plots (matplotlib, headless): one PNG per
figure from :mod:`approxnet.interconnect.figures`' rows."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from . import study as S  # noqa: E402
from .figures import FIG6_NETS, MAIN, Row, label  # noqa: E402

__all__ = ["plot"]


def plot(
    st: S.Study, rows: list[Row], out: Path, suffix: str, quality: dict[int, float]
) -> dict[str, Path]:
    """Writes the plot of each figure present in ``rows``; returns their paths."""
    paths: dict[str, Path] = {}
    colors = {
        "conventional": "tab:gray",
        "fec_perfect": "tab:blue",
        "approx": "tab:red",
        "full_approx": "tab:orange",
        "approx_precise_free": "tab:pink",
    }
    r6 = [r for r in rows if r.fig == "6"]
    if r6:
        apps = list(dict.fromkeys(r.app for r in r6))
        fig, ax = plt.subplots(figsize=(8, 3.5))
        w = 0.8 / len(FIG6_NETS)
        for i, n in enumerate(FIG6_NETS):
            ys = [next(r.norm for r in r6 if r.app == a and r.network == n) for a in apps]
            ax.bar(np.arange(len(apps)) + i * w, ys, w, label=label(st, n), color=colors[n])
        ax.set_xticks(np.arange(len(apps)) + 0.4 - w / 2, [st.apps[a]["label"] for a in apps])
        ax.set_ylabel("time / conventional")
        ax.set_title(f"Fig. 6: {r6[0].topology}, {r6[0].procs} processes")
        ax.legend(fontsize=7)
        _save(fig, paths, "fig6", out / f"fig6_exec_time{suffix}.png")
    r8 = [r for r in rows if r.fig == "8"]
    if r8:
        fig, ax = plt.subplots(figsize=(6, 3.5))
        ap = [r for r in r8 if r.network == "approx"]
        ax.bar([str(r.level) for r in ap], [r.norm for r in ap], color="tab:red", label="Approx")
        fec = next(r.norm for r in r8 if r.network == "fec_perfect")
        ax.axhline(1.0, color="tab:gray", ls="--", label="Conv.")
        ax.axhline(fec, color="tab:blue", ls=":", label="FEC-Perfect")
        ax.set_xlabel("protection level (bits per part)")
        ax.set_ylabel("time / conventional")
        ax2 = ax.twinx()
        # errors above 1e3 (sign / exponent bits hit) are drawn at the top, zero not at all
        pts = [(str(r.level), quality.get(r.level, np.nan)) for r in ap]
        shown = [(x, min(e, 1e3)) for x, e in pts if e > 0]
        ax2.semilogy([x for x, _ in shown], [e for _, e in shown], "k.-", label="FFT error")
        ax2.set_ylim(1e-18, 1e4)
        ax2.set_ylabel("mean relative error")
        ax.legend(fontsize=7, loc="upper right", bbox_to_anchor=(1.0, 0.93))
        ax.set_title("Fig. 8: FFT, performance vs quality")
        _save(fig, paths, "fig8", out / f"fig8_fft_tradeoff{suffix}.png")
    r9 = [r for r in rows if r.fig == "9"]
    if r9:
        fig = _app_lines(
            st,
            r9,
            ("fec_perfect", "approx"),
            colors,
            "gbps",
            "link bandwidth (Gbps)",
            "time / conventional",
            "Fig. 9",
            conv="Conv. (100 Gbps)",
        )
        _save(fig, paths, "fig9", out / f"fig9_bandwidth{suffix}.png")
    r10 = [r for r in rows if r.fig == "10"]
    if r10:
        apps = list(dict.fromkeys(r.app for r in r10))
        topos = list(dict.fromkeys(r.topology for r in r10))
        fig, axs = plt.subplots(1, len(apps), figsize=(4.5 * len(apps), 3.2), squeeze=False)
        for ax, a in zip(axs[0], apps, strict=True):
            w = 0.8 / len(MAIN)
            for i, n in enumerate(MAIN):
                ys = [
                    next(r.norm for r in r10 if r.app == a and r.network == n and r.topology == t)
                    for t in topos
                ]
                ax.bar(np.arange(len(topos)) + i * w, ys, w, color=colors[n], label=label(st, n))
            ax.set_xticks(np.arange(len(topos)) + 0.4 - w / 2, topos)
            ax.set_title(f"Fig. 10: {st.apps[a]['label']}")
            ax.set_ylabel("time / conv. on df11 (tor6)")
            ax.legend(fontsize=7)
        _save(fig, paths, "fig10", out / f"fig10_topology{suffix}.png")
    r11 = [r for r in rows if r.fig == "11"]
    if r11:
        fig = _app_lines(
            st,
            r11,
            MAIN,
            colors,
            "switch_delay_ns",
            "switch delay (ns)",
            "time / conv. at 60 ns",
            "Fig. 11",
        )
        _save(fig, paths, "fig11", out / f"fig11_switch_delay{suffix}.png")
    return paths


def _save(fig: Any, paths: dict[str, Path], key: str, path: Path) -> None:
    fig.tight_layout()
    paths[key] = path
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _app_lines(
    st: S.Study,
    rows: list[Row],
    nets: Sequence[str],
    colors: dict[str, str],
    x: str,
    xlabel: str,
    ylabel: str,
    title: str,
    conv: str | None = None,
) -> Any:
    """One panel per app: normalized time against the row field ``x``, a line
    per network (and the conventional baseline at 1 when ``conv`` names it)."""
    apps = list(dict.fromkeys(r.app for r in rows))
    fig, axs = plt.subplots(1, len(apps), figsize=(4 * len(apps), 3.2), squeeze=False)
    for ax, a in zip(axs[0], apps, strict=True):
        for n in nets:
            rr = [r for r in rows if r.app == a and r.network == n]
            ax.plot(
                [getattr(r, x) for r in rr],
                [r.norm for r in rr],
                "o-",
                color=colors[n],
                label=label(st, n),
            )
        if conv is not None:
            ax.axhline(1.0, color="tab:gray", ls="--", label=conv)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}: {st.apps[a]['label']}")
        ax.legend(fontsize=7)
    return fig
