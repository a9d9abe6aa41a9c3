"""Tracker study (seed 002 §4.4, Fig. 7-8 analog) on the namespace testbed.

For each BER: the Tracker (approxnet.sap.tracker) sends a generated
945-point GPS walk one reading per datagram every 5 ms to a wireless
receiver — over approximate SAP through an approximate link, and over TCP
through an integrity (ARQ) link, as the paper compares SAP on its modified
802.11 with TCP on stock 802.11. Reported: the final moving-average speed's
error against the trace's own, readings received / discarded by the
plausibility filter, and the inter-arrival time's mean, SD and maximum.
Root only.

    sudo .venv/bin/python experiments/sap/tracker.py
Results: experiments/sap/results/tracker.json and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from approxnet import testbed as tbm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import run_pair, wireless_testbed  # noqa: E402

HERE = Path(__file__).resolve().parent
BERS = (0.0, 1e-5, 1e-4, 3e-4, 1e-3)
RATE_MBPS = 54


def one(
    proto: str,
    ber: float,
    seed: int,
    gap_ms: float,
    window: bool = True,
    sap_link: str = "approximate",
) -> dict[str, Any]:
    mode = sap_link if proto == "sap" else "integrity"
    with tbm.up(wireless_testbed("saptrack", RATE_MBPS, mode, ber, seed)) as tb:
        addr = f"{tb.address('w')}:7970"
        common = ["--proto", proto, "--addr", addr, "--seed", str(seed)]
        got, sent = run_pair(
            tb,
            "approxnet.sap.tracker",
            ["recv", *common],
            ["send", *common, "--gap-ms", str(gap_ms)]
            + ([] if window or proto != "sap" else ["--no-window"]),
            timeout_s=120,
        )
    return {"proto": proto, "link_mode": mode, "ber": ber, **got, "sender": sent}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--gap-ms", type=float, default=5.0)
    p.add_argument("--bers", type=float, nargs="+", default=list(BERS))
    p.add_argument("--protos", nargs="+", choices=("sap", "tcp"), default=["sap", "tcp"])
    p.add_argument("--no-window", action="store_true", help="SAP without the in-flight cap")
    p.add_argument("--out", default="tracker.json", help="file name under results/")
    p.add_argument(
        "--sap-link",
        choices=("approximate", "sap"),
        default="approximate",
        help="SAP's link mode: every frame one try, or per frame (ARQ for its control frames)",
    )
    a = p.parse_args()
    rows = []
    print(
        f"{'BER':>7} {'proto':>5} | {'recv':>4} {'disc':>4} {'speed':>6} {'error':>6} | "
        "gap mean / sd / max (ms) | sender s"
    )
    for ber in a.bers:
        for proto in a.protos:
            r = one(proto, ber, a.seed, a.gap_ms, window=not a.no_window, sap_link=a.sap_link)
            print(
                f"{ber:7.0e} {proto:>5} | {r['received']:4d} {r['discarded']:4d} "
                f"{r['speed']:6.3f} {r['error']:6.3f} | {r['gap_mean_s'] * 1e3:6.2f} / "
                f"{r['gap_sd_s'] * 1e3:6.2f} / {r['gap_max_s'] * 1e3:7.1f} | "
                f"{r['sender'].get('seconds', float('nan')):.2f}",
                flush=True,
            )
            rows.append(r)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / a.out).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
