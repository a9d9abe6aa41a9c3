"""approxnet.interconnect: the channel between simulated processes, the
seed 004 kernels on real numbers and the numerical-error measurement."""

from __future__ import annotations

import numpy as np

from approxnet.interconnect import kernels as K
from approxnet.interconnect.exchange import Channel
from approxnet.interconnect.quality import expected_error, numerical_error


def test_error_free_kernels_match_numpy() -> None:
    a, b = K.spd_system(96, 1e2, seed=3)
    r = K.cg(a, b, Channel(1e-3, None), procs=4)
    assert r.converged
    assert np.allclose(r.x, np.linalg.solve(a, b), rtol=1e-8, atol=1e-9)
    rng = np.random.default_rng(2)
    z = rng.standard_normal((64, 64)) + 1j * rng.standard_normal((64, 64))
    assert np.allclose(K.fft2(z, Channel(1e-3, None), procs=4), np.fft.fft2(z))


def test_full_protection_is_error_free_and_level_zero_is_not() -> None:
    rng = np.random.default_rng(4)
    z = rng.standard_normal((64, 64)) + 1j * rng.standard_normal((64, 64))
    ref = np.fft.fft2(z)
    full = Channel(1e-2, 64, seed=1)
    assert np.allclose(K.fft2(z, full, procs=4), ref)
    assert full.flips == 0 and full.messages == 2 * 4 * 3
    bare = Channel(1e-2, 0, seed=1)
    y = K.fft2(z, bare, procs=4)
    assert bare.flips > 0
    assert not np.allclose(y, ref)


def test_kmeans_same_seed_same_labels_and_protection_helps() -> None:
    x, init = K.kmeans_data(4000, 9, 4, seed=5)
    ref = K.kmeans(x, init, Channel(1e-3, None), procs=4, iterations=10)
    again = K.kmeans(x, init, Channel(1e-3, 9, seed=2), procs=4, iterations=10)
    twice = K.kmeans(x, init, Channel(1e-3, 9, seed=2), procs=4, iterations=10)
    assert np.array_equal(again.labels, twice.labels)
    bare = K.kmeans(x, init, Channel(1e-3, 0, seed=2), procs=4, iterations=10)
    assert np.mean(again.labels != ref.labels) < np.mean(bare.labels != ref.labels)


def test_numerical_error_matches_its_expectation() -> None:
    x = np.random.default_rng(6).standard_normal(400_000)
    assert numerical_error(x, 64, 1e-3, seed=1).mean_abs == 0.0
    # level 12: only fraction bits flip; measured vs bit-by-bit expectation
    got = numerical_error(x, 12, 1e-3, seed=1)
    [(_, e_abs, e_rel)] = expected_error(x, [12], 1e-3)
    assert got.non_finite == 0
    assert abs(got.mean_abs / e_abs - 1) < 0.1
    assert abs(got.mean_rel / e_rel - 1) < 0.1
    # each protected bit lowers the expected error
    exp = [a for _, a, _ in expected_error(x[:50_000], [12, 16, 24, 32], 1e-3)]
    assert exp == sorted(exp, reverse=True)


def test_channel_for_a_link_takes_its_rates_from_the_models() -> None:
    ch = Channel.for_link(16, qam=1024, nominal_ber=1e-5, mapping="half", hops=3)
    assert abs(ch.ber - 3e-5) < 1e-9  # 1 - (1 - 1e-5)^3
    assert abs(ch.protected_ber / (3 * 6.25e-10) - 1) < 1e-3
    assert Channel.for_link(None).protected_ber < 1e-15  # M/4 on one hop
