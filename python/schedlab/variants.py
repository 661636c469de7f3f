"""``schedlab compare``: two variants of a scenario on the same seeds, every figure's
difference with a confidence interval.

Both variants run every seed. Each task draws its random durations from a stream of its
own seeded by the run's seed, so seed *s* of A and seed *s* of B see the same workload
and differ only by the change: the per-seed differences d_s = B_s - A_s are *paired*.
The interval is the paired Student t-interval, mean(d) +- t(0.975, n-1) x sd(d) / sqrt(n)
(95 % by default), which assumes the d_s are roughly normal; with one seed there is no
interval. The relative change is mean(d) / mean(A).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .figures import figures
from .scenario import Scenario

__all__ = ["MetricDiff", "Comparison", "compare_scenarios", "paired_t_interval", "t_quantile", "t_cdf"]


# ------------------------------------------------------------------ Student t
def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(lbeta + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t (bisection on :func:`t_cdf`)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def paired_t_interval(diffs: Sequence[float], level: float = 0.95) -> tuple[float, float | None, float | None]:
    """(mean, low, high) of the paired differences; no interval below two pairs."""
    n = len(diffs)
    m = sum(diffs) / n
    if n < 2:
        return m, None, None
    sd = math.sqrt(sum((d - m) ** 2 for d in diffs) / (n - 1))
    half = t_quantile(0.5 + level / 2.0, n - 1) * sd / math.sqrt(n)
    return m, m - half, m + half


# ------------------------------------------------------------------ comparison
@dataclass(frozen=True)
class MetricDiff:
    metric: str
    n: int
    mean_a: float
    mean_b: float
    diff: float
    low: float | None
    high: float | None

    @property
    def relative(self) -> float | None:
        return self.diff / self.mean_a if self.mean_a else None

    @property
    def significant(self) -> bool:
        """The interval excludes zero."""
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "n": self.n, "mean_a": self.mean_a, "mean_b": self.mean_b, "diff": self.diff,
                "ci_low": self.low, "ci_high": self.high, "relative": self.relative, "significant": self.significant}


@dataclass
class Comparison:
    label_a: str
    label_b: str
    seeds: list[int]
    level: float
    diffs: list[MetricDiff] = field(default_factory=list)
    method: str = "paired Student t-interval over seeds"

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.label_a, "b": self.label_b, "seeds": self.seeds, "level": self.level,
                "method": self.method, "metrics": [d.to_dict() for d in self.diffs]}


def diff_figures(fig_a: Sequence[dict[str, float]], fig_b: Sequence[dict[str, float]],
                 level: float = 0.95) -> list[MetricDiff]:
    """Per figure present in both, the paired differences over seeds (fig_a[i] and
    fig_b[i] are the same seed)."""
    names = list(dict.fromkeys([k for f in fig_a for k in f] + [k for f in fig_b for k in f]))
    out = []
    for name in names:
        pairs = [(a[name], b[name]) for a, b in zip(fig_a, fig_b)
                 if name in a and name in b and math.isfinite(a[name]) and math.isfinite(b[name])]
        if not pairs:
            continue
        d, lo, hi = paired_t_interval([b - a for a, b in pairs], level)
        out.append(MetricDiff(name, len(pairs), sum(a for a, _ in pairs) / len(pairs),
                              sum(b for _, b in pairs) / len(pairs), d, lo, hi))
    return out


def compare_scenarios(a: Scenario, b: Scenario, seeds: Sequence[int], *, label_a: str = "A", label_b: str = "B",
                      level: float = 0.95, workers: int | None = None, backend: str = "process",
                      on_done: Callable[[int], None] | None = None) -> Comparison:
    """Runs ``a`` and ``b`` on every seed (all runs in one parallel pool) and compares."""
    import json

    from .parallel import Job, map_runs

    seeds = [int(s) for s in seeds]
    jobs = [Job(a.json, s) for s in seeds] + [Job(b.json, s) for s in seeds]
    texts = map_runs(jobs, workers=workers, backend=backend, on_done=on_done)
    figs = [figures(json.loads(t)) for t in texts]
    n = len(seeds)
    return Comparison(label_a, label_b, seeds, level, diff_figures(figs[:n], figs[n:], level))
