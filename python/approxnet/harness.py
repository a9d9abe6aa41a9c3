"""One job through the deterministic two-endpoint harness, in virtual time.

    >>> import numpy as np, approxnet
    >>> job = approxnet.Job.tensor(np.arange(10_000, dtype=np.float32), p=0.9)
    >>> r = approxnet.harness.transfer(job, loss=0.05, seed=3)
    >>> r.tensor.shape, r.fraction >= 0.9
    ((10000,), True)

Nothing touches a socket or a clock: the same arguments give the same
result, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ._native import (
    Config,
    JobComplete,
    JobReport,
    LinkConfig,
    MessageAbandoned,
    MessageDelivered,
    TensorReady,
)
from ._native import Job as Job
from ._native import transfer as _transfer

__all__ = ["TransferResult", "transfer"]


@dataclass(frozen=True)
class TransferResult:
    """What one harness transfer did."""

    completed: bool
    """Both sides reported the job complete within the time limit."""
    job: int
    """The job id."""
    elapsed_s: float
    """Virtual seconds until the run stopped."""
    datagrams: int
    """Datagrams moved in both directions."""
    sender: JobComplete | None
    """The sender's completion event (``.report`` holds JCT, packets, losses)."""
    receiver: JobComplete | None
    """The receiver's completion event."""
    delivered: list[MessageDelivered]
    """Messages delivered whole, in arrival order."""
    abandoned: list[MessageAbandoned]
    """Messages the sender gave up on."""
    tensor: npt.NDArray[Any] | None
    """For tensor jobs: the received tensor (missing ranges zero-filled), in the sent shape."""
    missing: list[tuple[int, int]]
    """For tensor jobs: missing element ranges ``[start, end)`` of the flat tensor."""
    fraction: float
    """For tensor jobs: fraction of elements received (else delivered messages / sent)."""
    forward: dict[str, int]
    """Counters of the client -> server link."""
    reverse: dict[str, int]
    """Counters of the server -> client link."""
    client_events: list[Any] = field(repr=False)
    """Every event the client saw."""
    server_events: list[Any] = field(repr=False)
    """Every event the server saw."""

    @property
    def report(self) -> JobReport | None:
        """The sender's report, when the job finished with its guarantee."""
        return self.sender.report if self.sender is not None else None

    @property
    def guarantee_held(self) -> bool:
        """Whether the job completed and every group met ``ceil(MSR * N)``."""
        r = self.report
        return self.completed and r is not None and r.guarantee_held


def transfer(
    job: Job,
    *,
    loss: float | None = None,
    delay_us: float | None = None,
    rate_gbps: float | None = None,
    buffer_bytes: int | None = None,
    link: LinkConfig | None = None,
    reverse: LinkConfig | None = None,
    config: Config | None = None,
    server_config: Config | None = None,
    seed: int = 1,
    time_limit_ms: float = 1000.0,
) -> TransferResult:
    """Sends ``job`` from a client endpoint to a server endpoint over a
    virtual link and runs virtual time until both report it complete.

    ``loss``, ``delay_us``, ``rate_gbps`` and ``buffer_bytes`` are shortcuts
    for a forward :class:`LinkConfig` (give either them or ``link``); the
    reverse link defaults to the forward one without loss. Raises
    :class:`~approxnet.JobError` for a job the core refuses and
    :class:`~approxnet.ConfigError` for bad link or endpoint settings.
    """
    shortcuts: dict[str, float | int | None] = {
        "loss": loss,
        "delay_us": delay_us,
        "rate_gbps": rate_gbps,
        "buffer_bytes": buffer_bytes,
    }
    given = sorted(k for k, v in shortcuts.items() if v is not None)
    if link is None:
        link = LinkConfig(
            loss=loss, delay_us=delay_us, rate_gbps=rate_gbps, buffer_bytes=buffer_bytes
        )
    elif given:
        from ._native import ConfigError

        raise ConfigError(f"give either link= or {', '.join(given)}, not both")
    t = _transfer(
        job,
        link=link,
        reverse=reverse,
        config=config,
        server_config=server_config,
        seed=seed,
        time_limit_ms=time_limit_ms,
    )
    delivered = [e for e in t.server_events if isinstance(e, MessageDelivered)]
    abandoned = [e for e in t.server_events if isinstance(e, MessageAbandoned)]
    tensor = None
    missing: list[tuple[int, int]] = []
    ready = [e for e in t.server_events if isinstance(e, TensorReady)]
    if ready:
        ev = ready[0]
        tensor = np.asarray(ev.array(t.dtype or "float32"))
        if job.shape is not None:
            tensor = tensor.reshape(job.shape)
        missing = list(ev.missing)
        fraction = float(ev.fraction)
    else:
        fraction = len(delivered) / len(job) if len(job) else 0.0
    return TransferResult(
        completed=t.completed,
        job=t.job,
        elapsed_s=t.elapsed_ns / 1e9,
        datagrams=t.datagrams,
        sender=t.sender,
        receiver=t.receiver,
        delivered=delivered,
        abandoned=abandoned,
        tensor=tensor,
        missing=missing,
        fraction=fraction,
        forward=dict(t.forward),
        reverse=dict(t.reverse),
        client_events=list(t.client_events),
        server_events=list(t.server_events),
    )
