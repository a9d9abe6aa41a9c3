"""Seed 001 §3.1 (001_254954cce2026753.txt) in approxnet's simulator:
distributed training on a 4:1 leaf-spine with background traffic, the four
models of Table 2 as synchronisation patterns (models.toml), parameter
server and ring all-reduce, over TCP, DCTCP, UDP, ATP reliable (MSR 1),
ATP bounded (MSR 1 - x1), DCTCP-EarlySend (MSR 1 - x1: the paper's
"simplified protocol", send all, stop at the fraction) and dropping the
gradient at the application then sending the rest reliably (Fig. 3a).

Writes into --out (default results/dml/full, quick: results/dml/quick):
runs.csv (one row per run), transfers_mlp.csv (every MLP transfer, Fig.
4c), table1.md / fig3.md / fig4.md / fig4c.md / tail.md (the markdown
tables docs/experiments/dml.md embeds), speedups.csv and fig3.png,
fig4.png, fig4c.png; with several background loads, one set per load in
load=<L>/.

    .venv/bin/python experiments/dml/study.py --quick
    .venv/bin/python experiments/dml/study.py --seeds 1,2 --loads 0.29
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from approxnet import sim

HERE = Path(__file__).resolve().parent
LINE_BPS = 40e9  # seed 001 §3.1: every link 40 Gbps


@dataclass(frozen=True)
class Scheme:
    """How one scheme runs a model's transfers."""

    key: str
    """Name in the tables."""
    scheme: str
    """The simulator's transport scheme."""
    bounded: bool = False
    """MSR = 1 - x1 (else 1)."""
    app_drop: bool = False
    """Send only (1 - x1) of the gradient, reliably (seed 001 §2.3, Fig. 3a)."""


SCHEMES = [
    Scheme("tcp", "tcp"),
    Scheme("dctcp", "dctcp"),
    Scheme("udp", "udp"),
    Scheme("atp", "atp-full"),
    Scheme("atp-bounded", "atp-full", bounded=True),
    Scheme("dctcp-es", "dctcp-es", bounded=True),
    Scheme("appdrop-tcp", "tcp", app_drop=True),
    Scheme("appdrop-dctcp", "dctcp", app_drop=True),
]
COLLECTIVES = ["ps", "ring"]
# (baseline, scheme) pairs of the speed-up tables; ATP bounded over ATP
# reliable and DCTCP-ES over DCTCP isolate the loss bound itself
SPEEDUPS = [
    ("tcp", "atp-bounded"),
    ("dctcp", "atp-bounded"),
    ("atp", "atp-bounded"),
    ("tcp", "dctcp-es"),
    ("dctcp", "dctcp-es"),
    ("tcp", "atp"),
]


def load_models(path: Path) -> dict[str, dict[str, Any]]:
    with path.open("rb") as f:
        return tomllib.load(f)


def scenario_shape(path: Path) -> tuple[int, int]:
    """(training jobs, workers per job) of a scenario file."""
    with path.open("rb") as f:
        t = tomllib.load(f)["training"]
    return len(t), len(t[0]["workers"])


def ideal_net_us(collective: str, workers: int, grad_bytes: float) -> float:
    """Network time of one iteration on idle links (serialisation only)."""
    per = grad_bytes * 8 / LINE_BPS * 1e6
    if collective == "ps":  # W pushes into, W pulls out of the server link
        return 2 * workers * per
    return 2 * (workers - 1) * per / workers


def overrides(
    model: dict[str, Any],
    s: Scheme,
    collective: str,
    jobs: int,
    iterations: int,
    compute_us: float,
    duration_ms: float,
) -> list[str]:
    x1 = float(model["x1"])
    grad = float(model["gradient_kb"]) * ((1 - x1) if s.app_drop else 1.0)
    msr = round(1 - x1, 6) if s.bounded else 1.0
    out = [f"duration_ms={duration_ms:.3f}", f"jobs.0.stop_ms={duration_ms:.3f}"]
    for k in range(jobs):
        p = f"training.{k}"
        out += [
            f'{p}.collective="{collective}"',
            f'{p}.scheme="{s.scheme}"',
            f"{p}.msr={msr}",
            f"{p}.gradient_kb={grad:.3f}",
            f"{p}.messages={int(model['messages'])}",
            f"{p}.compute_us={compute_us:.3f}",
            f"{p}.iterations={iterations}",
        ]
    return out


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
    net_tail = ph["max"].sum() / iters
    net_avg = ph["mean"].sum() / iters
    it_us = tr["duration_ns"].mean() / 1e3
    bg = jobs[jobs["class"] == "background"]["jct_ns"] / 1e3
    row.update(
        bg_fct_mean_us=bg.mean(),
        bg_fct_p99_us=bg.quantile(0.99),
        iter_us=it_us,
        net_us=it_us - compute_us,
        net_tail_us=net_tail,
        net_avg_us=net_avg,
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


def run_config(
    scenario: Path,
    model: dict[str, Any],
    s: Scheme,
    collective: str,
    seeds: list[int],
    loads: list[float],
    iterations: int,
    compute_scale: float,
    workers: int,
) -> tuple[list[dict[str, Any]], list[pd.DataFrame]]:
    """Runs one (model, scheme, collective) at every seed and load; a point
    whose training did not finish in time is run again, twice as long."""
    jobs, w = scenario_shape(scenario)
    compute = float(model["compute_us"]) * compute_scale
    grad = float(model["gradient_kb"]) * 1e3
    # start 2 ms + iterations x (compute + 1.5 x idle network + 1 ms slack);
    # a point that did not finish is run again, twice as long
    dur = 2.0 + iterations * (compute + 1.5 * ideal_net_us(collective, w, grad) + 1000) / 1e3
    rows: list[dict[str, Any]] = []
    frames: list[pd.DataFrame] = []
    todo = [(seed, load) for seed in seeds for load in loads]
    for attempt in range(4):
        if not todo:
            break
        ov = overrides(model, s, collective, jobs, iterations, compute, dur)
        with tempfile.TemporaryDirectory(prefix="dml-") as tmp:
            params: dict[str, list[Any]] = {
                "seed": sorted({p[0] for p in todo}),
                "jobs.0.load": sorted({p[1] for p in todo}),
            }
            sim.sweep(scenario, params, overrides=ov, out=tmp, workers=workers)
            left = []
            for seed, load in todo:
                d = Path(tmp) / sim.point_name({"seed": seed, "jobs.0.load": load})
                row, t = summarise(d, compute, iterations)
                if "iter_us" not in row and attempt < 3:
                    left.append((seed, load))
                    continue
                row.update(seed=seed, load=load, duration_ms=dur)
                rows.append(row)
                t = t.assign(seed=seed, load=load)
                frames.append(t)
        todo = left
        dur *= 2
    return rows, frames


def run_all(args: argparse.Namespace) -> tuple[pd.DataFrame, pd.DataFrame]:
    models = load_models(args.models)
    rows: list[dict[str, Any]] = []
    mlp: list[pd.DataFrame] = []
    names = args.only_models or list(models)
    schemes = [s for s in SCHEMES if not args.schemes or s.key in args.schemes]
    total = len(names) * len(schemes) * len(args.collectives) * len(args.compute_scale)
    n = 0
    for scale in args.compute_scale:
        for name in names:
            m = models[name]
            for coll in args.collectives:
                for s in schemes:
                    n += 1
                    t0 = time.time()
                    r, fr = run_config(
                        args.scenario, m, s, coll, args.seeds, args.loads,
                        args.iterations, scale, args.workers,
                    )  # fmt: skip
                    for x in r:
                        x.update(
                            model=m["label"], collective=coll, scheme=s.key,
                            compute_scale=scale, compute_us=float(m["compute_us"]) * scale,
                            x1=float(m["x1"]),
                        )  # fmt: skip
                    rows += r
                    if name == "mlp" and scale == args.compute_scale[0]:
                        mlp += [f.assign(collective=coll, scheme=s.key) for f in fr]
                    print(
                        f"[{n}/{total}] {m['label']} {coll} {s.key} x{scale}: "
                        f"{time.time() - t0:.1f} s",
                        file=sys.stderr,
                    )
    runs = pd.DataFrame(rows)
    cols = ["collective", "scheme", "seed", "load", "fct_us", "fraction"]
    transfers = pd.concat(mlp)[cols] if mlp else pd.DataFrame(columns=cols)
    return runs, transfers


# ---------------------------------------------------------------- analysis


def ref_scale(runs: pd.DataFrame) -> float:
    """The compute scale the main tables use: 1 if it was run."""
    scales = set(runs.compute_scale)
    return 1.0 if 1.0 in scales else float(min(scales))


def mean_by(runs: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    num = ["iter_us", "net_us", "net_tail_us", "net_avg_us", "compute_us", "frac_mean", "frac_min"]
    return runs.groupby(keys, sort=False)[num].mean().reset_index()


def table1(runs: pd.DataFrame) -> pd.DataFrame:
    """JCT with the measured tail / JCT if every transfer took the average
    FCT (seed 001 Table 1), per eq. 1 with equal epochs."""
    r = runs[(runs.compute_scale == ref_scale(runs)) & runs.scheme.isin(["tcp", "dctcp"])]
    g = mean_by(r, ["model", "collective", "scheme"])
    g["slowdown"] = (g.compute_us + g.net_tail_us) / (g.compute_us + g.net_avg_us)
    g["comm_share"] = g.net_us / (g.compute_us + g.net_us)
    return g


def speedups(runs: pd.DataFrame, base: str, over: str) -> pd.DataFrame:
    """JCT(base) / JCT(over) per model, collective, compute scale: eq. 1
    with equal epochs (p = x1 keeps the epoch count, seed 001 §2.2)."""
    g = mean_by(runs, ["model", "collective", "compute_scale", "scheme"])
    a = g[g.scheme == base].set_index(["model", "collective", "compute_scale"])
    b = g[g.scheme == over].set_index(["model", "collective", "compute_scale"])
    out = pd.DataFrame({"speedup": a.iter_us / b.iter_us, "comm_share": a.net_us / a.iter_us})
    return out.dropna().reset_index()


def tail_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Where each scheme's network time goes: tail over average, losses."""
    r = runs.assign(
        tail_over_avg=runs.net_tail_us / runs.net_avg_us,
        loss_pct=100 * runs.lost_pkts / runs.sent_pkts,
    )
    cols = ["tail_over_avg", "loss_pct", "timeouts"]
    if "bg_fct_mean_us" in r:
        cols.append("bg_fct_mean_us")
    g = r.groupby(["model", "collective", "scheme"], sort=False)[cols].mean()
    return g.reset_index()


def fig4c_table(transfers: pd.DataFrame, out: Path) -> None:
    """The MLP transfers' completion times per scheme (Fig. 4c in numbers)."""
    if transfers.empty:
        return
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
    (out / "fig4c.md").write_text("MLP transfer completion times:\n\n" + fmt_md(t))


def fmt_md(df: pd.DataFrame) -> str:
    """A markdown table, floats with 2 decimals (no tabulate needed)."""

    def cell(v: Any) -> str:
        return f"{v:.2f}" if isinstance(v, float) else str(v)

    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "---|" * len(df.columns)
    body = ["| " + " | ".join(cell(v) for v in r) + " |" for r in df.itertuples(index=False)]
    return "\n".join([head, rule, *body]) + "\n"


def write_tables(runs: pd.DataFrame, out: Path) -> None:
    paper_t1 = {"RNN": 1.1, "MLP": 1.77, "MF": 1.93, "CNN": 1.32}
    t1 = table1(runs)
    t1["paper"] = t1.model.map(paper_t1)
    cols = ["model", "collective", "scheme", "compute_us", "net_tail_us", "net_avg_us"]
    (out / "table1.md").write_text(fmt_md(t1[cols + ["comm_share", "slowdown", "paper"]]))

    one = runs[runs.compute_scale == ref_scale(runs)]
    g = mean_by(one, ["model", "collective", "scheme"])
    piv = g.pivot_table(index=["model", "collective"], columns="scheme", values="iter_us")
    base = piv["tcp"]
    rel = piv.div(base, axis=0)
    order = [s.key for s in SCHEMES if s.key in rel.columns]
    (out / "fig3.md").write_text(
        "Iteration time (compute + network, us) relative to TCP:\n\n"
        + fmt_md(rel[order].reset_index())
        + "\nUDP: delivered fraction of its transfers (mean / min) vs the bound 1 - x1:\n\n"
        + fmt_md(
            g[g.scheme == "udp"]
            .merge(one[["model", "x1"]].drop_duplicates(), on="model")
            .assign(bound=lambda d: 1 - d.x1)[
                ["model", "collective", "frac_mean", "frac_min", "bound"]
            ]
        )
    )
    (out / "tail.md").write_text(
        "Per scheme, mean over seeds: network time per iteration with the slowest\n"
        "transfer of each phase / with the average one, packets lost / sent by the\n"
        "training transfers, retransmission timeouts per run"
        + (", background FCT mean" if "bg_fct_mean_us" in one else "")
        + ":\n\n"
        + fmt_md(tail_table(one))
    )
    parts = []
    for b, o in SPEEDUPS:
        parts.append(speedups(runs, b, o).assign(base=b, over=o))
    sp = pd.concat(parts)
    sp.to_csv(out / "speedups.csv", index=False)
    if sp.empty:
        return
    main = sp[sp.compute_scale == ref_scale(runs)].pivot_table(
        index=["model", "collective"], columns=["base", "over"], values="speedup"
    )
    main.columns = [f"{o} vs {b}" for b, o in main.columns]
    txt = f"Speed-up (eq. 1, equal epochs), compute scale {ref_scale(runs):g}:\n\n"
    txt += fmt_md(main.reset_index())
    if runs.compute_scale.nunique() > 1:
        sc = sp[(sp.over == "atp-bounded")].pivot_table(
            index=["model", "collective", "base"], columns="compute_scale", values="speedup"
        )
        sc.columns = [f"compute x{c:g}" for c in sc.columns]
        txt += "\nATP bounded speed-up against compute scale:\n\n" + fmt_md(sc.reset_index())
    (out / "fig4.md").write_text(txt)


def plots(runs: pd.DataFrame, transfers: pd.DataFrame, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    one = runs[runs.compute_scale == ref_scale(runs)]
    g = mean_by(one, ["model", "collective", "scheme"])
    models = list(dict.fromkeys(g.model))

    def bars(ax: Any, coll: str, keys: list[str], title: str) -> None:
        sub = g[g.collective == coll]
        base = sub[sub.scheme == "tcp"].set_index("model").iter_us
        wd = 0.8 / len(keys)
        for i, k in enumerate(keys):
            v = sub[sub.scheme == k].set_index("model").iter_us.reindex(models)
            v = v / base.reindex(models)
            ax.bar([j + i * wd for j in range(len(models))], v.values, wd, label=k)
        ax.set_xticks([j + 0.4 - wd / 2 for j in range(len(models))], models)
        ax.set_title(title)
        ax.set_ylabel("iteration time / TCP")
        ax.legend(fontsize=7)

    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    bars(
        ax[0],
        "ps",
        ["tcp", "appdrop-tcp", "dctcp", "appdrop-dctcp", "atp-bounded"],
        "(a) drop at the app, PS",
    )
    for j, c in enumerate(["ps", "ring"]):
        sub = (
            g[(g.collective == c) & (g.scheme == "tcp")].set_index("model").iter_us.reindex(models)
        )
        ax[1].bar(
            [i + j * 0.4 for i in range(len(models))], sub.values / 1e3, 0.4, label=f"TCP {c}"
        )
    ax[1].set_xticks([i + 0.2 for i in range(len(models))], models)
    ax[1].set_ylabel("iteration time (ms)")
    ax[1].set_title("(b) PS vs ring, TCP")
    ax[1].legend(fontsize=7)
    bars(ax[2], "ps", ["tcp", "udp", "atp-bounded", "dctcp-es"], "(c) TCP, UDP, bounded, PS")
    udp = (
        g[(g.collective == "ps") & (g.scheme == "udp")].set_index("model").frac_mean.reindex(models)
    )
    for i, f in enumerate(udp.values):
        ax[2].annotate(f"UDP got {f:.2f}", (i + 0.15, 0.05), fontsize=7, rotation=90)
    fig.tight_layout()
    fig.savefig(out / "fig3.png", dpi=110)
    plt.close(fig)

    sp = pd.read_csv(out / "speedups.csv")
    sp = sp[(sp.compute_scale == ref_scale(runs)) & (sp.over == "atp-bounded")]
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for k, c in enumerate(["ps", "ring"]):
        for j, b in enumerate(["tcp", "dctcp", "atp"]):
            s = sp[(sp.collective == c) & (sp.base == b)].set_index("model").speedup.reindex(models)
            ax[k].bar([i + j * 0.27 for i in range(len(models))], s.values, 0.27, label=f"vs {b}")
        ax[k].axhline(1.0, color="k", lw=0.5)
        ax[k].set_xticks([i + 0.27 for i in range(len(models))], models)
        ax[k].set_title(f"ATP bounded (MSR 1 - x1) speed-up, {c}")
        ax[k].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "fig4.png", dpi=110)
    plt.close(fig)

    if len(transfers):
        fig, ax = plt.subplots(1, 2, figsize=(10, 4))
        for k, c in enumerate(["ps", "ring"]):
            for s in ["tcp", "dctcp", "atp", "atp-bounded", "dctcp-es"]:
                sel = (transfers.collective == c) & (transfers.scheme == s)
                v = transfers[sel].fct_us.sort_values()
                if len(v):
                    cdf = [(i + 1) / len(v) for i in range(len(v))]
                    label = f"{s} (mean {v.mean() / 1e3:.2f} ms)"
                    ax[k].plot(v.values / 1e3, cdf, label=label)
            ax[k].set_xlabel("transfer completion time (ms)")
            ax[k].set_ylabel("CDF")
            ax[k].set_title(f"(c) MLP transfers, {c}")
            ax[k].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "fig4c.png", dpi=110)
        plt.close(fig)


def floats(s: str) -> list[float]:
    return [float(x) for x in s.split(",")]


def ints(s: str) -> list[int]:
    return [int(x) for x in s.split(",")]


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--quick", action="store_true", help="quick.toml (2 x 4 leaf-spine), 2 iterations"
    )
    p.add_argument(
        "--scenario", type=Path, help="scenario (default leafspine.toml, quick: quick.toml)"
    )
    p.add_argument("--models", type=Path, default=HERE / "models.toml")
    p.add_argument("--only-models", type=lambda s: s.split(","), help="e.g. mlp,cnn")
    p.add_argument(
        "--schemes",
        type=lambda s: s.split(","),
        help="subset of " + ",".join(s.key for s in SCHEMES),
    )
    p.add_argument("--collectives", type=lambda s: s.split(","), default=COLLECTIVES)
    p.add_argument("--seeds", type=ints, default=[1])
    p.add_argument("--loads", type=floats, help="background host load (default: the scenario's)")
    p.add_argument("--iterations", type=int, help="per job (default 8, quick 2)")
    p.add_argument(
        "--compute-scale", type=floats, default=[1.0], help="multiplies every compute time"
    )
    p.add_argument("--workers", type=int, default=1, help="simulator processes in parallel")
    p.add_argument("--out", type=Path)
    p.add_argument(
        "--analyse-only", action="store_true", help="tables and plots from --out/runs.csv"
    )
    a = p.parse_args(argv)
    a.scenario = a.scenario or HERE / ("quick.toml" if a.quick else "leafspine.toml")
    a.iterations = a.iterations or (2 if a.quick else 8)
    if a.loads is None:
        with a.scenario.open("rb") as f:
            a.loads = [float(tomllib.load(f)["jobs"][0]["load"])]
    a.out = a.out or Path("results/dml") / ("quick" if a.quick else "full")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    t0 = time.time()
    if a.analyse_only:
        runs = pd.read_csv(a.out / "runs.csv")
        transfers = pd.read_csv(a.out / "transfers_mlp.csv")
    else:
        runs, transfers = run_all(a)
        a.out.mkdir(parents=True, exist_ok=True)
        runs.to_csv(a.out / "runs.csv", index=False)
        transfers.to_csv(a.out / "transfers_mlp.csv", index=False)
    done = runs.dropna(subset=["iter_us"]) if "iter_us" in runs else runs.iloc[:0]
    if len(done) < len(runs):
        print(f"{len(runs) - len(done)} runs did not finish their iterations", file=sys.stderr)
    if "tcp" in set(done.scheme):
        # tables average over seeds; each background load gets its own
        loads = sorted(set(done.load))
        for load in loads:
            d = a.out if len(loads) == 1 else a.out / f"load={load:g}"
            d.mkdir(parents=True, exist_ok=True)
            write_tables(done[done.load == load], d)
            fig4c_table(transfers[transfers.load == load], d)
            plots(done[done.load == load], transfers[transfers.load == load], d)
    print(f"wrote {a.out} in {time.time() - t0:.0f} s wall", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
