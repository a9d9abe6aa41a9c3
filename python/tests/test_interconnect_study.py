"""The seed 004 execution-time study (approxnet.interconnect.study and
experiments/interconnect/study.py): skeleton and bandwidth arithmetic, and
properties of the quick study's runs on the flow-level simulator."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from approxnet import binaries
from approxnet.interconnect import study as S

SCRIPT = binaries.CHECKOUT / "experiments" / "interconnect" / "study.py"
APPS = ["cg", "fft", "kmeans", "ftmm", "ftcg"]


@pytest.fixture(scope="module")
def st() -> S.Study:
    return S.load()


def test_wire_factor_is_the_inverse_of_the_average_bandwidth(st: S.Study) -> None:
    # complex128 at 16 bits per part: t_p = 0.25, M/4: B~ = 0.25 / 0.4375 B
    assert S.wire_factor(st, "approx", "fft", True, 16) == pytest.approx(1.75)
    # float32 at 12: t_p = 0.375 -> 1 / 0.4706
    assert S.wire_factor(st, "approx", "kmeans", True, 12) == pytest.approx(2.125)
    # precise messages carry every bit on the reliable mapping, or are free
    assert S.wire_factor(st, "approx", "cg", False, 16) == pytest.approx(4.0)
    assert S.wire_factor(st, "approx_precise_free", "cg", False, 16) == 1.0
    for net in ("conventional", "fec_perfect", "full_approx"):
        assert S.wire_factor(st, net, "fft", True, 16) == 1.0


def test_skeletons_follow_table2_fractions_where_they_can(st: S.Study) -> None:
    fr = {}
    for app in APPS:
        msgs, approx, _, _ = S.message_counts(S.skeleton(st, app, 1024), 1024)
        fr[app] = approx / msgs
    assert fr["fft"] == pytest.approx(0.99, abs=0.005)
    assert fr["cg"] == pytest.approx(0.02, abs=0.01)
    assert fr["ftcg"] == pytest.approx(0.08, abs=0.01)
    # the pairwise all-to-all: every rank sends to every other exactly once
    ph = S.skeleton(st, "fft", 64)
    a2a = [c for c in ph if isinstance(c, S.Comm) and c.approximable]
    pairs = [p for c in a2a for s in c.steps(64) for p in s]
    assert len(pairs) == len(set(pairs)) == 64 * 63
    # CG's row exchanges stay within a row of the 8 x 8 grid; the transpose
    # swaps (r, c) and (c, r)
    cg = [c for c in S.skeleton(st, "cg", 64) if isinstance(c, S.Comm)]
    rd = next(c for c in cg if c.kind == "allreduce_rd")
    assert all(a // 8 == b // 8 and a != b for s in rd.steps(64) for a, b in s)
    tr = next(c for c in cg if c.kind == "transpose")
    assert (1, 8) in tr.steps(64)[0] and (9, 9) not in tr.steps(64)[0]


def test_scenarios_say_collectives_in_one_line(st: S.Study) -> None:
    """The 1,024-process FFT was ~1 M explicit pairs (12 MB of TOML)."""
    text = S.scenario(st, "approx", "df11", "fft")
    assert len(text) < 20_000
    assert 'comm = "all_to_all_pairwise"' in text
    with pytest.raises(ValueError, match="Comm.kind"):
        S.Comm("gossip", 1.0, False).steps(4)


def test_bad_inputs_name_the_field(st: S.Study, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="square power of two"):
        S.skeleton(st, "cg", 512)
    with pytest.raises(ValueError, match="unknown network"):
        S.scenario(st, "fast", "r4s16", "fft")
    bad = tmp_path / "s.toml"
    bad.write_text(S.STUDY_TOML.read_text().replace('approx = "full"', 'approx = "most"'))
    with pytest.raises(ValueError, match="networks.full_approx.approx"):
        S.load(bad)


needs_sim = pytest.mark.skipif(
    binaries.find("approxnet-sim") is None, reason="approxnet-sim binary not built"
)


@needs_sim
def test_all_bits_protected_is_a_quarter_rate_link(st: S.Study) -> None:
    """Level 64 protects every bit: the size scaling must then give exactly
    an error-free network at f_p B (max-min sharing included)."""
    a = S.run_point(st, "approx", "r4s16", "fft", level=64)
    b = S.run_point(st, "conventional", "r4s16", "fft", gbps=250.0)
    assert a.jct_us == pytest.approx(b.jct_us, rel=1e-9)


@needs_sim
def test_the_simulator_runs_every_message_the_skeleton_counts(st: S.Study) -> None:
    """The built-in collectives as the simulator expands them and as
    :meth:`Comm.steps` restates them agree, message for message."""
    procs = S.topology_hosts(st, "r4s16")
    for app in APPS:
        msgs = S.message_counts(S.skeleton(st, app, procs), procs)[0]
        assert S.run_point(st, "conventional", "r4s16", app).flows == msgs, app


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, str]]:
    if binaries.find("approxnet-sim") is None:
        pytest.skip("approxnet-sim binary not built")
    out = tmp_path_factory.mktemp("study")
    subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--figs", "6,8,9", "--out", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    with open(out / "study_quick.csv") as f:
        return list(csv.DictReader(f))


def _jct(rows: list[dict[str, str]], **kw: str) -> float:
    hit = [r for r in rows if all(r[k] == v for k, v in kw.items())]
    assert len(hit) == 1, kw
    return float(hit[0]["jct_us"])


@needs_sim
def test_quick_study_has_every_application_and_network(quick: list[dict[str, str]]) -> None:
    fig6 = [r for r in quick if r["fig"] == "6"]
    assert {(r["app"], r["network"]) for r in fig6} == {
        (a, n)
        for a in APPS
        for n in ("conventional", "fec_perfect", "approx", "full_approx", "approx_precise_free")
    }
    assert all(float(r["jct_us"]) > float(r["compute_us"]) > 0 for r in fig6)


@needs_sim
def test_network_orderings_hold_for_every_skeleton(quick: list[dict[str, str]]) -> None:
    for fig in ("6", "6check"):
        rows = [r for r in quick if r["fig"] == fig]
        for app in APPS:
            conv = _jct(rows, app=app, network="conventional")
            fec = _jct(rows, app=app, network="fec_perfect")
            approx = _jct(rows, app=app, network="approx")
            full = _jct(rows, app=app, network="full_approx")
            free = _jct(rows, app=app, network="approx_precise_free")
            assert fec <= conv
            assert approx <= conv
            # unprotecting bits or freeing precise messages never slows it
            assert full <= free <= approx


@needs_sim
def test_more_protected_bits_never_make_approx_faster(quick: list[dict[str, str]]) -> None:
    fft = sorted(
        (int(r["level"]), float(r["jct_us"]))
        for r in quick
        if r["fig"] == "8" and r["network"] == "approx"
    )
    assert len(fft) >= 3
    assert all(a[1] < b[1] for a, b in zip(fft, fft[1:], strict=False))


@needs_sim
def test_faster_links_never_slow_a_skeleton(quick: list[dict[str, str]]) -> None:
    for app in ("cg", "ftmm"):
        for net in ("fec_perfect", "approx"):
            pts = sorted(
                (float(r["gbps"]), float(r["jct_us"]))
                for r in quick
                if r["fig"] == "9" and r["app"] == app and r["network"] == net
            )
            assert len(pts) >= 3
            assert all(a[1] >= b[1] for a, b in zip(pts, pts[1:], strict=False))


def test_repro_runs_an_interconnect_figure_on_the_native_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`approxnet repro interconnect/fig8 --quick` from the packaged study,
    with no approxnet-sim binary: the native module runs the scenarios."""
    from cli_runner import invoke

    from approxnet.interconnect import figures as F

    monkeypatch.delenv("APPROXNET_SIM", raising=False)
    monkeypatch.setattr(binaries, "find", lambda *a, **k: None)
    assert S.STUDY_TOML.is_relative_to(Path(S.__file__).resolve().parents[1] / "studies")
    r = invoke("repro", "interconnect/fig8", "--quick", "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    with (tmp_path / "table.csv").open() as f:
        rows = list(csv.DictReader(f))
    nets = {x["network"] for x in rows}
    assert nets == {"conventional", "fec_perfect", "approx"} and {x["fig"] for x in rows} == {"8"}
    assert (tmp_path / "plot.png").read_bytes()[:4] == b"\x89PNG"
    assert "Fig. 8" in (tmp_path / "table.md").read_text()
    bad = invoke("repro", "interconnect/fig4", "--quick", "--out", str(tmp_path))
    assert bad.exit_code != 0 and "interconnect/fig6" in bad.output
    bad = invoke("repro", "interconnect/fig6", "--set", "x=1")
    assert bad.exit_code == 2 and "--quick" in bad.output
    assert set(F.FIGURES) == {"fig6", "fig8", "fig9", "fig10", "fig11"}


def test_repro_runs_the_analytical_figures_from_the_package(tmp_path: Path) -> None:
    """Fig. 3 and a quick Fig. 5 through `approxnet repro` (no checkout
    paths: the modules live in the package)."""
    from cli_runner import invoke

    r = invoke("repro", "interconnect/fig3", "--out", str(tmp_path / "f3"))
    assert r.exit_code == 0, r.output
    with (tmp_path / "f3" / "mappings.csv").open() as f:
        m = {row["m"]: row for row in csv.DictReader(f)}
    assert float(m["1024"]["quarter_ber"]) == pytest.approx(1.52e-16, rel=0.01)
    assert (tmp_path / "f3" / "fig3_ber.png").read_bytes()[:4] == b"\x89PNG"
    r = invoke("repro", "interconnect/fig5", "--quick", "--out", str(tmp_path / "f5"))
    assert r.exit_code == 0, r.output
    with (tmp_path / "f5" / "fig5_numerical_error.csv").open() as f:
        rows = {int(x["level"]): x for x in csv.DictReader(f)}
    assert sorted(rows) == list(range(0, 65, 4))
    assert float(rows[64]["mean_abs"]) == 0.0 < float(rows[16]["mean_abs"])
