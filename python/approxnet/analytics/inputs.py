"""The user's own trips: a CSV or Parquet file, or a pandas / Arrow table,
as the fixed-width records the sources send (:data:`~.taxi.TRIP`).

Columns are found by name, the trip schema's own or the NYC TLC trip
records' (seed 000 §7.2.1 evaluates on those):

========== ========================================= ==========
field      columns tried, in order                   if absent
========== ========================================= ==========
zone       ``zone``, ``PULocationID``                required
hour       ``hour``, else the hour of a pickup time  required
distance   ``distance``, ``trip_distance``           required
fare       ``fare``, ``fare_amount``                 required
passengers ``passengers``, ``passenger_count``       1
t          ``t``, else seconds since the first       row number
           pickup time
========== ========================================= ==========

Pickup times: ``pickup_time``, ``tpep_pickup_datetime``,
``lpep_pickup_datetime``, ``pickup_datetime``. A value that does not fit
its field (a missing fare, zone 0, hour 25, a negative distance) is an
:class:`~.errors.AnalyticsError` naming the column, how many rows and the
first one, never dropped or clamped in silence.

:func:`exact_sql` computes the exact answers of the queries with DuckDB
straight from the file (an engine independent of the estimators and of
this loader), what ``approxnet analytics run --input`` checks the estimate
against when DuckDB is installed (``pip install duckdb``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from .errors import AnalyticsError
from .queries import Count, Mean, MeanBy, Quantile, Query, Sum, TopK
from .sample import ALL
from .taxi import TRIP

__all__ = ["Columns", "exact_sql", "load_input", "read_table", "records_from_frame"]

_NAMES = {
    "zone": ("zone", "PULocationID"),
    "hour": ("hour",),
    "distance": ("distance", "trip_distance"),
    "fare": ("fare", "fare_amount"),
    "passengers": ("passengers", "passenger_count"),
    "t": ("t",),
}
_PICKUP = ("pickup_time", "tpep_pickup_datetime", "lpep_pickup_datetime", "pickup_datetime")
_RANGES = {
    "zone": (1, 65535),
    "hour": (0, 23),
    "passengers": (0, 255),
    "t": (0, 2**32 - 1),
}


@dataclass(frozen=True)
class Columns:
    """Which input column fills each trip field (None: derived or default)."""

    zone: str
    distance: str
    fare: str
    hour: str | None
    pickup: str | None
    passengers: str | None
    t: str | None


def _find(cols: Sequence[str], field: str) -> str | None:
    return next((c for c in _NAMES[field] if c in cols), None)


def columns_of(cols: Sequence[str]) -> Columns:
    """The column mapping for a table with columns ``cols``."""
    found = {f: _find(cols, f) for f in _NAMES}
    pickup = next((c for c in _PICKUP if c in cols), None)
    for f in ("zone", "distance", "fare"):
        if found[f] is None:
            raise AnalyticsError(
                f"input has no {f} column (tried {', '.join(_NAMES[f])}; columns: "
                f"{', '.join(map(str, cols))})"
            )
    if found["hour"] is None and pickup is None:
        raise AnalyticsError(
            f"input has no hour column and no pickup time ({', '.join(_PICKUP)}) to take it from"
        )
    return Columns(
        zone=str(found["zone"]),
        distance=str(found["distance"]),
        fare=str(found["fare"]),
        hour=found["hour"],
        pickup=pickup,
        passengers=found["passengers"],
        t=found["t"],
    )


def _bad(col: str, mask: npt.NDArray[np.bool_], what: str) -> None:
    if mask.any():
        first = int(np.flatnonzero(mask)[0])
        raise AnalyticsError(
            f"column {col!r}: {int(mask.sum())} row(s) {what} (first: row {first})"
        )


def _integers(df: pd.DataFrame, col: str, field: str) -> npt.NDArray[np.int64]:
    v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64)
    _bad(col, ~np.isfinite(v), "missing or not a number")
    _bad(col, v != np.round(v), "not a whole number")
    lo, hi = _RANGES[field]
    _bad(col, (v < lo) | (v > hi), f"outside [{lo}, {hi}] for {field}")
    out: npt.NDArray[np.int64] = v.astype(np.int64)
    return out


def _reals(df: pd.DataFrame, col: str, field: str) -> npt.NDArray[np.float64]:
    v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=np.float64)
    _bad(col, ~np.isfinite(v), "missing or not a number")
    _bad(col, v < 0, f"negative ({field})")
    _bad(col, v > np.finfo(np.float32).max, f"too large for {field}")
    out: npt.NDArray[np.float64] = v
    return out


def records_from_frame(df: Any) -> npt.NDArray[np.void]:
    """A pandas DataFrame (or anything with ``to_pandas()``, e.g. an Arrow
    table) as trip records, sorted by pickup time (stable)."""
    if hasattr(df, "to_pandas") and not isinstance(df, pd.DataFrame):
        df = df.to_pandas()
    if not isinstance(df, pd.DataFrame):
        raise AnalyticsError(f"expected a pandas DataFrame or an Arrow table, got {type(df)!r}")
    if not len(df):
        raise AnalyticsError("input has no rows")
    c = columns_of([str(x) for x in df.columns])
    out = np.empty(len(df), dtype=TRIP)
    out["zone"] = _integers(df, c.zone, "zone")
    out["distance"] = _reals(df, c.distance, "distance")
    out["fare"] = _reals(df, c.fare, "fare")
    out["passengers"] = _integers(df, c.passengers, "passengers") if c.passengers else 1
    pickup = None
    if c.pickup is not None:
        pickup = pd.to_datetime(df[c.pickup], errors="coerce")
        _bad(c.pickup, pickup.isna().to_numpy(), "missing or not a time")
    if c.hour is not None:
        out["hour"] = _integers(df, c.hour, "hour")
    else:
        assert pickup is not None
        out["hour"] = pickup.dt.hour.to_numpy()
    if c.t is not None:
        out["t"] = _integers(df, c.t, "t")
    elif pickup is not None and c.pickup is not None:
        secs = (pickup - pickup.min()).dt.total_seconds().to_numpy()
        _bad(c.pickup, secs > 2**32 - 1, "more than 136 years after the first pickup")
        out["t"] = secs.astype(np.uint32)
    else:
        out["t"] = np.arange(len(df), dtype=np.uint64) % 2**32
    return out[np.argsort(out["t"], kind="stable")]


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A CSV (``.csv``, ``.csv.gz``) or Parquet (``.parquet``, ``.pq``) file
    as a DataFrame (Parquet through pandas' engine, else DuckDB)."""
    p = Path(path)
    if not p.is_file():
        raise AnalyticsError(f"--input {p}: no such file")
    name = p.name.lower()
    if name.endswith((".parquet", ".pq")):
        try:
            return pd.read_parquet(p)
        except ImportError:
            pass
        try:
            import duckdb
        except ImportError:
            raise AnalyticsError(
                f"--input {p}: reading Parquet needs pyarrow or duckdb (pip install duckdb)"
            ) from None
        df: pd.DataFrame = duckdb.read_parquet(str(p)).df()
        return df
    if name.endswith((".csv", ".csv.gz", ".tsv")):
        try:
            return pd.read_csv(p, sep="\t" if name.endswith(".tsv") else ",")
        except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as e:
            raise AnalyticsError(f"--input {p}: not a readable CSV: {e}") from None
    raise AnalyticsError(f"--input {p}: expected .csv, .csv.gz, .tsv, .parquet or .pq")


def load_input(path: str | os.PathLike[str]) -> npt.NDArray[np.void]:
    """The trips of a CSV or Parquet file (:func:`read_table`,
    :func:`records_from_frame`)."""
    return records_from_frame(read_table(path))


# ------------------------------------------------------------- the reference


def _sql_source(path: Path) -> str:
    q = str(path).replace("'", "''")
    if path.name.lower().endswith((".parquet", ".pq")):
        return f"read_parquet('{q}')"
    return f"read_csv_auto('{q}')"


def _ident(c: str) -> str:
    return '"' + c.replace('"', '""') + '"'


def _field_sql(c: Columns, field: str) -> str:
    if field == "hour":
        if c.hour is not None:
            return f"CAST({_ident(c.hour)} AS BIGINT)"
        assert c.pickup is not None
        return f"hour(CAST({_ident(c.pickup)} AS TIMESTAMP))"
    col = {
        "zone": c.zone,
        "distance": c.distance,
        "fare": c.fare,
        "passengers": c.passengers,
        "t": c.t,
    }.get(field)
    if col is None:
        if field == "passengers":
            return "1"
        raise AnalyticsError(f"exact_sql: no column for field {field!r}")
    if field in ("distance", "fare"):
        # the records carry float32 (16-byte rows): the reference reads the same values
        return f"CAST(CAST({_ident(col)} AS FLOAT) AS DOUBLE)"
    return f"CAST({_ident(col)} AS BIGINT)"


def exact_sql(
    path: str | os.PathLike[str], queries: Sequence[Query]
) -> dict[str, dict[int, float]]:
    """Each query's exact answer per key (``ALL`` = -1 for a scalar),
    computed by DuckDB over the file itself: SUM / AVG / COUNT with GROUP
    BY, ORDER BY count for top-k, ``quantile_disc`` (the inverted-CDF
    quantile, as the estimators' point value)."""
    try:
        import duckdb
    except ImportError:
        raise AnalyticsError("exact_sql needs DuckDB (pip install duckdb)") from None
    p = Path(path)
    con = duckdb.connect()
    cols = [str(r[0]) for r in con.execute(f"DESCRIBE SELECT * FROM {_sql_source(p)}").fetchall()]
    c = columns_of(cols)
    src = _sql_source(p)
    out: dict[str, dict[int, float]] = {}

    def rows(sql: str) -> list[tuple[Any, ...]]:
        return con.execute(sql).fetchall()

    for q in queries:
        if isinstance(q, Mean | Sum):
            agg = "AVG" if isinstance(q, Mean) else "SUM"
            ((v,),) = rows(f"SELECT {agg}({_field_sql(c, q.field)}) FROM {src}")
            out[q.name] = {ALL: float(v)}
        elif isinstance(q, MeanBy):
            by, f = _field_sql(c, q.by), _field_sql(c, q.field)
            r = rows(f"SELECT {by} AS k, AVG({f}) FROM {src} GROUP BY k")
            out[q.name] = {int(k): float(v) for k, v in r}
        elif isinstance(q, TopK):
            by = _field_sql(c, q.by)
            sql = f"SELECT {by} AS k, COUNT(*) AS n FROM {src} GROUP BY k ORDER BY n DESC, k"
            out[q.name] = {int(k): float(n) for k, n in rows(f"{sql} LIMIT {int(q.k)}")}
        elif isinstance(q, Count):
            by = _field_sql(c, q.by)
            r = rows(f"SELECT {by} AS k, COUNT(*) FROM {src} GROUP BY k")
            out[q.name] = {int(k): float(v) for k, v in r}
        elif isinstance(q, Quantile):
            f, qq = _field_sql(c, q.field), float(q.q)
            if q.by is None:
                ((v,),) = rows(f"SELECT quantile_disc({f}, {qq}) FROM {src}")
                out[q.name] = {ALL: float(v)}
            else:
                by = _field_sql(c, q.by)
                sql = f"SELECT {by} AS k, quantile_disc({f}, {qq}) FROM {src} GROUP BY k"
                out[q.name] = {int(k): float(v) for k, v in rows(sql)}
        else:
            raise AnalyticsError(f"exact_sql: no SQL for query {q.name!r}")
    con.close()
    return out
