#!/usr/bin/env python3
"""Seed 004 §5.3-5.7 (Fig. 6, 8, 9, 10, 11): execution time of the
application skeletons on the conventional, FEC-perfect and approximate
networks of Table 1, in the simulator's flow-level mode.

Data: experiments/interconnect/study.toml; scenarios and skeletons:
approxnet.interconnect.study; runs the approxnet-sim binary (build it with
`cargo build --release -p approxnet-sim`, or set APPROXNET_SIM).
Writes results/interconnect/study[_quick].csv, fig{6,8,9,10,11}*.png and
prints Markdown tables.

  .venv/bin/python experiments/interconnect/study.py [--quick] [--figs 6,8,9,10,11]
"""

from __future__ import annotations

import argparse
import csv
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from approxnet.interconnect import kernels as K  # noqa: E402
from approxnet.interconnect import study as S  # noqa: E402
from approxnet.interconnect.exchange import Channel  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MAIN = ["conventional", "fec_perfect", "approx"]
FIG6_NETS = [*MAIN, "full_approx", "approx_precise_free"]


@dataclass
class Row:
    fig: str
    app: str
    network: str
    topology: str
    topology_seed: int
    procs: int
    level: int
    gbps: float
    switch_delay_ns: float
    jct_us: float
    compute_us: float
    comm_us: float
    norm: float = float("nan")
    """jct / the reference point of the row's group (see `normalise`)."""


@dataclass
class Plan:
    """Which points each figure runs."""

    base: str  # topology of Fig. 6, 8, 9, 11
    fig6_apps: list[str]
    fig8_levels: list[int]
    fig9_apps: list[str]
    fig9_modulations: list[str]  # names in study.toml [modulations]
    fig10_apps: list[str]
    fig10_big: list[str]  # normalised to fig10_big[0]
    fig10_small: list[str]  # normalised to fig10_small[0]
    fig11_apps: list[str]
    fig11_delays: list[float]
    check_seeds: list[int]  # Fig. 6 again on the random topology with these seeds
    check_topology: str
    fft_side: int


FULL = Plan(
    base="df11",
    fig6_apps=["cg", "fft", "kmeans", "ftmm", "ftcg"],
    fig8_levels=[0, 8, 16, 24, 32, 40, 48, 56, 64],
    fig9_apps=["cg", "ftmm"],
    fig9_modulations=["OOK", "4-QAM", "16-QAM", "64-QAM", "256-QAM", "1024-QAM"],
    fig10_apps=["fft", "cg", "ftmm"],
    fig10_big=["df11", "r11", "r17", "tor8", "r8"],
    fig10_small=["tor6", "r6"],
    fig11_apps=["fft", "ftmm"],
    fig11_delays=[40.0, 60.0, 100.0],
    check_seeds=[2, 3],
    check_topology="r11",
    fft_side=1024,
)

QUICK = Plan(
    base="r4s16",
    fig6_apps=["cg", "fft", "kmeans", "ftmm", "ftcg"],
    fig8_levels=[0, 16, 32, 64],
    fig9_apps=["cg", "ftmm"],
    fig9_modulations=["4-QAM", "64-QAM", "1024-QAM"],
    fig10_apps=["fft", "cg"],
    fig10_big=[],
    fig10_small=["tor6", "r6"],
    fig11_apps=["fft"],
    fig11_delays=[40.0, 100.0],
    check_seeds=[2],
    check_topology="r4s16",
    fft_side=256,
)


def procs_of(st: S.Study, topo: str) -> int:
    return S.topology_hosts(st, topo)


class Runner:
    def __init__(self, st: S.Study, sim: str | None) -> None:
        self.st, self.sim, self.rows = st, sim, list[Row]()

    def point(
        self,
        fig: str,
        app: str,
        net: str,
        topo: str,
        *,
        level: int | None = None,
        gbps: float | None = None,
        sd: float | None = None,
        seed: int = 1,
    ) -> Row:
        n = self.st.networks[net]
        lvl = int(self.st.apps[app]["level"]) if level is None else level
        r = S.run_point(
            self.st,
            net,
            topo,
            app,
            sim=self.sim,
            level=lvl,
            gbps=gbps,
            switch_delay_ns=sd,
            topology_seed=seed,
        )
        row = Row(
            fig,
            app,
            net,
            topo,
            seed,
            procs_of(self.st, topo),
            lvl,
            float(n["gbps"] if gbps is None else gbps),
            float(n["switch_delay_ns"] if sd is None else sd),
            r.jct_us,
            r.compute_us,
            r.comm_us,
        )
        self.rows.append(row)
        return row


def normalise(rows: list[Row], ref: Row) -> None:
    for r in rows:
        r.norm = r.jct_us / ref.jct_us


def fig6(run: Runner, p: Plan) -> None:
    for topo, seed, fig in [(p.base, 1, "6")] + [
        (p.check_topology, s, "6check") for s in p.check_seeds
    ]:
        rows = [run.point(fig, a, n, topo, seed=seed) for a in p.fig6_apps for n in FIG6_NETS]
        conv = {r.app: r for r in rows if r.network == "conventional"}
        for app in p.fig6_apps:
            normalise([r for r in rows if r.app == app], conv[app])


def fig8(run: Runner, p: Plan) -> None:
    rows = [run.point("8", "fft", n, p.base) for n in ("conventional", "fec_perfect")]
    rows += [run.point("8", "fft", "approx", p.base, level=lv) for lv in p.fig8_levels]
    normalise(rows, rows[0])


def fig9(run: Runner, p: Plan) -> None:
    for app in p.fig9_apps:
        conv = run.point("9", app, "conventional", p.base)
        rows = [conv]
        rows += [
            run.point("9", app, n, p.base, gbps=run.st.modulations[m])
            for n in ("fec_perfect", "approx")
            for m in p.fig9_modulations
        ]
        normalise(rows, conv)


def fig10(run: Runner, p: Plan) -> None:
    for group in (p.fig10_big, p.fig10_small):
        if not group:
            continue
        for app in p.fig10_apps:
            rows = [run.point("10", app, n, t) for t in group for n in MAIN]
            normalise(rows, rows[0])  # conventional on the group's first topology


def fig11(run: Runner, p: Plan) -> None:
    for app in p.fig11_apps:
        rows = [run.point("11", app, n, p.base, sd=d) for d in p.fig11_delays for n in MAIN]
        # conventional at 60 ns (the paper's default), else at the first delay
        conv = [r for r in rows if r.network == "conventional"]
        normalise(rows, next((r for r in conv if r.switch_delay_ns == 60.0), conv[0]))


def fft_quality(levels: list[int], side: int, seeds: int = 3) -> dict[int, float]:
    """Median over seeds of the FFT's mean relative error (the first half's
    kernel, fig7_quality.py's metric) at BER 1e-5 for each level."""
    rng = np.random.default_rng(1)
    z = rng.normal(size=(side, side)) + 1j * rng.normal(size=(side, side))
    ref = K.fft2(z, Channel(1e-5, None))
    out = {}
    for lv in levels:
        errs = []
        for s in range(1, seeds + 1):
            y = K.fft2(z, Channel(1e-5, lv, seed=s))
            ok = bool(np.all(np.isfinite(y)))
            errs.append(float(np.abs(y - ref).mean() / np.abs(ref).mean()) if ok else float("inf"))
        out[lv] = float(np.median(errs))
    return out


# ---------------------------------------------------------------- output


def write_csv(rows: list[Row], path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(asdict(rows[0])))
        w.writeheader()
        for r in rows:
            w.writerow(asdict(r))


def label(st: S.Study, net: str) -> str:
    return str(st.networks[net].get("label", net))


def md_fig6(st: S.Study, rows: list[Row], fig: str) -> None:
    rs = [r for r in rows if r.fig == fig]
    for seed in sorted({r.topology_seed for r in rs}):
        sub = [r for r in rs if r.topology_seed == seed]
        if not sub:
            continue
        print(
            f"\nFig. {fig} ({sub[0].topology}, seed {seed}, {sub[0].procs} processes): "
            "execution time / conventional (conventional JCT in us)\n"
        )
        print("| app | conv. JCT | " + " | ".join(label(st, n) for n in FIG6_NETS) + " |")
        print("|---" * (len(FIG6_NETS) + 2) + "|")
        for app in dict.fromkeys(r.app for r in sub):
            a = {r.network: r for r in sub if r.app == app}
            cells = " | ".join(f"{a[n].norm:.3f}" for n in FIG6_NETS)
            print(f"| {st.apps[app]['label']} | {a['conventional'].jct_us:,.0f} | {cells} |")


def md_generic(st: S.Study, rows: list[Row], fig: str, key: str) -> None:
    rs = [r for r in rows if r.fig == fig]
    if not rs:
        return
    print(f"\nFig. {fig}: execution time, normalised (see the doc)\n")
    print(f"| app | network | {key} | JCT (us) | normalised |")
    print("|---|---|---|---|---|")
    for r in rs:
        print(
            f"| {st.apps[r.app]['label']} | {label(st, r.network)} | {getattr(r, key)} | "
            f"{r.jct_us:,.1f} | {r.norm:.3f} |"
        )


def plot(st: S.Study, rows: list[Row], out: Path, suffix: str, quality: dict[int, float]) -> None:
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
        fig.savefig(out / f"fig6_exec_time{suffix}.png", dpi=120)
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
        fig.savefig(out / f"fig8_fft_tradeoff{suffix}.png", dpi=120)
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
        fig.savefig(out / f"fig9_bandwidth{suffix}.png", dpi=120)
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
        fig.savefig(out / f"fig10_topology{suffix}.png", dpi=120)
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
        fig.savefig(out / f"fig11_switch_delay{suffix}.png", dpi=120)
        plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument(
        "--quick", action="store_true", help="64 / 256 processes, fewer points (< 2 min)"
    )
    ap.add_argument("--figs", default="6,8,9,10,11", help="comma-separated figure numbers")
    ap.add_argument("--study", type=Path, default=S.STUDY_TOML)
    ap.add_argument("--sim", default=None, help="approxnet-sim binary (default: found as usual)")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "interconnect")
    ap.add_argument("--plot-only", action="store_true", help="replot and print the existing CSVs")
    args = ap.parse_args()
    st = S.load(args.study)
    plan = QUICK if args.quick else FULL
    suffix = "_quick" if args.quick else ""
    args.out.mkdir(parents=True, exist_ok=True)
    if args.plot_only:
        rows, quality = read_csv(args.out, suffix)
        plot(st, rows, args.out, suffix, quality)
        report(st, rows, quality)
        return
    run = Runner(st, args.sim)
    figs = {f.strip() for f in args.figs.split(",")}
    steps = {"6": fig6, "8": fig8, "9": fig9, "10": fig10, "11": fig11}
    for f, fn in steps.items():
        if f in figs:
            t = time.time()
            fn(run, plan)
            print(f"fig {f}: {time.time() - t:.0f} s wall", flush=True)
    quality = fft_quality(plan.fig8_levels, plan.fft_side) if "8" in figs else {}
    write_csv(run.rows, args.out / f"study{suffix}.csv")
    if quality:
        with open(args.out / f"fig8_quality{suffix}.csv", "w") as fh:
            fh.write("level,fft_mean_rel_error\n")
            for lv, e in quality.items():
                fh.write(f"{lv},{e!r}\n")
    plot(st, run.rows, args.out, suffix, quality)
    report(st, run.rows, quality)


def read_csv(out: Path, suffix: str) -> tuple[list[Row], dict[int, float]]:
    types = {f.name: f.type for f in fields(Row)}
    rows = []
    with open(out / f"study{suffix}.csv") as f:
        for d in csv.DictReader(f):
            conv = {"int": int, "float": float}
            rows.append(Row(**{k: conv.get(str(types[k]), str)(v) for k, v in d.items()}))
    quality: dict[int, float] = {}
    q = out / f"fig8_quality{suffix}.csv"
    if q.exists():
        with open(q) as f:
            for d in csv.DictReader(f):
                quality[int(d["level"])] = float(d["fft_mean_rel_error"])
    return rows, quality


def report(st: S.Study, rows: list[Row], quality: dict[int, float]) -> None:
    md_fig6(st, rows, "6")
    md_fig6(st, rows, "6check")
    for f, key in (("8", "level"), ("9", "gbps"), ("10", "topology"), ("11", "switch_delay_ns")):
        md_generic(st, rows, f, key)
    if quality:
        print(
            "\nFFT quality (median of 3 seeds): "
            + ", ".join(f"{k}: {v:.2e}" for k, v in quality.items())
        )


if __name__ == "__main__":
    main()
