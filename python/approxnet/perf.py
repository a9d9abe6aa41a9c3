"""``python -m approxnet.perf ARGS...``: the ``approxnet-perf`` load generator
(crates/net, ``approxnet_net::perf``) run through the native module, so that
it works from an installed wheel without the Rust binary. ``approxnet perf``
runs this module in a child process (Ctrl-C stops the child)."""

from __future__ import annotations

import signal
import sys

from ._native import perf_main


def main(argv: list[str] | None = None) -> int:
    """Runs the tool with ``argv`` (default: ``sys.argv[1:]``); its exit status."""
    return perf_main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    # A closed stdout (``| head``) ends the tool quietly, as it would a C tool.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
