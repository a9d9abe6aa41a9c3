"""The study's tables: Table 1 (tail / average slowdown), Fig. 3 and
Fig. 4 in numbers, the MLP transfer times of Fig. 4c, and where each
scheme's network time goes. Each ``write_*`` writes one markdown file and
returns its text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from .plan import SCHEMES

__all__ = [
    "PAPER_TABLE1",
    "SPEEDUPS",
    "fmt_md",
    "speedups",
    "table1",
    "write_fig3",
    "write_fig4",
    "write_fig4c",
    "write_table1",
    "write_tail",
]

PAPER_TABLE1 = {"RNN": 1.1, "MLP": 1.77, "MF": 1.93, "CNN": 1.32}
"""Seed 001 Table 1: JCT with the measured tail over JCT at the average FCT."""

SPEEDUPS = (
    ("tcp", "atp-bounded"),
    ("dctcp", "atp-bounded"),
    ("atp", "atp-bounded"),
    ("tcp", "dctcp-es"),
    ("dctcp", "dctcp-es"),
    ("tcp", "atp"),
)
"""(baseline, scheme) pairs of Fig. 4; ATP bounded over ATP reliable and
DCTCP-ES over DCTCP isolate the loss bound itself."""


def ref_scale(runs: pd.DataFrame) -> float:
    """The compute scale the main tables use: 1 if it was run."""
    scales = set(runs.compute_scale)
    return 1.0 if 1.0 in scales else float(min(scales))


def mean_by(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Means over seeds of the timing columns."""
    num = ["iter_us", "net_us", "net_tail_us", "net_avg_us", "compute_us", "frac_mean", "frac_min"]
    return runs.groupby(keys, sort=False)[num].mean().reset_index()


def fmt_md(df: pd.DataFrame) -> str:
    """A markdown table, floats with 2 decimals."""

    def cell(v: Any) -> str:
        return f"{v:.2f}" if isinstance(v, float) else str(v)

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "---|" * len(df.columns)
    body = ["| " + " | ".join(cell(v) for v in r) + " |" for r in df.itertuples(index=False)]
    return "\n".join([head, rule, *body]) + "\n"


def table1(runs: pd.DataFrame) -> pd.DataFrame:
    """JCT with the measured tail / JCT if every transfer took the average
    FCT (seed 001 Table 1), per eq. 1 with equal epochs."""
    r = runs[(runs.compute_scale == ref_scale(runs)) & runs.scheme.isin(["tcp", "dctcp"])]
    g = mean_by(r, ["model", "collective", "scheme"])
    g["slowdown"] = (g.compute_us + g.net_tail_us) / (g.compute_us + g.net_avg_us)
    g["comm_share"] = (g.net_us / (g.compute_us + g.net_us)).astype(float)
    g["paper"] = g.model.map(PAPER_TABLE1)
    return g


def write_table1(runs: pd.DataFrame, out: Path) -> str:
    """table1.md."""
    cols = ["model", "collective", "scheme", "compute_us", "net_tail_us", "net_avg_us"]
    text = fmt_md(table1(runs)[cols + ["comm_share", "slowdown", "paper"]])
    (out / "table1.md").write_text(text)
    return text


def write_fig3(runs: pd.DataFrame, out: Path) -> str:
    """fig3.md: iteration time relative to TCP per scheme, and what UDP
    delivered against the bound."""
    one = runs[runs.compute_scale == ref_scale(runs)]
    g = mean_by(one, ["model", "collective", "scheme"])
    piv = g.pivot_table(index=["model", "collective"], columns="scheme", values="iter_us")
    rel = piv.div(piv["tcp"], axis=0)
    order = [s.key for s in SCHEMES if s.key in rel.columns]
    text = "Iteration time (compute + network, us) relative to TCP:\n\n"
    text += fmt_md(rel[order].reset_index())
    udp = g[g.scheme == "udp"]
    if len(udp):
        x1 = one[["model", "x1"]].drop_duplicates()
        u = udp.merge(x1, on="model").assign(bound=lambda d: 1 - d.x1)
        text += "\nUDP: delivered fraction of its transfers (mean / min) vs the bound 1 - x1:\n\n"
        text += fmt_md(u[["model", "collective", "frac_mean", "frac_min", "bound"]])
    (out / "fig3.md").write_text(text)
    return text


def speedups(runs: pd.DataFrame, base: str, over: str) -> pd.DataFrame:
    """JCT(base) / JCT(over) per model, collective, compute scale: eq. 1
    with equal epochs (p = x1 keeps the epoch count, seed 001 §2.2)."""
    g = mean_by(runs, ["model", "collective", "compute_scale", "scheme"])
    a = g[g.scheme == base].set_index(["model", "collective", "compute_scale"])
    b = g[g.scheme == over].set_index(["model", "collective", "compute_scale"])
    out = pd.DataFrame({"speedup": a.iter_us / b.iter_us, "comm_share": a.net_us / a.iter_us})
    return out.dropna().reset_index()


def all_speedups(runs: pd.DataFrame) -> pd.DataFrame:
    """Every pair of :data:`SPEEDUPS` whose schemes were run."""
    parts = [speedups(runs, b, o).assign(base=b, over=o) for b, o in SPEEDUPS]
    return pd.concat(parts)


def write_fig4(runs: pd.DataFrame, out: Path) -> str:
    """fig4.md and speedups.csv."""
    sp = all_speedups(runs)
    sp.to_csv(out / "speedups.csv", index=False)
    scale = ref_scale(runs)
    main = sp[sp.compute_scale == scale].pivot_table(
        index=["model", "collective"], columns=["base", "over"], values="speedup"
    )
    main.columns = [f"{o} vs {b}" for b, o in main.columns]
    text = f"Speed-up (eq. 1, equal epochs), compute scale {scale:g}:\n\n"
    text += fmt_md(main.reset_index())
    if runs.compute_scale.nunique() > 1:
        sc = sp[(sp.over == "atp-bounded")].pivot_table(
            index=["model", "collective", "base"], columns="compute_scale", values="speedup"
        )
        sc.columns = [f"compute x{c:g}" for c in sc.columns]
        text += "\nATP bounded speed-up against compute scale:\n\n" + fmt_md(sc.reset_index())
    (out / "fig4.md").write_text(text)
    return text


def write_fig4c(transfers: pd.DataFrame, out: Path) -> str:
    """fig4c.md: the MLP transfers' completion times per scheme."""
    if transfers.empty:
        return ""
    g = transfers.groupby(["collective", "scheme"], sort=False).fct_us
    t = pd.DataFrame(
        {
            "transfers": g.size(),
            "mean_us": g.mean(),
            "p50_us": g.median(),
            "p99_us": g.quantile(0.99),
            "max_us": g.max(),
        }
    ).reset_index()
    text = "MLP transfer completion times:\n\n" + fmt_md(t)
    (out / "fig4c.md").write_text(text)
    return text


def write_tail(runs: pd.DataFrame, out: Path) -> str:
    """tail.md: per scheme, tail over average network time, losses,
    timeouts, background FCT."""
    one = runs[runs.compute_scale == ref_scale(runs)]
    r = one.assign(
        tail_over_avg=one.net_tail_us / one.net_avg_us,
        loss_pct=100 * one.lost_pkts / one.sent_pkts,
    )
    cols = ["tail_over_avg", "loss_pct", "timeouts", "bg_fct_mean_us"]
    g = r.groupby(["model", "collective", "scheme"], sort=False)[cols].mean().reset_index()
    text = (
        "Per scheme, mean over seeds: network time per iteration with the slowest\n"
        "transfer of each phase / with the average one, packets lost / sent by the\n"
        "training transfers, retransmission timeouts per run, background FCT mean:\n\n"
    ) + fmt_md(g)
    (out / "tail.md").write_text(text)
    return text
