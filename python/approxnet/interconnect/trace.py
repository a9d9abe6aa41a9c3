"""Communication traces of the real kernels, and skeletons built from them.

A :class:`Tracer` attached to an :class:`~approxnet.interconnect.exchange.
Channel` records every message the kernels of :mod:`~approxnet.interconnect.
kernels` really exchange while they compute (source and destination
process, bytes, approximable or precise) and, as an MPI-level trace would,
the collectives they call as one record (a precise scalar all-reduce). The
kernels mark the end of each exchange round (:meth:`Tracer.step`).
:func:`skeleton` turns a trace into the study's phases, so a recorded run
is simulated by the flow mode like the algorithm-derived skeletons of
:mod:`~approxnet.interconnect.study` (and checks them).

    >>> from approxnet.interconnect import kernels, trace
    >>> from approxnet.interconnect.exchange import Channel
    >>> import numpy as np
    >>> ch = Channel(0.0, None, tracer=trace.Tracer())
    >>> _ = kernels.fft2(np.ones((16, 16), complex), ch, procs=4)
    >>> len(ch.tracer.messages), ch.tracer.steps
    (24, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .study import Comm, Phase

__all__ = ["Collective", "Message", "Tracer", "skeleton"]


@dataclass(frozen=True)
class Message:
    """One point-to-point message of a traced run."""

    step: int
    src: int
    dst: int
    nbytes: int
    approximable: bool


@dataclass(frozen=True)
class Collective:
    """One collective call of a traced run (``kind``: a
    :class:`~approxnet.interconnect.study.Comm` kind)."""

    step: int
    kind: str
    nbytes: int
    approximable: bool


@dataclass
class Tracer:
    """The messages and collectives of one run, in rounds."""

    messages: list[Message] = field(default_factory=list)
    collectives: list[Collective] = field(default_factory=list)
    steps: int = 0
    """Rounds ended so far (the current round's index)."""

    def message(self, src: int, dst: int, nbytes: int, approximable: bool) -> None:
        """Records a message of the current round."""
        if src < 0 or dst < 0 or src == dst:
            raise ValueError(f"trace message {src} -> {dst}: needs two distinct processes")
        self.messages.append(Message(self.steps, src, dst, nbytes, approximable))

    def collective(self, kind: str, nbytes: int, approximable: bool) -> None:
        """Records a collective call as a round of its own."""
        self.step()
        self.collectives.append(Collective(self.steps, kind, nbytes, approximable))
        self.steps += 1

    def step(self) -> None:
        """Ends the current round (a no-op when it is empty)."""
        if any(m.step == self.steps for m in self.messages[-1:]):
            self.steps += 1


def skeleton(tracer: Tracer) -> list[Phase]:
    """The trace as phases, in round order: a round's messages of one size
    and kind as one ``flows`` phase (a round with several sizes becomes
    several phases, one after the other: the flow mode's phase has one
    size), a collective as its phase. No compute phases (a trace of the
    NumPy kernels times nothing the simulator could use)."""
    by_step: dict[int, list[Phase]] = {}
    groups: dict[tuple[int, int, bool], list[tuple[int, int]]] = {}
    for m in tracer.messages:
        groups.setdefault((m.step, m.nbytes, m.approximable), []).append((m.src, m.dst))
    for (step, nbytes, approx), pairs in groups.items():
        by_step.setdefault(step, []).append(Comm("flows", float(nbytes), approx, tuple(pairs)))
    for c in tracer.collectives:
        by_step.setdefault(c.step, []).append(Comm(c.kind, float(c.nbytes), c.approximable))
    return [p for s in sorted(by_step) for p in by_step[s]]
