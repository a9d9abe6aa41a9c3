"""Streamer study (seed 002 §4.2, Fig. 3-4 analog) on the namespace testbed.

For each (BER, link rate): a testbed of a wired sender and a wireless
receiver whose access link is approxnet-link in approximate mode; the
Streamer (approxnet.sap.streamer) sends COUNT approximate SAP datagrams at
80 % of the link rate; the receiver classifies each as lost, damaged or
intact and measures the BER inside damaged ones. Root only.

    sudo .venv/bin/python experiments/sap/streamer.py            # full grid
    sudo .venv/bin/python experiments/sap/streamer.py --quick    # 2 settings
    sudo .venv/bin/python experiments/sap/streamer.py --link-mode integrity
    sudo .venv/bin/python experiments/sap/streamer.py --unpaced   # congestion control
Results: experiments/sap/results/streamer_<link mode>.json and a table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from approxnet import testbed as tbm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import run_pair, wireless_testbed  # noqa: E402

HERE = Path(__file__).resolve().parent
BERS = (0.0, 1e-6, 1e-5, 1e-4, 3e-4)
RATES_MBPS = (11, 54)
SIZE = 1024
#: IP 20 + UDP-Lite 8 + approxnet header 48 + the 4-byte precise prefix:
#: an error here loses the datagram (IP header lost by the relay, the rest
#: dropped by the kernel's UDP-Lite checksum).
COVERED_BITS = (20 + 8 + 48 + 4) * 8
#: The approximate data compared by the receiver (the CRC trailer excluded).
DATA_BITS = (SIZE - 4) * 8


def expected(ber: float) -> dict[str, float]:
    """Fractions an ideal independent-error channel gives."""
    keep = (1 - ber) ** COVERED_BITS
    clean = (1 - ber) ** DATA_BITS
    return {"lost": 1 - keep, "damaged": keep * (1 - clean), "intact": keep * clean}


def one(
    ber: float,
    rate: int,
    count: int,
    seed: int,
    mode: str,
    pacing: str = "paced",
    snr_db: float | None = None,
) -> dict[str, Any]:
    """One run; `pacing`: "paced" (the application at 80 % of the link
    rate), "unpaced" (as fast as `send` returns: the socket's in-flight
    cap alone) or "unpaced-nowindow" (neither)."""
    channel = None if snr_db is None else f"snr:{snr_db:g}"
    cfg = wireless_testbed("sapstream", rate, mode, ber, seed, channel)
    with tbm.up(cfg) as tb:
        port = f"{tb.address('w')}:7960"
        common = ["--count", str(count), "--seed", str(seed), "--size", str(SIZE)]
        mbps = 0.8 * rate if pacing == "paced" else 0.0
        extra = ["--no-window"] if pacing == "unpaced-nowindow" else []
        got, sent = run_pair(
            tb,
            "approxnet.sap.streamer",
            ["recv", "--bind", port, *common],
            ["send", "--peer", port, "--mbps", str(mbps), *extra, *common],
            timeout_s=count * SIZE * 8 / (0.8 * rate * 1e6) + 60,
        )
        link = tb.link_stats("w")["b_to_a"]
    n = got["count"]
    if snr_db is not None:
        # The BER the relay drew over the bits it delivered (the model's
        # "expected" columns then use it).
        ber = link["flipped_bits"] / max(link["payload_bits"], 1)
    return {
        "snr_db": snr_db,
        "ber": ber,
        "rate_mbps": rate,
        "link_mode": mode,
        "pacing": pacing,
        "retried": link["retried"] / max(link["frames"], 1),
        "tries_per_frame": link["tries"] / max(link["frames"], 1),
        "lost": got["lost"] / n,
        "damaged": got["damaged"] / n,
        "intact": got["intact"] / n,
        "ber_in_damaged": got["ber_in_damaged"],
        "flagged_damaged": got["flagged_damaged"],
        "expected": expected(ber),
        "link": link,
        "sender": sent,
        "raw": got,
    }


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=2000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="BER 1e-5 and 1e-4 at 54 Mbit/s only")
    p.add_argument(
        "--link-mode",
        choices=("approximate", "integrity"),
        default="approximate",
        help="integrity: the link retries damaged frames (Fig. 2: frames retransmitted)",
    )
    p.add_argument(
        "--unpaced",
        action="store_true",
        help="the sender does not pace: 2 Mbit/s (slower than the Python sender), BER 0 "
        "and 1e-4, with and without the socket's in-flight cap (congestion control for "
        "approximate datagrams)",
    )
    p.add_argument(
        "--snr",
        type=float,
        help="rate-dependent BER: every 802.11a/g rate from 12 to 54 Mbit/s at this SNR "
        "(dB; the link's snr: channel)",
    )
    a = p.parse_args()
    grid = [(b, r, "paced") for r in RATES_MBPS for b in BERS]
    if a.quick:
        grid = [(1e-5, 54, "paced"), (1e-4, 54, "paced")]
    if a.unpaced:
        grid = [(b, 2, p) for p in ("unpaced", "unpaced-nowindow") for b in (0.0, 1e-4)]
    rows = []
    print(
        f"{'BER':>8} {'Mbit/s':>6} | {'lost':>6} {'damaged':>8} {'intact':>7} | "
        f"{'exp. lost':>9} {'exp. dmg':>8} | BER in damaged | retried tries/frame"
    )
    if a.snr is not None:
        grid = [(0.0, r, "paced") for r in (12, 24, 36, 48, 54)]
    for ber, rate, pacing in grid:
        t0 = time.monotonic()
        r = one(ber, rate, a.count, a.seed, a.link_mode, pacing, a.snr)
        e = r["expected"]
        print(
            f"{ber:8.0e} {rate:6d} | {r['lost']:6.3f} {r['damaged']:8.3f} {r['intact']:7.3f} | "
            f"{e['lost']:9.3f} {e['damaged']:8.3f} | {r['ber_in_damaged']:14.2e} | "
            f"{r['retried']:7.3f} {r['tries_per_frame']:11.2f}  ({time.monotonic() - t0:.0f} s, "
            f"{pacing}, sender {r['sender'].get('seconds', float('nan')):.2f} s)",
            flush=True,
        )
        rows.append(r)
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    tag = "_quick" if a.quick else "_unpaced" if a.unpaced else ""
    if a.snr is not None:
        tag = f"_snr{a.snr:g}"
    name = f"streamer_{a.link_mode}{tag}.json"
    (out / name).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
