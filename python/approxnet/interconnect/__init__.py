"""Seed 004's approximate interconnects: the channel models
(:mod:`.channel`), the bit-error channel between simulated processes
(:mod:`.exchange`), the application kernels whose every exchanged array
crosses it (:mod:`.kernels`), the numerical error of Fig. 5
(:mod:`.quality`), and the execution-time study on the flow-level
simulator (:mod:`.study`)."""

from __future__ import annotations

__all__ = ["channel", "exchange", "kernels", "quality", "study"]
