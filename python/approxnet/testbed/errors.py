"""Exceptions raised by the namespace testbed.

Every user mistake (bad TOML, missing tool, not root) surfaces as a
`TestbedError` whose message is one line a user understands; the CLI prints
it and exits non-zero instead of showing a traceback.
"""

from __future__ import annotations


class TestbedError(Exception):
    """Base class: anything the testbed reports to its user."""

    __test__ = False  # not a pytest test class despite the name


class ConfigError(TestbedError):
    """The testbed TOML is malformed; `key` names the offending entry."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}")


class CommandError(TestbedError):
    """An `ip` / `tc` / `nft` command failed; carries argv and stderr."""

    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr.strip()
        detail = self.stderr.splitlines()[0] if self.stderr else f"exit {returncode}"
        super().__init__(f"`{' '.join(argv)}` failed: {detail}")


class ProcessError(TestbedError):
    """A process run inside a host failed, gave no result or did not start
    or finish in time."""
