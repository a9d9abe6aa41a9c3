"""Running the system tools; the only place that calls `subprocess.run`."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Sequence

from .errors import CommandError, TestbedError

INSTALL_HINT = "run scripts/install-testbed-deps.sh"
COMMAND_TIMEOUT_S = 30.0


def run(
    argv: Sequence[str],
    *,
    stdin: str | None = None,
    check: bool = True,
    timeout: float = COMMAND_TIMEOUT_S,
) -> subprocess.CompletedProcess[str]:
    """Run `argv` to completion, capturing text output.

    Raises `CommandError` when `check` and the exit status is non-zero, and
    `TestbedError` when the program is missing or runs past `timeout`.
    """
    try:
        done = subprocess.run(
            list(argv),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise TestbedError(f"command {argv[0]!r} not found; {INSTALL_HINT}") from None
    except subprocess.TimeoutExpired:
        raise TestbedError(f"`{' '.join(argv)}` did not finish within {timeout:g} s") from None
    if check and done.returncode != 0:
        raise CommandError(list(argv), done.returncode, done.stderr)
    return done


def require_root() -> None:
    """Namespaces, veths and qdiscs need root (CAP_NET_ADMIN and CAP_SYS_ADMIN)."""
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (network namespaces, tc, nft)")


def require_tools(tools: Iterable[str]) -> None:
    """Fail with one clear line if a tool is missing from PATH or /usr/sbin."""
    missing = [t for t in tools if _which(t) is None]
    if missing:
        raise TestbedError(f"missing {', '.join(missing)}; {INSTALL_HINT}")


def _which(tool: str) -> str | None:
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin"
    return shutil.which(tool, path=path)
