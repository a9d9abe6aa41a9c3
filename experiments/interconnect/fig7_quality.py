#!/usr/bin/env python3
"""Seed 004's Fig. 7: a thin layer over
:mod:`approxnet.interconnect.fig7_quality` (also `approxnet repro
interconnect/fig7`) writing to results/interconnect/ of this
checkout; the arguments are the module's (``--help``)."""

from __future__ import annotations

import sys
from pathlib import Path

from approxnet.interconnect.fig7_quality import main

if __name__ == "__main__":
    out = Path(__file__).resolve().parents[2] / "results" / "interconnect"
    args = sys.argv[1:]
    main(args if "--out" in args else [*args, "--out", str(out)])
