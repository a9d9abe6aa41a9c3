"""approxnet.approx_types: masks, the byte-plane layout and the bit-error
channel (crates/phy, seed 004), and the channel models' Python face."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from approxnet import ConfigError
from approxnet import approx_types as at
from approxnet.interconnect import channel

DTYPES = ["float16", "float32", "float64", "complex64", "complex128"] + [
    f"{s}int{b}" for s in ("", "u") for b in (8, 16, 32, 64)
]
WORD_BITS = {"complex64": 32, "complex128": 64}


def word_bits(name: str) -> int:
    return WORD_BITS.get(name, 8 * np.dtype(name).itemsize)


def random_array(name: str, n: int, seed: int) -> npt.NDArray[Any]:
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=n * np.dtype(name).itemsize, dtype=np.uint8)
    return raw.view(name).copy()


def words(a: npt.NDArray[Any], bits: int) -> npt.NDArray[Any]:
    """The scalar words of ``a`` as unsigned integers."""
    return np.ascontiguousarray(a).reshape(-1).view(f"u{bits // 8}")


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(DTYPES),
    n=st.integers(0, 300),
    frac=st.floats(0, 1),
    seed=st.integers(0, 2**32),
)
def test_layout_round_trips_and_prefix_holds_exactly_the_protected_bits(
    name: str, n: int, frac: float, seed: int
) -> None:
    bits = word_bits(name)
    level = round(frac * bits)
    a = random_array(name, n, seed)
    p = at.to_planes(a, level)
    nwords = a.size * (2 if name.startswith("complex") else 1)
    assert p.prefix_len == -(-nwords * level // 8)
    assert p.precise.size + p.approximate.size == a.nbytes
    back = at.from_planes(p)
    assert back.dtype == a.dtype and back.shape == a.shape
    assert back.tobytes() == a.tobytes()
    # flip bits only outside the precise prefix: no protected bit changes
    rng = np.random.default_rng(seed + 1)
    if p.approximate.size:
        data = p.data.copy()
        idx = rng.integers(p.prefix_len, data.size, size=32)
        data[idx] ^= rng.integers(1, 256, size=32, dtype=np.uint8)
        hit = at.from_planes(at.Planes(data, p.prefix_len, p.dtype, p.shape, level))
        mask = np.array(at.word_mask(name, level), dtype=f"u{bits // 8}")
        assert np.array_equal(words(hit, bits) & mask, words(a, bits) & mask)


def test_transmit_spares_protected_bits_and_flips_at_the_ber() -> None:
    x = np.random.default_rng(3).normal(size=200_000)
    y, s = at.transmit(x, level=12, ber=1e-3, seed=7)
    assert y is not x and s.protected_flips == 0
    mask = np.uint64(at.word_mask("float64", 12))
    xb, yb = x.view(np.uint64), y.view(np.uint64)
    assert np.array_equal(xb & mask, yb & mask)
    flipped = int(np.unpackbits((xb ^ yb).view(np.uint8)).sum())
    assert flipped == s.unprotected_flips
    expect = x.size * 52 * 1e-3
    assert abs(flipped - expect) < 5 * expect**0.5
    # the same seed gives the same result
    y2, _ = at.transmit(x, level=12, ber=1e-3, seed=7)
    assert np.array_equal(y.view(np.uint64), y2.view(np.uint64))
    # complex: the level applies to the real and the imaginary part
    z = (x[:1000] + 1j * x[1000:2000]).astype(np.complex128)
    w, _ = at.transmit(z, level=12, ber=0.2, seed=1)
    assert np.array_equal(np.sign(w.real), np.sign(z.real))
    assert np.array_equal(np.sign(w.imag), np.sign(z.imag))


def test_inplace_transmit_copies_nothing_at_identity_levels() -> None:
    a = np.arange(1000, dtype=np.float32)
    before = a.__array_interface__["data"][0]
    out, s = at.transmit(a, level=0, ber=0.01, seed=2, inplace=True)
    assert out is a and a.__array_interface__["data"][0] == before
    assert s.prefix_len == 0 and s.unprotected_flips > 0
    planes = at.to_planes(a, 0)
    assert planes.prefix_len == 0


def test_bfloat16_and_bad_input() -> None:
    bits = np.array([0x3F80, 0xC000], dtype=np.uint16)  # 1.0, -2.0 in bf16
    p = at.to_planes(bits, 9, dtype="bfloat16")
    assert p.dtype == "bfloat16" and p.prefix_len == 3
    assert np.array_equal(at.from_planes(p), bits)
    assert at.to_planes(bits, 9, dtype="bf16").dtype == "bfloat16"
    assert at.word_mask("f8", 12) == 0xFFF0_0000_0000_0000  # NumPy's reading: float64
    with pytest.raises(ConfigError, match="not a NumPy dtype"):
        at.word_mask("no-such-type", 1)
    assert at.header_bits("float64") == 12 and at.header_bits("bfloat16") == 9
    assert at.protected_fraction("complex128", 16) == 0.25
    with pytest.raises(ConfigError, match="level 65"):
        at.to_planes(np.zeros(4), 65)
    with pytest.raises(ConfigError, match="byte order"):
        at.to_planes(np.zeros(4, dtype=">f8"), 8)
    with pytest.raises(ConfigError, match="not an approximate data type"):
        at.to_planes(np.zeros(4, dtype=bool), 1)
    with pytest.raises(ConfigError, match="2-byte elements"):
        at.to_planes(np.zeros(4, dtype=np.float32), 1, dtype="bfloat16")
    with pytest.raises(ConfigError, match="ber"):
        at.transmit(np.zeros(4), 8, ber=1.5, seed=1)
    with pytest.raises(ConfigError, match="writable"):
        ro = np.zeros(4)
        ro.flags.writeable = False
        at.transmit(ro, 8, ber=0.1, seed=1, inplace=True)


def test_channel_models_reproduce_seed_004() -> None:
    # §4.2.1 from the formulas: nominal 1e-5 on 1024-QAM
    half, f_half = channel.mapping_ber("half", 1024, 1e-5)
    quarter, f_quarter = channel.mapping_ber("quarter", 1024, 1e-5)
    assert half == pytest.approx(6.25e-10, rel=1e-3) and f_half == 0.5
    assert quarter == pytest.approx(1.52e-16, rel=5e-3) and f_quarter == 0.25
    s = channel.symbol_errors(1024, 1e-5)
    assert s.two_hop == pytest.approx(6.12e-36, rel=5e-3)
    ebn0 = channel.required_ebn0("1024qam", 1e-5)
    assert channel.ber("1024-QAM", ebn0) == pytest.approx(1e-5, rel=1e-6)
    assert channel.required_ebn0("ook", 1e-5) < ebn0
    assert channel.end_to_end_ber(1e-18, 3) == pytest.approx(3e-18)
    assert channel.average_bandwidth_factor(0.25, 0.25) == pytest.approx(0.25 / 0.4375)
    with pytest.raises(ConfigError, match="power of 4"):
        channel.ber("32qam", 10.0)
    with pytest.raises(ConfigError, match="ebn0"):
        channel.ber("ook", -1.0)
    with pytest.raises(ConfigError, match="target_ber"):
        channel.required_ebn0("ook", 0.7)
