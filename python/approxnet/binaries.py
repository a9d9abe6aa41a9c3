"""Where the project's command-line tools are: ``approxnet-perf`` (the real
runtime's load generator), ``approxnet-sim`` (the simulator) and
``approxnet-link`` (the testbed's error-prone link relay).

One lookup order for every caller (the CLI, the experiments, the demo):
an explicit path, else ``$APPROXNET_PERF`` / ``$APPROXNET_SIM``, else the
tool on ``PATH``, else a release build in this checkout's target
directories (``target``, then the tool's own ``target-net`` /
``target-sim``).

    >>> from approxnet import binaries
    >>> binaries.env_var("approxnet-sim")
    'APPROXNET_SIM'
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

#: tool -> (cargo package, the checkout's own target directory for it)
TOOLS = {
    "approxnet-perf": ("approxnet-net", "target-net"),
    "approxnet-sim": ("approxnet-sim", "target-sim"),
    "approxnet-link": ("approxnet-net", "target-net"),
}

#: the checkout this package was installed from (editable installs)
CHECKOUT = Path(__file__).resolve().parents[2]


def env_var(tool: str) -> str:
    """The environment variable that names ``tool``'s path."""
    _check(tool)
    return tool.replace("-", "_").upper()


def find(
    tool: str, explicit: str | os.PathLike[str] | None = None, debug: bool = False
) -> Path | None:
    """``tool``'s executable, or None. An explicit path or the environment
    variable, when given, is the only candidate; ``debug`` also accepts a
    debug build in ``target/debug`` (last)."""
    _check(tool)
    for cand in (explicit, os.environ.get(env_var(tool))):
        if cand:
            p = Path(cand)
            return p if p.is_file() and os.access(p, os.X_OK) else None
    which = shutil.which(tool)
    if which:
        return Path(which)
    builds = [("target", "release"), (TOOLS[tool][1], "release")]
    if debug:
        builds.append(("target", "debug"))
    for target, profile in builds:
        p = CHECKOUT / target / profile / tool
        if p.is_file() and os.access(p, os.X_OK):
            return p
    return None


def build_command(tool: str) -> list[str]:
    """The cargo command that builds ``tool`` into ``target/release``."""
    _check(tool)
    return ["cargo", "build", "--release", "-q", "-p", TOOLS[tool][0], "--bin", tool]


def build(tool: str) -> Path:
    """Builds ``tool`` in this checkout (a no-op when it is up to date) and
    returns it: for sweeps that must not run a stale binary."""
    subprocess.run(build_command(tool), check=True, cwd=CHECKOUT)
    target = Path(os.environ.get("CARGO_TARGET_DIR") or CHECKOUT / "target")
    return (target if target.is_absolute() else CHECKOUT / target) / "release" / tool


def require(tool: str, explicit: str | os.PathLike[str] | None = None, build: bool = False) -> Path:
    """Like :func:`find`, but builds the tool in this checkout when
    ``build`` is set and it is missing, and raises FileNotFoundError (with
    the command that builds it) when it is still not there."""
    p = find(tool, explicit)
    if p is None and build and explicit is None and not os.environ.get(env_var(tool)):
        subprocess.run(build_command(tool), check=True, cwd=CHECKOUT)
        p = find(tool)
    if p is None:
        where = explicit or os.environ.get(env_var(tool))
        hint = f"{tool} not found" + (f" at {where}" if where else "")
        raise FileNotFoundError(f"{hint}: build it with '{' '.join(build_command(tool))}'")
    return p


def _check(tool: str) -> None:
    if tool not in TOOLS:
        raise ValueError(f"unknown tool {tool!r}; expected one of {', '.join(TOOLS)}")
