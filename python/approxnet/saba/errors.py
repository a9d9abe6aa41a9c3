"""Saba's exceptions: every one a subclass of ``approxnet.SabaError`` (an
``ApproxnetError``), so the CLI and the service report them the same way.

```text
SabaError          (native: a model or allocation instance refused by crates/saba)
├── ModelError     a sensitivity model that is unusable (NaN, rises with bandwidth, bad degree)
├── TableError     the sensitivity table has no such workload / degree
├── StateError     a lifecycle call out of order: unknown app, duplicate, unknown connection
└── TopologyError  a host the topology does not know
```
"""

from __future__ import annotations

from .._native import SabaError

__all__ = ["SabaError", "ModelError", "TableError", "StateError", "TopologyError"]


class ModelError(SabaError):
    """A sensitivity model that the controller cannot use."""


class TableError(SabaError):
    """The sensitivity table lacks the requested entry, or cannot be read."""


class StateError(SabaError):
    """A lifecycle call that does not fit the controller's state."""


class TopologyError(SabaError):
    """A host or port the topology does not know."""
