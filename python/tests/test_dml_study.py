"""approxnet.dml (seed 001 §3.1) on a tiny case: the quick 2 x 4
leaf-spine, the MF model, 2 iterations, every scheme, PS and ring."""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

pytest.importorskip("approxnet._native", reason="the simulator module is not built")

from approxnet import dml  # noqa: E402


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path]:
    out = tmp_path_factory.mktemp("dml")
    runs, transfers = dml.run(dml.plan(model_keys=["mf"], quick=True, iterations=2), out)
    dml.report("dml-all", runs, transfers, out)
    return dml, out


def test_every_scheme_and_collective_runs_every_iteration(study: tuple[ModuleType, Path]) -> None:
    mod, out = study
    runs = pd.read_csv(out / "runs.csv")
    want = {s.key for s in mod.SCHEMES}
    for coll in ("ps", "ring"):
        assert set(runs[runs.collective == coll].scheme) == want, coll
    # UDP included: its transfers end with their last datagram, lost or not
    assert (runs.iterations_done == runs.iterations_of).all()
    assert runs.iter_us.notna().all()
    for name in ("table1.md", "fig3.md", "fig4.md", "fig3.png", "fig4.png"):
        assert (out / name).stat().st_size > 0, name


def test_bounded_transfers_deliver_their_fraction_and_reliable_ones_everything(
    study: tuple[ModuleType, Path],
) -> None:
    _, out = study
    runs = pd.read_csv(out / "runs.csv")
    x1 = 0.35  # MF, seed 001 Table 3
    need = math.ceil((1 - x1) * 64) / 64
    bounded = runs[runs.scheme.isin(["atp-bounded", "dctcp-es"])]
    assert len(bounded) == 4
    assert bounded.needed_ok.all()
    assert (bounded.frac_min >= need - 1e-9).all()
    reliable = runs[runs.scheme.isin(["tcp", "dctcp", "atp", "appdrop-tcp", "appdrop-dctcp"])]
    assert (reliable.frac_min == 1.0).all()


def test_iteration_is_compute_plus_the_slowest_transfer_of_each_phase(
    study: tuple[ModuleType, Path],
) -> None:
    _, out = study
    runs = pd.read_csv(out / "runs.csv")
    # the training driver's barrier: an iteration lasts its compute time
    # plus, per phase, the transfer that finished last
    gap = (runs.compute_us + runs.net_tail_us - runs.iter_us).abs()
    assert (gap < 0.01).all(), gap.max()
    assert (runs.net_tail_us >= runs.net_avg_us).all()
    t1 = (out / "table1.md").read_text()
    slow = [float(r.split("|")[8]) for r in t1.splitlines()[2:]]
    assert slow and all(s >= 1.0 for s in slow)


def test_dropping_at_the_application_sends_less(study: tuple[ModuleType, Path]) -> None:
    _, out = study
    runs = pd.read_csv(out / "runs.csv").set_index(["collective", "scheme"])
    for coll in ("ps", "ring"):
        for base in ("tcp", "dctcp"):
            full = runs.loc[(coll, base), "sent_pkts"]
            cut = runs.loc[(coll, f"appdrop-{base}"), "sent_pkts"]
            assert cut < 0.8 * full, (coll, base, cut, full)
