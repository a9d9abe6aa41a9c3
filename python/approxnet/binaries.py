"""Finding the runtime's command-line tools (built from crates/net)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["find_tool"]


def find_tool(name: str, env: str, explicit: str | None = None, debug: bool = False) -> Path | None:
    """``explicit``, else ``$env``, else ``name`` on PATH, else a release
    build in this checkout's target directories (then a debug build when
    ``debug``). None when there is none."""
    for cand in (explicit, os.environ.get(env)):
        if cand:
            p = Path(cand)
            return p if p.is_file() else None
    which = shutil.which(name)
    if which:
        return Path(which)
    root = Path(__file__).resolve().parents[2]
    builds = [("target", "release"), ("target-net", "release")]
    if debug:
        builds.append(("target", "debug"))
    for target, profile in builds:
        p = root / target / profile / name
        if p.is_file():
            return p
    return None
