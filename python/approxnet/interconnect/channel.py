"""Channel models of seed 004 (crates/phy): BER of OOK and M-QAM over AWGN
and its inverse, the §4.2.1 symbol errors, the M/2 and M/4 mappings, the
end-to-end BER over hops and the §5.1.2 average bandwidth.

Modulations are named ``"ook"`` or ``"<M>qam"`` (``"1024qam"``); Eb/N0 is a
linear ratio (:func:`db_to_linear`). Bad input raises
:class:`approxnet.ConfigError` naming the field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import _native

__all__ = [
    "SymbolErrors",
    "average_bandwidth_factor",
    "ber",
    "db_to_linear",
    "end_to_end_ber",
    "linear_to_db",
    "mapping_ber",
    "required_ebn0",
    "symbol_errors",
]


def db_to_linear(db: float) -> float:
    """Decibels to a linear ratio."""
    return float(10.0 ** (db / 10.0))


def linear_to_db(x: float) -> float:
    """A linear ratio to decibels."""
    return 10.0 * math.log10(x)


def ber(modulation: str, ebn0: float) -> float:
    """Bit error rate at linear Eb/N0 (seed 004 eq. 2 for OOK, eq. 3-4 for M-QAM)."""
    return _native.channel_ber(modulation, ebn0)


def required_ebn0(modulation: str, target_ber: float) -> float:
    """The linear Eb/N0 that gives ``target_ber`` (in (0, 0.5)); Fig. 3."""
    return _native.channel_required_ebn0(modulation, target_ber)


@dataclass(frozen=True)
class SymbolErrors:
    """Seed 004 §4.2.1 for an M-QAM link at a nominal BER."""

    ebn0: float
    """Linear Eb/N0 of the nominal BER."""
    ser_component: float
    """Per-component symbol error rate (eq. 3)."""
    diagonal: float
    """Mis-demodulation to the diagonal neighbour."""
    two_hop: float
    """Mis-demodulation to the second neighbour on an axis."""


def symbol_errors(m: int, nominal_ber: float) -> SymbolErrors:
    """The §4.2.1 probabilities of ``m``-QAM at ``nominal_ber``."""
    return SymbolErrors(*_native.channel_symbol_errors(m, nominal_ber))


def mapping_ber(mapping: str, m: int, nominal_ber: float) -> tuple[float, float]:
    """``(BER, bandwidth factor)`` of the ``"full"``, ``"half"`` (M/2) or
    ``"quarter"`` (M/4) mapping on ``m``-QAM at ``nominal_ber``."""
    return _native.channel_mapping(mapping, m, nominal_ber)


def end_to_end_ber(per_link_ber: float, hops: int) -> float:
    """``1 - (1 - Pb)^n`` (seed 004 §3.2), exact for tiny ``Pb``."""
    return _native.channel_end_to_end_ber(per_link_ber, hops)


def average_bandwidth_factor(protected_fraction: float, protected_factor: float) -> float:
    """Seed 004 §5.1.2: ``f_p / (t_p + f_p - t_p f_p)``."""
    return _native.channel_average_bandwidth_factor(protected_fraction, protected_factor)
