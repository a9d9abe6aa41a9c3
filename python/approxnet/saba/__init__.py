"""Saba (seed 003): application-aware bandwidth allocation.

* :mod:`.model` — sensitivity models (eq. 1), fit, R², validation;
* :mod:`.table` — the sensitivity table in SQLite;
* :mod:`.solver` — eq. 2 per port: SLSQP reference, exact Rust solver;
* :mod:`.mapping` — apps -> PLs (K-means), PLs -> queues (hierarchy);
* :mod:`.controller` — the controller's state and reallocation;
* :mod:`.enforce` — enforcement backends (HTB on the testbed, JSON export);
* :mod:`.store`, :mod:`.service`, :mod:`.client` — the HTTP service.
"""

from __future__ import annotations

from .errors import ModelError, SabaError, StateError, TableError, TopologyError
from .model import SHARES, SensitivityModel, fit, r_squared, slowdowns, validate
from .solver import Allocation, default_floors, solve, solve_fast, solve_reference
from .table import Entry, SensitivityTable

__all__ = [
    "SabaError",
    "ModelError",
    "StateError",
    "TableError",
    "TopologyError",
    "SHARES",
    "SensitivityModel",
    "fit",
    "r_squared",
    "slowdowns",
    "validate",
    "Allocation",
    "default_floors",
    "solve",
    "solve_fast",
    "solve_reference",
    "Entry",
    "SensitivityTable",
]
