"""Shared by the SAP studies: a wired sender `s` and a wireless receiver
`w` behind approxnet-link, and one receiver / sender run between them."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from typing import Any

from approxnet import testbed as tbm


def wireless_testbed(
    name: str, rate_mbps: int, mode: str, ber: float, seed: int, channel: str | None = None
) -> tbm.Config:
    """One queue per port: SAP has no priority queues, and seed 000's layout
    would give approximate DSCPs a few-frame queue. `channel` (e.g.
    "snr:24") replaces "ber:BER"."""
    return tbm.parse(
        {
            "testbed": {"name": name, "queues": 1},
            "host": [
                {"name": "s", "rate": "1gbit"},
                {
                    "name": "w",
                    "rate": f"{rate_mbps}mbit",
                    "wireless": {"mode": mode, "channel": channel or f"ber:{ber:g}", "seed": seed},
                },
            ],
        }
    )


def run_pair(
    tb: tbm.Testbed, module: str, recv: list[str], send: list[str], timeout_s: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Starts `python -m module *recv` in `w`, waits for its `ready` line,
    runs `python -m module *send` in `s`; returns both JSON results."""
    py = [sys.executable, "-m", module]
    rx = tb.exec("w", [*py, *recv], stdout=subprocess.PIPE, text=True)
    assert rx.stdout is not None
    ready, _, _ = select.select([rx.stdout], [], [], 30)
    if not ready or rx.stdout.readline().strip() != "ready":
        rx.kill()
        rx.wait()
        raise RuntimeError(f"{module} receiver did not start")
    tx = tb.run("s", [*py, *send], timeout=timeout_s, capture_output=True, text=True)
    out, _ = rx.communicate(timeout=timeout_s)
    sent = (
        json.loads(tx.stdout.splitlines()[-1])
        if tx.returncode == 0
        else {"error": tx.stderr[-300:]}
    )
    return json.loads(out.splitlines()[-1]), sent
