#!/usr/bin/env python3
"""Seed 004's Fig. 3: a thin layer over
:mod:`approxnet.interconnect.fig3_ber` (also `approxnet repro
interconnect/fig3`) writing to results/interconnect/ of this
checkout; the arguments are the module's (``--help``)."""

from __future__ import annotations

import sys
from pathlib import Path

from approxnet.interconnect.fig3_ber import main

if __name__ == "__main__":
    out = Path(__file__).resolve().parents[2] / "results" / "interconnect"
    args = sys.argv[1:]
    main(args if "--out" in args else [*args, "--out", str(out)])
