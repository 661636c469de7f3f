"""Figures from a probe's measurement and from a schedlab run, side by side.

Pure functions of recorded data: `real_figures` reads what `probe.run_config` returned,
`sim_figures` reads a RunResult dict, `compare` lines them up with relative
differences. cpu.stat figures follow the kernel's definitions (docs/schema.md):
`throttled_time` sums over the group's per-CPU runqueues.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from .configs import Config

# (key, unit, what) in display order; a figure missing on either side is left out.
METRICS = [
    ("usage_cpus", "CPUs", "CPU time used / elapsed time"),
    ("bursts_per_s", "1/s", "bursts completed per second, all threads"),
    ("fast_cpu_share", "CPUs", "the fast (never sleeping) threads' CPU time / elapsed"),
    ("share_min", "x fair", "least-served thread's CPU time / the mean thread's"),
    ("share_max", "x fair", "best-served thread's CPU time / the mean thread's"),
    ("share_cv", "", "coefficient of variation of the threads' CPU times"),
    ("nr_periods", "", "cpu.stat nr_periods"),
    ("nr_throttled", "", "cpu.stat nr_throttled"),
    ("throttled_share", "", "nr_throttled / nr_periods"),
    ("throttled_time_s", "s", "cpu.stat throttled_time (sum over CPUs)"),
    ("nr_bursts", "", "cpu.stat nr_bursts"),
    ("burst_time_s", "s", "cpu.stat burst_time"),
    ("mean_us", "us", "mean (round trip, or lateness of the wakeup)"),
    ("p50_us", "us", "median"),
    ("p99_us", "us", "99th percentile"),
]
UNITS = {k: u for k, u, _ in METRICS}


def _shares(cpu: list[float]) -> dict[str, float]:
    if len(cpu) < 2:
        return {}
    mean = statistics.fmean(cpu)
    if mean <= 0:
        return {}
    return {"share_min": min(cpu) / mean, "share_max": max(cpu) / mean, "share_cv": statistics.pstdev(cpu) / mean}


def _bandwidth(cfg: Config, stat: dict[str, Any]) -> dict[str, float]:
    if not cfg.limited:
        return {}
    out = {
        "nr_periods": float(stat.get("nr_periods", 0)),
        "nr_throttled": float(stat.get("nr_throttled", 0)),
        "throttled_time_s": stat.get("throttled_time", 0) / 1e9,
    }
    if out["nr_periods"]:
        out["throttled_share"] = out["nr_throttled"] / out["nr_periods"]
    if cfg.burst_us:
        out["nr_bursts"] = float(stat.get("nr_bursts", 0))
        out["burst_time_s"] = stat.get("burst_time", 0) / 1e9
    return out


def _threads(cfg: Config, cpu: list[float], fast: list[float], bursts: float, elapsed_ns: float) -> dict[str, float]:
    secs = elapsed_ns / 1e9
    out = {"usage_cpus": sum(cpu) / elapsed_ns}
    if cfg.fast < cfg.threads:
        out["bursts_per_s"] = bursts / secs
    if 0 < cfg.fast < cfg.threads:
        out["fast_cpu_share"] = sum(fast) / elapsed_ns
    out.update(_shares(cpu if cfg.fast in (0, cfg.threads) else cpu[cfg.fast:]))
    return out


def real_figures(cfg: Config, m: dict[str, Any]) -> dict[str, float]:
    """Figures of one probe measurement (probe JSON + cpu_stat)."""
    if cfg.kind == "threads":
        ths = m["threads"]
        cpu = [float(t["cpu_ns"]) for t in ths]
        fast = [float(t["cpu_ns"]) for t in ths if t["fast"]]
        bursts = float(sum(t["iterations"] for t in ths if not t["fast"]))
        out = _threads(cfg, cpu, fast, bursts, float(m["wall_ns"]))
        out.update(_bandwidth(cfg, m.get("cpu_stat", {})))
        return out
    return {"mean_us": m["mean_ns"] / 1e3, "p50_us": m["p50_ns"] / 1e3, "p99_us": m["p99_ns"] / 1e3}


def sim_figures(cfg: Config, raw: dict[str, Any]) -> dict[str, float]:
    """The same figures from one schedlab RunResult."""
    if cfg.kind == "threads":
        tasks = sorted(raw["tasks"], key=lambda t: int(t["name"][1:]))
        cpu = [float(t["run_ns"]) for t in tasks]
        fast = cpu[: cfg.fast]
        bursts = float(sum(t["nr_wakeups"] for t in tasks[cfg.fast:]))
        out = _threads(cfg, cpu, fast, bursts, float(raw["engine"]["sim_ns"]))
        group = next(g for g in raw["groups"] if g["name"] == "probe")
        out.update(_bandwidth(cfg, group))
        return out
    if cfg.kind == "pingpong":
        return {"mean_us": raw["workload"]["round_trip_us"]}
    h = raw["histograms"]["timer_latency"]
    return {"mean_us": h["mean_ns"] / 1e3, "p50_us": h["p50_ns"] / 1e3, "p99_us": h["p99_ns"] / 1e3}


def mean_figures(runs: list[dict[str, float]]) -> dict[str, float]:
    """Per-figure mean over runs (seeds); a figure some runs lack is averaged over the rest."""
    keys = {k for r in runs for k in r}
    return {k: statistics.fmean(r[k] for r in runs if k in r) for k in keys}


def rel_diff(real: float, sim: float) -> float | None:
    """(sim - real) / real, or None where real is 0 (or either is not finite)."""
    if not (math.isfinite(real) and math.isfinite(sim)) or real == 0:
        return None
    return (sim - real) / abs(real)


# The bars of issue 29's must-show: (relative or absolute, tolerance). A row passes when
# schedlab is within the bar of the real mean, or inside the real runs' spread where
# that is wider. Figures without a bar get no verdict.
TOLERANCES: dict[str, tuple[str, float]] = {
    "usage_cpus": ("rel", 0.05),
    "throttled_share": ("abs", 0.05),
    "throttled_time_s": ("rel", 0.25),
    "share_min": ("abs", 0.05),
    "share_max": ("abs", 0.05),
    "burst_time_s": ("rel", 0.25),
    "nr_bursts": ("rel", 0.25),
}
# Other load on the host above this many CPUs during a real run marks its rows (issue 29).
BUSY_CPUS = 0.2
# Figures that follow where woken threads are placed: on a host whose scheduler is not
# mainline's (HostInfo.vendor_sched), these rows are marked and kept out of the count.
PLACEMENT_METRICS = ("share_min", "share_max", "share_cv")


def spread(runs: list[dict[str, float]]) -> dict[str, tuple[float, float]]:
    """(min, max) of each figure over the real runs."""
    keys = {k for r in runs for k in r}
    return {k: (min(r[k] for r in runs if k in r), max(r[k] for r in runs if k in r)) for k in keys}


def verdict(metric: str, real: float | None, sim: float | None,
            band: tuple[float, float] | None = None, tolerances: dict[str, tuple[str, float]] | None = None) -> str | None:
    """"ok" or "off" against the metric's bar (or the real spread `band`), None without one."""
    bar = (tolerances if tolerances is not None else TOLERANCES).get(metric)
    if bar is None or real is None or sim is None:
        return None
    kind, tol = bar
    width = tol * abs(real) if kind == "rel" else tol
    if abs(sim - real) <= width + 1e-12:
        return "ok"
    if band is not None and band[0] - 1e-12 <= sim <= band[1] + 1e-12:
        return "ok"
    return "off"


def compare(real: dict[str, float], sim: dict[str, float], spreads: dict[str, tuple[float, float]] | None = None,
            busy: bool = False, metrics: list[tuple[str, str, str]] | None = None,
            tolerances: dict[str, tuple[str, float]] | None = None, vendor_placement: bool = False) -> list[dict[str, Any]]:
    """Rows (metric, unit, real, sim, rel_diff, spread, verdict, busy, vendor) for the
    figures either side has; `spreads` are the real runs' (min, max), `busy` marks every
    row of a configuration whose real runs shared the host with more than BUSY_CPUS of
    other load, `vendor_placement` the PLACEMENT_METRICS rows of a threads configuration
    on a host whose wake placement is not mainline's."""
    rows = []
    for key, unit, what in metrics or METRICS:
        if key not in real and key not in sim:
            continue
        r, s = real.get(key), sim.get(key)
        band = (spreads or {}).get(key)
        rows.append({"metric": key, "unit": unit, "what": what, "real": r, "sim": s,
                     "rel_diff": rel_diff(r, s) if r is not None and s is not None else None,
                     "spread": list(band) if band else None, "verdict": verdict(key, r, s, band, tolerances),
                     "busy": busy, "vendor": vendor_placement and key in PLACEMENT_METRICS})
    return rows
