"""A deterministic, taxi-trip-like data set (no download).

Seed 000 (``000_9eba2c5297757960.txt``) §7.2.1 evaluates on the NYC taxi
trips of 2017-2018 ("Avg of hourly ride distance", "top 15 taxi pickup
locations"). We ship a generator with the same kind of structure instead:

* 263 pickup zones (the number of NYC taxi zones), popularity Zipf-like
  (weight ``1 / (rank + 3)``: the busiest zone ~6 % of trips, the top 15
  ~40 %), a few "nightlife" zones much busier at night;
* an hourly pattern: few trips at 4-5 am, a morning and an evening peak;
* trip distances log-normal, longer at night and early morning, and two
  "airport" zones whose trips are long (12-20 miles);
* fare = base + per-mile price + noise; 1-6 passengers.

The numbers are plausible, not fitted to the real data set. The same
``(n, seed)`` gives the same records, bit for bit.

    >>> t = generate(1000, seed=1)
    >>> len(t), t.dtype.names[:3]
    (1000, ('t', 'zone', 'hour'))
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .errors import AnalyticsError

__all__ = ["TRIP", "ZONES", "generate", "partition"]

TRIP = np.dtype(
    [
        ("t", "<u4"),  # seconds since the start of the data set
        ("zone", "<u2"),  # pickup zone, 1..ZONES
        ("hour", "u1"),  # pickup hour of day, 0..23
        ("passengers", "u1"),
        ("distance", "<f4"),  # miles
        ("fare", "<f4"),  # dollars
    ]
)
"""One trip: 16 bytes, fixed width (a message carries whole records)."""

ZONES = 263
AIRPORTS = (132, 138)  # the zone numbers of JFK and LaGuardia in the real data
# fmt: off
#: Relative trip volume per hour of day (0..23).
HOURLY = np.array(
    [3.0, 2.2, 1.6, 1.1, 0.8, 1.0, 2.2, 3.8, 4.8, 4.9, 4.6, 4.7,
     4.9, 4.9, 5.1, 5.2, 5.1, 5.5, 6.3, 6.4, 5.9, 5.6, 5.3, 4.2]
)
#: Median trip distance (miles) per hour of day: long trips at night.
MEDIAN_MILES = np.array(
    [2.6, 2.7, 2.8, 3.0, 3.6, 3.9, 2.9, 2.2, 2.0, 1.9, 1.9, 1.9,
     1.9, 1.9, 2.0, 2.0, 2.0, 2.0, 1.9, 1.9, 2.1, 2.3, 2.4, 2.5]
)
# fmt: on


def _zone_table() -> npt.NDArray[np.float64]:
    """Pickup weight of each zone (column) per hour (row); fixed, not seeded:
    the same city whatever the seed."""
    rng = np.random.default_rng(263)
    ranks = rng.permutation(ZONES) + 1
    base = 1.0 / (ranks.astype(np.float64) + 3.0)
    night = np.zeros(ZONES, dtype=bool)
    night[rng.choice(ZONES, 12, replace=False)] = True
    for a in AIRPORTS:
        base[a - 1] = 1.0 / 23.0  # airports: as busy as the 20th zone
        night[a - 1] = False
    hours = np.arange(24)
    nightness = np.cos((hours - 1) / 24 * 2 * np.pi) * 0.5 + 0.5  # 1 at 1 am, 0 at 1 pm
    table = np.tile(base, (24, 1))
    table[:, night] *= (0.3 + 3.0 * nightness)[:, None]
    out: npt.NDArray[np.float64] = table / table.sum(axis=1, keepdims=True)
    return out


def generate(n: int, seed: int = 0, days: int = 1) -> npt.NDArray[np.void]:
    """``n`` trips over ``days`` days, sorted by pickup time."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise AnalyticsError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise AnalyticsError(f"days must be an integer >= 1, got {days!r}")
    rng = np.random.default_rng(seed)
    n = int(n)
    hour = rng.choice(24, size=n, p=HOURLY / HOURLY.sum())
    day = rng.integers(0, days, size=n)
    t = (day * 86400 + hour * 3600 + rng.integers(0, 3600, size=n)).astype(np.uint32)
    table = _zone_table()
    zone = np.empty(n, dtype=np.uint16)
    for h in range(24):
        idx = np.flatnonzero(hour == h)
        zone[idx] = rng.choice(ZONES, size=idx.size, p=table[h]) + 1
    dist = rng.lognormal(np.log(MEDIAN_MILES[hour]), 0.75)
    airport = np.isin(zone, AIRPORTS)
    dist[airport] = rng.normal(16.0, 2.5, size=int(airport.sum()))
    dist = np.clip(dist, 0.1, 60.0)
    fare = 3.0 + 2.5 * dist + rng.normal(0.0, 1.5, size=n).clip(-2.5, None)
    passengers = rng.choice(np.arange(1, 7), size=n, p=[0.7, 0.14, 0.05, 0.03, 0.05, 0.03])
    out = np.empty(n, dtype=TRIP)
    out["t"], out["zone"], out["hour"] = t, zone, hour
    out["passengers"], out["distance"], out["fare"] = passengers, dist, fare
    return out[np.argsort(t, kind="stable")]


def partition(records: npt.NDArray[np.void], sources: int) -> list[npt.NDArray[np.void]]:
    """Deals the records out to ``sources`` sources, round robin (each source
    gets every ``sources``-th trip)."""
    if isinstance(sources, bool) or not isinstance(sources, int) or sources < 1:
        raise AnalyticsError(f"sources must be an integer >= 1, got {sources!r}")
    return [records[i::sources] for i in range(sources)]
