"""Seed 004's approximate interconnects: the channel models
(:mod:`.channel`), the application kernels whose every exchanged array
crosses the bit-error channel (:mod:`.kernels`, :mod:`.quality`), and
the execution-time study on the flow-level simulator (:mod:`.study`)."""

from __future__ import annotations

__all__ = ["channel", "kernels", "quality", "study"]
