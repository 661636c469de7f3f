"""The verdict: is each published figure reproduced? One row per published figure.

The bar (docs/experiments.md, "The verdict"), declared before any figure was looked at
and the same for every experiment:

- a **level** (an absolute figure: seconds, ns, a share) is reproduced when the
  simulated mean is within :data:`LEVEL_TOLERANCE` (25 %) of the published figure, or the
  published figure lies inside the simulated 5-95 % range over seeds. A calibrated figure
  that the factor was fitted on matches by construction: it is marked ``fitted`` and
  counts neither way.
- a **change** (a published ratio "A vs B", or a reduction in %) is judged on its
  direction and size, as effects: ``e = ln(ratio)``. Where the published change is
  smaller than :data:`NO_EFFECT` (2 %: "no significant effect"), the simulated change
  must be too (or its 5-95 % range must include no change). Otherwise the simulated
  change must go the same way (``yes`` needs that) and be within a factor
  :data:`EFFECT_FACTOR` (2) of the published effect: ``1/2 <= e_sim / e_pub <= 2``.
  Same direction but a size outside that: ``direction only``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .compare import Row
from .registry import Experiment

__all__ = ["LEVEL_TOLERANCE", "NO_EFFECT", "EFFECT_FACTOR", "Judged", "judge", "verdict_rows", "summary_counts"]

# Declared bars (docs/experiments.md), not fitted to any result.
LEVEL_TOLERANCE = 0.25
NO_EFFECT = 0.02
EFFECT_FACTOR = 2.0

YES, DIRECTION, NO, FITTED, NONE = "yes", "direction only", "no", "fitted", "no result"


@dataclass(frozen=True)
class Judged:
    """A published figure, its simulated counterpart and the verdict."""

    row: Row
    kind: str  # "level" or "change"
    verdict: str  # YES, DIRECTION, NO, FITTED or NONE
    why: str  # a few words: how far off, or which way


def _as_ratio(row: Row, value: float | None) -> float | None:
    """A change row's figure as a ratio (a reduction in % becomes 1 - pct/100)."""
    if value is None:
        return None
    if row.unit == "%" and row.metric.endswith(("reduction_pct", "saving_pct")):
        return 1.0 - value / 100.0
    return value


def is_change(row: Row) -> bool:
    return row.unit == "ratio" or " vs " in row.config


def judge(row: Row) -> Judged:
    """The verdict on one row with a published figure (see the module doc)."""
    pub, sim = row.published, row.simulated_mean
    if pub is None:
        raise ValueError("judge: the row has no published figure")
    if not is_change(row):
        if sim is None:
            return Judged(row, "level", NONE, "no run produced it")
        if row.calibrated and pub and abs(sim / pub - 1.0) < 1e-9:
            return Judged(row, "level", FITTED, "factor fitted here")
        within = pub != 0 and abs(sim / pub - 1.0) <= LEVEL_TOLERANCE
        in_range = row.simulated_p5 is not None and row.simulated_p5 <= pub <= (row.simulated_p95 or row.simulated_p5)
        off = f"{(sim / pub - 1.0) * 100:+.0f} %" if pub else "published 0"
        return Judged(row, "level", YES if within or in_range else NO,
                      off + (" (pub. in p5-p95)" if in_range and not within else ""))
    rp, rs = _as_ratio(row, pub), _as_ratio(row, sim)
    if rs is None or rp is None or rp <= 0 or rs <= 0:
        return Judged(row, "change", NONE, "no ratio")
    lo, hi = _as_ratio(row, row.simulated_p5), _as_ratio(row, row.simulated_p95)
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    covers_none = lo is not None and hi is not None and lo <= 1.0 <= hi
    sim_change = f"{(rs - 1.0) * 100:+.1f} %"
    if abs(rp - 1.0) < NO_EFFECT:
        ok = abs(rs - 1.0) < NO_EFFECT or covers_none
        return Judged(row, "change", YES if ok else NO, f"pub. no effect; sim. {sim_change}")
    e_pub, e_sim = math.log(rp), math.log(rs)
    if abs(rs - 1.0) < NO_EFFECT or e_sim * e_pub < 0:
        return Judged(row, "change", NO, f"sim. {sim_change}, pub. {(rp - 1.0) * 100:+.1f} %")
    size = e_sim / e_pub
    ok = 1.0 / EFFECT_FACTOR <= size <= EFFECT_FACTOR
    return Judged(row, "change", YES if ok else DIRECTION, f"effect x{size:.2f}")


def verdict_rows(rows: Sequence[Row], experiments: Sequence[Experiment] = ()) -> list[Judged]:
    """One verdict per published figure, in the rows' order. Where an experiment gives a
    figure two ways (a change as the mean of per-seed ratios and as the ratio of means),
    the first (per-seed, with a spread) is judged. With ``experiments``, only rows of the
    configurations the published figures were measured in: a what-if configuration that
    an experiment compares with a published figure (another hypothesis) is in its own
    table, not in the verdict."""
    wanted = {e.name: e.published_configs() for e in experiments}
    out: list[Judged] = []
    seen: set = set()
    for r in rows:
        if r.published is None:
            continue
        if r.experiment in wanted:
            parts = [c.strip() for c in r.config.replace(" (ratio of means)", "").split(" vs ")]
            if not all(c in wanted[r.experiment].get(r.machine, ()) for c in parts):
                continue
        key = (r.experiment, r.machine, r.config.replace(" (ratio of means)", ""), r.metric)
        if key in seen:
            continue
        seen.add(key)
        out.append(judge(r))
    return out


def summary_counts(judged: Sequence[Judged]) -> dict[str, int]:
    counts = {YES: 0, DIRECTION: 0, NO: 0, FITTED: 0, NONE: 0}
    for j in judged:
        counts[j.verdict] += 1
    return counts


def seeds_note(experiments: Sequence[Experiment], rows: Sequence[Row]) -> dict[str, str]:
    """Per experiment: how it was run for the verdict (seeds, shorter runs, options)."""
    out = {}
    for e in experiments:
        mine = [r.n_seeds for r in rows if r.experiment == e.name and not is_change(r)] or \
               [r.n_seeds for r in rows if r.experiment == e.name]
        n = max(mine, default=0)
        v = e.verdict
        bits = [f"{n} seed{'s' if n != 1 else ''}"]
        if v is not None and v.quick:
            bits.append("--quick runs")
        if v is not None:
            bits += [f"--{k.replace('_', '-')} {val}" for k, val in v.options]
        out[e.name] = ", ".join(bits)
    return out
