"""Running the approxnet command line in-process for the CLI tests."""

from __future__ import annotations

from click.testing import CliRunner, Result

from approxnet.cli import cli


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def error_line(r: Result) -> str:
    """The one `Error:` line a failed command printed."""
    lines = [x for x in r.output.splitlines() if x.startswith("Error:")]
    assert len(lines) == 1, r.output
    return lines[0]
