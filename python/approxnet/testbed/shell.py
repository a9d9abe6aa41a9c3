"""Running the system tools; the only place that calls `subprocess.run`."""

from __future__ import annotations

import os
import select
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


#: How long a daemon may take to print its ready line.
READY_TIMEOUT_S = 10.0


def spawn_ready(argv: Sequence[str], log: str, ready: str = "ready") -> int:
    """Start the daemon `argv` in its own session (stderr to `log`), wait
    until it prints the line `ready`, and return its pid; it keeps running.

    Raises `TestbedError` when it exits or stays silent past READY_TIMEOUT_S
    (it is killed then).
    """
    with open(log, "w") as err:
        try:
            proc = subprocess.Popen(
                list(argv), stdout=subprocess.PIPE, stderr=err, start_new_session=True
            )
        except FileNotFoundError:
            raise TestbedError(f"command {argv[0]!r} not found") from None
    assert proc.stdout is not None
    ready_fd = proc.stdout
    readable, _, _ = select.select([ready_fd], [], [], READY_TIMEOUT_S)
    line = ready_fd.readline().decode().strip() if readable else ""
    ready_fd.close()
    if line != ready:
        proc.kill()
        proc.wait()
        with open(log) as f:
            why = f.read().strip()[-500:]
        raise TestbedError(f"`{' '.join(argv)}` did not start: {why or 'no ready line'}")
    _DAEMONS.append(proc)
    return proc.pid


#: Daemons started by `spawn_ready`: they outlive the call on purpose, and
#: their handles are kept so that `reap` can collect them once they exit
#: (a dropped handle of a running child is a ResourceWarning, an unreaped
#: one a zombie).
_DAEMONS: list[subprocess.Popen[bytes]] = []


def reap() -> None:
    """Collects the daemons that have exited since they were started."""
    _DAEMONS[:] = [p for p in _DAEMONS if p.poll() is None]
