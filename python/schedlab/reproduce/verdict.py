"""The verdict: is each published figure reproduced? One row per published figure.

One judgement, :func:`judge`, used by ``schedlab reproduce`` and ``schedlab
sensitivity`` alike. The bar (docs/experiments.md, "The verdict"), declared before any
figure was looked at and the same for every experiment; every row gets one class of
:class:`Verdict`:

- a **level** (an absolute figure: seconds, ns, a share) is ``reproduced`` when the
  simulated mean is within :data:`LEVEL_TOLERANCE` (25 %) of the published figure, or the
  published figure lies inside the simulated 5-95 % range over seeds; ``not reproduced``
  otherwise (a level has no direction). A calibrated figure that the factor was fitted
  on matches by construction: it is ``fitted`` and counts neither way.
- a **change** (a published ratio "A vs B", or a reduction in %) is judged on its
  effect, ``e = ratio - 1``. Where the published effect is under :data:`NO_EFFECT` (2 %:
  "no significant effect"; a band of 25 % of it would be narrower than the rounding of
  the published figures), the simulated one must be too, or its 5-95 % range must include
  no change. Otherwise it is ``reproduced`` when ``|e_sim - e_pub| <= 25 % |e_pub|``
  (:data:`EFFECT_TOLERANCE`), or, where the seeds spread widely (their 5-95 % range of
  the ratio is wider than that band: the model says the outcome varies more than the bar
  allows), when the published ratio lies inside that range; ``direction only`` when it
  goes the same way (a simulated change of at least 2 %) but neither holds; ``not
  reproduced`` otherwise.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from .compare import Row
from .registry import Experiment

__all__ = ["LEVEL_TOLERANCE", "NO_EFFECT", "EFFECT_TOLERANCE", "Verdict", "Judged", "judge", "verdict_rows",
           "summary_counts", "per_experiment", "display_order"]

# Declared bars (docs/experiments.md), not fitted to any result.
LEVEL_TOLERANCE = 0.25
NO_EFFECT = 0.02
EFFECT_TOLERANCE = 0.25


class Verdict(str, enum.Enum):
    """A row's class; the value is what the tables print."""

    REPRODUCED = "reproduced"
    DIRECTION_ONLY = "direction only"
    NOT_REPRODUCED = "not reproduced"
    FITTED = "fitted"
    NO_RESULT = "no result"

    def __str__(self) -> str:
        return self.value


# Old names, kept for callers that compare with them.
YES, DIRECTION, NO, FITTED, NONE = (Verdict.REPRODUCED, Verdict.DIRECTION_ONLY, Verdict.NOT_REPRODUCED,
                                    Verdict.FITTED, Verdict.NO_RESULT)


@dataclass(frozen=True)
class Judged:
    """A published figure, its simulated counterpart and the verdict."""

    row: Row
    kind: str  # "level" or "change"
    verdict: Verdict
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


def _judge_level(row: Row, pub: float, sim: float | None) -> Judged:
    if sim is None:
        return Judged(row, "level", NONE, "no run produced it")
    if row.calibrated and pub and abs(sim / pub - 1.0) < 1e-9:
        return Judged(row, "level", FITTED, "factor fitted here")
    within = pub != 0 and abs(sim / pub - 1.0) <= LEVEL_TOLERANCE
    in_range = row.simulated_p5 is not None and row.simulated_p5 <= pub <= (row.simulated_p95 or row.simulated_p5)
    off = f"{(sim / pub - 1.0) * 100:+.0f} %" if pub else "published 0"
    return Judged(row, "level", YES if within or in_range else NO,
                  off + (", in p5-p95" if in_range and not within else ""))


def judge(row: Row) -> Judged:
    """The verdict on one row with a published figure (see the module doc)."""
    pub, sim = row.published, row.simulated_mean
    if pub is None:
        raise ValueError("judge: the row has no published figure")
    if not is_change(row):
        return _judge_level(row, pub, sim)
    rp, rs = _as_ratio(row, pub), _as_ratio(row, sim)
    if rs is None or rp is None or rp <= 0 or rs <= 0:
        return Judged(row, "change", NONE, "no ratio")
    lo, hi = _as_ratio(row, row.simulated_p5), _as_ratio(row, row.simulated_p95)
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    spread = lo is not None and hi is not None
    e_pub, e_sim = rp - 1.0, rs - 1.0
    sim_change = f"{e_sim * 100:+.1f} %"
    if abs(e_pub) < NO_EFFECT:
        ok = abs(e_sim) < NO_EFFECT or (spread and lo <= 1.0 <= hi)
        return Judged(row, "change", YES if ok else NO, f"sim. {sim_change}, pub. none")
    size = e_sim / e_pub
    tol = EFFECT_TOLERANCE * abs(e_pub)
    if abs(e_sim - e_pub) <= tol * (1.0 + 1e-9):  # the band's edge is in it, rounding aside
        return Judged(row, "change", YES, f"effect x{size:.2f}")
    # Seeds spread wider than the band: one published run is one draw of that spread.
    if spread and hi - lo > 2.0 * tol and lo <= rp <= hi:
        return Judged(row, "change", YES, f"effect x{size:.2f}, in p5-p95")
    if abs(e_sim) < NO_EFFECT or e_sim * e_pub < 0:
        return Judged(row, "change", NO, f"sim. {sim_change}, pub. {e_pub * 100:+.1f} %")
    return Judged(row, "change", DIRECTION, f"effect x{size:.2f}")


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


def summary_counts(judged: Sequence[Judged]) -> dict[Verdict, int]:
    """Rows per class, every class present (keys compare equal to their printed names)."""
    counts = {v: 0 for v in Verdict}
    for j in judged:
        counts[j.verdict] += 1
    return counts


def per_experiment(judged: Sequence[Judged]) -> list[tuple[str, dict[Verdict, int]]]:
    """:func:`summary_counts` per experiment, in the order the experiments come."""
    names = list(dict.fromkeys(j.row.experiment for j in judged))
    return [(n, summary_counts([j for j in judged if j.row.experiment == n])) for n in names]


def display_order(judged: Sequence[Judged]) -> tuple[list[Judged], list[Judged]]:
    """(the rows not reproduced, or without a result; the rest), each in the rows' order:
    the tables show the first first, so what failed is read before what passed."""
    bad = [j for j in judged if j.verdict in (NO, NONE)]
    return bad, [j for j in judged if j.verdict not in (NO, NONE)]


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
