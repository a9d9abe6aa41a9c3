"""The testbed experiments' scheme runs, without root: scheme names, the
argv each side gets, and the one summary row built from the processes' JSON
(ATP clients / server, kernel-TCP job senders, UDP senders / receivers)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from approxnet.testbed.errors import TestbedError
from approxnet.testbed.schemes import Jobs, Outcome, parse_scheme, summarise, tcp_send_argv


def test_scheme_names_parse_and_bad_ones_name_the_scheme() -> None:
    assert parse_scheme("atp") == ("atp", "", "")
    assert parse_scheme("atp:10") == ("atp", "10", "")
    assert parse_scheme("tcp-bbr-es") == ("tcp", "bbr", "es")
    assert parse_scheme("udp") == ("udp", "", "")
    for bad in ["", "tcp", "tcp-cubic", "tcp-cubic-xx", "tcp--ss", "atp:fast", "quic"]:
        with pytest.raises(TestbedError, match=repr(bad)):
            parse_scheme(bad)


def test_sender_i_gets_its_seeds_and_job_ids() -> None:
    j = Jobs(msr=0.5, messages=8, size=1000, jobs=3, gap="exp:10", seed=5, gap_seed=40)
    argv = tcp_send_argv("10.0.0.1", 7802, "ss", "cubic", j, 2, 30.0)
    opt = {k: argv[i + 1] for i, k in enumerate(argv[:-1]) if k.startswith("--")}
    assert opt["--seed"] == "7" and opt["--gap-seed"] == "42" and opt["--job-base"] == "2000"
    assert opt["--gap-us"] == "exp:10" and opt["--mode"] == "ss" and "--seconds" not in argv
    timed = Jobs(msr=0.5, messages=8, size=1000, jobs=3, seconds=2.0)
    assert "--seconds" in tcp_send_argv("10.0.0.1", 7800, "es", "bbr", timed, 0, 30.0)


def _outcome(scheme: str, j: Jobs, clients: list[Any], receivers: list[Any]) -> Outcome:
    return Outcome(scheme, j, [f"s{i + 1}" for i in range(len(clients))], clients, receivers, [])


def _atp(jobs: int, jct: tuple[float, float, float, float], delivered: int, lost: int) -> Any:
    mean, p50, p99, mx = jct
    return {
        "jobs_completed": jobs,
        "jobs_failed": 0,
        "jct_ms": {"mean": mean, "p50": p50, "p99": p99, "max": mx},
        "elapsed_s": 0.5,
        "groups": [{"messages": 10 * jobs, "must_deliver": 5 * jobs, "delivered": delivered}],
        "packets": 100,
        "lost_packets": lost,
        "retransmissions": lost,
        "bytes_unsent": 2_000_000,
        "production_ms_mean": 3.0,
        "queue_time_fraction": [{"queue": 4, "time_fraction": 1.0}],
        "runtime": {"datagrams_sent": 100, "datagrams_received": 40, "core_drops": {"x": 1}},
    }


def test_atp_row_weights_the_mean_by_jobs_and_checks_the_guarantee() -> None:
    j = Jobs(msr=0.5, messages=10, size=1000, jobs=2)
    a, b = _atp(1, (10.0, 10.0, 10.0, 10.0), 6, 10), _atp(3, (30.0, 20.0, 50.0, 60.0), 15, 60)
    row = summarise(_outcome("atp", j, [a, b], []))
    assert row["jobs_done"] == 4 and row["jct_mean_ms"] == pytest.approx(25.0)
    assert row["jct_p50_ms"] == 15.0 and row["jct_p99_ms"] == 50.0 and row["jct_max_ms"] == 60.0
    assert row["delivered_fraction"] == pytest.approx(21 / 40) and row["loss_ok"]
    assert row["loss"] == pytest.approx(70 / 200) and row["packet_loss_ok"]
    assert row["unsent_MB"] == 4.0 and row["loss_bound"] == 0.5
    assert row["s1_lost_packets"] == 10
    # One group short of its MSR breaks the guarantee; loss above 1 - MSR too.
    short = summarise(_outcome("atp", j, [_atp(1, (1, 1, 1, 1), 4, 60)], []))
    assert not short["loss_ok"] and not short["packet_loss_ok"]


def test_tcp_row_counts_sent_and_unsent_messages() -> None:
    j = Jobs(msr=0.5, messages=4, size=1000, jobs=3)
    jobs = [
        {"t0": 10.0, "jct_s": 0.002, "messages_sent": 2, "bytes_sent": 2040, "produced_s": 0.0},
        {"t0": 10.1, "jct_s": 0.004, "messages_sent": 4, "bytes_sent": 4080, "produced_s": 0.01},
    ]
    row = summarise(_outcome("tcp-cubic-es", j, [{"need": 2, "cc": "cubic", "jobs": jobs}], []))
    assert row["jobs_done"] == 2 and row["jobs_failed"] == 1
    assert row["jct_p50_ms"] == pytest.approx(2.0) and row["jct_max_ms"] == pytest.approx(4.0)
    assert row["makespan_s"] == pytest.approx(0.104)
    assert row["unsent_MB"] == pytest.approx(2000 / 1e6) and row["delivered_fraction"] == 0.5
    assert row["production_ms"] == pytest.approx(5.0) and row["cc"] == "cubic"


T = [1.001, 1.002, 1.003, 1.004, 1.005, 1.006]


def test_udp_row_counts_with_the_cores_msr_rule() -> None:
    # MSR 0.07 of 100 messages: 7 whole messages (the core's count; a plain
    # ceil(0.07 * 100) is 8: 0.07 * 100 = 7.000000000000001 in floating point).
    j = Jobs(msr=0.07, messages=100, size=1000, jobs=2)
    sender = {"frags_per_message": 1, "jobs": [{"job": 0, "t0": 1.0}, {"job": 1, "t0": 2.0}]}
    got = {
        "jobs": {
            "0": {"complete": 7, "datagrams": 7, "complete_at": [1.007, *T[:6]]},
            "1": {"complete": 6, "datagrams": 6, "complete_at": [t + 1 for t in T[:6]]},
        }
    }
    row = summarise(_outcome("udp", j, [sender], [got]))
    assert row["jobs_done"] == 1 and row["jobs_failed"] == 1
    assert row["jct_p50_ms"] == pytest.approx(7.0)  # the 7th whole message of job 0
    assert row["loss"] == pytest.approx(187 / 200) and not row["loss_ok"]
    assert row["error"] == "1 jobs below MSR" and row["delivered_fraction"] == pytest.approx(0.065)
    none = summarise(_outcome("udp", j, [sender], [{"jobs": {}}]))
    assert none["jobs_done"] == 0 and math.isnan(none["jct_p50_ms"])
    # MSR 0: every job is done at its start, whatever arrived.
    zero = summarise(
        _outcome("udp", Jobs(msr=0.0, messages=100, size=1000, jobs=2), [sender], [got])
    )
    assert zero["jobs_done"] == 2 and zero["jct_max_ms"] == 0.0
