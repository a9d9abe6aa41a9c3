"""Rich progress bars shared by the commands (shown only on a terminal)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

__all__ = ["bar", "console", "spinner"]

T = TypeVar("T")

console = Console(stderr=True)


def spinner(label: str, work: Callable[[], T], *, quiet: bool = False) -> T:
    """Runs ``work`` in a thread (the native calls release the GIL) while a
    spinner with the elapsed time turns; returns its result or raises its error."""
    if quiet or not console.is_terminal:
        return work()
    box: dict[str, T] = {}
    err: list[BaseException] = []

    def target() -> None:
        try:
            box["v"] = work()
        except BaseException as e:  # re-raised in the caller's thread
            err.append(e)

    t = threading.Thread(target=target, daemon=True)
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as p:
        p.add_task(label, total=None)
        t.start()
        while t.is_alive():
            t.join(0.1)
    if err:
        raise err[0]
    return box["v"]


@contextmanager
def bar(label: str, total: int, *, quiet: bool = False) -> Iterator[Callable[[int, int], None]]:
    """A progress bar over ``total`` items; yields ``on_done(done, total)``."""
    if quiet or not console.is_terminal:
        yield lambda done, total: None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as p:
        task = p.add_task(label, total=total)
        yield lambda done, _total: p.update(task, completed=done)
