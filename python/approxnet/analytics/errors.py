"""The one Python-side exception of :mod:`approxnet.analytics`.

Everything the analytics layer refuses is an :class:`AnalyticsError`, a
subclass of :class:`approxnet.ApproxnetError` (the hierarchy converted from
the Rust error enums in ``crates/py/src/errors.rs``). An MSR outside
[0, 1] stays a :class:`approxnet.JobError`, as it is in the core.
"""

from __future__ import annotations

from .._native import ApproxnetError

__all__ = ["AnalyticsError"]


class AnalyticsError(ApproxnetError):
    """An accuracy request (``emax``, confidence), a data set (empty, wrong
    dtype, NaN) or a query that the analytics layer cannot work with."""
