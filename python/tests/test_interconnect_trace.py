"""Traces of the real NumPy kernels (approxnet.interconnect.trace) and the
skeletons built from them, run by the flow mode."""

from __future__ import annotations

import numpy as np
import pytest

from approxnet import binaries
from approxnet.interconnect import kernels as K
from approxnet.interconnect import study as S
from approxnet.interconnect import trace as T
from approxnet.interconnect.exchange import Channel


def _traced(level: int | None = 16, seed: int = 3) -> Channel:
    return Channel(1e-5, level, seed=seed, tracer=T.Tracer())


def test_tracing_changes_no_result() -> None:
    z = np.random.default_rng(1).normal(size=(64, 64)).astype(np.complex128)
    np.testing.assert_array_equal(K.fft2(z, _traced()), K.fft2(z, Channel(1e-5, 16, seed=3)))
    x, init = K.kmeans_data(800, 3, 4, seed=2)
    a = K.kmeans(x, init, _traced(), iterations=4)
    b = K.kmeans(x, init, Channel(1e-5, 16, seed=3), iterations=4)
    np.testing.assert_array_equal(a.labels, b.labels)
    m, rhs = K.spd_system(64, 50.0, seed=1)
    c, d = K.cg(m, rhs, _traced()), K.cg(m, rhs, Channel(1e-5, 16, seed=3))
    assert c.iterations == d.iterations and np.array_equal(c.x, d.x)


def test_the_fft_trace_is_the_study_skeletons_pairwise_all_to_all() -> None:
    """The real 2-D FFT's two transposes, as traced, send every ordered
    pair of 8 processes one (64 / 8)^2 complex128 block each: the message
    set of the skeleton's `all_to_all_pairwise` over 8 ranks."""
    ch = _traced()
    K.fft2(np.ones((64, 64), complex), ch, procs=8)
    tr = ch.tracer
    assert tr is not None and tr.steps == 2 and not tr.collectives
    a2a = S.Comm("all_to_all_pairwise", 1024.0, True)
    want = sorted(p for s in a2a.steps(8) for p in s)
    for step in (0, 1):
        got = [m for m in tr.messages if m.step == step]
        assert sorted((m.src, m.dst) for m in got) == want
        assert {(m.nbytes, m.approximable) for m in got} == {(8 * 8 * 16, True)}


def test_kmeans_and_cg_traces_have_their_rounds() -> None:
    ch = _traced()
    x, init = K.kmeans_data(800, 3, 4, seed=2)
    K.kmeans(x, init, ch, procs=4, iterations=2)
    tr = ch.tracer
    assert tr is not None
    scatter = [m for m in tr.messages if m.step == 0]
    assert [(m.src, m.dst, m.nbytes) for m in scatter] == [(0, i, 200 * 3 * 4) for i in (1, 2, 3)]
    reduce_ = [m for m in tr.messages if m.step == 2]
    assert {(m.dst, m.nbytes, m.approximable) for m in reduce_} == {(0, 48, True), (0, 32, False)}
    ch = _traced()
    m, rhs = K.spd_system(32, 10.0, seed=1)
    r = K.cg(m, rhs, ch, procs=4)
    tr = ch.tracer
    assert tr is not None
    # per iteration: the all-gather round and two precise scalar all-reduces
    assert len(tr.collectives) == 2 * r.iterations
    assert len(tr.messages) == 12 * r.iterations and tr.steps == 3 * r.iterations
    with pytest.raises(ValueError, match="distinct"):
        T.Tracer().message(2, 2, 8, True)


@pytest.mark.skipif(binaries.find("approxnet-sim") is None, reason="approxnet-sim not built")
def test_a_traced_run_simulates_every_message_it_sent() -> None:
    st = S.load()
    for run in ("fft", "cg"):
        ch = _traced()
        if run == "fft":
            K.fft2(np.ones((32, 32), complex), ch, procs=8)
        else:
            m, rhs = K.spd_system(32, 10.0, seed=1)
            K.cg(m, rhs, ch, procs=8, max_iter=3)
        tr = ch.tracer
        assert tr is not None
        phases = T.skeleton(tr)
        want = len(tr.messages) + len(tr.collectives) * 8 * 3  # recursive doubling, 8 ranks
        text = S.scenario(st, "conventional", "r4s16", run, phases=phases, ranks=8)
        assert S.run_scenario(text).flows == want
    with pytest.raises(ValueError, match="ranks"):
        S.scenario(st, "conventional", "r4s16", "fft", phases=phases, ranks=65)
