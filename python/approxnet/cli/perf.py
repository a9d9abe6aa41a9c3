"""``approxnet perf ...``: runs the ``approxnet-perf`` load generator of the
real runtime (crates/net), passing every option through."""

from __future__ import annotations

import subprocess
from pathlib import Path

import click

from ..binaries import find_tool

__all__ = ["command", "find_binary"]

MODES = ("server", "client", "tcp-server", "tcp-client")


def find_binary(explicit: str | None = None) -> Path | None:
    """``explicit``, else ``$APPROXNET_PERF``, else ``approxnet-perf`` on
    PATH, else a release build in this checkout's target directories."""
    return find_tool("approxnet-perf", "APPROXNET_PERF", explicit)


@click.command(
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("mode", type=click.Choice(MODES))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--binary", metavar="PATH", help="approxnet-perf to run (default: PATH, then target/release)."
)
def command(mode: str, args: tuple[str, ...], binary: str | None) -> None:
    """Real-network load over UDP / UDP-Lite (ATP) or kernel TCP: runs
    approxnet-perf MODE with ARGS passed through unchanged.

    \b
    Modes: server, client, tcp-server, tcp-client. Options of the tool:
      server [--bind 0.0.0.0:7700] [--jobs N] [--idle SECS] [--udplite] [--json]
      client --server IP:PORT [--msr 1.0 | --groups 1.0,0.5] [--sizes fixed:N]
             [--messages 64] [--duration 5] [--jobs N] [--window 2] [--json]
      tcp-server [--bind 0.0.0.0:7701] / tcp-client --server IP:PORT [--cc cubic]

    \b
    Example (two testbed hosts):
      approxnet perf server --bind 10.0.0.2:7700 --jobs 1
      approxnet perf client --server 10.0.0.2:7700 --msr 0.5 --duration 2 --json

    Build the tool with: cargo build --release -p approxnet-net
    """
    exe = find_binary(binary)
    if exe is None:
        raise click.ClickException(
            "approxnet-perf not found: build it with 'cargo build --release -p approxnet-net' "
            "or pass --binary PATH"
        )
    rc = subprocess.call([str(exe), mode, *args])
    if rc != 0:
        raise click.exceptions.Exit(rc)
