"""`approxnet testbed ...` (for now `python -m approxnet.testbed ...`).

A thin layer over the library: each command loads the TOML, calls one
function, prints the result. `TestbedError`s become a one-line
`Error: ...` and exit status 1; click's usage errors exit with 2.
"""

from __future__ import annotations

import functools
import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from . import config as config_mod
from . import lifecycle, plan, status
from .errors import TestbedError

F = TypeVar("F", bound=Callable[..., Any])


def _user_errors(func: F) -> F:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except TestbedError as exc:
            raise click.ClickException(str(exc)) from None

    return wrapper  # type: ignore[return-value]


CONFIG = click.argument("config_path", metavar="CONFIG.toml", type=click.Path(dir_okay=False))


@click.group(name="testbed")
def testbed() -> None:
    """Linux namespace testbed: hosts joined by a kernel switch whose egress
    ports have strict-priority queues (HTB prio classes over bfifo leaves),
    DSCP classification and optional random loss.

    \b
    Example:
      python -m approxnet.testbed up python/approxnet/testbed/examples/dumbbell.toml
      python -m approxnet.testbed status python/approxnet/testbed/examples/dumbbell.toml
      python -m approxnet.testbed down python/approxnet/testbed/examples/dumbbell.toml
    """


@testbed.command()
@CONFIG
@_user_errors
def up(config_path: str) -> None:
    """Build the testbed in CONFIG.toml (removing any previous one of that name).

    \b
    Example:
      python -m approxnet.testbed up python/approxnet/testbed/examples/dumbbell.toml
    """
    cfg = config_mod.load(config_path)
    tb = lifecycle.up(cfg)
    hosts = ", ".join(f"{h.name}={tb.address(h.name)}" for h in cfg.hosts)
    click.echo(
        f"testbed {cfg.name} up: {len(plan.namespaces(cfg))} namespaces ({cfg.prefix}*); {hosts}"
    )


@testbed.command()
@click.argument("target", metavar="CONFIG.toml|NAME")
@_user_errors
def down(target: str) -> None:
    """Remove a testbed: its namespaces, veths, qdiscs and nft tables.

    TARGET is the config file or just the testbed name (`testbed.name`), so a
    testbed whose TOML is gone or broken can still be removed. Removing a
    testbed that is not up is not an error.

    \b
    Example:
      python -m approxnet.testbed down python/approxnet/testbed/examples/dumbbell.toml
      python -m approxnet.testbed down dumbbell
    """
    name = _testbed_name(target)
    removed = lifecycle.down(name)
    click.echo(f"testbed {name} down: removed {len(removed)} namespaces")


@testbed.command(name="status")
@CONFIG
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@_user_errors
def status_cmd(config_path: str, as_json: bool) -> None:
    """Per-queue sent / dropped / backlog of every switch egress port.

    \b
    Example:
      python -m approxnet.testbed status python/approxnet/testbed/examples/dumbbell.toml --json
    """
    cfg = config_mod.load(config_path)
    result = status.collect(cfg)
    click.echo(json.dumps(result.as_dict(), indent=2) if as_json else status.format_table(result))


@testbed.command(name="plan")
@CONFIG
@_user_errors
def plan_cmd(config_path: str) -> None:
    """Print the commands `up` would run, without running them (no root needed).

    \b
    Example:
      python -m approxnet.testbed plan python/approxnet/testbed/examples/dumbbell.toml
    """
    cfg = config_mod.load(config_path)
    for step in plan.build(cfg):
        line = shlex.join(step.argv)
        click.echo(line if step.stdin is None else f"{line} <<'EOF'\n{step.stdin}EOF")


@testbed.command(name="exec", context_settings={"ignore_unknown_options": True})
@CONFIG
@click.argument("host")
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED)
@_user_errors
def exec_cmd(config_path: str, host: str, argv: tuple[str, ...]) -> None:
    """Run a command inside HOST's namespace and exit with its status.

    \b
    Example:
      python -m approxnet.testbed exec examples/dumbbell.toml h1 -- ip -br addr
      python -m approxnet.testbed exec examples/dumbbell.toml h3 -- \
          python3 -m approxnet.testbed.traffic udp-recv --port 5000 --count 10
    """
    cfg = config_mod.load(config_path)
    if not lifecycle.is_up(cfg):
        raise TestbedError(f"testbed {cfg.name!r} is not up; run `up {config_path}` first")
    tb = lifecycle.Testbed(cfg)
    try:
        code = subprocess.call(tb.command(host, list(argv)))
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)


def _testbed_name(target: str) -> str:
    if Path(target).is_file() or target.endswith(".toml"):
        return config_mod.load(target).name
    if not config_mod.TESTBED_NAME.match(target):
        raise TestbedError(f"{target!r} is neither a config file nor a testbed name")
    return target
