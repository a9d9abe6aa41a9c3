"""What a dead ``saba run`` wrapper left behind, found and removed.

Each wrapper writes a record, ``<state dir>/<pid>.json`` (``/run/approxnet-
saba`` unless ``APPROXNET_SABA_STATE`` names another), before it makes
anything: its pid and the pid's start time (so a reused pid is not taken
for it), the app, the controller's URL, its cgroup, network namespace
and nftables table. A wrapper that ends normally removes it last; one
killed by SIGKILL cannot, and :func:`sweep` — run by every wrapper as it
starts, and by ``approxnet saba cleanup`` — takes each record whose
process is gone: kills what is left in its cgroup and removes it, deletes
its table (gone already if its namespace was), deregisters its app (an
app the controller no longer knows is fine) and deletes the record. When
the controller cannot be reached the record stays, for the next sweep.

Without a record (wrappers from before records), a cgroup
``approxnet-saba/NAME-PID`` whose PID is not running and a table
``saba_run_PID`` of a dead PID in this network namespace are removed too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from ..testbed import shell
from ..testbed.errors import TestbedError
from .cgroup import PARENT, Cgroup, RunError, cgroup2_mount
from .client import SabaClient
from .controller import UnknownError
from .errors import SabaError
from .nftmark import CgroupMark

__all__ = ["Record", "state_dir", "start_time", "write", "forget", "sweep"]


def state_dir() -> Path:
    return Path(os.environ.get("APPROXNET_SABA_STATE", "/run/approxnet-saba"))


@dataclass(frozen=True)
class Record:
    """What one wrapper made (module doc)."""

    pid: int
    start: int
    app: str
    url: str
    cgroup: str  # below the cgroup v2 mount
    netns: str | None
    table_tag: str


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (None: no such
    process)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return int(fields[19]) if len(fields) > 19 and fields[19].isdigit() else None


def _alive(pid: int, start: int | None = None) -> bool:
    now = start_time(pid)
    return now is not None and (start is None or now == start)


def write(rec: Record) -> Path:
    """Writes `rec` atomically (rename), making the directory."""
    d = state_dir()
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{rec.pid}.json"
    tmp = d / f".{rec.pid}.json.tmp"
    tmp.write_text(json.dumps(asdict(rec)))
    tmp.replace(path)
    return path


def forget(pid: int) -> None:
    (state_dir() / f"{pid}.json").unlink(missing_ok=True)


def _records(log: Callable[[str], None]) -> list[tuple[Path, Record]]:
    out: list[tuple[Path, Record]] = []
    d = state_dir()
    if not d.is_dir():
        return out
    for path in sorted(d.glob("*.json")):
        try:
            doc = json.loads(path.read_text())
            out.append((path, Record(**doc)))
        except (OSError, ValueError, TypeError) as e:
            log(f"cleanup: unreadable record {path} skipped: {e}")
    return out


def _remove(
    rec: Record, mount: Path, log: Callable[[str], None], deregister: bool, drop: bool
) -> bool:
    """Removes one dead wrapper's leftovers; False if its app could not be
    deregistered (the controller is unreachable)."""
    cg = Cgroup(mount, rec.cgroup)
    if cg.path.exists():
        cg.remove()
        log(f"cleanup: removed cgroup {cg.path} of dead wrapper {rec.pid}")
    if rec.netns is None or os.path.exists(f"/run/netns/{rec.netns}"):
        if CgroupMark(cg, rec.table_tag, rec.netns).remove_stale():
            where = f" in netns {rec.netns}" if rec.netns else ""
            log(f"cleanup: removed nftables table saba_run_{rec.table_tag}{where}")
    if not deregister:
        return True
    try:
        with SabaClient(rec.url) as client:
            client.deregister(rec.app)
        log(f"cleanup: deregistered app {rec.app} of dead wrapper {rec.pid}")
    except UnknownError:
        pass  # never registered, or deregistered already
    except SabaError as e:
        if drop:
            log(f"cleanup: cannot deregister app {rec.app}, record dropped: {e}")
            return True
        log(f"cleanup: cannot deregister app {rec.app} (kept for the next cleanup): {e}")
        return False
    return True


_CGROUP_PID = re.compile(r".*-(\d+)")
_TABLE_PID = re.compile(r"table inet saba_run_(\d+)")


def _orphans(mount: Path, known: set[int], log: Callable[[str], None]) -> None:
    parent = mount / PARENT
    if parent.is_dir():
        for d in sorted(parent.iterdir()):
            m = _CGROUP_PID.fullmatch(d.name)
            if d.is_dir() and m and int(m.group(1)) not in known and not _alive(int(m.group(1))):
                Cgroup(mount, f"{PARENT}/{d.name}").remove()
                log(f"cleanup: removed cgroup {d} (no record, pid {m.group(1)} gone)")
    done = shell.run(["nft", "list", "tables"], check=False)
    for m in _TABLE_PID.finditer(done.stdout if done.returncode == 0 else ""):
        pid = int(m.group(1))
        if pid not in known and not _alive(pid):
            cg = Cgroup(mount, f"{PARENT}/x")  # not used to delete a table
            if CgroupMark(cg, str(pid)).remove_stale():
                log(f"cleanup: removed nftables table saba_run_{pid} (no record, pid gone)")


def sweep(log: Callable[[str], None], drop_unreachable: bool = False) -> int:
    """Removes the leftovers of every dead wrapper (module doc); returns
    how many records were cleared. Errors of one record are logged and
    leave it for the next sweep; `drop_unreachable` deletes the records
    whose controller cannot be reached instead of keeping them."""
    try:
        mount = cgroup2_mount()
    except RunError as e:
        log(f"cleanup: {e}")
        return 0
    cleared = 0
    records = _records(log)
    live_apps = {(r.url, r.app) for _, r in records if _alive(r.pid, r.start)}
    for path, rec in records:
        if _alive(rec.pid, rec.start):
            continue
        # a live wrapper has the app's name again: its app is not ours to drop
        deregister = (rec.url, rec.app) not in live_apps
        try:
            if _remove(rec, mount, log, deregister, drop_unreachable):
                path.unlink(missing_ok=True)
                cleared += 1
        except (SabaError, OSError) as e:
            log(f"cleanup: record {path} kept: {e}")
    try:
        _orphans(mount, {r.pid for _, r in records}, log)
    except (SabaError, OSError, TestbedError) as e:
        log(f"cleanup: {e}")
    return cleared
