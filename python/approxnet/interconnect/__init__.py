"""Seed 004's approximate interconnects: the channel models
(:mod:`.channel`), and the application kernels whose every exchanged array
crosses the bit-error channel (:mod:`.kernels`, :mod:`.quality`)."""

from __future__ import annotations

__all__ = ["channel", "kernels", "quality"]
