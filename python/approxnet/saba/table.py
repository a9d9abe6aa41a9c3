"""The sensitivity table (seed 003 §4.1): the profiler's models, one row per
(workload, degree), in SQLite.

Schema (``sensitivity``)::

    workload  TEXT     name of the profiled workload
    degree    INTEGER  k of eq. 1 (1..3)
    c0..c3    REAL     coefficients, lowest power first (0 above the degree)
    r2        REAL     R² on the profiled samples
    samples   TEXT     JSON [[share, slowdown], ...] the fit used
    dataset   TEXT     dataset-size parameter of the profiling runs ('' if none)
    nodes     INTEGER  node count of the profiling runs (0 if unknown)
    source    TEXT     'testbed', 'sim' or 'manual'
    created   TEXT     ISO-8601 UTC time of the fit
    PRIMARY KEY (workload, degree)
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from .errors import TableError
from .model import SensitivityModel, r_squared, validate

__all__ = ["SCHEMA", "Entry", "SensitivityTable"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS sensitivity (
    workload TEXT NOT NULL,
    degree INTEGER NOT NULL CHECK (degree BETWEEN 1 AND 3),
    c0 REAL NOT NULL, c1 REAL NOT NULL, c2 REAL NOT NULL, c3 REAL NOT NULL,
    r2 REAL NOT NULL,
    samples TEXT NOT NULL,
    dataset TEXT NOT NULL DEFAULT '',
    nodes INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'manual',
    created TEXT NOT NULL,
    PRIMARY KEY (workload, degree)
)
"""


@dataclass(frozen=True)
class Entry:
    """One row of the table."""

    workload: str
    model: SensitivityModel
    samples: tuple[tuple[float, float], ...]
    dataset: str = ""
    nodes: int = 0
    source: str = "manual"


class SensitivityTable:
    """The table in one SQLite file (``":memory:"`` for a throwaway one)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute(SCHEMA)
        self._db.commit()

    def close(self) -> None:
        """Closes the file."""
        self._db.close()

    def put(self, entry: Entry) -> None:
        """Stores (or replaces) a workload's model of its degree."""
        if not entry.workload:
            raise TableError("workload name must not be empty")
        validate(entry.model.coeffs)
        c = entry.model.padded()
        self._db.execute(
            "INSERT OR REPLACE INTO sensitivity VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                entry.workload,
                entry.model.degree,
                *c,
                entry.model.r2,
                json.dumps([list(s) for s in entry.samples]),
                entry.dataset,
                entry.nodes,
                entry.source,
                datetime.now(UTC).isoformat(timespec="seconds"),
            ),
        )
        self._db.commit()

    def get(self, workload: str, degree: int = 3) -> Entry:
        """The model of `workload` at `degree`; `TableError` if absent."""
        row = self._db.execute(
            "SELECT degree, c0, c1, c2, c3, r2, samples, dataset, nodes, source "
            "FROM sensitivity WHERE workload = ? AND degree = ?",
            (workload, degree),
        ).fetchone()
        if row is None:
            known = ", ".join(self.workloads()) or "none"
            raise TableError(
                f"no degree-{degree} model of workload {workload!r} (workloads: {known})"
            )
        deg, *rest = row
        coeffs = tuple(float(x) for x in rest[: deg + 1])
        samples = tuple((float(s), float(d)) for s, d in json.loads(rest[5]))
        validate(coeffs)
        model = SensitivityModel(coeffs, float(rest[4]))
        return Entry(workload, model, samples, str(rest[6]), int(rest[7]), str(rest[8]))

    def workloads(self) -> list[str]:
        """Every workload with at least one model, sorted."""
        rows = self._db.execute("SELECT DISTINCT workload FROM sensitivity ORDER BY workload")
        return [r[0] for r in rows]

    def entries(self) -> list[Entry]:
        """Every row, by workload then degree."""
        rows = self._db.execute(
            "SELECT workload, degree FROM sensitivity ORDER BY workload, degree"
        ).fetchall()
        return [self.get(w, d) for w, d in rows]

    def refit_r2(self, workload: str, degree: int, samples: list[tuple[float, float]]) -> float:
        """R² of the stored model on other samples (e.g. a run at another
        dataset size or node count, §4.2)."""
        return r_squared(self.get(workload, degree).model.coeffs, samples)
