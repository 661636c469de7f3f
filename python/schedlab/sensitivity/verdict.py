"""How far the constants' uncertainty reaches: a simulated row's seed spread widened by
its constant band, and what a constant would need to be for a row to reach its published
figure.

The row's verdict is not judged here: it is :func:`schedlab.reproduce.verdict.judge`'s,
the same as `schedlab reproduce` gives the row. This module says, for a row that is not
reproduced, whether the published figure lies inside the seed spread (p5..p95 over seeds
at the nominal constants) widened by the constant band: by how far the design moved the
figure below and above its nominal value (min - nominal, max - nominal, on the reference
seed). Otherwise the constant that moves it most (mu*) is extrapolated linearly, along its
one-at-a-time slope, to the value at which the figure would just reach the published one;
the output says whether that value lies outside the constant's band.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Consistency", "Needed", "consistency", "needed_value"]


@dataclass(frozen=True)
class Needed:
    key: str
    value: float  # the constant's value at which the row would just be consistent
    low: float
    high: float
    nominal: float

    @property
    def outside_band(self) -> bool:
        return not (self.low <= self.value <= self.high)

    def text(self) -> str:
        where = "outside its band" if self.outside_band else "inside its band by linear extrapolation"
        return (f"{self.key} would have to be {self.value:.4g} (band {self.low:.4g}-{self.high:.4g}, nominal "
                f"{self.nominal:.4g}): {where}")


@dataclass(frozen=True)
class Consistency:
    consistent: bool | None  # published inside [low, high]; None: nothing published or simulated
    low: float | None  # the widened interval
    high: float | None
    needed: Needed | None = None


def consistency(published: float | None, p5: float | None, p95: float | None, nominal: float | None,
                cmin: float | None, cmax: float | None) -> Consistency:
    """``p5``/``p95``: the seed spread; ``nominal``: the reference seed's figure at the
    nominal constants; ``cmin``/``cmax``: its min and max over the design (the constant
    band). Without a design (no uncertain constant) the band has zero width."""
    if p5 is None or p95 is None:
        return Consistency(None, None, None)
    below = (nominal - cmin) if nominal is not None and cmin is not None else 0.0
    above = (cmax - nominal) if nominal is not None and cmax is not None else 0.0
    lo, hi = p5 - max(below, 0.0), p95 + max(above, 0.0)
    if published is None or not math.isfinite(published):
        return Consistency(None, lo, hi)
    eps = 1e-12 * max(1.0, abs(published))
    return Consistency(lo - eps <= published <= hi + eps, lo, hi)


def needed_value(published: float, p5: float, p95: float, candidates: Sequence[tuple[str, float, float, float, float]]
                 ) -> Needed | None:
    """For an inconsistent row: ``candidates`` = (key, slope, low, high, nominal) in mu*
    order (slope: figure per unit of the constant, from its band edges). The first with a
    slope gives the value that shifts the seed spread's nearer edge onto ``published``."""
    for key, slope, low, high, nominal in candidates:
        if not slope or not math.isfinite(slope):
            continue
        shift = published - (p95 if published > p95 else p5)
        return Needed(key, nominal + shift / slope, low, high, nominal)
    return None
