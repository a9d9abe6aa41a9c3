"""Message production over time (seed 000 sections 2.2 and 7.1).

By default (`none`) every message of a job exists when the job starts.
With `fixed:US` or `exp:US` the first message is produced at job start and
each later one a gap after the previous (exp: exponential gaps of that
mean); a message is sent no sooner than its production time. The gaps are
`GapRng` (splitmix64) draws seeded by the gap seed alone, one per gap in
job order: the same production times as
`approxnet-perf client --gap-us ... --gap-seed ...`.
"""

from __future__ import annotations

import argparse
import math

MASK64 = (1 << 64) - 1
#: the largest gap accepted (as approxnet-perf): 10 s
MAX_GAP_US = 10e6


class GapRng:
    """splitmix64, exactly as approxnet-perf's `produce.rs`: same seed, same
    gaps, bit for bit."""

    def __init__(self, seed: int) -> None:
        self.x = seed & MASK64

    def unit(self) -> float:
        """Uniform in [0, 1) with 53 bits."""
        self.x = (self.x + 0x9E3779B97F4A7C15) & MASK64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        return (z >> 11) * (1.0 / (1 << 53))


def parse_gap(spec: str) -> tuple[str, float]:
    """`none`, `fixed:US` (>= 0) or `exp:US` (> 0) -> (kind, ns); the
    errors say what is expected (argparse turns a ValueError into exit 2)."""
    if spec == "none":
        return ("none", 0.0)
    kind, _, v = spec.partition(":")
    try:
        us = float(v)
    except ValueError:
        raise ValueError(f"--gap-us {spec!r}: expected none, fixed:US or exp:US") from None
    if kind not in ("fixed", "exp"):
        raise ValueError(f"--gap-us {spec!r}: expected none, fixed:US or exp:US")
    if not (math.isfinite(us) and us <= MAX_GAP_US):
        raise ValueError(f"--gap-us {spec!r}: give a gap of at most {MAX_GAP_US:g} us")
    if us < 0 or (kind == "exp" and us == 0):
        raise ValueError(f"--gap-us {spec!r}: the gap must be >= 0 (fixed) or > 0 (exp)")
    return (kind, float(math.floor(us * 1000.0 + 0.5)) if kind == "fixed" else us * 1000.0)


def production_offsets(gap: tuple[str, float], rng: GapRng, n: int) -> list[int]:
    """Production time of each of a job's `n` messages, ns after job start:
    the first at 0, each later one a gap after the previous."""
    kind, ns = gap
    out, at = [], 0
    for i in range(n):
        if i > 0:
            if kind == "fixed":
                at += int(ns)
            elif kind == "exp":
                at += math.floor(-ns * math.log(1.0 - rng.unit()) + 0.5)
        out.append(at)
    return out


def gap_arg(spec: str) -> tuple[str, float]:
    """`parse_gap` for argparse (a bad spec is a usage error)."""
    try:
        return parse_gap(spec)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
