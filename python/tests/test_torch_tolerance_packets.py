"""Packet-level loss in the x1 sweep (seed 001 loses packets, not values)
and the LSTM model: whole contiguous chunks go, the lost fraction is about
p, the same seed loses the same packets, and the LSTM gives 10 logits."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sklearn")

import torch  # noqa: E402

from approxnet import ConfigError  # noqa: E402
from approxnet.cli import cli  # noqa: E402
from approxnet.torch.experiment import MODELS, TrainSpec, make_model  # noqa: E402
from approxnet.torch.tolerance import ELEMS_PER_PACKET, keep_mask  # noqa: E402


def test_packet_loss_drops_whole_contiguous_chunks_at_rate_p() -> None:
    n, epp, p = 200_003, 362, 0.2
    mask = keep_mask(n, p, np.random.default_rng(7), "packet", epp)
    assert mask.shape == (n,) and mask.dtype == bool
    packets = -(-n // epp)
    padded = np.concatenate([mask, np.repeat(mask[-1], packets * epp - n)])
    chunks = padded.reshape(packets, epp)
    # every packet arrived or was lost whole
    assert np.all(chunks.all(axis=1) | ~chunks.any(axis=1))
    lost = 1.0 - chunks[:, 0].mean()
    assert abs(lost - p) < 4 * np.sqrt(p * (1 - p) / packets)
    # deterministic by seed
    np.testing.assert_array_equal(mask, keep_mask(n, p, np.random.default_rng(7), "packet", epp))
    assert ELEMS_PER_PACKET == 1448 // 4


def test_element_loss_and_edge_cases() -> None:
    rng = np.random.default_rng(0)
    m = keep_mask(100_000, 0.3, rng, "element")
    assert abs((1 - m.mean()) - 0.3) < 0.01
    assert keep_mask(1000, 0.0, rng, "packet").all()
    assert keep_mask(5, 0.5, rng, "packet", 362).shape == (5,)
    with pytest.raises(ConfigError):
        keep_mask(10, 0.1, rng, "byte")
    with pytest.raises(ConfigError):
        keep_mask(10, 0.1, rng, "packet", 0)


def test_lstm_model_builds_and_gives_ten_logits() -> None:
    assert "lstm" in MODELS
    TrainSpec(model="lstm").validate()
    m = make_model("lstm", 0)
    out = m(torch.rand(5, 64))
    assert out.shape == (5, 10)
    # same seed, same weights
    a = torch.cat([t.reshape(-1) for t in m.parameters()])
    b = torch.cat([t.reshape(-1) for t in make_model("lstm", 0).parameters()])
    assert torch.equal(a, b)


def test_tolerance_command_takes_granularity() -> None:
    from click.testing import CliRunner

    r = CliRunner().invoke(
        cli,
        ["train", "tolerance", "--model", "logreg", "--epochs", "1", "--ps", "0,0.5",
         "--seeds", "0", "--target", "0.3", "--granularity", "packet",
         "--elems-per-packet", "16", "-q"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "(packet loss)" in r.output
