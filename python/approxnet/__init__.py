"""approxnet: an approximate-aware network stack.

Applications say how much of a job they can lose (a minimal sampling rate,
MSR, per group of messages) and approxnet's transport, ATP, uses that slack.
This package is the Python face of the Rust crates:

* :class:`Endpoint`, :class:`Job`, :class:`Config` and the event classes
  wrap the sans-IO protocol core (``approxnet._native``);
* :func:`transfer` (:mod:`approxnet.harness`) runs one job through a
  deterministic lossy virtual link;
* :mod:`approxnet.net` (:class:`SocketEndpoint`) runs it over real UDP sockets;
* :mod:`approxnet.sim` runs simulator scenarios and returns pandas frames;
* the ``approxnet`` command line (:mod:`approxnet.cli`).

    >>> import approxnet
    >>> job = approxnet.Job(msr=0.75).synthetic(0, size=1000, count=100)
    >>> r = approxnet.transfer(job, loss=0.05, seed=1)
    >>> r.completed and r.sender.report.guarantee_held
    True

Every error raised by approxnet is an :class:`ApproxnetError`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._native import (
    Accepted,
    AddressError,
    ApproxnetError,
    Config,
    ConfigError,
    Connected,
    ConnectError,
    ConnectionHandle,
    ConnectionLost,
    Endpoint,
    Epoch,
    Group,
    GroupReport,
    Job,
    JobAnnounced,
    JobComplete,
    JobError,
    JobReport,
    JobSatisfied,
    LinkConfig,
    MessageAbandoned,
    MessageDelivered,
    NetError,
    OtherEvent,
    ScenarioError,
    SocketEndpoint,
    TensorReady,
    TransferError,
    Transmit,
    __version__,
    must_deliver,
    queue_limits,
)

if TYPE_CHECKING:
    from . import harness, net, sim
    from .harness import TransferResult, transfer

__all__ = [
    "Accepted",
    "AddressError",
    "ApproxnetError",
    "Config",
    "ConfigError",
    "ConnectError",
    "Connected",
    "ConnectionHandle",
    "ConnectionLost",
    "Endpoint",
    "Epoch",
    "Group",
    "GroupReport",
    "Job",
    "JobAnnounced",
    "JobSatisfied",
    "JobComplete",
    "JobError",
    "JobReport",
    "LinkConfig",
    "MessageAbandoned",
    "MessageDelivered",
    "NetError",
    "OtherEvent",
    "ScenarioError",
    "SocketEndpoint",
    "TensorReady",
    "TransferError",
    "TransferResult",
    "Transmit",
    "__version__",
    "harness",
    "must_deliver",
    "queue_limits",
    "net",
    "sim",
    "transfer",
]


def __getattr__(name: str) -> Any:
    # The submodules that pull in NumPy / pandas load on first use, so that
    # `import approxnet` stays cheap for the tools run inside testbed hosts
    # (`python -m approxnet.testbed.traffic`: one process per tool).
    if name in ("harness", "net", "sim"):
        return importlib.import_module(f".{name}", __name__)
    if name in ("transfer", "TransferResult"):
        return getattr(importlib.import_module(".harness", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
