"""Arrays with protected bits over an error-prone link (seed 004's data
types on seed 002's sockets, issue 17) on the namespace testbed.

For each (BER, protection level): a wired sender and a wireless receiver
behind approxnet-link in approximate mode; the sender sends N seeded
float64 values with `approxnet.sap.arrays` (the top LEVEL bits of every
word precise, the rest approximate); the receiver reports lost and damaged
approximate datagrams, whether every protected bit arrived exactly, and
the numerical error against the same seeded array. Root only.

    sudo .venv/bin/python experiments/sap/arrays.py            # the grid
    sudo .venv/bin/python experiments/sap/arrays.py --quick    # 2 settings
Results: experiments/sap/results/arrays.json and a table.
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
BERS = (0.0, 1e-5, 1e-4)
LEVELS = (0, 12, 16, 32, 64)
RATE_MBPS = 54


def one(ber: float, level: int, n: int, seed: int) -> dict[str, Any]:
    cfg = wireless_testbed("saparr", RATE_MBPS, "approximate", ber, seed)
    with tbm.up(cfg) as tb:
        port = f"{tb.address('w')}:7961"
        common = ["--n", str(n), "--seed", str(seed)]
        got, sent = run_pair(
            tb,
            "approxnet.sap.arrays",
            ["recv", "--bind", port, *common],
            [
                "send",
                "--peer",
                port,
                "--level",
                str(level),
                "--mbps",
                str(0.8 * RATE_MBPS),
                *common,
            ],
            timeout_s=n * 8 * 8 / (0.8 * RATE_MBPS * 1e6) + 60,
        )
        link = tb.link_stats("w")["b_to_a"]
    return {"ber": ber, "level": level, "n": n, **got, "sender": sent, "link": link}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=100_000, help="float64 values per array")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    grid = [(1e-4, 0), (1e-4, 16)] if a.quick else [(b, lv) for b in BERS for lv in LEVELS]
    rows = [one(b, lv, a.n, a.seed) for b, lv in grid]
    out = HERE / "results" / ("arrays_quick.json" if a.quick else "arrays.json")
    out.write_text(json.dumps(rows, indent=1))
    cols = ["BER", "level", "chunks", "lost", "damaged", "protected exact"]
    cols += ["max abs error", "mean abs error", "exact values"]
    print("| " + " | ".join(cols) + " |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['ber']:g} | {r['level']} | {r['chunks']} | {r['lost_chunks']} | "
            f"{r['damaged_chunks']} | {r['protected_exact']} | {r['max_abs_error']:.3g} | "
            f"{r['mean_abs_error']:.3g} | {r['exact_fraction']:.4f} |"
        )
    print(f"written {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
