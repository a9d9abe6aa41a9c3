"""Bounded-loss distributed training in PyTorch over approxnet.

* :func:`bounded_loss_hook` / :class:`BoundedLossState` — a DDP
  communication hook that all-reduces each gradient bucket over approxnet's
  transport between the ranks' own UDP sockets, asynchronously on one
  communication thread per rank; under torchrun
  :meth:`BoundedLossState.from_process_group` finds the ranks' addresses
  (:mod:`.hook`; a runnable recipe: :mod:`.ddp_example`);
* policies: :class:`UniformLoss` (seed 001: one loss bound ``p``, MSR =
  ``1 - p``) and :class:`MagnitudeGroups` (seed 000 §6: gradient groups by
  magnitude, each with its own MSR) (:mod:`.policy`);
* the all-reduce itself, transforms and fills (:mod:`.allreduce`,
  :mod:`.transform`), telemetry (:mod:`.telemetry`), the shard exchange
  (:mod:`.exchange`);
* the ``approxnet train`` experiment: models, data and workers
  (:mod:`.experiment`, :mod:`.worker`), the loss-tolerance sweep
  (:mod:`.tolerance`).

Needs the ``train`` extra (``pip install 'approxnet[train]'``: torch,
scikit-learn).
"""

from __future__ import annotations

from .allreduce import FILLS, allreduce
from .exchange import Exchange, Received
from .hook import BoundedLossState, CommThread, bounded_loss_hook, runtime_config
from .policy import MagnitudeGroups, Policy, UniformLoss
from .telemetry import BucketTelemetry, StepTelemetry
from .transform import TRANSFORMS, make_transform

__all__ = [
    "FILLS",
    "TRANSFORMS",
    "BoundedLossState",
    "BucketTelemetry",
    "CommThread",
    "Exchange",
    "MagnitudeGroups",
    "Policy",
    "Received",
    "StepTelemetry",
    "UniformLoss",
    "allreduce",
    "bounded_loss_hook",
    "make_transform",
    "runtime_config",
]
