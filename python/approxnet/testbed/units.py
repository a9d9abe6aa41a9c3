"""Parsing of link rates and buffer sizes written in the testbed TOML.

Rates are bits per second, sizes are bytes; both are plain `int` once
parsed, and every tc argument is rendered from them explicitly
(`<n>bit`, `<n>` bytes), so 1 Gbps and 1 MTU are never ambiguous.
"""

from __future__ import annotations

import re

_RATE_UNITS = {
    "bit": 1,
    "kbit": 1_000,
    "mbit": 1_000_000,
    "gbit": 1_000_000_000,
    "tbit": 1_000_000_000_000,
    "bps": 1,
    "kbps": 1_000,
    "mbps": 1_000_000,
    "gbps": 1_000_000_000,
}

_SIZE_UNITS = {
    "b": 1,
    "kb": 1_000,
    "mb": 1_000_000,
    "kib": 1024,
    "mib": 1024 * 1024,
}

_NUMBER_UNIT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]*)\s*$")

#: tc's HTB cannot meaningfully shape below this.
MIN_RATE_BPS = 8_000


def parse_rate(value: object) -> int:
    """Parse `"1gbit"`, `"100mbit"`, `"10Gbps"` or an int (bit/s) to bit/s.

    Raises `ValueError` with a user-facing message on anything else.
    """
    bps = _parse(value, _RATE_UNITS, default_unit="bit", what="rate")
    if bps < MIN_RATE_BPS:
        raise ValueError(f"rate {value!r} is below the minimum of {MIN_RATE_BPS} bit/s")
    return bps


def parse_size(value: object) -> int:
    """Parse `"256KiB"`, `"64kb"`, `"1500b"` or an int (bytes) to bytes."""
    size = _parse(value, _SIZE_UNITS, default_unit="b", what="size")
    if size <= 0:
        raise ValueError(f"size {value!r} must be positive")
    return size


def format_rate(bps: int) -> str:
    """Human form of a rate, e.g. 1_000_000_000 -> `1gbit`."""
    for unit, scale in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bps % scale == 0:
            return f"{bps // scale}{unit}"
    return f"{bps}bit"


def _parse(value: object, units: dict[str, int], default_unit: str, what: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"expected a {what}, got a boolean")
    if isinstance(value, int):
        number, unit = float(value), default_unit
    elif isinstance(value, str):
        match = _NUMBER_UNIT.match(value)
        if match is None:
            raise ValueError(f"cannot parse {what} {value!r}")
        number = float(match.group(1))
        unit = match.group(2).lower() or default_unit
    else:
        raise ValueError(f"expected a {what} (int or string), got {type(value).__name__}")
    if unit not in units:
        known = ", ".join(sorted(units))
        raise ValueError(f"unknown {what} unit {unit!r} (known: {known})")
    result = number * units[unit]
    if result != int(result):
        raise ValueError(f"{what} {value!r} is not a whole number of {default_unit}s")
    return int(result)
