"""A run's figures as one flat ``{name: number}`` mapping: what sweeps store as columns,
what ``schedlab compare`` tests and what ``schedlab run`` prints.

Names, in this order:

- ``workload.X``: the workload generator's own figures;
- ``group.NAME.X``: cpu.stat of every group with a quota (:func:`bandwidth_figures`);
- ``latency.HIST.X``: each latency histogram's ``count``, ``mean_us``, ``p50_us``,
  ``p90_us``, ``p99_us``, ``p999_us``, ``max_us`` (``HIST`` is e.g. ``wakeup_latency``:
  from a task's wakeup to its first instruction on a CPU, throttled time included);
- ``rate.NAME.X``: the completions per second of a ``record`` step's histogram NAME
  (the core's ``NAME_per_second`` histogram, counted over 100 ms bins: its values are
  counts per second, not nanoseconds): ``bins``, ``mean_per_s``, ``p20_per_s``,
  ``p50_per_s``, ``p90_per_s``, ``min_per_s``, ``max_per_s``;
- ``summary.X``: machine-wide scheduler counters;
- ``engine.events``, ``engine.sim_s``.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["figures", "figure_sort_key", "latency_figures", "rate_figures", "LATENCY_FIELDS", "RATE_FIELDS", "RATE_SUFFIX"]

# (histogram summary field, figure name, divisor to the figure's unit)
LATENCY_FIELDS = (("count", "count", 1.0), ("mean_ns", "mean_us", 1e3), ("p50_ns", "p50_us", 1e3),
                  ("p90_ns", "p90_us", 1e3), ("p99_ns", "p99_us", 1e3), ("p999_ns", "p999_us", 1e3),
                  ("max_ns", "max_us", 1e3))


_PERCENTILE = re.compile(r"(?<![A-Za-z0-9])p(\d+)(?![0-9])")


def bandwidth_figures(raw: dict[str, Any]) -> dict[str, dict[str, float]]:
    """cpu.stat figures of every group with a quota, by group name, plus two derived ones
    an SRE reads off a Kubernetes dashboard:

    - ``usage_of_quota``: CPU time used / (quota x elapsed periods), the elapsed periods
      being the simulated time (after the warm-up) over the period (cpuacct usage rate /
      CPU limit);
    - ``throttled_share``: nr_throttled / nr_periods (container_cpu_cfs_throttled_periods
      / container_cpu_cfs_periods; 0 when no period was counted).

    Also ``usage_ms``, ``nr_periods``, ``nr_throttled``, ``throttled_time_s`` (summed over
    the group's per-CPU runqueues, as cpu.stat does, so it can exceed wall time),
    ``nr_bursts`` and ``burst_time_s``.
    """
    sim_ns = float(raw.get("engine", {}).get("sim_ns") or 0)
    # After a [run] warmup_s the figures cover the measured window only.
    sim_ns -= float(raw.get("summary", {}).get("warmup_seconds") or 0) * 1e9
    out: dict[str, dict[str, float]] = {}
    for g in raw.get("groups", []):
        quota, period = g.get("quota_ns"), g.get("period_ns") or 0
        if quota is None or not period:
            continue
        periods = sim_ns / period
        nr_periods = float(g.get("nr_periods", 0))
        out[g["name"]] = {
            "usage_ms": g.get("usage_ns", 0) / 1e6,
            "usage_of_quota": g.get("usage_ns", 0) / (quota * periods) if periods > 0 else math.nan,
            "nr_periods": nr_periods,
            "nr_throttled": float(g.get("nr_throttled", 0)),
            "throttled_share": g.get("nr_throttled", 0) / nr_periods if nr_periods > 0 else 0.0,
            "throttled_time_s": g.get("throttled_time", 0) / 1e9,
            "nr_bursts": float(g.get("nr_bursts", 0)),
            "burst_time_s": g.get("burst_time", 0) / 1e9,
        }
    return out


def figure_sort_key(name: str) -> tuple:
    """Sorts figure names as text except percentiles, by value: p50 < p90 < p99 < p999
    (as text p999 comes before p99). A percentile's digits are its fraction's: p999 is 0.999."""
    key: list = []
    pos = 0
    for m in _PERCENTILE.finditer(name):
        key += [(name[pos:m.start()], 0.0), ("p", float("0." + m.group(1)))]
        pos = m.end()
    key.append((name[pos:], 0.0))
    return tuple(key)


def _num(v: Any) -> float:
    if v is None or isinstance(v, bool):
        return math.nan if v is None else float(v)
    return float(v)


# A histogram of rates (docs/schema.md): completions per second over 100 ms bins.
RATE_SUFFIX = "_per_second"
# (histogram summary field, figure name): the values are already per second.
RATE_FIELDS = (("count", "bins"), ("mean_ns", "mean_per_s"), ("p20_ns", "p20_per_s"), ("p50_ns", "p50_per_s"),
               ("p90_ns", "p90_per_s"), ("min_ns", "min_per_s"), ("max_ns", "max_per_s"))


def rate_figures(raw: dict[str, Any]) -> dict[str, float]:
    """``rate.NAME.FIELD`` of every rate histogram (``NAME_per_second``) with a bin."""
    out: dict[str, float] = {}
    for name, h in sorted(raw.get("histograms", {}).items()):
        if name.endswith(RATE_SUFFIX) and h.get("count"):
            for src, dst in RATE_FIELDS:
                out[f"rate.{name[: -len(RATE_SUFFIX)]}.{dst}"] = _num(h.get(src))
    return out


def latency_figures(raw: dict[str, Any]) -> dict[str, float]:
    """``latency.HIST.FIELD`` of every latency histogram with at least one sample (rate
    histograms are :func:`rate_figures`)."""
    out: dict[str, float] = {}
    for name, h in sorted(raw.get("histograms", {}).items()):
        if not h.get("count") or name.endswith(RATE_SUFFIX):
            continue
        for src, dst, div in LATENCY_FIELDS:
            out[f"latency.{name}.{dst}"] = _num(h.get(src)) / div
    return out


def figures(raw: dict[str, Any]) -> dict[str, float]:
    """Every figure of one RunResult (see the module doc), as floats (NaN for null)."""
    out: dict[str, float] = {}
    wl = raw.get("workload", {})
    for k in sorted(wl, key=figure_sort_key):  # p99 before p999, as `schedlab run` prints them
        out[f"workload.{k}"] = _num(wl[k])
    for group, figs in bandwidth_figures(raw).items():
        for k, v in figs.items():
            out[f"group.{group}.{k}"] = _num(v)
    out.update(latency_figures(raw))
    out.update(rate_figures(raw))
    summary = raw.get("summary", {})
    for k in sorted(summary, key=figure_sort_key):
        out[f"summary.{k}"] = _num(summary[k])
    eng = raw.get("engine", {})
    if "events" in eng:
        out["engine.events"] = _num(eng["events"])
    if "sim_ns" in eng:
        out["engine.sim_s"] = _num(eng["sim_ns"]) / 1e9
    return out
