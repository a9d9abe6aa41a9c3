"""What arrived at the aggregator: records per stratum, and stratum sizes.

With groups (seed 000 ``000_9eba2c5297757960.txt`` §3.3.3: "to express
stratified sampling, a framework could separate its dataset into different
groups and use the same MSR for each group") every value of the strata field
(e.g. the pickup hour) is one stratum, sent as its own ATP group, and the
aggregator learns each stratum's size ``N_h`` from the sources' precise
metadata. Without groups there is one stratum, ``ALL``.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from .errors import AnalyticsError

__all__ = ["ALL", "Sample"]

ALL = -1
"""The stratum key of an ungrouped sample."""


class Sample:
    """Records received per stratum, with each stratum's population size."""

    def __init__(self, dtype: np.dtype[np.void], strata_field: str | None) -> None:
        if strata_field is not None and strata_field not in (dtype.names or ()):
            raise AnalyticsError(f"strata field {strata_field!r} is not a field of the records")
        self.dtype = dtype
        self.strata_field = strata_field
        self._parts: dict[int, list[npt.NDArray[np.void]]] = {}
        self._cache: dict[int, npt.NDArray[np.void]] = {}
        self.population: dict[int, int] = {}
        """``N_h``: records of stratum ``h`` in the whole data set."""

    @classmethod
    def full(cls, records: npt.NDArray[np.void], strata_field: str | None) -> Sample:
        """The "sample" that is the whole data set (exact answers)."""
        s = cls(records.dtype, strata_field)
        for h, part in split(records, strata_field).items():
            s.add(h, part)
            s.population[h] = len(part)
        return s

    def add(self, stratum: int, records: npt.NDArray[np.void]) -> None:
        """Adds received records of ``stratum``."""
        if records.dtype != self.dtype:
            raise AnalyticsError(f"records of dtype {records.dtype}, expected {self.dtype}")
        if len(records):
            self._parts.setdefault(stratum, []).append(records)
            self._cache.pop(stratum, None)

    def add_population(self, stratum: int, n: int) -> None:
        """Adds ``n`` to the known size of ``stratum``."""
        self.population[stratum] = self.population.get(stratum, 0) + n

    def records(self, stratum: int) -> npt.NDArray[np.void]:
        """Every received record of ``stratum``."""
        if stratum not in self._cache:
            parts = self._parts.get(stratum, [])
            self._cache[stratum] = np.concatenate(parts) if parts else np.empty(0, dtype=self.dtype)
        return self._cache[stratum]

    def all_records(self) -> npt.NDArray[np.void]:
        """Every received record."""
        parts = [self.records(h) for h in self.strata]
        return np.concatenate(parts) if parts else np.empty(0, dtype=self.dtype)

    @property
    def strata(self) -> list[int]:
        """Known strata (with a population or received records), sorted."""
        return sorted(set(self.population) | set(self._parts))

    def n(self, stratum: int) -> int:
        """Records of ``stratum`` received."""
        return sum(len(p) for p in self._parts.get(stratum, []))

    def fraction(self, stratum: int) -> float:
        """Sampling fraction ``n_h / N_h`` of ``stratum`` (1 for an empty stratum)."""
        big_n = self.population.get(stratum, 0)
        return min(1.0, self.n(stratum) / big_n) if big_n else 1.0

    @property
    def size(self) -> int:
        """Records received in all."""
        return sum(self.n(h) for h in self.strata)

    @property
    def total_population(self) -> int:
        """Records in the whole data set."""
        return sum(self.population.values())


def split(records: npt.NDArray[np.void], field: str | None) -> dict[int, npt.NDArray[np.void]]:
    """Records by the value of ``field`` (one stratum ``ALL`` without a field)."""
    if field is None:
        return {ALL: records}
    keys = records[field]
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    uniq, starts = np.unique(sk, return_index=True)
    bounds: Iterable[int] = list(starts[1:]) + [len(sk)]
    return {int(u): records[order[s:e]] for u, s, e in zip(uniq, starts, bounds, strict=True)}
