"""The bit-error channel between simulated processes (seed 004 §4-5).

Every array a kernel exchanges goes through :meth:`Channel.send`: laid out
with its protected bits first (:mod:`approxnet.approx_types`), the precise
prefix at ``protected_ber`` (0: perfectly reliable; the M/4 mapping's
~1.5e-16 if asked), every other bit flipped independently at ``ber`` by
crates/phy's seeded injector. Each message gets its own seed, drawn from
the channel's seed and a message counter, so a run repeats bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .. import approx_types
from . import channel
from .trace import Tracer

__all__ = ["Channel"]


@dataclass
class Channel:
    """A seeded approximate channel; ``level`` is the protection level per
    scalar word (``None``: every array travels precisely)."""

    ber: float
    level: int | None
    seed: int = 1
    protected_ber: float = 0.0
    messages: int = field(default=0, init=False)
    """Messages sent through the channel."""
    bytes: int = field(default=0, init=False)
    """Payload bytes sent through the channel."""
    flips: int = field(default=0, init=False)
    """Bits flipped in them."""
    tracer: Tracer | None = None
    """Records the messages sent with their processes (:mod:`.trace`)."""

    @classmethod
    def for_link(
        cls,
        level: int | None,
        *,
        qam: int = 1024,
        nominal_ber: float = 1e-5,
        mapping: str = "quarter",
        hops: int = 1,
        seed: int = 1,
    ) -> Channel:
        """The channel of a path of ``hops`` ``qam``-QAM links at
        ``nominal_ber`` whose protected bits use ``mapping`` (``"half"``:
        M/2, ``"quarter"``: M/4): both BERs from crates/phy's models
        (seed 004 §4.2.1) and the end-to-end formula of §3.2."""
        protected, _ = channel.mapping_ber(mapping, qam, nominal_ber)
        return cls(
            ber=channel.end_to_end_ber(nominal_ber, hops),
            level=level,
            seed=seed,
            protected_ber=channel.end_to_end_ber(protected, hops),
        )

    def send(
        self, a: npt.NDArray[Any], src: int | None = None, dst: int | None = None
    ) -> npt.NDArray[Any]:
        """The array as the receiver gets it (a new array; ``a`` is left
        alone); ``src`` and ``dst`` name the processes for the tracer."""
        self._trace(a, src, dst, True)
        self.messages += 1
        self.bytes += a.nbytes
        if self.level is None or a.size == 0:
            return a.copy()
        seed = (self.seed * 0x9E3779B97F4A7C15 + self.messages) % 2**64
        out, stats = approx_types.transmit(
            a, self.level, self.ber, seed, protected_ber=self.protected_ber
        )
        self.flips += stats.protected_flips + stats.unprotected_flips
        return out

    def send_precise(
        self, a: npt.NDArray[Any], src: int | None = None, dst: int | None = None
    ) -> npt.NDArray[Any]:
        """A message that travels precisely (control data, scalars)."""
        self._trace(a, src, dst, False)
        self.messages += 1
        self.bytes += a.nbytes
        return np.array(a, copy=True)

    def allreduce_precise(self, a: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """A precise all-reduce of ``a`` (the kernels compute the global
        value; the tracer records the call as a recursive-doubling
        all-reduce)."""
        if self.tracer is not None:
            self.tracer.collective("allreduce_rd", a.nbytes, False)
        return self.send_precise(a)

    def step(self) -> None:
        """Ends an exchange round (for the tracer)."""
        if self.tracer is not None:
            self.tracer.step()

    def _trace(self, a: npt.NDArray[Any], src: int | None, dst: int | None, approx: bool) -> None:
        if self.tracer is not None and src is not None and dst is not None:
            self.tracer.message(src, dst, a.nbytes, approx)
