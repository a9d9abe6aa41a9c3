"""The native bindings: Job / Config / Endpoint objects, typed errors for
bad input (Hypothesis), and real transfers through the virtual-link harness."""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import approxnet
from approxnet import (
    AddressError,
    ApproxnetError,
    Config,
    ConfigError,
    Endpoint,
    Job,
    JobComplete,
    JobError,
    JobSatisfied,
    LinkConfig,
    MessageDelivered,
)

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

bad_msr = st.one_of(
    st.floats(allow_nan=False, allow_infinity=True).filter(lambda x: not 0.0 <= x <= 1.0),
    st.just(math.nan),
)


def test_public_names_exist_and_errors_form_one_hierarchy() -> None:
    for name in approxnet.__all__:
        assert hasattr(approxnet, name), name
    for exc in (
        approxnet.ConfigError,
        approxnet.JobError,
        approxnet.ConnectError,
        approxnet.AddressError,
        approxnet.ScenarioError,
    ):
        assert issubclass(exc, ApproxnetError)
        assert exc.__module__ == "approxnet"
    assert issubclass(ApproxnetError, Exception)


def test_job_builder() -> None:
    job = Job(msr=0.75).group(1, 1.0).message(1, b"meta").synthetic(0, size=100, count=10)
    assert len(job) == 11
    assert [(g.id, g.msr) for g in job.groups] == [(0, 0.75), (1, 1.0)]
    assert job.nbytes == 4 + 1000
    assert not job.is_tensor
    job.validate()
    # redefining a group changes its MSR
    assert [g.msr for g in job.group(0, 0.5).groups] == [0.5, 1.0]


@FAST
@given(msr=bad_msr)
def test_msr_outside_unit_interval_is_a_job_error(msr: float) -> None:
    with pytest.raises(JobError, match="MSR"):
        Job(msr=msr)
    with pytest.raises(JobError, match="MSR"):
        Job(0.5).group(1, msr)
    with pytest.raises(JobError):
        Job.tensor(np.ones(4, dtype=np.float32), p=msr)


def test_a_failed_group_call_leaves_the_job_unchanged() -> None:
    job = Job(0.5).group(1, 1.0)
    with pytest.raises(JobError):
        job.group(2, 7.0)
    assert [(g.id, g.msr) for g in job.groups] == [(0, 0.5), (1, 1.0)]


@FAST
@given(
    dtype=st.sampled_from(
        ["int8", "int16", "int32", "int64", "uint8", "uint32", "bool", "complex64", ">f4", ">f8"]
    ),
    n=st.integers(1, 50),
)
def test_wrong_tensor_dtypes_are_job_errors(dtype: str, n: int) -> None:
    with pytest.raises(JobError, match="dtype"):
        Job.tensor(np.zeros(n, dtype=dtype), p=0.5)


@pytest.mark.parametrize("value", [[1.0, 2.0], (1.0,), b"abcd", 3.0, None, "x"])
def test_non_arrays_are_job_errors(value: object) -> None:
    with pytest.raises(JobError, match="numpy array"):
        Job.tensor(value, p=0.5)  # type: ignore[arg-type]


def test_empty_jobs_are_refused_everywhere() -> None:
    with pytest.raises(JobError, match="at least one message"):
        Job(0.5).validate()
    with pytest.raises(JobError, match="at least one message"):
        approxnet.transfer(Job(0.5))
    ep = Endpoint(seed=1)
    h = ep.connect(0, "10.0.0.2:4433")
    with pytest.raises(JobError):
        ep.send_job(0, h, Job(1.0))
    with pytest.raises(JobError, match="no elements"):
        Job.tensor(np.zeros(0, dtype=np.float32), p=0.5)


@FAST
@given(group=st.one_of(st.integers(max_value=-1), st.integers(min_value=65536)))
def test_group_ids_outside_u16_are_job_errors(group: int) -> None:
    with pytest.raises(JobError, match="group id"):
        Job(0.5).message(group, b"x")
    with pytest.raises(JobError, match="group id"):
        Job(0.5).group(group, 0.5)


def test_message_checks() -> None:
    with pytest.raises(JobError, match="names group 3"):
        Job(0.5).message(3, b"x").validate()
    with pytest.raises(JobError, match="precise prefix"):
        Job(0.5).message(0, b"abc", precise_len=10).validate()
    with pytest.raises(JobError, match=">= 0"):
        Job(0.5).message(0, b"abc", precise_len=-1)
    with pytest.raises(JobError, match=">= 0"):
        Job(0.5).synthetic(0, size=-5)
    with pytest.raises(JobError, match="tensor job"):
        Job.tensor(np.ones(3, dtype=np.float32), 0.5).message(0, b"x")


@FAST
@given(
    field=st.sampled_from(["line_rate_gbps", "initial_rtt_us", "min_rto_us", "idle_timeout_ms"]),
    value=st.one_of(
        st.floats(max_value=0.0, exclude_max=True), st.just(math.nan), st.just(math.inf)
    ),
)
def test_bad_config_values_are_config_errors(field: str, value: float) -> None:
    with pytest.raises(ConfigError):
        kwargs: dict[str, Any] = {field: value}
        Config(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mtu": 10},
        {"mtu": -1},
        {"mtu": 70000},
        {"queues": 0},
        {"queues": 9},
        {"variant": "nope"},
        {"retransmit": "sometimes"},
        {"integrity": "loose"},
        {"rate_gain": 0.0},
        {"rate_start_fraction": 2.0},
        {"reorder_threshold": 0},
    ],
)
def test_config_ranges(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        Config(**kwargs)  # type: ignore[arg-type]


def test_config_defaults_and_values() -> None:
    c = Config(variant="atp-rc", line_rate_gbps=40, queues=4, keep_payloads=False)
    assert (c.variant, c.line_rate_gbps, c.queues, c.keep_payloads) == ("rc", 40.0, 4, False)
    assert Config().mtu == 1472


@FAST
@given(
    p=st.one_of(
        st.floats(max_value=0.0, exclude_max=True),
        st.floats(min_value=1.0, exclude_min=True),
        st.just(math.nan),
    )
)
def test_link_probabilities_are_checked(p: float) -> None:
    with pytest.raises(ConfigError, match="probability"):
        LinkConfig(loss=p)
    with pytest.raises(ConfigError):
        approxnet.transfer(Job(1.0).message(0, b"x"), loss=p)


@pytest.mark.parametrize("addr", ["", "10.0.0.2", "host:99", "1.2.3.4:99999", "::1:80"])
def test_bad_addresses_are_address_errors(addr: str) -> None:
    ep = Endpoint()
    with pytest.raises(AddressError):
        ep.connect(0, addr)
    with pytest.raises(AddressError):
        ep.handle_datagram(0, addr, b"\x00" * 40)


def test_garbage_datagrams_are_dropped_not_raised() -> None:
    ep = Endpoint(seed=3)
    for n in (0, 1, 17, 64, 1500):
        ep.handle_datagram(0, "10.0.0.9:1", bytes(range(256)) * (n // 256) + bytes(n % 256))
    assert ep.poll_event() is None
    assert ep.stats()[2] >= 1


def test_job_through_the_harness_meets_its_msr() -> None:
    job = Job(msr=0.75).group(1, 1.0)
    for i in range(400):
        job.message(0, i.to_bytes(4, "little") * 100)
    for i in range(10):
        job.message(1, b"meta%d" % i)
    r = approxnet.transfer(job, loss=0.1, seed=7)
    assert r.completed and r.guarantee_held
    assert r.report is not None and r.report.lost_packets > 0
    g0, g1 = r.report.groups
    assert g0.delivered >= g0.must_deliver == 300
    assert g1.delivered == g1.messages == 10
    assert r.forward["random_drops"] > 0
    # every delivered payload is the one that was sent
    for e in r.delivered:
        if e.group == 0:
            assert e.payload == e.msg.to_bytes(4, "little") * 100
    assert r.receiver is not None and r.receiver.role == "receiver" and r.receiver.ok


def test_same_seed_same_transfer() -> None:
    job = Job(0.5).synthetic(0, size=1200, count=300)
    a = approxnet.transfer(job, loss=0.2, seed=11)
    b = approxnet.transfer(job, loss=0.2, seed=11)
    assert a.report is not None and b.report is not None
    assert (a.elapsed_s, a.datagrams, a.report.jct_ns) == (
        b.elapsed_s,
        b.datagrams,
        b.report.jct_ns,
    )
    assert [e.msg for e in a.delivered] == [e.msg for e in b.delivered]


def test_tensor_through_the_harness() -> None:
    x = np.random.default_rng(0).standard_normal((60, 250)).astype(np.float32)
    r = approxnet.transfer(Job.tensor(x, p=0.9), loss=0.05, seed=3)
    assert r.completed and r.tensor is not None
    assert r.tensor.shape == x.shape and r.tensor.dtype == np.float32
    assert r.fraction >= 0.9
    flat, got = x.ravel(), r.tensor.ravel()
    mask = np.ones(flat.size, dtype=bool)
    for a, b in r.missing:
        mask[a:b] = False
        assert not got[a:b].any(), "missing ranges are zero-filled"
    np.testing.assert_array_equal(got[mask], flat[mask])
    assert mask.mean() == pytest.approx(r.fraction)


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_lossless_tensor_round_trip(dtype: str) -> None:
    x = np.linspace(-3, 3, 5000).astype(dtype)
    r = approxnet.transfer(Job.tensor(x, p=1.0), seed=1)
    assert r.tensor is not None and r.tensor.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(r.tensor, x)
    assert r.missing == []


def test_protected_tensor_keeps_its_top_bits_through_bit_flips() -> None:
    """Seed 004 §4.1 in a tensor job: the top 16 bits of every float64 are
    the chunks' precise prefix, so flips reach only the other 48."""
    x = np.random.default_rng(4).standard_normal(8000) * 1e3
    link = LinkConfig(bit_flip=0.3)
    r = approxnet.transfer(Job.tensor(x, p=0.9, protect_bits=16), link=link, seed=5)
    assert r.tensor is not None and r.fraction >= 0.9
    mask = np.ones(x.size, dtype=bool)
    for a, b in r.missing:
        mask[a:b] = False
    got, want = r.tensor.view(np.uint64)[mask], x.view(np.uint64)[mask]
    np.testing.assert_array_equal(got >> np.uint64(48), want >> np.uint64(48))
    assert (got != want).any(), "no flip reached an unprotected bit"
    with pytest.raises(JobError, match="protect_bits"):
        Job.tensor(x.astype(np.float32), p=1.0, protect_bits=33)
    with pytest.raises(JobError, match="protect_bits"):
        Job.tensor(x, p=1.0, protect_bits=-1)


def test_non_contiguous_tensor_is_accepted() -> None:
    x = np.arange(400, dtype=np.float64).reshape(20, 20).T
    r = approxnet.transfer(Job.tensor(x, p=1.0), seed=1)
    assert r.tensor is not None
    np.testing.assert_array_equal(r.tensor, x)


def test_two_endpoints_driven_from_python() -> None:
    """The sans-IO loop written in Python: a zero-delay, lossless wire."""
    client, server = Endpoint(seed=1), Endpoint(seed=2)
    caddr, saddr = "10.0.0.1:4433", "10.0.0.2:4433"
    now = 0
    h = client.connect(now, saddr)
    payloads = [bytes([i]) * (500 + 37 * i) for i in range(20)]
    job = Job(1.0)
    for p in payloads:
        job.message(0, p)
    job_id = client.send_job(now, h, job)
    got: list[MessageDelivered] = []
    done = {"client": False, "server": False}
    for _ in range(100_000):
        moved = False
        while (t := client.poll_transmit(now)) is not None:
            assert t.dst == saddr
            server.handle_datagram(now, caddr, t.data)
            moved = True
        while (t := server.poll_transmit(now)) is not None:
            client.handle_datagram(now, saddr, t.data)
            moved = True
        for side, ep in (("client", client), ("server", server)):
            while (e := ep.poll_event()) is not None:
                if isinstance(e, MessageDelivered):
                    got.append(e)
                if isinstance(e, JobComplete) and e.job == job_id:
                    assert e.ok, e.failure
                    done[side] = True
        if all(done.values()):
            break
        if not moved:
            timers = [t for t in (client.poll_timeout(), server.poll_timeout()) if t is not None]
            assert timers, "nothing left to do before the job completed"
            now = max(now, min(timers))
            client.handle_timeout(now)
            server.handle_timeout(now)
    assert all(done.values())
    assert [e.payload for e in got] == payloads  # MSR 1: all of them, in order


def test_endpoint_can_be_used_from_another_thread() -> None:
    ep = Endpoint(seed=1)
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(ep.connect(0, "10.0.0.2:4433")))
    t.start()
    t.join()
    assert len(out) == 1 and ep.connection_count == 1
    assert ep.poll_transmit(0) is not None


@FAST
@given(data=st.binary(max_size=2000))
def test_arbitrary_datagrams_never_raise(data: bytes) -> None:
    ep = Endpoint(seed=9)
    ep.handle_datagram(0, "10.0.0.9:1", data)
    while ep.poll_transmit(0) is not None:
        pass
    while ep.poll_event() is not None:
        pass


def test_precise_prefix_survives_bit_flips_and_strict_mode_retransmits() -> None:
    body = bytes(range(256)) * 4
    job = Job(1.0)
    for _ in range(200):
        job.message(0, body, precise_len=64)
    flips = LinkConfig(bit_flip=0.3, bit_flip_from=200)  # past the header and prefix
    r = approxnet.transfer(job, link=flips, seed=5)
    assert r.guarantee_held and len(r.delivered) == 200
    damaged = [e for e in r.delivered if e.damaged]
    assert damaged, "approximate regions arrive flagged, not dropped"
    assert all(e.payload[:64] == body[:64] for e in r.delivered)
    strict = approxnet.transfer(job, link=flips, config=Config(integrity="strict"), seed=5)
    assert strict.guarantee_held and not any(e.damaged for e in strict.delivered)
    assert strict.report is not None and strict.report.retransmissions > 0
    assert all(e.payload == body for e in strict.delivered)


def test_config_ack_coalescing_and_bundling() -> None:
    c = approxnet.Config(ack_every=8, bundle_bytes=0)
    assert (c.ack_every, c.bundle_bytes) == (8, 0)
    assert approxnet.Config().bundle_bytes == 512
    for bad in ({"ack_every": 0}, {"ack_every": 65}, {"bundle_bytes": -1}):
        with pytest.raises(approxnet.ConfigError):
            approxnet.Config(**bad)  # type: ignore[arg-type]


def _exchange(a: Endpoint, b: Endpoint, now: int) -> list[object]:
    """Moves datagrams both ways until both are quiet; returns b's events."""
    events: list[object] = []
    moved = True
    while moved:
        moved = False
        while (t := a.poll_transmit(now)) is not None:
            b.handle_datagram(now, "10.0.0.1:4433", t.data)
            moved = True
        while (t := b.poll_transmit(now)) is not None:
            a.handle_datagram(now, "10.0.0.2:4433", t.data)
            moved = True
        while (e := b.poll_event()) is not None:
            events.append(e)
    return events


def test_a_streaming_job_stops_at_its_msr() -> None:
    client, server = Endpoint(seed=1), Endpoint(seed=2)
    h = client.connect(0, "10.0.0.2:4433")
    job = client.send_job(0, h, Job(0.5).announce(0, 20).message(0, b"m0"))
    server_events = _exchange(client, server, 0)
    queued = [True]
    for i in range(1, 20):
        now = i * 1_000_000
        queued.append(client.push_message(now, h, job, 0, b"m%d" % i))
        server_events += _exchange(client, server, now)
    # ceil(0.5 * 20) = 10 arrived, the receiver said so, the rest was refused
    assert queued == [True] * 10 + [False] * 10
    assert sum(isinstance(e, JobSatisfied) for e in server_events) == 1
    got = [e for e in server_events if isinstance(e, MessageDelivered)]
    assert sorted(e.payload for e in got) == sorted(b"m%d" % i for i in range(10))
    reports = []
    while (e := client.poll_event()) is not None:
        if isinstance(e, JobComplete) and e.report is not None:
            reports.append(e.report)
    assert len(reports) == 1 and reports[0].guarantee_held
    assert reports[0].unsent_bytes == 0
    with pytest.raises(JobError, match="announced 3 messages"):
        j2 = client.send_job(0, h, Job(1.0).announce(0, 3))
        for _ in range(4):
            client.push_message(0, h, j2, 0, b"x")
    with pytest.raises(JobError):
        Job(1.0).announce(5, 3)
    with pytest.raises(JobError, match="group id"):
        client.push_message(0, h, job, 70_000, b"x")  # checked as Job.message checks it


def test_must_deliver_is_the_cores_rule() -> None:
    # ceil(MSR * N) without float noise (0.1 * 10 is 1.0000000000000002).
    assert approxnet.must_deliver(0.1, 10) == 1
    assert approxnet.must_deliver(0.5, 8) == 4
    assert approxnet.must_deliver(0.125, 10) == 2
    assert approxnet.must_deliver(1.0, 7) == 7
    assert approxnet.must_deliver(0.0, 7) == 0
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(approxnet.JobError, match="MSR"):
            approxnet.must_deliver(bad, 10)
    with pytest.raises(approxnet.JobError, match="n must be"):
        approxnet.must_deliver(0.5, -1)


def test_queue_limits_are_the_cores_rule() -> None:
    # seed 000 §5.2: queues 1..7 hold 7..1 frames, queue 0 the rest.
    assert approxnet.queue_limits(8, 1514, 200_000) == [
        200_000 - 28 * 1514,
        *(k * 1514 for k in range(7, 0, -1)),
    ]
    with pytest.raises(approxnet.ConfigError, match=f"need at least {29 * 1514}"):
        approxnet.queue_limits(8, 1514, 29 * 1514 - 1)
    with pytest.raises(approxnet.ConfigError, match="frame must be >= 0"):
        approxnet.queue_limits(8, -1, 100_000)
