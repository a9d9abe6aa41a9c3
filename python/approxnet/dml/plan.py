"""The runs of the seed 001 §3.1 study: one simulator run per model,
collective and scheme over the shipped leaf-spine (``dml/leafspine``, or
``dml/quick`` at CI size) with the model's synchronisation pattern set by
``--set`` overrides (seed 001: 001_254954cce2026753.txt)."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ..figures import Run

__all__ = [
    "COLLECTIVES",
    "SCHEMES",
    "DmlRun",
    "Scheme",
    "models",
    "overrides",
    "plan",
    "scheme",
]

LINE_BPS = 40e9
"""Seed 001 §3.1: every link 40 Gbps."""

STUDIES = Path(__file__).resolve().parent.parent / "studies" / "dml"


@dataclass(frozen=True)
class Scheme:
    """How one scheme runs a model's transfers."""

    key: str
    """Name in the tables."""
    scheme: str
    """The simulator's transport scheme."""
    bounded: bool = False
    """MSR = 1 - x1 (else 1)."""
    app_drop: bool = False
    """Send only (1 - x1) of the gradient, reliably (seed 001 §2.3, Fig. 3a)."""


SCHEMES = (
    Scheme("tcp", "tcp"),
    Scheme("dctcp", "dctcp"),
    Scheme("udp", "udp"),
    Scheme("atp", "atp-full"),
    Scheme("atp-bounded", "atp-full", bounded=True),
    Scheme("dctcp-es", "dctcp-es", bounded=True),
    Scheme("appdrop-tcp", "tcp", app_drop=True),
    Scheme("appdrop-dctcp", "dctcp", app_drop=True),
)
"""TCP, DCTCP, UDP, ATP reliable (MSR 1), ATP bounded (MSR 1 - x1),
DCTCP-EarlySend (MSR 1 - x1: the paper's "simplified protocol", send all,
stop at the fraction) and dropping (x1 of) the gradient at the application
then sending the rest reliably (Fig. 3a)."""

COLLECTIVES = ("ps", "ring")
"""Parameter server and ring all-reduce (seed 001 Fig. 3b)."""


def scheme(key: str) -> Scheme:
    """The scheme called ``key``; a ``KeyError`` naming the known ones."""
    for s in SCHEMES:
        if s.key == key:
            return s
    raise KeyError(f"no scheme {key!r} (known: {', '.join(s.key for s in SCHEMES)})")


@cache
def models() -> dict[str, dict[str, Any]]:
    """The models of seed 001 Table 2 (``studies/dml/models.toml``), by key."""
    with (STUDIES / "models.toml").open("rb") as f:
        return tomllib.load(f)


@cache
def scenario_shape(study: str) -> tuple[int, int]:
    """(training jobs, workers per job) of ``dml/<study>``."""
    with (STUDIES / f"{study}.toml").open("rb") as f:
        t = tomllib.load(f)["training"]
    return len(t), len(t[0]["workers"])


def ideal_net_us(collective: str, workers: int, grad_bytes: float) -> float:
    """Network time of one iteration on idle links (serialisation only)."""
    per = grad_bytes * 8 / LINE_BPS * 1e6
    if collective == "ps":  # W pushes into, W pulls out of the server link
        return 2 * workers * per
    return 2 * (workers - 1) * per / workers


def overrides(
    model: dict[str, Any],
    s: Scheme,
    collective: str,
    jobs: int,
    iterations: int,
    compute_us: float,
    duration_ms: float,
) -> list[str]:
    """The ``--set`` overrides that make every training job of the study
    run ``model`` with scheme ``s``."""
    x1 = float(model["x1"])
    grad = float(model["gradient_kb"]) * ((1 - x1) if s.app_drop else 1.0)
    msr = round(1 - x1, 6) if s.bounded else 1.0
    out = duration(duration_ms)
    for k in range(jobs):
        p = f"training.{k}"
        out += [
            f'{p}.collective="{collective}"',
            f'{p}.scheme="{s.scheme}"',
            f"{p}.msr={msr}",
            f"{p}.gradient_kb={grad:.3f}",
            f"{p}.messages={int(model['messages'])}",
            f"{p}.compute_us={compute_us:.3f}",
            f"{p}.iterations={iterations}",
        ]
    return out


def duration(ms: float) -> list[str]:
    """The overrides that make a run (and its background) last ``ms``."""
    return [f"duration_ms={ms:.3f}", f"jobs.0.stop_ms={ms:.3f}"]


@dataclass(frozen=True)
class DmlRun:
    """One run of the study and what it stands for."""

    run: Run
    model: str
    """Its key in models.toml (``mf``, ``mlp``, ...)."""
    collective: str
    scheme: str
    """A :data:`SCHEMES` key."""
    seed: int | None
    load: float | None
    """Background host load (None: the scenario's)."""
    compute_scale: float
    iterations: int
    duration_ms: float


def plan(
    *,
    schemes: Sequence[str] | None = None,
    model_keys: Sequence[str] | None = None,
    collectives: Sequence[str] = COLLECTIVES,
    quick: bool = False,
    iterations: int | None = None,
    seeds: Sequence[int | None] = (None,),
    loads: Sequence[float | None] = (None,),
    compute_scales: Sequence[float] = (1.0,),
) -> list[DmlRun]:
    """Every (compute scale, model, collective, scheme, seed, load) of the
    study as a labelled run (``mlp-ps-atp-bounded``; ``-s2``, ``-L0.3``,
    ``-x4`` where a seed, load or compute scale is given). ``quick``: the
    2 x 4 leaf-spine and 2 iterations (else 8). Each run lasts 2 ms plus,
    per iteration, compute + 1.5 x the idle network time + 1 ms; one that
    did not finish is run again, longer (:func:`approxnet.dml.longer`)."""
    study = "quick" if quick else "leafspine"
    iterations = iterations or (2 if quick else 8)
    ms = models()
    keys = list(model_keys) if model_keys else list(ms)
    for k in keys:
        if k not in ms:
            raise KeyError(f"no model {k!r} (known: {', '.join(ms)})")
    chosen = [scheme(k) for k in schemes] if schemes else list(SCHEMES)
    for c in collectives:
        if c not in COLLECTIVES:
            raise KeyError(f"no collective {c!r} (known: {', '.join(COLLECTIVES)})")
    jobs, workers = scenario_shape(study)
    out = []
    for scale in compute_scales:
        for key in keys:
            m = ms[key]
            compute = float(m["compute_us"]) * scale
            for coll in collectives:
                net = ideal_net_us(coll, workers, float(m["gradient_kb"]) * 1e3)
                dur = 2.0 + iterations * (compute + 1.5 * net + 1000) / 1e3
                for s in chosen:
                    base = overrides(m, s, coll, jobs, iterations, compute, dur)
                    for seed in seeds:
                        for load in loads:
                            label = f"{key}-{coll}-{s.key}"
                            sets = list(base)
                            if seed is not None:
                                label += f"-s{seed}"
                                sets.append(f"seed={seed}")
                            if load is not None:
                                label += f"-L{load:g}"
                                sets.append(f"jobs.0.load={load}")
                            if len(compute_scales) > 1:
                                label += f"-x{scale:g}"
                            run = Run(label, f"dml/{study}", tuple(sets))
                            out.append(
                                DmlRun(run, key, coll, s.key, seed, load, scale, iterations, dur)
                            )
    return out
