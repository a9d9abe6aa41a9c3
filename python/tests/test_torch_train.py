"""approxnet.torch: typed errors for bad policy / hook input (Hypothesis),
transforms that invert, the all-reduce over real sockets on 127.0.0.1, a
short DDP training run whose hook really dropped data and still learned,
and the `approxnet train` commands through click's runner."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("torch")
pytest.importorskip("sklearn")

from approxnet import ConfigError, JobError  # noqa: E402
from approxnet.cli import cli  # noqa: E402
from approxnet.torch import (  # noqa: E402
    BoundedLossState,
    Exchange,
    MagnitudeGroups,
    UniformLoss,
    allreduce,
    make_transform,
    runtime_config,
)
from approxnet.torch.exchange import loopback_addresses, run_ranks  # noqa: E402
from approxnet.torch.experiment import TrainSpec  # noqa: E402
from approxnet.torch.launch import run_loopback  # noqa: E402
from approxnet.torch.tolerance import SweepPoint, loss_tolerance_bound  # noqa: E402

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

outside_unit = st.one_of(
    st.floats(allow_nan=False).filter(lambda x: not 0.0 <= x <= 1.0),
    st.just(math.nan),
    st.just(math.inf),
)


@FAST
@given(outside_unit)
def test_msr_or_loss_bound_outside_the_unit_interval_is_a_job_error(x: float) -> None:
    with pytest.raises(JobError):
        UniformLoss(x)
    with pytest.raises(JobError):
        MagnitudeGroups(msrs=(0.0, 0.5, x))


def test_loss_bound_one_and_non_numbers_are_job_errors() -> None:
    for bad in (1.0, "0.1", None, True):
        with pytest.raises(JobError):
            UniformLoss(bad)  # type: ignore[arg-type]
    with pytest.raises(JobError):
        MagnitudeGroups(thresholds=(0.0025, 0.001))  # not increasing
    with pytest.raises(JobError):
        MagnitudeGroups(msrs=(0.5, 0.5))  # 2 thresholds need 3 MSRs
    with pytest.raises(JobError):
        MagnitudeGroups(elements_per_segment=0)


bad_shards = st.one_of(
    st.sampled_from([np.float16, np.float64, np.int32, np.int64, np.uint8, np.complex64]).map(
        lambda t: np.ones(8, dtype=t)
    ),
    st.just(np.zeros(0, np.float32)),
    st.just(np.zeros((2, 3), np.float32)),
    st.lists(st.floats(allow_nan=False), max_size=4),
    st.just(b"\x00\x00\x80\x3f"),
    st.none(),
)


@FAST
@given(bad_shards)
def test_bad_shards_are_job_errors(shard: Any) -> None:
    for policy in (UniformLoss(0.1), MagnitudeGroups()):
        with pytest.raises(JobError):
            policy.job(shard)


@FAST
@given(bad_shards)
def test_the_allreduce_refuses_bad_buckets_before_sending(x: Any) -> None:
    with pytest.raises(JobError):
        allreduce(
            None,  # type: ignore[arg-type]  # never reached
            x, step=0, bucket=0, policy=UniformLoss(0.1), gather_policy=UniformLoss(0.1),
            fill="zero", transform="none", seed=0, previous=None,
        )  # fmt: skip


@FAST
@given(
    st.sampled_from(["none", "permute", "hadamard"]),
    st.integers(1, 5000),
    st.integers(1, 8),
    st.integers(0, 2**32 - 1),
)
def test_transforms_invert_and_split_evenly(kind: str, n: int, world: int, seed: int) -> None:
    x = np.random.default_rng(seed).standard_normal(n).astype(np.float32)
    tf = make_transform(kind, n, world, seed, step=3, bucket=1)
    y = tf.forward(x)
    assert y.size == tf.size and tf.size % world == 0 and tf.size >= n
    np.testing.assert_allclose(tf.inverse(y), x, rtol=1e-4, atol=1e-5)
    # every rank builds the same transform
    np.testing.assert_array_equal(make_transform(kind, n, world, seed, 3, 1).forward(x), y)


def test_bad_names_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        make_transform("fourier", 10, 2, 0, 0, 0)
    with pytest.raises(ConfigError):
        BoundedLossState(0, ["127.0.0.1:1", "127.0.0.1:2"], fill="mean", connect=False)
    with pytest.raises(ConfigError):
        BoundedLossState(0, ["127.0.0.1:1", "127.0.0.1:2"], transform="x", connect=False)
    with pytest.raises(ConfigError):
        BoundedLossState(
            0, ["127.0.0.1:1", "127.0.0.1:2"], fill="previous", transform="hadamard", connect=False
        )
    with pytest.raises(ConfigError):
        BoundedLossState(0, ["127.0.0.1:1"], connect=False)
    with pytest.raises(ConfigError):
        TrainSpec(model="resnet").validate()


def test_tolerance_bound_from_a_sweep() -> None:
    pts = [
        SweepPoint(0.0, [5, 5, 6], [0.96] * 3),
        SweepPoint(0.1, [5, 5, 5], [0.96] * 3),
        SweepPoint(0.2, [5, 6, 6], [0.95] * 3),
        SweepPoint(0.3, [5, 5, 5], [0.95] * 3),  # after a worse point: not counted
    ]
    assert loss_tolerance_bound(pts) == 0.1
    assert loss_tolerance_bound([SweepPoint(0.0, [None], [0.5])]) is None


def _allreduce_all(
    xs: list[np.ndarray], policy: Any, transform: str, fill: str, steps: int = 2
) -> list[tuple[np.ndarray, Any]]:
    addrs = loopback_addresses(len(xs))

    def rank(r: int) -> tuple[np.ndarray, Any]:
        ex = Exchange(r, addrs, config=runtime_config(), seed=1, timeout_s=20.0)
        ex.connect_all()
        for step in range(steps):
            res = allreduce(
                ex, xs[r], step=step, bucket=0, policy=policy, gather_policy=policy,
                fill=fill, transform=transform, seed=5, previous=None,
            )  # fmt: skip
            ex.release()
        ex.close(timeout_s=1.0)
        return res

    return run_ranks(len(xs), rank)


def test_reliable_allreduce_over_sockets_is_the_exact_mean() -> None:
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(30_001).astype(np.float32) for _ in range(3)]
    for r, (res, tel) in enumerate(_allreduce_all(xs, UniformLoss(0.0), "hadamard", "rescale")):
        np.testing.assert_allclose(res, sum(xs) / 3, rtol=1e-4, atol=1e-5)
        assert tel.delivered_fraction == 1.0 and tel.bytes_sent > 0 and tel.seconds > 0
        assert tel.bytes_unsent == 0  # a reliable job sends everything
        assert set(tel.delivered) == {0, 1, 2} - {r}


def test_bounded_loss_allreduce_drops_within_the_bound() -> None:
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(40_000).astype(np.float32) for _ in range(3)]
    mean = sum(xs) / 3
    for res, tel in _allreduce_all(xs, UniformLoss(0.25), "permute", "rescale"):
        assert 0.7 <= tel.delivered_fraction < 1.0  # it really dropped, within p
        assert 0 <= tel.bytes_unsent <= tel.bytes_sent  # what stopping at p saved
        err = np.linalg.norm(res - mean) / np.linalg.norm(mean)
        assert err < 1.0
        assert np.corrcoef(res, mean)[0, 1] > 0.6


def test_magnitude_groups_allreduce_reports_groups() -> None:
    rng = np.random.default_rng(2)
    xs = [(rng.standard_normal(20_000) * 0.002).astype(np.float32) for _ in range(3)]
    for res, tel in _allreduce_all(xs, MagnitudeGroups(), "none", "zero"):
        assert tel.groups and set(tel.groups) <= {0, 1, 2}
        assert res.shape == xs[0].shape


def test_short_training_run_drops_data_and_still_learns() -> None:
    spec = TrainSpec(
        model="mlp", epochs=2, batch=32, lr=0.05, target=0.5, loss_bound=0.2, seed=3,
        transform="permute", fill="rescale", timeout_s=60.0,
    )  # fmt: skip
    seen: list[dict[str, Any]] = []
    res = run_loopback(spec, world=2, progress=seen.append, limit_s=300.0)
    assert [e["epoch"] for e in seen] == [1, 2]
    eps = res["epochs"]
    assert all(e["delivered"] < 1.0 for e in eps)  # the hook really lost data
    assert all(e["delivered"] >= 0.75 for e in eps)  # within the bound (both phases)
    assert eps[-1]["accuracy"] > 0.5  # learned (chance is 0.1)
    assert eps[-1]["test_loss"] < eps[0]["test_loss"] or eps[-1]["accuracy"] >= eps[0]["accuracy"]
    assert res["stats"]["send_datagrams"] > 0
    assert res["ranks"][0]["final_accuracy"] > 0.5


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("cmd", [["train"], ["train", "run"], ["train", "compare"],
                                 ["train", "tolerance"]])  # fmt: skip
def test_train_help_has_an_example(cmd: list[str]) -> None:
    r = invoke(*cmd, "--help")
    assert r.exit_code == 0 and "Example" in r.output


@pytest.mark.parametrize(
    "args",
    [
        ["train", "run", "--epochs", "0"],
        ["train", "run", "-p", "1.0"],
        ["train", "run", "--fill", "mean"],
        ["train", "run", "--transport", "nccl"],
        ["train", "compare", "--mode", "cluster"],
        ["train", "compare", "--also-p", "1.5"],
        ["train", "compare", "--also-p", "0.1/0.2/0.3"],
        ["train", "tolerance", "--ps", "0.1,0.2"],
        ["train", "tolerance", "--ps", "0,x"],
        ["train", "tolerance", "--seeds", "a"],
    ],
)
def test_bad_train_arguments_exit_2_with_one_line(args: list[str]) -> None:
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert len([x for x in r.output.splitlines() if x.startswith("Error:")]) == 1


def test_tolerance_command_runs() -> None:
    r = invoke(
        "train", "tolerance", "--model", "logreg", "--epochs", "2", "--ps", "0,0.5",
        "--seeds", "0", "--target", "0.3", "-q",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "x1 (logreg, target 0.3):" in r.output


def test_train_run_command_writes_its_record(tmp_path: Any) -> None:
    out = tmp_path / "run.json"
    r = invoke(
        "train", "run", "--world", "2", "--epochs", "1", "--batch", "64", "-p", "0.2",
        "--transform", "hadamard", "--fill", "zero", "-q", "--out", str(out),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "approxnet" in r.output
    rec = json.loads(out.read_text())
    assert rec["spec"]["transform"] == "hadamard" and len(rec["epochs"]) == 1
    ep = rec["epochs"][0]
    assert ep["delivered"] < 1.0
    # per-iteration times and the sender reports' packet counts
    assert len(ep["step_s"]) == ep["steps"] == len(ep["comm_step_s"])
    assert all(c <= s for c, s in zip(ep["comm_step_s"], ep["step_s"], strict=True))
    assert ep["packets"] > 0 and 0 <= ep["retransmissions"] <= ep["packets"]
