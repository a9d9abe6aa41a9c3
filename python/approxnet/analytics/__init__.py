"""Approximate analytics over approxnet (seed 000 §3.3 and §6).

Sources send records as messages of approxnet jobs to an aggregator; the
user gives ``emax`` and a confidence level; the aggregator estimates the
error of every answer from the mean and variance of what arrived and asks
for more data (a higher MSR) until every estimate meets ``emax``. One ATP
group per stratum gives stratified sampling (per-key accuracy, seed 000
Fig. 16). Operators: count, sum, mean, quantile, top-k; batch or windowed
streaming (one job per window).

    >>> from approxnet import analytics as an
    >>> data = an.taxi.generate(20_000, seed=1)
    >>> settings = an.Settings(an.Accuracy(0.05), (an.MeanBy("distance", "hour"),),
    ...                        strata_field="hour")
    >>> run = an.run_virtual(an.taxi.partition(data, 2), settings, seed=1)
    >>> run.bound <= 0.05 and run.sent_fraction < 1
    True

See docs/experiments/analytics.md.
"""

from __future__ import annotations

from . import estimators, inputs, taxi
from .accuracy import Accuracy, check_msr, next_fraction
from .errors import AnalyticsError
from .estimators import Estimate
from .inputs import exact_sql, load_input, records_from_frame
from .queries import Count, Mean, MeanBy, Quantile, Query, Sum, TopK, parse_query
from .roles import Aggregator, RoundStat, Settings, Source, WindowResult
from .runner import Run, run_virtual
from .sample import ALL, Sample
from .virtual import Bottleneck, VirtualNet

__all__ = [
    "ALL",
    "Accuracy",
    "Aggregator",
    "AnalyticsError",
    "Bottleneck",
    "Count",
    "Estimate",
    "Mean",
    "MeanBy",
    "Quantile",
    "Query",
    "RoundStat",
    "Run",
    "Sample",
    "Settings",
    "Source",
    "Sum",
    "TopK",
    "VirtualNet",
    "WindowResult",
    "check_msr",
    "estimators",
    "exact_sql",
    "inputs",
    "load_input",
    "next_fraction",
    "parse_query",
    "records_from_frame",
    "run_virtual",
    "taxi",
]
