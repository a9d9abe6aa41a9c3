"""Reading the study's runs back: one row per run (iteration time, the
slowest and the average transfer of each phase, losses) and the MLP
transfers (Fig. 4c), from the record files each run left in its
directory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .plan import DmlRun, duration, models

__all__ = ["collect", "finished", "longer", "summarise"]


def finished(summary: Mapping[str, Any]) -> bool:
    """Whether every training job of a run did all its iterations."""
    ts = summary.get("trainings", [])
    return bool(ts) and all(t["iterations"] >= t["of"] for t in ts)


def longer(sets: Sequence[str]) -> tuple[str, ...]:
    """A run's overrides with its duration doubled (for a run whose
    training did not finish in time; later overrides win)."""
    ms = [float(s.split("=", 1)[1]) for s in sets if s.startswith("duration_ms=")]
    return (*sets, *duration(2 * ms[-1]))


def summarise(d: Path, compute_us: float, iterations: int) -> tuple[dict[str, Any], pd.DataFrame]:
    """One run's row and its training transfers, from its record files."""
    jobs = pd.read_csv(d / "jobs.csv")
    tr = pd.read_csv(d / "trainings.csv") if (d / "trainings.csv").exists() else pd.DataFrame()
    t = jobs[jobs["class"].astype(str).str.startswith("job")].copy()
    t["fct_us"] = t["jct_ns"] / 1e3
    t["fraction"] = t["delivered_msgs"] / t["messages"]
    n_jobs = t["class"].nunique()
    done = len(tr)
    row: dict[str, Any] = {"iterations_done": done, "iterations_of": n_jobs * iterations}
    if done < n_jobs * iterations or t["fct_us"].isna().any():
        return row, t
    # one phase = the transfers a training job started at the same time
    ph = t.groupby(["class", "start_ns"])["fct_us"].agg(["max", "mean"])
    iters = n_jobs * iterations
    it_us = tr["duration_ns"].mean() / 1e3
    bg = jobs[jobs["class"] == "background"]["jct_ns"] / 1e3
    row.update(
        bg_fct_mean_us=bg.mean(),
        bg_fct_p99_us=bg.quantile(0.99),
        iter_us=it_us,
        net_us=it_us - compute_us,
        net_tail_us=ph["max"].sum() / iters,
        net_avg_us=ph["mean"].sum() / iters,
        fct_mean_us=t["fct_us"].mean(),
        fct_p99_us=t["fct_us"].quantile(0.99),
        fct_max_us=t["fct_us"].max(),
        frac_mean=t["fraction"].mean(),
        frac_min=t["fraction"].min(),
        needed_ok=bool((t["delivered_msgs"] >= t["needed"]).all()),
        timeouts=int(t["timeouts"].sum()),
        retx_pkts=int(t["retx_pkts"].sum()),
        lost_pkts=int(t["lost_pkts"].sum()),
        sent_pkts=int(t["sent_pkts"].sum()),
    )
    return row, t


def collect(
    runs: Sequence[DmlRun], out_dir: Path, durations: Mapping[str, float] | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per run, the MLP transfers at the first compute scale) from
    ``out_dir/<label>/``; ``durations``: a run's final length where it was
    run again for longer."""
    ms = models()
    rows: list[dict[str, Any]] = []
    mlp: list[pd.DataFrame] = []
    first_scale = runs[0].compute_scale if runs else 1.0
    for r in runs:
        m = ms[r.model]
        compute = float(m["compute_us"]) * r.compute_scale
        row, t = summarise(out_dir / r.run.label, compute, r.iterations)
        row.update(
            run=r.run.label,
            model=m["label"],
            collective=r.collective,
            scheme=r.scheme,
            seed=r.seed if r.seed is not None else "",
            load=r.load if r.load is not None else "",
            compute_scale=r.compute_scale,
            compute_us=compute,
            x1=float(m["x1"]),
            duration_ms=(durations or {}).get(r.run.label, r.duration_ms),
        )
        rows.append(row)
        if r.model == "mlp" and r.compute_scale == first_scale:
            mlp.append(
                t.assign(
                    collective=r.collective, scheme=r.scheme, seed=row["seed"], load=row["load"]
                )
            )
    cols = ["collective", "scheme", "seed", "load", "fct_us", "fraction"]
    transfers = pd.concat(mlp)[cols] if mlp else pd.DataFrame(columns=cols)
    return pd.DataFrame(rows), transfers
