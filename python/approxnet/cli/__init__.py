"""The ``approxnet`` command line: a thin layer over the library.

One module per command group: :mod:`.sim`, :mod:`.perf`, :mod:`.testbed`,
:mod:`.repro`, :mod:`.analytics`, :mod:`.train`, :mod:`.saba`. Every error becomes one line
``Error: ...`` on stderr and a non-zero exit status: 2 for bad arguments,
1 for everything else.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import click

from .._native import ApproxnetError, __version__
from . import analytics, perf, repro, saba, sim, testbed, train

__all__ = ["cli", "main"]


def one_line(msg: str) -> str:
    """Collapses a (possibly multi-line) message into one line."""
    return " ".join(str(msg).split())


class OneLineErrors(click.Group):
    """A group whose errors are one line each: usage errors exit 2, other
    failures (an ApproxnetError included) exit 1."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as e:
            hint = f" (see '{e.ctx.command_path} --help')" if e.ctx is not None else ""
            click.echo(f"Error: {one_line(e.format_message())}{hint}", err=True)
            sys.exit(e.exit_code)
        except click.ClickException as e:
            click.echo(f"Error: {one_line(e.format_message())}", err=True)
            sys.exit(e.exit_code)
        except ApproxnetError as e:
            click.echo(f"Error: {one_line(str(e))}", err=True)
            sys.exit(1)
        except click.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        except OSError as e:
            click.echo(f"Error: {one_line(str(e))}", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="approxnet")
def cli() -> None:
    """approxnet: an approximate-aware network stack.

    \b
    Examples:
      approxnet sim run netapprox/demo --out results/demo
      approxnet sim sweep netapprox/demo -p jobs.0.msr=0.25,0.5,1 --out results/sw
      approxnet repro --list
      approxnet perf client --server 10.0.0.2:7700 --msr 0.5
      approxnet testbed up python/approxnet/testbed/examples/dumbbell.toml
      approxnet analytics run --records 200000 --sources 4 --emax 0.05
      approxnet train compare --mode testbed --epochs 30 -p 0.1
      approxnet saba controller --topology python/approxnet/testbed/examples/dumbbell.toml
    """


cli.add_command(sim.group, "sim")
cli.add_command(perf.command, "perf")
cli.add_command(testbed.group, "testbed")
cli.add_command(repro.command, "repro")
cli.add_command(analytics.group, "analytics")
cli.add_command(train.group, "train")
cli.add_command(saba.group, "saba")


def main() -> None:
    """Entry point of the ``approxnet`` script."""
    cli(prog_name="approxnet")
