"""Approximate data types: which bits of an element may be wrong (seed 004).

The *protection level* is the number of most significant bits protected in
every scalar word (the paper's "bit rank", §4.2.2): 12 on a float64 keeps
its sign and exponent exact. A complex element is two words and the level
applies to each ("16+16" in seed 004 Table 2). The byte-plane layout moves
the protected bits of every element to the front of a buffer, so that a
message's precise prefix -- and its UDP-Lite checksum coverage -- is exactly
the protected bits; :func:`transmit` sends an array through the bit-error
channel that way. The work is done by ``crates/phy`` (Rust) with the GIL
released.

    >>> import numpy as np
    >>> from approxnet import approx_types as at
    >>> x = np.linspace(-1.0, 1.0, 1000)
    >>> y, stats = at.transmit(x, level=12, ber=1e-3, seed=1)
    >>> bool(np.all(np.sign(y) == np.sign(x)))  # the sign is protected
    True

NumPy in, NumPy out; arrays must be in native byte order. ``bfloat16`` has no
NumPy dtype: pass its bits as ``uint16`` with ``dtype="bfloat16"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _native
from ._native import ConfigError

__all__ = [
    "Planes",
    "TransmitStats",
    "dtype_name",
    "from_planes",
    "header_bits",
    "prefix_len",
    "protected_fraction",
    "to_planes",
    "transmit",
    "word_mask",
]

Array = npt.NDArray[Any]


def dtype_name(array_dtype: npt.DTypeLike, dtype: str | None = None) -> str:
    """The approximate-type name of an array dtype (``dtype`` overrides it:
    ``"bfloat16"`` over ``uint16`` bits). Raises :class:`ConfigError` for a
    non-native byte order or an override of another element size."""
    d = np.dtype(array_dtype)
    if not d.isnative:
        raise ConfigError(f"array byte order must be native, got dtype {d.str}")
    if dtype is None:
        return d.name
    name = _name(dtype)
    bits, words = _native.approx_dtype_shape(name)
    if bits * words != 8 * d.itemsize:
        raise ConfigError(
            f"dtype '{name}' has {bits * words // 8}-byte elements, the array {d.itemsize}"
        )
    return name


def _container(name: str) -> np.dtype[Any]:
    """The NumPy dtype that holds elements of ``name``."""
    return np.dtype(np.uint16) if name == "bfloat16" else np.dtype(name)


def word_mask(dtype: npt.DTypeLike | str, level: int) -> int:
    """The protected bits of one scalar word (its top ``level`` bits)."""
    return _native.approx_word_mask(_name(dtype), level)


def protected_fraction(dtype: npt.DTypeLike | str, level: int) -> float:
    """``t_p`` of seed 004 §5.1.2: the fraction of bits ``level`` protects."""
    return _native.approx_protected_fraction(_name(dtype), level)


def header_bits(dtype: npt.DTypeLike | str) -> int | None:
    """Sign plus exponent bits per word of a float type (12 for float64)."""
    return _native.approx_header_bits(_name(dtype))


def prefix_len(a: Array, level: int, *, dtype: str | None = None) -> int:
    """Bytes of the precise prefix of ``a`` laid out at ``level``."""
    return _native.approx_prefix_len(a.nbytes, dtype_name(a.dtype, dtype), level)


def _name(dtype: npt.DTypeLike | str) -> str:
    """The canonical name: ``"bfloat16"`` (or ``"bf16"``), else as NumPy
    reads ``dtype`` (so ``"f8"`` is float64; names NumPy does not know
    raise :class:`ConfigError`)."""
    if isinstance(dtype, str) and dtype in ("bfloat16", "bf16"):
        return "bfloat16"
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise ConfigError(f"dtype {dtype!r} is not a NumPy dtype: {e}") from None
    if not d.isnative:
        raise ConfigError(f"array byte order must be native, got dtype {d.str}")
    return d.name


def _bytes(a: Array) -> npt.NDArray[np.uint8]:
    """A flat uint8 view of ``a`` (a copy only if ``a`` is not contiguous)."""
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


@dataclass(frozen=True)
class Planes:
    """An array laid out with its protected bits first."""

    data: npt.NDArray[np.uint8]
    """The laid-out bytes (as many as the array's)."""
    prefix_len: int
    """Bytes of the precise prefix (``ceil(words * level / 8)``)."""
    dtype: str
    """The element type."""
    shape: tuple[int, ...]
    """The array's shape."""
    level: int
    """The protection level."""

    @property
    def precise(self) -> npt.NDArray[np.uint8]:
        """The precise prefix (a view): every protected bit, nothing else
        but up to 7 unprotected bits in its last byte."""
        return self.data[: self.prefix_len]

    @property
    def approximate(self) -> npt.NDArray[np.uint8]:
        """The approximate suffix (a view): unprotected bits only."""
        return self.data[self.prefix_len :]


def to_planes(a: Array, level: int, *, dtype: str | None = None) -> Planes:
    """Lays ``a`` out with its top ``level`` bits per word first."""
    name = dtype_name(a.dtype, dtype)
    data, prefix = _native.approx_to_planes(_bytes(a), name, level)
    return Planes(data, prefix, name, tuple(a.shape), level)


def from_planes(p: Planes, out: Array | None = None) -> Array:
    """The array that :func:`to_planes` laid out as ``p`` (written into
    ``out`` when given: C-contiguous, same size and element size)."""
    if out is None:
        out = np.empty(p.shape, dtype=_container(p.dtype))
    if not out.flags.c_contiguous or not out.flags.writeable:
        raise ConfigError("out must be a writable C-contiguous array")
    if out.nbytes != p.data.nbytes:
        raise ConfigError(f"out has {out.nbytes} bytes, the planes {p.data.nbytes}")
    flat = out.reshape(-1).view(np.uint8)
    _native.approx_from_planes(np.ascontiguousarray(p.data), flat, p.dtype, p.level)
    return out


@dataclass(frozen=True)
class TransmitStats:
    """What one pass through the channel flipped."""

    prefix_len: int
    """Bytes of the precise prefix."""
    protected_flips: int
    """Bits flipped in the precise prefix (at ``protected_ber``)."""
    unprotected_flips: int
    """Bits flipped in the approximate suffix (at ``ber``)."""


def transmit(
    a: Array,
    level: int,
    ber: float,
    seed: int,
    *,
    protected_ber: float = 0.0,
    dtype: str | None = None,
    inplace: bool = False,
) -> tuple[Array, TransmitStats]:
    """Sends ``a`` through the bit-error channel: the precise prefix (the
    top ``level`` bits of every word) at ``protected_ber`` (0: a perfectly
    reliable mapping; seed 004's M/4 mapping gives ~1.5e-16), every other
    bit flipped independently with probability ``ber``; seeded by ``seed``.

    Returns the received array (a new one, or ``a`` itself when ``inplace``
    -- then ``a`` must be writable and C-contiguous, and at level 0 or a
    full level no byte is copied) and the flip counts."""
    name = dtype_name(a.dtype, dtype)
    if inplace:
        if not a.flags.c_contiguous or not a.flags.writeable:
            raise ConfigError("inplace transmit needs a writable C-contiguous array")
        out = a
    else:
        out = np.array(a, order="C", copy=True)
    flat = out.reshape(-1).view(np.uint8)
    p, pf, uf = _native.approx_transmit(flat, name, level, ber, seed, protected_ber)
    return out, TransmitStats(p, pf, uf)
