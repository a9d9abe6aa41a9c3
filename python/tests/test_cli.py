"""The approxnet command line, through click's CliRunner: help with an
example everywhere, one-line errors with non-zero exit codes, real runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import error_line, invoke

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "python" / "approxnet" / "studies" / "netapprox" / "demo.toml")
SHORT = ["--set", "duration_ms=0.5", "--set", "jobs.0.stop_ms=0.3"]


COMMANDS = [
    [],
    ["sim"],
    ["sim", "run"],
    ["sim", "sweep"],
    ["sim", "schemes"],
    ["perf"],
    ["repro"],
    ["testbed"],
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c) or "approxnet")
def test_every_command_has_help_with_an_example(cmd: list[str]) -> None:
    r = invoke(*cmd, "--help")
    assert r.exit_code == 0, r.output
    assert "Example" in r.output


def test_version() -> None:
    r = invoke("--version")
    assert r.exit_code == 0 and "approxnet" in r.output


@pytest.mark.parametrize(
    ("args", "code", "needle"),
    [
        (["nope"], 2, "No such command"),
        (["sim", "run"], 2, "Missing argument"),
        (["sim", "run", "no-such.toml"], 2, "nor a shipped study"),
        (["repro", "fig5", "--only", "bogus"], 1, "has no run 'bogus'"),
        (["repro", "netapprox/demo", "--quick"], 2, "applies to a figure"),
        (["sim", "run", DEMO, "--bogus"], 2, "No such option"),
        (["sim", "run", DEMO, "--set", "novalue"], 2, "KEY=VALUE"),
        (["sim", "run", DEMO, "--set", "jobs.0.msr=2", "-q"], 1, "jobs.0.msr"),
        (["sim", "sweep", DEMO], 2, "--param"),
        (["sim", "sweep", DEMO, "-p", "jobs.0.msr"], 2, "key.path=v1,v2"),
        (["sim", "sweep", DEMO, "-p", "seed=1", "-j", "0"], 2, "workers"),
        (["perf", "bogus-mode"], 2, "bogus-mode"),
        (["perf", "--binary", "/no/such/approxnet-perf", "client"], 1, "approxnet-perf not found"),
        (["repro", "no-such-study"], 1, "no study"),
        (["repro", "demo", "-p", "broken"], 2, "key.path=v1,v2"),
    ],
)
def test_bad_arguments_exit_non_zero_with_one_line(args: list[str], code: int, needle: str) -> None:
    r = invoke(*args)
    assert r.exit_code == code, r.output
    assert needle in error_line(r)


def test_sim_run_writes_records(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    r = invoke("sim", "run", DEMO, "--out", str(out), "-q", *SHORT)
    assert r.exit_code == 0, r.output
    assert "atp-full" in r.output
    for f in ("jobs.csv", "flows.csv", "summary.json", "summary.txt"):
        assert (out / f).is_file(), f


def test_sim_sweep_writes_one_table(tmp_path: Path) -> None:
    r = invoke(
        "sim", "sweep", DEMO, "-p", "jobs.0.msr=0.5,1.0", "-j", "1", "--out", str(tmp_path), *SHORT
    )
    assert r.exit_code == 0, r.output
    table = (tmp_path / "sweep.csv").read_text().splitlines()
    assert table[0].startswith("jobs.0.msr,") and len(table) == 3


def test_sweep_on_ray_without_ray_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    r = invoke("sim", "sweep", DEMO, "-p", "seed=1,2", "--ray", "auto")
    assert r.exit_code == 1
    assert "pip install" in error_line(r)


def test_schemes() -> None:
    r = invoke("sim", "schemes")
    assert r.exit_code == 0 and "atp-full" in r.output and "fbkv" in r.output


def test_repro_lists_the_studies() -> None:
    r = invoke("repro", "--list")
    assert r.exit_code == 0, r.output
    assert "netapprox/demo" in r.output


def test_repro_writes_table_and_plot(tmp_path: Path) -> None:
    r = invoke(
        "repro",
        "netapprox/demo",
        "-p",
        "jobs.0.msr=0.5,1.0",
        "-j",
        "1",
        "--out",
        str(tmp_path),
        *SHORT,
    )
    assert r.exit_code == 0, r.output
    assert (tmp_path / "table.csv").is_file() and (tmp_path / "table.md").is_file()
    png = tmp_path / "plot.png"
    assert png.is_file() and png.read_bytes()[:4] == b"\x89PNG"
    assert len((tmp_path / "table.csv").read_text().splitlines()) == 3


def test_testbed_group_is_mounted() -> None:
    r = invoke("testbed", "--help")
    assert r.exit_code == 0
    for sub in ("up", "down", "status"):
        assert sub in r.output
    r = invoke("testbed", "status", "/no/such/testbed.toml")
    assert r.exit_code != 0
    assert error_line(r)


def test_python_dash_m_entry_point() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "approxnet", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0 and "approxnet" in r.stdout


def test_perf_runs_from_the_package_without_the_binary(tmp_path: Path) -> None:
    # `approxnet perf` uses the native module (python -m approxnet.perf): one
    # job over loopback, server and client, no Rust binary involved.
    import json
    import os
    import socket

    env = {k: v for k, v in os.environ.items() if k != "APPROXNET_PERF"}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cli = [sys.executable, "-m", "approxnet", "perf"]
    server = subprocess.Popen(
        [*cli, "server", "--bind", f"127.0.0.1:{port}", "--jobs", "1", "--idle", "10", "--json"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        client = subprocess.run(
            [*cli, "client", "--server", f"127.0.0.1:{port}", "--jobs", "1", "--messages", "8"]
            + ["--json"],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
        )
        out, _ = server.communicate(timeout=30)
    finally:
        server.kill()
    assert client.returncode == 0, client.stderr
    report = json.loads(client.stdout.strip().splitlines()[-1])
    assert report["jobs_completed"] == 1 and report["bytes_delivered"] == 8 * 65536
    assert json.loads(out.strip().splitlines()[0])["messages_delivered"] == 8
