"""Comparison of simulated figures with published ones: the rows `schedlab reproduce` prints.

Per (machine, configuration, metric): published figure, simulated mean and spread
(sample standard deviation) over seeds, the median and the 5th/95th percentiles of the
per-seed values (where the model says the outcome varies from run to run, a published
single run is judged against that range), and the ratio of mean to published. Per non-baseline
configuration, one more row per metric: the change "CONFIG vs BASELINE" as a ratio,
simulated as the mean over seeds of the paired per-seed ratio (the same seeds run in
every configuration). A metric marked ``calibrate`` on an experiment whose baseline has
a published absolute figure is scaled by one factor per machine so the baseline's mean
matches it; those rows are ``calibrated`` and carry ``scale``. Change rows never are.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..results import figure
from .registry import Experiment

__all__ = ["Row", "compare", "compare_grouped", "ROW_FIELDS", "mean_std", "quantile", "seed_values", "value_row",
           "change_row", "ratio_of_means_row", "published_rank"]

# The stable JSON fields of a row, in order (docs/schema.md).
ROW_FIELDS = ("experiment", "machine", "config", "metric", "unit", "published", "simulated_mean",
              "simulated_std", "n_seeds", "calibrated", "ratio", "scale", "simulated_median", "simulated_p5",
              "simulated_p95", "published_rank")


@dataclass(frozen=True)
class Row:
    experiment: str
    machine: str
    config: str
    metric: str
    unit: str
    published: float | None
    simulated_mean: float | None
    simulated_std: float | None
    n_seeds: int
    calibrated: bool
    ratio: float | None
    scale: float | None
    simulated_median: float | None = None
    simulated_p5: float | None = None
    simulated_p95: float | None = None
    # Where the published figure falls among the seeds: the percentage of per-seed values
    # below it (ties count half); None without a published figure or where every seed
    # gives the same value (the model says the outcome does not vary).
    published_rank: float | None = None
    # --idle-check: the same row with every CPU's idle capped at its halt state, and
    # whether the effect depends on the idle states (see runner.idle_check).
    idle_capped_mean: float | None = None
    idle_dependent: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def mean_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (0 for a single value); None if empty."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if not vals:
        return None, None
    m = sum(vals) / len(vals)
    if len(vals) == 1:
        return m, 0.0
    var = sum((v - m) ** 2 for v in vals) / (len(vals) - 1)
    return m, math.sqrt(var)


def quantile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``values``, linearly interpolated between order
    statistics (numpy's default); None if empty."""
    vals = sorted(v for v in values if v is not None and math.isfinite(v))
    if not vals:
        return None
    pos = q * (len(vals) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def published_rank(values: Sequence[float], published: float | None) -> float | None:
    """Percentage of ``values`` below ``published`` (ties count half): where one published
    run falls in the distribution the seeds give. None if there is no published figure or
    the values do not vary."""
    vals = [v for v in values if v is not None and math.isfinite(v)]
    if published is None or len(vals) < 2 or min(vals) == max(vals):
        return None
    below = sum(1.0 if v < published else 0.5 if v == published else 0.0 for v in vals)
    return 100.0 * below / len(vals)


def _spread(vals: Sequence[float], published: float | None = None) -> dict[str, float | None]:
    return {"simulated_median": quantile(vals, 0.5), "simulated_p5": quantile(vals, 0.05),
            "simulated_p95": quantile(vals, 0.95), "published_rank": published_rank(vals, published)}


def _ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0 or not (math.isfinite(a) and math.isfinite(b)):
        return None
    return a / b


def _values(raws: Sequence[dict], metric: str) -> dict[int, float]:
    out = {}
    for r in raws:
        try:
            out[r["seed"]] = figure(r, metric)
        except KeyError:
            continue
    return out


def seed_values(raws: Sequence[dict], metric: str) -> dict[int, float]:
    """``{seed: figure}`` over runs that produced ``metric`` (for custom ``compare`` hooks)."""
    return _values(raws, metric)


def value_row(exp: Experiment, machine: str, config: str, metric: str, unit: str, values: dict[int, float],
              published: float | None, scale: float | None = None) -> Row:
    """A configuration's row: mean ± std of ``values`` (times ``scale`` if calibrated)."""
    vals = [v * scale for v in values.values()] if scale is not None else list(values.values())
    m, s = mean_std(vals)
    return Row(exp.name, machine, config, metric, unit, published, m, s, len(vals), scale is not None,
               _ratio(m, published), scale, **_spread(vals, published))


def change_row(exp: Experiment, machine: str, config: str, base: str, metric: str, a: dict[int, float],
               b: dict[int, float], published: float | None) -> Row:
    """The change row ``"CONFIG vs BASE"``: mean over seeds of the per-seed ratio a/b, never
    calibrated."""
    paired = [a[seed] / b[seed] for seed in a if seed in b and b[seed] != 0]
    m, s = mean_std(paired)
    return Row(exp.name, machine, f"{config} vs {base}", metric, "ratio", published, m, s, len(paired), False,
               _ratio(m, published), None, **_spread(paired, published))


def ratio_of_means_row(exp: Experiment, machine: str, config: str, base: str, metric: str, a: dict[int, float],
                       b: dict[int, float], published: float | None) -> Row:
    """``"CONFIG vs BASE (ratio of means)"``: mean of ``a`` over mean of ``b`` on the seeds
    both have. Unlike the mean of per-seed ratios it does not ride a heavy tail of small
    baselines; it has no spread of its own (std, median and percentiles are null)."""
    seeds = [s for s in a if s in b]
    ma, _ = mean_std([a[s] for s in seeds])
    mb, _ = mean_std([b[s] for s in seeds])
    m = _ratio(ma, mb)
    return Row(exp.name, machine, f"{config} vs {base} (ratio of means)", metric, "ratio", published, m, None,
               len(seeds), False, _ratio(m, published), None)


def compare(exp: Experiment, runs: dict[tuple[str, str], Sequence[dict]]) -> list[Row]:
    """Builds the rows of one experiment from its runs: ``{(machine, config): [RunResult dict
    per seed]}``. Uses the experiment's own ``compare`` hook if it has one."""
    if exp.compare is not None:
        return exp.compare(exp, runs)
    rows: list[Row] = []
    machines = list(dict.fromkeys(m for m, _ in runs))
    for machine in machines:
        for metric in exp.metrics:
            per_config = {c: _values(runs.get((machine, c), []), metric.name) for c in exp.configs}
            base_mean, _ = mean_std(list(per_config[exp.baseline].values()))
            scale = None
            if metric.calibrate:
                pub_base = exp.published_value(machine, exp.baseline, metric.key)
                if pub_base is not None and base_mean:
                    scale = pub_base / base_mean
            for config in exp.configs:
                vals = list(per_config[config].values())
                if scale is not None:
                    vals = [v * scale for v in vals]
                m, s = mean_std(vals)
                pub = exp.published_value(machine, config, metric.key)
                rows.append(Row(exp.name, machine, config, metric.key, metric.unit, pub, m, s, len(vals),
                                scale is not None, _ratio(m, pub), scale, **_spread(vals, pub)))
            base = per_config[exp.baseline]
            for config in exp.configs:
                if config == exp.baseline:
                    continue
                paired = [per_config[config][seed] / base[seed]
                          for seed in per_config[config] if seed in base and base[seed] != 0]
                m, s = mean_std(paired)
                name = f"{config} vs {exp.baseline}"
                pub = exp.published_value(machine, name, metric.key)
                if pub is None:
                    pub = _ratio(exp.published_value(machine, config, metric.key),
                                 exp.published_value(machine, exp.baseline, metric.key))
                rows.append(Row(exp.name, machine, name, metric.key, "ratio", pub, m, s, len(paired),
                                False, _ratio(m, pub), None, **_spread(paired, pub)))
    return rows


def compare_grouped(exp: Experiment, runs: dict[tuple[str, str], Sequence[dict]],
                    groups: Sequence[tuple[Sequence[str], str]]) -> list[Row]:
    """The generic comparison, done separately for each group of configurations with its
    own baseline: ``groups`` = [(configs, baseline), ...]. For experiments whose
    configurations form a grid (kernel behaviour x CPU count, x workload shape, ...), so
    that a change row only compares configurations of one grid point. An experiment
    passes ``compare=lambda exp, runs: compare_grouped(exp, runs, GROUPS)``."""
    rows: list[Row] = []
    for configs, baseline in groups:
        sub = dataclasses.replace(exp, configs=tuple(configs), baseline=baseline, compare=None,
                                  published=list(exp.published or []))
        rows += compare(sub, {k: v for k, v in runs.items() if k[1] in sub.configs})
    return rows
