"""Models, data and settings of the training experiment.

Data ships with scikit-learn (``sklearn.datasets.load_digits``: 1797 8x8
digits, no download). The split, the initial weights and every rank's
batches are fixed by the seed, so two runs that differ only in transport
see the same samples in the same order.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from .._native import ConfigError

__all__ = ["DATASETS", "MODELS", "Data", "TrainSpec", "batches", "load_data", "make_model"]

MODELS = ("mlp", "cnn", "logreg", "lstm")
TRANSPORTS = ("approxnet", "gloo")
POLICIES = ("uniform", "groups")


@dataclass(frozen=True)
class Data:
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


DATASETS = ("digits", "synthetic")


def load_data(seed: int = 0, test_fraction: float = 0.2, dataset: str = "digits") -> Data:
    """scikit-learn's digits (or ``synthetic``: a generated 10-class problem
    of the same shape, 1797 samples of 64 features, from
    ``make_classification`` with a fixed generator seed), scaled to [0, 1],
    split by `seed` (stratified)."""
    from sklearn.model_selection import train_test_split

    if dataset == "digits":
        from sklearn.datasets import load_digits

        d = load_digits()
        x = (d.data / 16.0).astype(np.float32)
        y = d.target.astype(np.int64)
    elif dataset == "synthetic":
        from sklearn.datasets import make_classification

        xs, ys = make_classification(
            n_samples=1797, n_features=64, n_informative=24, n_redundant=8, n_classes=10,
            n_clusters_per_class=1, class_sep=1.5, random_state=20,
        )  # fmt: skip
        lo, hi = xs.min(axis=0), xs.max(axis=0)
        x = ((xs - lo) / (hi - lo)).astype(np.float32)
        y = ys.astype(np.int64)
    else:
        raise ConfigError(f"dataset {dataset!r}: one of {', '.join(DATASETS)}")
    xtr, xte, ytr, yte = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y
    )
    return Data(
        torch.from_numpy(xtr), torch.from_numpy(ytr), torch.from_numpy(xte), torch.from_numpy(yte)
    )


class _Cnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 128),
            nn.ReLU(),
            nn.Linear(128, 10),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x.view(-1, 1, 8, 8))  # type: ignore[no-any-return]


class _Lstm(nn.Module):
    """A digit read as a sequence of its 8 rows (8 pixels each): one LSTM
    layer with 64 hidden units, a linear head on the last hidden state."""

    def __init__(self, hidden: int = 64) -> None:
        super().__init__()
        self.rnn = nn.LSTM(input_size=8, hidden_size=hidden, batch_first=True)
        self.head = nn.Linear(hidden, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x.view(-1, 8, 8))
        return self.head(out[:, -1])  # type: ignore[no-any-return]


def make_model(name: str, seed: int) -> nn.Module:
    """`name`: ``mlp`` (64-256-256-10, 85 k parameters), ``cnn`` (two 3x3
    convolutions, 76 k), ``logreg`` (650) or ``lstm`` (rows as a sequence,
    64 hidden units, 19 k); weights from `seed`."""
    torch.manual_seed(seed)
    if name == "mlp":
        return nn.Sequential(
            nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
        )
    if name == "cnn":
        return _Cnn()
    if name == "logreg":
        return nn.Sequential(nn.Linear(64, 10))
    if name == "lstm":
        return _Lstm()
    raise ConfigError(f"model {name!r}: one of {', '.join(MODELS)}")


def batches(n: int, rank: int, world: int, batch: int, epoch: int, seed: int) -> list[np.ndarray]:
    """This rank's sample indices for `epoch`: one shared permutation per
    epoch, dealt round-robin, cut into batches (all ranks get as many)."""
    perm = np.random.default_rng([seed, epoch]).permutation(n)
    per_rank = n // world
    mine = perm[rank * per_rank : (rank + 1) * per_rank]
    steps = per_rank // batch
    return [mine[i * batch : (i + 1) * batch] for i in range(steps)]


@dataclass
class TrainSpec:
    """Everything a worker needs (JSON on its command line)."""

    model: str = "mlp"
    epochs: int = 30
    batch: int = 16
    lr: float = 0.05
    momentum: float = 0.9
    target: float = 0.95
    transport: str = "approxnet"
    policy: str = "uniform"
    loss_bound: float = 0.1
    gather_loss_bound: float | None = None
    fill: str = "rescale"
    transform: str = "permute"
    seed: int = 0
    sync_every: int = 1
    timeout_s: float = 60.0
    line_rate_gbps: float = 10.0
    stop_at_target: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> None:
        """Raises ``ConfigError`` naming the first bad field."""

        def bad(what: str) -> ConfigError:
            return ConfigError(what)

        if self.model not in MODELS:
            raise bad(f"model {self.model!r}: one of {', '.join(MODELS)}")
        if self.transport not in TRANSPORTS:
            raise bad(f"transport {self.transport!r}: one of {', '.join(TRANSPORTS)}")
        if self.policy not in POLICIES:
            raise bad(f"policy {self.policy!r}: one of {', '.join(POLICIES)}")
        if not 1 <= self.epochs <= 10_000:
            raise bad(f"epochs = {self.epochs}: 1..10000")
        if not 1 <= self.batch <= 4096:
            raise bad(f"batch = {self.batch}: 1..4096")
        if not (self.lr > 0 and np.isfinite(self.lr)):
            raise bad(f"lr = {self.lr}: positive")
        if not 0.0 <= self.target <= 1.0:
            raise bad(f"target = {self.target}: an accuracy in [0, 1]")
        for name, v in (
            ("loss_bound", self.loss_bound),
            ("gather_loss_bound", self.gather_loss_bound),
        ):
            if v is not None and not 0.0 <= v < 1.0:
                raise bad(f"{name} = {v}: in [0, 1)")

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> TrainSpec:
        return TrainSpec(**json.loads(text))
