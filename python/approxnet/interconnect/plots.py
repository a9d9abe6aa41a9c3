"""The interconnect figures' plots (matplotlib, headless): one PNG per
figure from :mod:`approxnet.interconnect.figures`' rows."""

from __future__ import annotations

from pathlib import Path

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
        fig.tight_layout()
        paths["fig6"] = out / f"fig6_exec_time{suffix}.png"
        fig.savefig(paths["fig6"], dpi=120)
        plt.close(fig)
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
        fig.tight_layout()
        paths["fig8"] = out / f"fig8_fft_tradeoff{suffix}.png"
        fig.savefig(paths["fig8"], dpi=120)
        plt.close(fig)
    r9 = [r for r in rows if r.fig == "9"]
    if r9:
        apps = list(dict.fromkeys(r.app for r in r9))
        fig, axs = plt.subplots(1, len(apps), figsize=(4 * len(apps), 3.2), squeeze=False)
        for ax, a in zip(axs[0], apps, strict=True):
            for n in ("fec_perfect", "approx"):
                rr = [r for r in r9 if r.app == a and r.network == n]
                ax.plot(
                    [r.gbps for r in rr],
                    [r.norm for r in rr],
                    "o-",
                    color=colors[n],
                    label=label(st, n),
                )
            ax.axhline(1.0, color="tab:gray", ls="--", label="Conv. (100 Gbps)")
            ax.set_xlabel("link bandwidth (Gbps)")
            ax.set_ylabel("time / conventional")
            ax.set_title(f"Fig. 9: {st.apps[a]['label']}")
            ax.legend(fontsize=7)
        fig.tight_layout()
        paths["fig9"] = out / f"fig9_bandwidth{suffix}.png"
        fig.savefig(paths["fig9"], dpi=120)
        plt.close(fig)
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
        fig.tight_layout()
        paths["fig10"] = out / f"fig10_topology{suffix}.png"
        fig.savefig(paths["fig10"], dpi=120)
        plt.close(fig)
    r11 = [r for r in rows if r.fig == "11"]
    if r11:
        apps = list(dict.fromkeys(r.app for r in r11))
        fig, axs = plt.subplots(1, len(apps), figsize=(4 * len(apps), 3.2), squeeze=False)
        for ax, a in zip(axs[0], apps, strict=True):
            for n in MAIN:
                rr = [r for r in r11 if r.app == a and r.network == n]
                ax.plot(
                    [r.switch_delay_ns for r in rr],
                    [r.norm for r in rr],
                    "o-",
                    color=colors[n],
                    label=label(st, n),
                )
            ax.set_xlabel("switch delay (ns)")
            ax.set_ylabel("time / conv. at 60 ns")
            ax.set_title(f"Fig. 11: {st.apps[a]['label']}")
            ax.legend(fontsize=7)
        fig.tight_layout()
        paths["fig11"] = out / f"fig11_switch_delay{suffix}.png"
        fig.savefig(paths["fig11"], dpi=120)
        plt.close(fig)
    return paths
