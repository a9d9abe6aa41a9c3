"""A cgroup v2 of its own for a wrapped program (``approxnet saba run``):
found through the mount table (``/sys/fs/cgroup`` on a unified host,
``/sys/fs/cgroup/unified`` on a hybrid one), created under
``approxnet-saba/``, emptied (``cgroup.kill``) and removed on exit.

Errors are :class:`RunError` with the reason and what to do about it.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import SabaError

__all__ = ["RunError", "Cgroup", "cgroup2_mount", "PARENT"]

#: every wrapped program's cgroup is ``<mount>/PARENT/<name>``
PARENT = "approxnet-saba"


class RunError(SabaError):
    """``saba run`` cannot set up (or tear down) its marking."""


def cgroup2_mount(mounts: str | None = None) -> Path:
    """The cgroup v2 mount point, from `mounts` (``/proc/self/mounts``
    text; read when None)."""
    if mounts is None:
        mounts = Path("/proc/self/mounts").read_text()
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[2] == "cgroup2":
            return Path(fields[1].replace("\\040", " "))
    raise RunError(
        "cgroup v2 is not mounted in this mount namespace (no 'cgroup2' line in "
        "/proc/self/mounts); saba run places the program in a cgroup v2 to mark its "
        "traffic. Note that 'ip netns exec' remounts /sys and hides it: use "
        "'saba run --netns NAME' (or nsenter --net=/run/netns/NAME) instead"
    )


@dataclass(frozen=True)
class Cgroup:
    """A cgroup v2 directory: `path` on disk, `rel` below the v2 root."""

    mount: Path
    rel: str

    @property
    def path(self) -> Path:
        return self.mount / self.rel

    @property
    def level(self) -> int:
        """Depth below the v2 root (nftables' ``socket cgroupv2 level``)."""
        return len(Path(self.rel).parts)

    @property
    def nft_path(self) -> str:
        """The path nftables resolves: it prefixes ``/sys/fs/cgroup``."""
        return str(self.path.relative_to("/sys/fs/cgroup"))

    @classmethod
    def create(cls, name: str, mount: Path | None = None) -> Cgroup:
        """``<mount>/approxnet-saba/<name>``, which must not exist yet."""
        mount = cgroup2_mount() if mount is None else mount
        if Path("/sys/fs/cgroup") not in [mount, *mount.parents]:
            raise RunError(
                f"cgroup v2 is mounted at {mount}, outside /sys/fs/cgroup, where "
                "nftables looks for cgroup paths"
            )
        cg = cls(mount, f"{PARENT}/{name}")
        try:
            (mount / PARENT).mkdir(exist_ok=True)
            cg.path.mkdir()
        except FileExistsError:
            raise RunError(f"cgroup {cg.path} exists already (another run of that name?)") from None
        except PermissionError:
            raise RunError(f"cannot create cgroup {cg.path}: saba run needs root") from None
        except OSError as e:
            raise RunError(f"cannot create cgroup {cg.path}: {e}") from None
        return cg

    def pids(self) -> list[int]:
        """Processes in the cgroup now (empty once it is removed)."""
        try:
            text = (self.path / "cgroup.procs").read_text()
        except FileNotFoundError:
            return []
        return [int(x) for x in text.split()]

    def add_self_file(self) -> str:
        """The file a child writes ``0`` to (before exec) to join."""
        return str(self.path / "cgroup.procs")

    def remove(self, timeout_s: float = 5.0) -> None:
        """Kills what is left in the cgroup (the program's descendants
        outlive it otherwise) and removes the directory."""
        if not self.path.exists():
            return
        deadline = time.monotonic() + timeout_s
        while self.pids():
            try:
                (self.path / "cgroup.kill").write_text("1")
            except OSError:  # kernels before 5.14: one by one
                for pid in self.pids():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            if time.monotonic() > deadline:
                raise RunError(f"cgroup {self.path} still holds {self.pids()} after SIGKILL")
            time.sleep(0.01)  # the kernel reaps killed members asynchronously
        try:
            self.path.rmdir()
        except OSError as e:
            raise RunError(f"cannot remove cgroup {self.path}: {e}") from None
        try:
            (self.mount / PARENT).rmdir()  # only when no other run uses it
        except OSError:
            pass
