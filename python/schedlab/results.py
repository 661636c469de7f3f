"""Results as pandas DataFrames.

A :class:`Result` wraps one run's ``RunResult`` document (the core's JSON; its shape
is in docs/schema.md) and exposes it as DataFrames; a :class:`ResultSet` holds the
runs of several seeds and concatenates them, one row per seed (``seed`` column).

pandas is imported on first use, so ``import schedlab`` and the worker processes stay
light.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .errors import UnknownNameError
from .figures import bandwidth_figures, figures

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Result", "ResultSet", "summary_row", "deterministic", "bandwidth_figures"]

# Run-level identity columns, first in every summary row.
ID_COLUMNS = ("scenario", "seed", "machine", "nr_cpus", "kernel.version", "kernel.policy")


def _pd():
    import pandas as pd

    return pd


def kernel_version(raw: dict[str, Any]) -> str:
    v = raw.get("kernel", {}).get("version", {})
    if isinstance(v, dict):
        return f"{v.get('major', '?')}.{v.get('minor', '?')}"
    return str(v)


def summary_row(raw: dict[str, Any]) -> dict[str, Any]:
    """Flattens a RunResult into one row: identity, figures, engine, features, tunables.

    Column prefixes: ``summary.``, ``workload.``, ``engine.``, ``migrations.``,
    ``feature.`` (bool), ``tunable.`` (kernel names, effective values).
    """
    kernel = raw.get("kernel", {})
    row: dict[str, Any] = {
        "scenario": raw.get("scenario", ""),
        "seed": raw.get("seed"),
        "machine": raw.get("machine", ""),
        "nr_cpus": raw.get("nr_cpus"),
        "kernel.version": kernel_version(raw),
        "kernel.policy": str(kernel.get("policy", "")).lower(),
    }
    for section in ("summary", "workload"):
        for k, v in raw.get(section, {}).items():
            row[f"{section}.{k}"] = _num(v)
    for k, v in raw.get("engine", {}).items():
        row[f"engine.{k}"] = v
    for k, v in raw.get("migrations_by_distance", {}).items():
        row[f"migrations.{k}"] = v
    for k, v in raw.get("features", {}).items():
        row[f"feature.{k}"] = bool(v)
    for k, v in kernel.get("tunables", {}).items():
        row[f"tunable.{k}"] = v
    return row


def _num(v: Any) -> Any:
    return math.nan if v is None else v


def deterministic(raw: dict[str, Any]) -> dict[str, Any]:
    """Returns the RunResult without its wall-clock field (``engine.wall_ns``), so the
    same scenario and seed give byte-identical JSON."""
    out = dict(raw)
    if isinstance(out.get("engine"), dict):
        out["engine"] = {k: v for k, v in out["engine"].items() if k != "wall_ns"}
    return out


class _Frames:
    """DataFrame views shared by Result and ResultSet (over ``self._raws``)."""

    _raws: list[dict[str, Any]]

    @property
    def summary(self) -> pd.DataFrame:
        """One row per run: identity, ``summary.*``, ``workload.*``, ``engine.*``,
        ``migrations.*``, ``feature.*`` and ``tunable.*`` columns."""
        return _pd().DataFrame([summary_row(r) for r in self._raws])

    def _per(self, key: str, columns: Sequence[str]) -> pd.DataFrame:
        rows = [{"seed": r.get("seed"), **item} for r in self._raws for item in r.get(key, [])]
        df = _pd().DataFrame(rows)
        if df.empty:
            df = _pd().DataFrame(columns=["seed", *columns])
        return df

    @property
    def tasks(self) -> pd.DataFrame:
        """One row per task and seed (pid, name, group, run_ns, wait_ns, nr_switches, ...)."""
        return self._per("tasks", ["pid", "name", "group", "run_ns", "wait_ns", "nr_switches",
                                   "nr_migrations", "nr_wakeups", "start_ns", "exit_ns", "work_done_ns", "sys_ns"])

    @property
    def cpus(self) -> pd.DataFrame:
        """One row per CPU and seed (busy_ns, idle_ns, ipis_received, newidle_*, ...)."""
        return self._per("cpus", ["cpu", "busy_ns", "idle_ns", "nr_switches", "ipis_received", "ticks",
                                  "newidle_attempts", "newidle_skips", "newidle_pulls", "periodic_pulls",
                                  "shared_runq_pulls", "nr_running_end"])

    @property
    def groups(self) -> pd.DataFrame:
        """One row per cgroup and seed, with cpu.stat names (nr_periods, nr_throttled, ...)."""
        return self._per("groups", ["name", "usage_ns", "quota_ns", "period_ns", "nr_periods",
                                    "nr_throttled", "throttled_time", "nr_bursts", "burst_time"])

    @property
    def histograms(self) -> pd.DataFrame:
        """Latency histograms in long format: seed, histogram, upper_ns, count (one row per
        non-empty log-spaced bucket)."""
        rows = [
            {"seed": r.get("seed"), "histogram": name, "upper_ns": b[0], "count": b[1]}
            for r in self._raws
            for name, h in r.get("histograms", {}).items()
            for b in h.get("buckets", [])
        ]
        return _pd().DataFrame(rows, columns=["seed", "histogram", "upper_ns", "count"])

    @property
    def percentiles(self) -> pd.DataFrame:
        """Histogram summaries: seed, histogram, count, mean_ns, p50_ns ... max_ns."""
        cols = ["count", "mean_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"]
        rows = [
            {"seed": r.get("seed"), "histogram": name, **{c: h.get(c) for c in cols}}
            for r in self._raws
            for name, h in r.get("histograms", {}).items()
        ]
        return _pd().DataFrame(rows, columns=["seed", "histogram", *cols])


class Result(_Frames):
    """One run (one scenario, one seed).

    ``raw`` is the RunResult dict; ``trace_path`` is where its trace was written, if any.
    """

    def __init__(self, raw: dict[str, Any], trace_path: str | None = None):
        # ``raw`` is the deterministic document (docs/schema.md): the host's wall-clock
        # time of the run is kept apart (``wall_ns``), so whatever prints ``raw`` (the
        # hackbench and schbench commands' --json) prints the same bytes every run.
        self.wall_ns: int | None = (raw.get("engine") or {}).get("wall_ns") if isinstance(raw.get("engine"), dict) \
            else None
        self.raw = deterministic(raw)
        self.trace_path = trace_path
        self._raws = [self.raw]

    def with_wall_time(self) -> dict[str, Any]:
        """The RunResult with ``engine.wall_ns`` (how long the run took on the host)."""
        if self.wall_ns is None:
            return self.raw
        return {**self.raw, "engine": {**self.raw.get("engine", {}), "wall_ns": self.wall_ns}}

    @classmethod
    def from_json(cls, text: str, trace_path: str | None = None) -> Result:
        return cls(json.loads(text), trace_path)

    @property
    def seed(self) -> int:
        return self.raw["seed"]

    @property
    def workload(self) -> dict[str, float]:
        """The workload's own figures (makespan_s, cpu_pct, ...)."""
        return dict(self.raw.get("workload", {}))

    @property
    def features(self) -> dict[str, bool]:
        return dict(self.raw.get("features", {}))

    @property
    def tunables(self) -> dict[str, Any]:
        return dict(self.raw.get("kernel", {}).get("tunables", {}))

    def figure(self, name: str) -> float:
        """Returns a figure by name: ``workload.X``, ``summary.X``, or a bare name looked up
        in workload then summary."""
        return figure(self.raw, name)

    def to_json(self, *, wall_time: bool = False, indent: int | None = None) -> str:
        """The RunResult as JSON; without ``wall_time`` it is byte-identical across runs."""
        return json.dumps(self.with_wall_time() if wall_time else self.raw, indent=indent)

    def __repr__(self) -> str:
        return f"Result(scenario={self.raw.get('scenario')!r}, seed={self.raw.get('seed')})"


class ResultSet(_Frames):
    """The runs of one or more scenarios and seeds, in submission order."""

    def __init__(self, results: Iterable[Result]):
        self.results = list(results)
        self._raws = [r.raw for r in self.results]

    @property
    def raw(self) -> list[dict[str, Any]]:
        return list(self._raws)

    @property
    def seeds(self) -> list[int]:
        return [r.seed for r in self.results]

    def figure(self, name: str) -> list[float]:
        """The named figure of every run (see :meth:`Result.figure`)."""
        return [r.figure(name) for r in self.results]

    def to_json(self, *, wall_time: bool = False, indent: int | None = None) -> str:
        docs = [r.with_wall_time() if wall_time else r.raw for r in self.results]
        return json.dumps(docs, indent=indent)

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[Result]:
        return iter(self.results)

    def __getitem__(self, i: int) -> Result:
        return self.results[i]

    def __repr__(self) -> str:
        return f"ResultSet({len(self.results)} runs, seeds={self.seeds})"


def figure(raw: dict[str, Any], name: str) -> float:
    """Looks a figure up in a RunResult dict (``workload.X``, ``summary.X``, ``engine.X``,
    any other name of :func:`schedlab.figures.figures` such as ``latency.HIST.p99_us`` or
    ``rate.NAME.mean_per_s``, or a bare name: workload first, then summary)."""
    section, _, key = name.partition(".")
    if key and section in ("workload", "summary", "engine"):
        value = raw.get(section, {}).get(key)
    elif key and section in ("latency", "rate", "group"):
        value = figures(raw).get(name)
    else:
        value = raw.get("workload", {}).get(name, raw.get("summary", {}).get(name))
    if value is None:
        raise UnknownNameError(f"figure '{name}' is not in the result (workload: {sorted(raw.get('workload', {}))})")
    return float(value)
