"""What the analytics layer puts in ATP messages.

* **Plan** (aggregator -> source, a job of one message, MSR 1): for round
  ``r`` of window ``w``, per stratum, up to which fraction of its records the
  source should have sent by the end of the round, and the MSR of that
  stratum's group in the round's job. The adjust loop of seed 000
  (``000_9eba2c5297757960.txt``) §6 runs through these.
* **Meta** (source -> aggregator, group 0 of every data job, MSR 1, so it
  always arrives): source id, round, window, and per stratum its size at the
  source and how many of its records this job carries. Seed 000 §3.3.2: the
  framework tells ApproxLib the job size ``N``; sizes are metadata, never
  the sampled values.
* **Records** (source -> aggregator): fixed-width records of one stratum per
  message, in the stratum's group (§3.3.3: one group per stratum gives
  stratified sampling). A message is delivered whole or not at all, so every
  record that arrives is intact.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .errors import AnalyticsError

__all__ = ["DEFAULT", "META_GROUP", "Meta", "Plan", "group_of", "pack", "stratum_of", "unpack"]

META_GROUP = 0
"""ATP group of the metadata (MSR 1)."""
DEFAULT = -2
"""Plan key that applies to every stratum without its own entry."""

_PLAN = struct.Struct("!4sIIBI")
_PLAN_ENTRY = struct.Struct("!idd")
_META = struct.Struct("!4sIIII")
_META_ENTRY = struct.Struct("!iII")


def group_of(stratum: int) -> int:
    """ATP group id of a stratum (``ALL`` -> 1, hour ``h`` -> ``h + 2``)."""
    g = stratum + 2
    if not 1 <= g <= 0xFFFF:
        raise AnalyticsError(f"stratum key {stratum} does not fit a group id (-1 ..= 65533)")
    return g


def stratum_of(group: int) -> int:
    """Inverse of :func:`group_of`."""
    return group - 2


def _decode_table(
    data: bytes, magic: bytes, head: struct.Struct, entry: struct.Struct, what: str
) -> tuple[tuple[Any, ...], list[tuple[Any, ...]]]:
    """A header (magic first, entry count last) followed by exactly that many
    fixed-size entries; anything else raises :class:`AnalyticsError`."""
    if len(data) < head.size or data[:4] != magic:
        raise AnalyticsError(f"not a {what} message")
    fields = head.unpack_from(data)
    n = fields[-1]
    if len(data) != head.size + n * entry.size:
        raise AnalyticsError(f"{what} message of the wrong length")
    return fields, [entry.unpack_from(data, head.size + i * entry.size) for i in range(n)]


@dataclass(frozen=True)
class Plan:
    """The aggregator's instruction for one round."""

    round: int
    window: int = 0
    stop: bool = False
    entries: dict[int, tuple[float, float]] = field(default_factory=dict)
    """stratum -> (cumulative fraction to have sent, MSR of the round's job);
    key ``DEFAULT`` for every stratum not listed."""
    counts: bool = False
    """Streaming: the second value of an entry is not an MSR but the sample
    size ``n0`` each source should aim at for an infinite population; the
    source turns it into an MSR with its own window size (Cochran's
    ``n = n0 / (1 + n0 / N)``)."""

    def entry(self, stratum: int) -> tuple[float, float]:
        """``(fraction, msr)`` for ``stratum`` (``(0, 1)``: send nothing)."""
        return self.entries.get(stratum, self.entries.get(DEFAULT, (0.0, 1.0)))

    def encode(self) -> bytes:
        flags = int(self.stop) | (2 if self.counts else 0)
        body = [_PLAN.pack(b"ANP1", self.round, self.window, flags, len(self.entries))]
        body += [_PLAN_ENTRY.pack(k, f, m) for k, (f, m) in sorted(self.entries.items())]
        return b"".join(body)

    @classmethod
    def decode(cls, data: bytes) -> Plan:
        (_, r, w, flags, _n), rows = _decode_table(data, b"ANP1", _PLAN, _PLAN_ENTRY, "plan")
        entries = {k: (f, m) for k, f, m in rows}
        return cls(r, w, bool(flags & 1), entries, bool(flags & 2))


@dataclass(frozen=True)
class Meta:
    """What a source says about one data job."""

    source: int
    round: int
    window: int
    strata: dict[int, tuple[int, int]]
    """stratum -> (records of the stratum at the source, records in this job)."""

    def encode(self) -> bytes:
        body = [_META.pack(b"ANM1", self.source, self.round, self.window, len(self.strata))]
        body += [_META_ENTRY.pack(k, n, c) for k, (n, c) in sorted(self.strata.items())]
        return b"".join(body)

    @classmethod
    def decode(cls, data: bytes) -> Meta:
        (_, s, r, w, _n), rows = _decode_table(data, b"ANM1", _META, _META_ENTRY, "meta")
        strata = {k: (big_n, c) for k, big_n, c in rows}
        return cls(s, r, w, strata)


def pack(records: npt.NDArray[np.void], per_message: int) -> list[bytes]:
    """Records as messages of ``per_message`` whole records (the last may hold fewer)."""
    raw = records.tobytes()
    step = per_message * records.dtype.itemsize
    return [raw[i : i + step] for i in range(0, len(raw), step)]


def unpack(payload: bytes, dtype: np.dtype[np.void]) -> npt.NDArray[np.void]:
    """The records of one message."""
    if len(payload) % dtype.itemsize:
        raise AnalyticsError(
            f"a message of {len(payload)} B is not whole {dtype.itemsize} B records"
        )
    return np.frombuffer(payload, dtype=dtype).copy()
