"""``approxnet perf ...``: runs the ``approxnet-perf`` load generator of the
real runtime (crates/net), passing every option through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from .. import binaries

__all__ = ["command", "find_binary"]

MODES = ("server", "client", "tcp-server", "tcp-client")


def find_binary(explicit: str | None = None) -> Path | None:
    """``approxnet-perf``: ``explicit``, else ``$APPROXNET_PERF``, else PATH,
    else a release build in this checkout (:mod:`approxnet.binaries`)."""
    return binaries.find("approxnet-perf", explicit)


@click.command(
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("mode", type=click.Choice(MODES))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.option(
    "--binary", metavar="PATH", help="a built approxnet-perf to run (default: the package's own)."
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

    The tool runs from the installed package (python -m approxnet.perf);
    --binary PATH or $APPROXNET_PERF runs a built approxnet-perf instead.
    """
    if binary or os.environ.get(binaries.env_var("approxnet-perf")):
        try:
            cmd = [str(binaries.require("approxnet-perf", binary))]
        except FileNotFoundError as e:
            raise click.ClickException(f"{e}, or pass --binary PATH") from None
    else:
        cmd = [sys.executable, "-m", "approxnet.perf"]
    rc = subprocess.call([*cmd, mode, *args])
    if rc != 0:
        raise click.exceptions.Exit(rc)
