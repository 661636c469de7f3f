"""Morris elementary effects through SALib: the design over the constants' bands and the
ranking of their effects (mu*, the mean absolute elementary effect; Campolongo et al.'s
revision of Morris 1991). Effects are in the figure's unit per full band of the constant,
so constants of different units compare."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .bands import Constant

__all__ = ["Effect", "morris_sample", "morris_analyze", "problem"]


@dataclass(frozen=True)
class Effect:
    key: str
    mu: float  # mean elementary effect, signed (figure's unit per band)
    mu_star: float  # mean absolute elementary effect
    sigma: float  # spread of the effects: interactions or non-linearity


def problem(constants: Sequence[Constant]) -> dict:
    return {"num_vars": len(constants), "names": [c.key for c in constants],
            "bounds": [[c.low, c.high] for c in constants]}


def morris_sample(constants: Sequence[Constant], trajectories: int, levels: int = 4, seed: int = 1) -> np.ndarray:
    """The design: ``trajectories`` x (k + 1) points, one row of constant values each."""
    from SALib.sample import morris as sample

    if not constants:
        return np.zeros((0, 0))
    x = sample.sample(problem(constants), int(trajectories), num_levels=int(levels), seed=int(seed))
    return np.asarray(x, dtype=float)


def morris_analyze(constants: Sequence[Constant], x: np.ndarray, y: Sequence[float], levels: int = 4) -> list[Effect]:
    """Each constant's effect on ``y`` (one figure per design row), largest mu* first.
    A design row whose figure is missing makes the effects unknowable: [] then."""
    from SALib.analyze import morris as analyze

    y_arr = np.asarray(list(y), dtype=float)
    if not constants or len(y_arr) != len(x) or not np.all(np.isfinite(y_arr)):
        return []
    res = analyze.analyze(problem(constants), x, y_arr, num_levels=int(levels), print_to_console=False,
                          num_resamples=100, seed=1)
    # SALib scales each effect by delta of the unit hypercube: per band, as documented above.
    out = [Effect(str(k), float(mu), float(ms), float(sg) if np.isfinite(sg) else 0.0)
           for k, mu, ms, sg in zip(res["names"], res["mu"], res["mu_star"], res["sigma"])]
    return sorted(out, key=lambda e: (-e.mu_star, e.key))
