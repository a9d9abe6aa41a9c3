"""`approxnet analytics run --input`: the user's CSV / Parquet trips (our
schema's column names or the NYC TLC ones) become the records the sources
send, bad values are refused naming the column, and the exact answers the
estimate is checked against come from DuckDB over the file itself — an
engine independent of the estimators — and agree with numpy's."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest
from cli_runner import invoke

from approxnet.analytics import AnalyticsError, inputs, parse_query, taxi
from approxnet.analytics.demo import truths

QUERIES = [
    "mean:distance",
    "sum:fare",
    "mean_by:distance:hour",
    "count:zone",
    "top_k:zone:15",
    "quantile:fare:0.5",
    "quantile:distance:0.9:hour",
]


def tlc_frame(trips: npt.NDArray[np.void]) -> pd.DataFrame:
    """The trips under the NYC TLC column names, with pickup times."""
    start = pd.Timestamp("2018-03-01 00:00:00")
    return pd.DataFrame(
        {
            "tpep_pickup_datetime": (start + pd.to_timedelta(trips["t"], unit="s")).astype(str),
            "PULocationID": trips["zone"].astype(np.int64),
            "passenger_count": trips["passengers"].astype(np.int64),
            "trip_distance": trips["distance"].astype(np.float64),
            "fare_amount": trips["fare"].astype(np.float64),
        }
    )


@pytest.fixture(scope="module")
def trips() -> npt.NDArray[np.void]:
    return taxi.generate(20_000, seed=3)


def test_tlc_columns_load_as_the_same_records(tmp_path: Path, trips: npt.NDArray[np.void]) -> None:
    path = tmp_path / "trips.csv"
    tlc_frame(trips).to_csv(path, index=False)
    got = inputs.load_input(path)
    assert len(got) == len(trips)
    for f in ("zone", "hour", "passengers", "distance", "fare"):
        assert np.array_equal(got[f], trips[f]), f
    # t: seconds since the first pickup
    assert np.array_equal(got["t"], trips["t"] - trips["t"].min())
    # an Arrow-like table (to_pandas) and the schema's own names work too
    own = pd.DataFrame({f: trips[f] for f in ("zone", "hour", "distance", "fare")})

    class Table:
        def to_pandas(self) -> pd.DataFrame:
            return own

    rec = inputs.records_from_frame(Table())
    assert np.array_equal(np.sort(rec["zone"]), np.sort(trips["zone"]))
    assert (rec["passengers"] == 1).all()  # absent: one each


def test_duckdb_answers_equal_numpy_answers(tmp_path: Path, trips: npt.NDArray[np.void]) -> None:
    duckdb = pytest.importorskip("duckdb")
    csv_path = tmp_path / "trips.csv"
    tlc_frame(trips).to_csv(csv_path, index=False)
    pq_path = tmp_path / "trips.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_csv_auto('{csv_path}')) TO '{pq_path}' (FORMAT parquet)")
    qs = [parse_query(q) for q in QUERIES]
    want = truths(trips, qs, None)
    for path in (csv_path, pq_path):
        got = inputs.exact_sql(path, qs)
        for q in qs:
            assert set(got[q.name]) == set(want[q.name]), (path.suffix, q.name)
            for k, v in want[q.name].items():
                assert math.isclose(got[q.name][k], v, rel_tol=1e-9), (path.suffix, q.name, k)
    # the loader reads Parquet too (pandas' engine, else DuckDB)
    assert np.array_equal(inputs.load_input(pq_path)["zone"], trips["zone"])


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda d: d.drop(columns=["fare_amount"]), "no fare column"),
        (lambda d: d.drop(columns=["tpep_pickup_datetime"]), "no hour column"),
        (lambda d: d.assign(PULocationID=0), "'PULocationID': 20000 row(s) outside [1, 65535]"),
        (lambda d: d.assign(fare_amount=d.fare_amount.where(d.index != 7)), "'fare_amount': 1 row"),
        (lambda d: d.assign(trip_distance=-1.0), "'trip_distance': 20000 row(s) negative"),
        (lambda d: d.assign(passenger_count=1.5), "not a whole number"),
        (lambda d: d.assign(tpep_pickup_datetime="soon"), "not a time"),
    ],
)
def test_bad_values_are_refused_naming_the_column(
    trips: npt.NDArray[np.void], change: object, needle: str
) -> None:
    df = change(tlc_frame(trips))  # type: ignore[operator]
    with pytest.raises(AnalyticsError) as e:
        inputs.records_from_frame(df)
    assert needle in str(e.value)


def test_cli_runs_on_the_users_file(tmp_path: Path, trips: npt.NDArray[np.void]) -> None:
    pytest.importorskip("duckdb")
    path = tmp_path / "trips.csv"
    tlc_frame(trips).to_csv(path, index=False)
    r = invoke(
        "analytics", "run", "--input", str(path), "--emax", "0.05",
        "--query", "mean_by:distance:hour", "-q", "--json",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["truth_engine"] == "duckdb" and out["input"] == str(path)
    assert out["summary"]["within"] >= 0.9  # 95 % confidence bounds, 24 hours
    assert 0 < out["summary"]["sent_fraction"] < 1  # it sampled, not shipped everything
    both = invoke("analytics", "run", "--input", str(path), "--records", "5", "-q")
    assert both.exit_code == 2 and "not both" in both.output
    missing = invoke("analytics", "run", "--input", str(tmp_path / "none.csv"), "-q")
    assert missing.exit_code == 2 and "no such file" in missing.output
    numpy_only = invoke("analytics", "run", "--truth", "duckdb", "-n", "1000", "-q")
    assert numpy_only.exit_code == 2 and "give --input" in numpy_only.output
