"""Seed 004 Fig. 3 and §4.2.1 from crates/phy's channel models.

Writes OUT/fig3_ber.png (BER vs Eb/N0 for OOK and
4..1024-QAM), fig3_required_ebn0.csv (the Eb/N0 each target BER needs, by
the inverse) and mappings.csv (M/2, M/4 and 2-hop at nominal BER 1e-5), and
prints both tables as Markdown.

  .venv/bin/python -m approxnet.interconnect.fig3_ber [--out DIR]

OUT: ``--out``, default ``results/interconnect`` under the current
directory; ``approxnet repro interconnect/fig3 [--quick]`` runs it too.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from approxnet.interconnect import channel  # noqa: E402

MODULATIONS = ["ook", "4qam", "16qam", "64qam", "256qam", "1024qam"]
TARGETS = [1e-3, 1e-5, 1e-7, 1e-9, 1e-12]

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Runs the figure (command-line arguments as in the module doc)."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path("results") / "interconnect")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    db = np.linspace(0.0, 40.0, 401)
    fig, ax = plt.subplots(figsize=(6, 4))
    for m in MODULATIONS:
        ber = [channel.ber(m, channel.db_to_linear(x)) for x in db]
        ax.semilogy(db, ber, label=m.upper().replace("QAM", "-QAM"))
    ax.set_ylim(1e-16, 1)
    ax.set_xlabel("Eb/N0 [dB]")
    ax.set_ylabel("BER (eq. 2-4)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title("BER vs Eb/N0 over AWGN (seed 004 Fig. 3)")
    fig.tight_layout()
    fig.savefig(args.out / "fig3_ber.png", dpi=120)

    rows = []
    for m in MODULATIONS:
        rows.append([m] + [channel.linear_to_db(channel.required_ebn0(m, t)) for t in TARGETS])
    with open(args.out / "fig3_required_ebn0.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["modulation"] + [f"ebn0_db_at_{t:g}" for t in TARGETS])
        w.writerows(rows)
    print("| modulation | " + " | ".join(f"BER {t:g}" for t in TARGETS) + " |")
    print("|---" * (len(TARGETS) + 1) + "|")
    for r in rows:
        print(f"| {r[0]} | " + " | ".join(f"{v:.2f} dB" for v in r[1:]) + " |")

    print("\n| M-QAM at nominal 1e-5 | M/2 BER | M/4 BER | 2-hop | diagonal |")
    print("|---|---|---|---|---|")
    with open(args.out / "mappings.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["m", "half_ber", "quarter_ber", "two_hop", "diagonal"])
        for order in (16, 64, 256, 1024):
            half, _ = channel.mapping_ber("half", order, 1e-5)
            quarter, _ = channel.mapping_ber("quarter", order, 1e-5)
            s = channel.symbol_errors(order, 1e-5)
            w.writerow([order, half, quarter, s.two_hop, s.diagonal])
            print(f"| {order} | {half:.3g} | {quarter:.3g} | {s.two_hop:.3g} | {s.diagonal:.3g} |")


if __name__ == "__main__":
    main()
