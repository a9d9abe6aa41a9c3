"""Tests of the namespace testbed (python/approxnet/testbed).

Config, plan and CLI-error tests need nothing. Tests marked `namespaces`
build real network namespaces: they need root, `ip netns`, tc and ethtool,
and skip with the reason otherwise. Each such testbed is named
`pt<pid><letter>`, removed in a `finally`, and stale ones left by a killed
run (whose pid is gone) are removed when the next run starts. Traffic is
bounded: a few hundred datagrams, every wait has a deadline.
"""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from approxnet import testbed as tbm
from approxnet.testbed import layout, plan
from approxnet.testbed.cli import testbed as cli
from approxnet.testbed.errors import ConfigError
from approxnet.testbed.procs import TRAFFIC

PYTHON_ROOT = Path(tbm.__file__).resolve().parents[2]
EXAMPLES = Path(tbm.__file__).resolve().parent / "examples"

WAIT_S = 10.0
FRAME = 1514


# --------------------------------------------------------------------------
# config validation (no root needed)


def minimal(**testbed: Any) -> dict[str, Any]:
    return {
        "testbed": {"name": "x", **testbed},
        "host": [{"name": "h1", "rate": "1gbit"}, {"name": "h2", "rate": "10gbit"}],
    }


def test_minimal_config_defaults() -> None:
    cfg = tbm.parse(minimal())
    assert cfg.mtu == 1500 and cfg.queues == 8 and cfg.port_buffer == 256 * 1024
    assert cfg.switches == ("sw",)
    assert [h.rate_bps for h in cfg.hosts] == [10**9, 10**10]
    assert cfg.namespace("h1") == "anx-x-h1"


def test_queue_limits_follow_seed_000_section_5_2() -> None:
    cfg = tbm.parse(minimal(port_buffer=100_000))
    limits = layout.queue_limits(cfg)
    assert limits[1:] == tuple((8 - q) * FRAME for q in range(1, 8))
    assert limits[7] == FRAME  # the lowest priority holds one MTU frame
    assert limits[0] == 100_000 - 28 * FRAME  # queue 0 holds the rest


def test_queue_limits_with_four_queues() -> None:
    cfg = tbm.parse(minimal(queues=4, port_buffer=20_000))
    assert layout.queue_limits(cfg) == (20_000 - 6 * FRAME, 3 * FRAME, 2 * FRAME, FRAME)


@pytest.mark.parametrize(
    ("doc", "key"),
    [
        ({"host": [{"name": "h1", "rate": "1gbit"}]}, "testbed"),
        ({"testbed": {}, "host": [{"name": "h1", "rate": "1gbit"}]}, "testbed.name"),
        (
            {"testbed": {"name": "Bad-Name"}, "host": [{"name": "h1", "rate": "1gbit"}]},
            "testbed.name",
        ),
        (
            {"testbed": {"name": "x", "mtu": 100}, "host": [{"name": "h1", "rate": "1g"}]},
            "testbed.mtu",
        ),
        (
            {"testbed": {"name": "x", "queues": 9}, "host": [{"name": "h1", "rate": "1gbit"}]},
            "testbed.queues",
        ),
        (
            {
                "testbed": {"name": "x", "port_buffer": "10KiB"},
                "host": [{"name": "h1", "rate": "1gbit"}],
            },
            "testbed.port_buffer",
        ),
        (
            {"testbed": {"name": "x", "colour": 1}, "host": [{"name": "h1", "rate": "1gbit"}]},
            "testbed.colour",
        ),
        ({"testbed": {"name": "x"}}, "host"),
        ({"testbed": {"name": "x"}, "host": [{"name": "h1"}]}, "host[0].rate"),
        ({"testbed": {"name": "x"}, "host": [{"name": "h1", "rat": "1gbit"}]}, "host[0].rat"),
        ({"testbed": {"name": "x"}, "host": [{"name": "h1", "rate": "-1gbit"}]}, "host[0].rate"),
        ({"testbed": {"name": "x"}, "host": [{"name": "h1", "rate": "1 furlong"}]}, "host[0].rate"),
        (
            {"testbed": {"name": "x"}, "host": [{"name": "h1", "rate": "1gbit", "loss": 1.5}]},
            "host[0].loss",
        ),
        (
            {"testbed": {"name": "x"}, "host": [{"name": "h1", "rate": "1gbit", "loss": "some"}]},
            "host[0].loss",
        ),
        ({"testbed": {"name": "x"}, "host": [{"name": "lo", "rate": "1gbit"}]}, "host[0].name"),
        (
            {"testbed": {"name": "x"}, "host": [{"name": "h1", "rate": "1gbit", "switch": "nope"}]},
            "host[0].switch",
        ),
        (
            {
                "testbed": {"name": "x"},
                "host": [{"name": "h1", "rate": "1gbit"}, {"name": "h1", "rate": "1gbit"}],
            },
            "host.name",
        ),
        (
            {
                "testbed": {"name": "x"},
                "switch": [{"name": "a"}, {"name": "b"}],
                "host": [{"name": "h1", "rate": "1gbit"}],
            },
            "host[0].switch",
        ),
        (
            {
                "testbed": {"name": "x"},
                "switch": [{"name": "a"}, {"name": "b"}],
                "host": [{"name": "h1", "switch": "a", "rate": "1gbit"}],
            },
            "trunk",
        ),
        (
            {
                "testbed": {"name": "x"},
                "switch": [{"name": "a"}, {"name": "b"}],
                "host": [{"name": "h1", "switch": "a", "rate": "1gbit"}],
                "trunk": [
                    {"between": ["a", "b"], "rate": "1gbit"},
                    {"between": ["b", "a"], "rate": "1gbit"},
                ],
            },
            "trunk[1].between",
        ),
        (
            {
                "testbed": {"name": "x"},
                "switch": [{"name": "a"}],
                "host": [{"name": "h1", "rate": "1gbit"}],
                "trunk": [{"between": ["a"], "rate": "1gbit"}],
            },
            "trunk[0].between",
        ),
    ],
)
def test_bad_config_names_the_key(doc: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        tbm.parse(doc)
    assert err.value.key == key
    assert "\n" not in str(err.value)


def test_invalid_toml_file_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[testbed\nname = 1\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        tbm.load(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        tbm.load(tmp_path / "missing.toml")


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.toml")), ids=lambda p: p.name)
def test_examples_are_valid(example: Path) -> None:
    tbm.load(example)


def test_dumbbell_plan_routes_and_queues() -> None:
    cfg = tbm.load(EXAMPLES / "dumbbell.toml")
    routes = {(r.switch, r.subnet): (r.via, r.dev) for r in layout.routes(cfg)}
    assert routes[("left", "10.77.3.0/24")] == ("10.77.200.2", "right")
    assert routes[("right", "10.77.1.0/24")] == ("10.77.200.1", "left")
    assert ("left", "10.77.1.0/24") not in routes
    lines = [" ".join(s.argv) for s in plan.build(cfg)]
    trunk = [
        line for line in lines if line.startswith("tc -n anx-dumbbell-left") and "dev right" in line
    ]
    assert any("classid 1:1 htb rate 1000000000bit ceil 1000000000bit" in line for line in trunk)
    assert any("match ip tos 0xe0 0xfc flowid 1:17" in line for line in trunk)
    assert any("parent 1:17 handle 17: bfifo limit 1514" in line for line in trunk)
    assert sum("prio" in line and "class add" in line for line in trunk) == 8


def test_loss_script_only_for_lossy_ports() -> None:
    cfg = tbm.load(EXAMPLES / "star.toml")
    script = plan.loss_script(cfg, "sw")
    assert script is not None
    assert 'oifname "h2" numgen random mod 1000000 < 10000' in script
    assert 'iifname "h2"' in script and '"h1"' not in script


# --------------------------------------------------------------------------
# CLI (no root needed for these)


def test_cli_bad_toml_is_one_line_and_nonzero(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[testbed]\nname = "x"\n[[host]]\nname = "h1"\nrate = "fast"\n')
    for command in ("up", "status", "plan", "down"):
        result = CliRunner().invoke(cli, [command, str(bad)])
        assert result.exit_code == 1, (command, result.output)
        assert result.output.strip().startswith("Error: host[0].rate:"), result.output
        assert len(result.output.strip().splitlines()) == 1
        assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize("command", ["up", "down", "status", "plan", "exec"])
def test_cli_help_has_an_example(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.output and "python -m approxnet.testbed" in result.output


def test_cli_plan_prints_commands() -> None:
    result = CliRunner().invoke(cli, ["plan", str(EXAMPLES / "star.toml")])
    assert result.exit_code == 0
    assert "ip netns add anx-star-sw" in result.output
    assert "nft -f -" in result.output


# --------------------------------------------------------------------------
# real namespaces


def _namespaces_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root to create network namespaces"
    for tool in ("ip", "tc", "ethtool"):
        if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None:
            return f"{tool} not installed (scripts/install-testbed-deps.sh)"
    try:
        done = subprocess.run(["ip", "netns", "list"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`ip netns` unavailable: {exc}"
    if done.returncode != 0:
        return f"`ip netns` unavailable: {done.stderr.decode().strip()}"
    return None


_SKIP = _namespaces_unavailable()
namespaces = pytest.mark.skipif(_SKIP is not None, reason=_SKIP or "")
needs_nft = pytest.mark.skipif(
    shutil.which("nft", path="/usr/sbin:/sbin:/usr/bin") is None,
    reason="nft not installed (scripts/install-testbed-deps.sh)",
)


def _testbed_name(letter: str) -> str:
    return f"pt{os.getpid()}{letter}"


def _remove_stale_test_testbeds() -> None:
    """Remove `anx-pt<pid>?-*` left by a test run that was killed."""
    for ns in tbm.list_namespaces("anx-pt"):
        match = re.match(r"^anx-(pt(\d+)[a-z])-", ns)
        if match and not Path(f"/proc/{match.group(2)}").exists():
            tbm.down(match.group(1))


def _star(letter: str, loss: float = 0.5) -> tbm.Config:
    return tbm.parse(
        {
            "testbed": {"name": _testbed_name(letter), "port_buffer": "128KiB"},
            "host": [
                {"name": "a", "rate": "10gbit"},
                {"name": "b", "rate": "10gbit"},
                {"name": "slow", "rate": "10mbit"},
                {"name": "mid", "rate": "100mbit"},
                {"name": "lossy", "rate": "10gbit", "loss": loss},
            ],
        }
    )


@pytest.fixture(scope="module")
def star() -> Iterator[tbm.Testbed]:
    if _SKIP is not None:
        pytest.skip(_SKIP)
    _remove_stale_test_testbeds()
    cfg = (
        _star("a", loss=0.5)
        if shutil.which("nft", path="/usr/sbin:/sbin:/usr/bin")
        else _star("a", 0.0)
    )
    try:
        yield tbm.up(cfg)
    finally:
        tbm.down(cfg.name)
        assert tbm.list_namespaces(cfg.prefix) == []


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(PYTHON_ROOT)}


def _start_receiver(tb: tbm.Testbed, host: str, port: int, count: int) -> subprocess.Popen[str]:
    argv = [
        *TRAFFIC,
        "udp-recv",
        "--port",
        str(port),
        "--count",
        str(count),
        "--timeout",
        "10",
        "--idle",
        "0.5",
    ]
    proc: subprocess.Popen[str] = tb.exec(host, argv, stdout=subprocess.PIPE, text=True, env=_env())
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], WAIT_S)
    if not ready or proc.stdout.readline().strip() != "ready":
        proc.kill()
        proc.wait()
        pytest.fail(f"receiver in {host} did not start within {WAIT_S} s")
    return proc


def _udp(
    tb: tbm.Testbed, src: str, dst: str, count: int, tos: int, port: int = 5000
) -> tuple[int, int]:
    """Send `count` full-size datagrams src -> dst; return (sent, received)."""
    receiver = _start_receiver(tb, dst, port, count)
    try:
        argv = [
            *TRAFFIC,
            "udp-send",
            "--dst",
            tb.address(dst),
            "--port",
            str(port),
            "--count",
            str(count),
            "--tos",
            hex(tos),
        ]
        done = tb.run(src, argv, timeout=WAIT_S, capture_output=True, text=True, env=_env())
        assert done.returncode == 0, done.stderr
        sent = json.loads(done.stdout.splitlines()[-1])
        out, _ = receiver.communicate(timeout=WAIT_S + 5)
        return sent["sent"], json.loads(out.splitlines()[-1])["received"]
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.wait()


def _settled(tb: tbm.Testbed) -> tbm.Status:
    """Status once every queue has drained (polled, with a deadline)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        status = tb.status()
        if all(q.backlog_packets == 0 for q in status.queues):
            return status
        if time.monotonic() > deadline:
            pytest.fail("switch queues did not drain")
        time.sleep(0.01)


def _delta(before: tbm.Status, after: tbm.Status, port: str) -> dict[int, tuple[int, int]]:
    """queue -> (sent packets, dropped) on `port` between two snapshots."""
    return {
        q: (
            after.queue(port, q).sent_packets - before.queue(port, q).sent_packets,
            after.queue(port, q).dropped - before.queue(port, q).dropped,
        )
        for q in range(8)
    }


@namespaces
def test_up_creates_prefixed_namespaces(star: tbm.Testbed) -> None:
    names = tbm.list_namespaces(star.config.prefix)
    assert names == sorted(star.namespace(n) for n in ("sw", "a", "b", "slow", "mid", "lossy"))
    assert tbm.is_up(star.config)
    assert len(star.status().queues) == 5 * 8


@namespaces
@pytest.mark.parametrize("tos", [0x20, 0x23, 0x80, 0xE0], ids=["q1", "q1-ecn", "q4", "q7"])
def test_dscp_selects_priority_queue(star: tbm.Testbed, tos: int) -> None:
    queue = tos >> 5
    before = _settled(star)
    sent, received = _udp(star, "a", "b", 300, tos)
    delta = _delta(before, _settled(star), "b")
    assert sent == 300
    assert delta[queue][0] + delta[queue][1] == 300
    assert delta[queue][0] == received
    assert all(delta[q] == (0, 0) for q in range(8) if q != queue), delta


@namespaces
def test_dscp_zero_lands_in_queue_zero(star: tbm.Testbed) -> None:
    before = _settled(star)
    sent, received = _udp(star, "a", "b", 300, 0x00)
    delta = _delta(before, _settled(star), "b")
    assert sent == received == 300
    assert delta[0] == (300, 0)
    assert all(delta[q] == (0, 0) for q in range(1, 8)), delta


@namespaces
def test_unlisted_dscp_is_treated_as_non_approximate(star: tbm.Testbed) -> None:
    before = _settled(star)
    _udp(star, "a", "b", 50, 0xB8)  # DSCP 46 (EF) is not a queue codepoint
    delta = _delta(before, _settled(star), "b")
    assert delta[0] == (50, 0)


@namespaces
def test_one_mtu_queue_drops_a_burst(star: tbm.Testbed) -> None:
    before = _settled(star)
    sent, received = _udp(star, "a", "slow", 200, 7 << 5)
    after = _settled(star)
    delta = _delta(before, after, "slow")
    q7_sent, q7_dropped = delta[7]
    assert after.queue("slow", 7).limit_bytes == FRAME
    assert q7_sent >= 1, "a full-size frame must fit a 1-MTU queue"
    assert q7_dropped > 100, delta
    assert q7_sent + q7_dropped == sent == 200
    assert received == q7_sent


@namespaces
def test_higher_priority_is_served_first(star: tbm.Testbed) -> None:
    """Two equal bursts into the 100 Mbit port: queue 1 beats queue 6."""
    before = _settled(star)
    receivers = [_start_receiver(star, "mid", port, 1000) for port in (5001, 5002)]
    try:
        script = (
            "import socket\n"
            "s1 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "s6 = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "s1.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 1 << 5)\n"
            "s6.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 6 << 5)\n"
            "p = bytes(1472)\n"
            "for _ in range(1000):\n"
            f"    s6.sendto(p, ('{star.address('mid')}', 5002))\n"
            f"    s1.sendto(p, ('{star.address('mid')}', 5001))\n"
        )
        done = star.run(
            "a", [sys.executable, "-c", script], timeout=WAIT_S, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    finally:
        for r in receivers:
            r.communicate(timeout=WAIT_S + 5)
    delta = _delta(before, _settled(star), "mid")
    (q1_sent, q1_dropped), (q6_sent, q6_dropped) = delta[1], delta[6]
    assert q1_sent + q1_dropped == 1000 and q6_sent + q6_dropped == 1000
    assert q1_sent > 2 * q6_sent, delta


@namespaces
@needs_nft
def test_random_loss_on_a_link(star: tbm.Testbed) -> None:
    before = _settled(star)
    sent, received = _udp(star, "a", "lossy", 400, 0x00)
    after = _settled(star)
    dropped = after.loss_drops[("sw", "lossy")] - before.loss_drops.get(("sw", "lossy"), 0)
    assert sent == 400
    assert dropped + received == 400
    assert 100 < dropped < 300  # binomial(400, 0.5): mean 200, sd 10
    assert _delta(before, after, "lossy")[0] == (received, 0)


@namespaces
def test_status_cli_table_and_json(star: tbm.Testbed, tmp_path: Path) -> None:
    path = tmp_path / "star.toml"
    path.write_text(
        f'[testbed]\nname = "{star.config.name}"\nport_buffer = "128KiB"\n'
        + "".join(
            f'[[host]]\nname = "{h.name}"\nrate = {h.rate_bps}\nloss = {h.loss}\n'
            for h in star.config.hosts
        )
    )
    table = CliRunner().invoke(cli, ["status", str(path)])
    assert table.exit_code == 0, table.output
    assert table.output.splitlines()[0].split()[:3] == ["switch", "port", "q"]
    as_json = CliRunner().invoke(cli, ["status", str(path), "--json"])
    assert as_json.exit_code == 0
    assert len(json.loads(as_json.output)["queues"]) == 5 * 8


@namespaces
def test_up_is_idempotent_and_down_cleans_partial_state() -> None:
    _remove_stale_test_testbeds()
    cfg = tbm.parse(
        {"testbed": {"name": _testbed_name("b")}, "host": [{"name": "h1", "rate": "1gbit"}]}
    )
    junk = f"{cfg.prefix}junk"
    try:
        subprocess.run(["ip", "netns", "add", cfg.namespace("sw")], check=True)  # a crashed half-up
        subprocess.run(["ip", "netns", "add", junk], check=True)
        tbm.up(cfg)
        assert junk not in tbm.list_namespaces(cfg.prefix)  # up cleaned first
        tb = tbm.up(cfg)  # a second up replaces the first
        assert tbm.list_namespaces(cfg.prefix) == [cfg.namespace("h1"), cfg.namespace("sw")]
        sleep = "import time; print('ready', flush=True); time.sleep(60)"
        sleeper = tb.exec("h1", [sys.executable, "-c", sleep], stdout=subprocess.PIPE, text=True)
        try:
            assert sleeper.stdout is not None
            assert select.select([sleeper.stdout], [], [], WAIT_S)[0], "sleeper did not start"
            assert sleeper.stdout.readline().strip() == "ready"
            assert sorted(tbm.down(cfg.name)) == [cfg.namespace("h1"), cfg.namespace("sw")]
            assert sleeper.wait(timeout=WAIT_S) != 0  # down ended it
        finally:
            if sleeper.poll() is None:
                sleeper.kill()
                sleeper.wait()
        assert tbm.list_namespaces(cfg.prefix) == []
        assert tbm.down(cfg.name) == []  # down twice is fine
    finally:
        tbm.down(cfg.name)
        assert tbm.list_namespaces(cfg.prefix) == []


@namespaces
def test_failed_up_leaves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tbm.parse(
        {"testbed": {"name": _testbed_name("c")}, "host": [{"name": "h1", "rate": "1gbit"}]}
    )
    real_build = plan.build

    def broken(config: tbm.Config, link_binary: str = "approxnet-link") -> list[plan.Step]:
        return [
            *real_build(config, link_binary)[:5],
            plan.Step(("ip", "-n", config.namespace("h1"), "link", "set", "nosuchdev", "up")),
        ]

    monkeypatch.setattr(plan, "build", broken)
    try:
        with pytest.raises(tbm.TestbedError):
            tbm.up(cfg)
        assert tbm.list_namespaces(cfg.prefix) == []
    finally:
        tbm.down(cfg.name)


@namespaces
def test_context_manager_downs_on_error() -> None:
    cfg = tbm.parse(
        {"testbed": {"name": _testbed_name("d")}, "host": [{"name": "h1", "rate": "1gbit"}]}
    )
    try:
        with pytest.raises(RuntimeError), tbm.up(cfg):
            assert tbm.is_up(cfg)
            raise RuntimeError("experiment failed")
        assert tbm.list_namespaces(cfg.prefix) == []
    finally:
        tbm.down(cfg.name)


@namespaces
def test_two_switches_route_through_the_trunk() -> None:
    cfg = tbm.parse(
        {
            "testbed": {"name": _testbed_name("e")},
            "switch": [{"name": "s1"}, {"name": "s2"}],
            "host": [
                {"name": "h1", "switch": "s1", "rate": "10gbit"},
                {"name": "h2", "switch": "s2", "rate": "10gbit"},
            ],
            "trunk": [{"between": ["s1", "s2"], "rate": "10gbit"}],
        }
    )
    try:
        tb = tbm.up(cfg)
        before = _settled(tb)
        sent, received = _udp(tb, "h1", "h2", 100, 2 << 5)
        after = _settled(tb)
        assert sent == received == 100
        for switch, port in (("s1", "s2"), ("s2", "h2")):
            b, a = before.queue(port, 2, switch), after.queue(port, 2, switch)
            assert (a.sent_packets - b.sent_packets, a.dropped - b.dropped) == (100, 0)
    finally:
        tbm.down(cfg.name)
        assert tbm.list_namespaces(cfg.prefix) == []


@namespaces
def test_status_and_exec_of_a_testbed_that_is_not_up(tmp_path: Path) -> None:
    path = tmp_path / "gone.toml"
    path.write_text(
        f'[testbed]\nname = "{_testbed_name("f")}"\n[[host]]\nname = "h1"\nrate = "1gbit"\n'
    )
    for argv in (["status", str(path)], ["exec", str(path), "h1", "--", "true"]):
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code == 1, result.output
        assert "is not up" in result.output


def test_burst_ms_sets_htb_cburst() -> None:
    cfg = tbm.parse(minimal(burst_ms=4))
    lines = [" ".join(s.argv) for s in plan.build(cfg)]
    assert any("dev h1 parent 1: classid 1:1 htb rate 1000000000bit" in x for x in lines)
    assert any("dev h1" in x and "cburst 500000" in x for x in lines)  # 4 ms of 1 Gbit/s
    with pytest.raises(ConfigError) as err:
        tbm.parse(minimal(burst_ms=0))
    assert err.value.key == "testbed.burst_ms"


@namespaces
def test_cli_up_exec_down(tmp_path: Path) -> None:
    name = _testbed_name("g")
    path = tmp_path / "one.toml"
    path.write_text(f'[testbed]\nname = "{name}"\n[[host]]\nname = "h1"\nrate = "1gbit"\n')
    try:
        result = CliRunner().invoke(cli, ["up", str(path)])
        assert result.exit_code == 0, result.output
        assert f"testbed {name} up" in result.output and "h1=10.77.1.2" in result.output
        argv = ["exec", str(path), "h1", "--", "ip", "-br", "addr"]
        done = subprocess.run(
            [sys.executable, "-m", "approxnet.testbed", *argv],
            capture_output=True, text=True, timeout=WAIT_S, env=_env(), check=False,
        )  # fmt: skip
        assert done.returncode == 0 and "10.77.1.2/24" in done.stdout, done.stderr
        result = CliRunner().invoke(cli, ["down", name])
        assert result.exit_code == 0 and "removed 2 namespaces" in result.output
    finally:
        tbm.down(name)
        assert tbm.list_namespaces(tbm.config.namespace_prefix(name)) == []


# --------------------------------------------------------------------------
# wireless access links (approxnet-link, seed 002)


def _wireless_doc(name: str, wireless: dict[str, Any]) -> dict[str, Any]:
    return {
        "testbed": {"name": name},
        "host": [
            {"name": "a", "rate": "100mbit"},
            {"name": "w", "rate": "100mbit", "wireless": wireless},
        ],
    }


def test_wireless_host_plan_runs_the_relay_in_its_namespace() -> None:
    cfg = tbm.parse(_wireless_doc("wl", {"mode": "approximate", "channel": "ber:1e-5"}))
    steps = plan.build(cfg, "/bin/approxnet-link")
    relay = [s for s in steps if s.background]
    assert len(relay) == 1
    line = " ".join(relay[0].argv)
    assert line.startswith("ip netns exec anx-wl-w /bin/approxnet-link --a-dev eth0")
    assert "--b-netns anx-wl-sw --b-dev w --mode approximate --channel ber:1e-5" in line
    assert "--rate-mbps 100 --retry-limit 7" in line
    lines = [" ".join(s.argv) for s in steps]
    assert not any("neigh" in x and "dev w" in x for x in lines), "a TUN port has no neighbours"
    assert not any("ethtool" in x and "anx-wl-w" in x for x in lines)


@pytest.mark.parametrize(
    ("wireless", "key"),
    [
        ({"mode": "lossy"}, "host[1].wireless.mode"),
        ({"channel": "ber:2"}, "host[1].wireless.channel"),
        ({"channel": "ge:0:0.1:0.5"}, "host[1].wireless.channel"),
        ({"channel": "noise"}, "host[1].wireless.channel"),
        ({"channel": "snr:loud"}, "host[1].wireless.channel"),
        ({"channel": "snr:inf"}, "host[1].wireless.channel"),
        ({"retry_limit": -1}, "host[1].wireless.retry_limit"),
        ({"color": "red"}, "host[1].wireless.color"),
    ],
)
def test_bad_wireless_settings_name_the_key(wireless: dict[str, Any], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        tbm.parse(_wireless_doc("wl", wireless))
    assert err.value.key == key


@namespaces
def test_wireless_link_damages_frames_the_udp_checksum_then_drops() -> None:
    _remove_stale_test_testbeds()
    # ~11 % of 1500-byte frames take a bit error at BER 1e-5; plain UDP's
    # checksum drops them in the receiving kernel.
    cfg = tbm.parse(
        _wireless_doc(_testbed_name("w"), {"mode": "approximate", "channel": "ber:1e-5", "seed": 4})
    )
    try:
        tb = tbm.up(cfg)
    except tbm.TestbedError as exc:
        if "approxnet-link" in str(exc):
            pytest.skip(str(exc))
        raise
    with tb:
        sent, received = _udp(tb, "a", "w", 400, 0x00, port=5100)
        # The receiver stopped after 0.5 s of silence; the relay's counters
        # (rewritten every 200 ms) then hold every frame it passed.
        deadline = time.monotonic() + WAIT_S
        while (stats := tb.link_stats("w")["b_to_a"])["intact"] < received:
            assert time.monotonic() < deadline, f"relay counters {stats}, received {received}"
            time.sleep(0.05)
        assert sent == 400
        assert 300 <= stats["frames"] <= 400, "our datagrams crossed the link (the switch may drop)"
        assert stats["frames"] == stats["intact"] + stats["damaged"] + stats["dropped_header"]
        assert stats["damaged"] > 10, stats
        assert received == stats["intact"], "every damaged datagram was dropped, no other"
        relay_pids = subprocess.run(
            ["ip", "netns", "pids", tb.namespace("w")], capture_output=True, text=True, check=True
        ).stdout.split()
        assert relay_pids, "the relay runs inside the host's namespace"
    assert tbm.list_namespaces(cfg.prefix) == []
