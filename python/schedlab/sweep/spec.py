"""Sweep specs (TOML): a base scenario, parameters and their values, seeds.

::

    name = "bw-grid"                               # default: the spec file's name
    base = "../examples/bandwidth_whatif.toml"     # relative to this file
    seeds = [1, 2]                                 # or a count (seeds 1..N); default: the base's
    out = "bw-grid.sweep"                          # results directory; default <spec>.sweep beside it

    [set]                                          # changes every point gets
    "run.duration_s" = 2.0

    [parameters]
    "tasks.worker.count" = [4, 16, 64]             # a scenario path and its values
    "groups.svc.cpu_max" = ["100000 100000", "200000 100000"]

    [parameters.behaviour]                         # a named parameter: label -> changes
    "expiring-5.3" = { "kernel.profile" = "5.3" }
    "burst-5.14" = { "kernel.profile" = "5.14", "groups.svc.cfs_burst_us" = 200000 }

    [[parameters.duty]]                            # or a list of {value, changes...}
    value = 0.05
    "tasks.worker.program.0.loop.body.1.sleep_exp" = "19000us"

    [report]
    metrics = ["group.svc.throttled_share", "latency.wakeup_latency.p99_us"]

Without ``[[points]]`` the sweep is the grid (every combination, parameters in the order
written, the last varying fastest); with ``[[points]]`` it is exactly the listed points,
each a table ``{parameter = value, ...}`` (a named parameter by label or value).
Paths are those of :meth:`schedlab.Scenario.with_changes`.

Every point's scenario is built and validated before anything runs; a point is keyed by
a hash of its full normalized scenario (``run.seeds`` left out), so a changed base or
parameter is a new point and an unchanged one is found again on resume.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScenarioError, UnknownNameError, read_input_file, scenario_error
from ..scenario import Scenario, load_scenario

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["Parameter", "Point", "SweepSpec", "load_spec", "scenario_key"]

SPEC_KEYS = ("name", "description", "base", "seeds", "out", "set", "parameters", "points", "report")


@dataclass(frozen=True)
class Parameter:
    """One swept parameter: ``name`` (a scenario path, or a name of one's own) and its
    values, each with the changes it makes."""

    name: str
    values: tuple[Any, ...]
    changes: tuple[dict[str, Any], ...]  # per value
    named: bool  # True: a name of one's own whose values set other paths

    @property
    def column(self) -> str:
        return f"param.{self.name}"

    def index_of(self, value: Any) -> int:
        for i, v in enumerate(self.values):
            if v == value and isinstance(v, bool) == isinstance(value, bool):
                return i
        shown = ", ".join(json.dumps(v) for v in self.values)
        raise UnknownNameError(f"{value!r} is not a value of parameter {self.name} ({shown})")


@dataclass(frozen=True)
class Point:
    """One point of a sweep: its parameter values, its validated scenario and its key."""

    index: int
    params: dict[str, Any]
    scenario: Scenario
    key: str


@dataclass
class SweepSpec:
    """A loaded sweep spec (see the module doc); ``points()`` builds and validates them."""

    name: str
    origin: str
    base: Scenario
    seeds: list[int]
    out: Path
    fixed: dict[str, Any] = field(default_factory=dict)
    parameters: list[Parameter] = field(default_factory=list)
    listed: list[dict[str, Any]] | None = None
    report_metrics: list[str] = field(default_factory=list)
    description: str = ""
    _points: list[Point] | None = None

    def points(self) -> list[Point]:
        if self._points is None:
            self._points = _build_points(self)
        return self._points

    @property
    def size(self) -> int:
        return len(self.points()) * len(self.seeds)

    def manifest(self) -> dict[str, Any]:
        """What the results directory records about the sweep (``sweep.json``)."""
        return {
            "name": self.name,
            "description": self.description,
            "spec": self.origin,
            "base": self.base.origin,
            "seeds": self.seeds,
            "parameters": [{"name": p.name, "column": p.column, "values": list(p.values), "named": p.named}
                           for p in self.parameters],
            "points": [{"index": pt.index, "key": pt.key, "params": pt.params} for pt in self.points()],
            "report": {"metrics": self.report_metrics},
        }


def scenario_key(s: Scenario) -> str:
    """The point key: SHA-256 (first 16 hex digits) of the normalized scenario without
    ``run.seeds`` (seeds are the other half of a row's key)."""
    doc = s.doc
    doc.get("run", {}).pop("seeds", None)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _err(origin: str, field_: str, message: str) -> ScenarioError:
    return scenario_error(origin, field_, message)


def _parse_parameter(origin: str, name: str, raw: Any) -> Parameter:
    where = f"parameters.{name}" if "." not in name else f'parameters."{name}"'
    if isinstance(raw, list) and raw and all(isinstance(v, dict) for v in raw):
        values, changes = [], []
        for i, item in enumerate(raw):
            if "value" not in item:
                raise _err(origin, f"{where}[{i}]", "each entry needs `value` (the column value) and the paths it sets")
            rest = {k: v for k, v in item.items() if k != "value"}
            if not rest:
                raise _err(origin, f"{where}[{i}]", "sets no scenario path")
            values.append(item["value"])
            changes.append(rest)
        return _check_unique(origin, where, Parameter(name, tuple(values), tuple(changes), True))
    if isinstance(raw, list):
        if not raw:
            raise _err(origin, where, "no values")
        if any(isinstance(v, dict) for v in raw):
            raise _err(origin, where, "mixes tables and plain values")
        return _check_unique(origin, where, Parameter(name, tuple(raw), tuple({name: v} for v in raw), False))
    if isinstance(raw, dict):
        if not raw:
            raise _err(origin, where, "no values")
        for label, ch in raw.items():
            if not isinstance(ch, dict) or not ch:
                raise _err(origin, f"{where}.{label}", "expected a table of scenario paths and values, "
                                                       'e.g. { "kernel.profile" = "5.4" }')
        return Parameter(name, tuple(raw), tuple(dict(ch) for ch in raw.values()), True)
    raise _err(origin, where, "expected a list of values, a table {label = {path = value}} or "
                              "a list of tables {value = ..., path = value}")


def _check_unique(origin: str, where: str, p: Parameter) -> Parameter:
    seen = [json.dumps(v, sort_keys=True) for v in p.values]
    dup = sorted({v for v in seen if seen.count(v) > 1})
    if dup:
        raise _err(origin, where, f"value {dup[0]} is listed twice")
    return p


def load_spec(path: str | os.PathLike, *, out: str | os.PathLike | None = None) -> SweepSpec:
    """Reads a sweep spec file. Errors are :class:`schedlab.ScenarioError` naming the
    spec file and the field (the base scenario's own errors name the base file)."""
    origin = os.fspath(path)
    p = Path(path)
    text = read_input_file(path, "a sweep spec (.toml)")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _err(origin, "", f"not valid TOML: {e}") from None
    unknown = sorted(set(doc) - set(SPEC_KEYS))
    if unknown:
        raise _err(origin, unknown[0], f"unknown key: expected one of {', '.join(SPEC_KEYS)}")
    here = p.resolve().parent
    if "base" not in doc or not isinstance(doc["base"], str):
        raise _err(origin, "base", "missing: the base scenario file (path relative to the spec)")
    base_path = Path(doc["base"])
    if not base_path.is_absolute():
        base_path = here / base_path
    base = load_scenario(os.path.relpath(base_path) if base_path.exists() else base_path)
    name = doc.get("name") or p.stem
    if not isinstance(name, str):
        raise _err(origin, "name", "expected a string")
    seeds = _seeds(origin, doc.get("seeds"), base)
    if out is None and "out" in doc and not isinstance(doc["out"], str):
        raise _err(origin, "out", "expected a directory path (a string)")
    out_dir = Path(out) if out is not None else Path(doc["out"]) if "out" in doc else p.with_suffix(".sweep")
    if out is None and "out" in doc:
        # The file names its own output: only a relative path inside its directory, so a
        # sweep file from elsewhere never writes outside it (--out chooses any place).
        if out_dir.is_absolute() or ".." in out_dir.parts:
            raise _err(origin, "out", f"'{doc['out']}' must be a relative path inside the sweep file's directory "
                                      "(give another place with --out)")
        out_dir = here / out_dir
    fixed = doc.get("set", {})
    if not isinstance(fixed, dict):
        raise _err(origin, "set", "expected a table of scenario paths and values")
    params_doc = doc.get("parameters", {})
    if not isinstance(params_doc, dict):
        raise _err(origin, "parameters", "expected a table")
    params = [_parse_parameter(origin, n, v) for n, v in params_doc.items()]
    listed = doc.get("points")
    if listed is not None and (not isinstance(listed, list) or not all(isinstance(x, dict) for x in listed)):
        raise _err(origin, "points", "expected a list of tables [[points]]")
    if not params and not listed:
        raise _err(origin, "parameters", "nothing to sweep: give [parameters] or [[points]]")
    report = doc.get("report", {})
    metrics = report.get("metrics", []) if isinstance(report, dict) else None
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise _err(origin, "report.metrics", "expected a list of figure names")
    return SweepSpec(name=name, origin=origin, base=base, seeds=seeds, out=out_dir, fixed=dict(fixed),
                     parameters=params, listed=listed, report_metrics=list(metrics),
                     description=str(doc.get("description", "")))


def _seeds(origin: str, raw: Any, base: Scenario) -> list[int]:
    if raw is None:
        return base.seeds
    if isinstance(raw, int) and not isinstance(raw, bool):
        if raw < 1:
            raise _err(origin, "seeds", "expected at least 1 (seeds 1..N) or a list of seeds")
        return list(range(1, raw + 1))
    if isinstance(raw, list) and raw and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in raw):
        if len(set(raw)) != len(raw):
            raise _err(origin, "seeds", "a seed is listed twice")
        return list(raw)
    raise _err(origin, "seeds", "expected a count N (seeds 1..N) or a list of non-negative integers")


def _combinations(spec: SweepSpec) -> list[dict[str, Any]]:
    if spec.listed is None:
        return [dict(zip((p.name for p in spec.parameters), combo))
                for combo in itertools.product(*(p.values for p in spec.parameters))]
    known = {p.name: p for p in spec.parameters}
    out = []
    for i, pt in enumerate(spec.listed):
        if not pt:
            raise _err(spec.origin, f"points[{i}]", "empty point")
        for k in pt:
            if k not in known and not _looks_like_path(k):
                raise _err(spec.origin, f"points[{i}].{k}", "not a parameter declared in [parameters] "
                                                            "nor a scenario path")
        out.append(dict(pt))
    return out


def _looks_like_path(name: str) -> bool:
    return "." in name or name in ("machine", "name", "description")


def _changes_for(spec: SweepSpec, combo: dict[str, Any], where: str) -> dict[str, Any]:
    known = {p.name: p for p in spec.parameters}
    changes: dict[str, Any] = dict(spec.fixed)
    for name, value in combo.items():
        p = known.get(name)
        if p is None or not p.named:
            changes[name] = value
            continue
        try:
            changes.update(p.changes[p.index_of(value)])
        except KeyError as e:
            raise _err(spec.origin, f"{where}.{name}", e.args[0]) from None
    return changes


def _build_points(spec: SweepSpec) -> list[Point]:
    points: list[Point] = []
    by_key: dict[str, int] = {}
    # Every parameter gets a column, also in listed points that leave it out (null there).
    names = list(dict.fromkeys([p.name for p in spec.parameters] +
                               [k for pt in (spec.listed or []) for k in pt]))
    for i, combo in enumerate(_combinations(spec)):
        where = f"points[{i}]"
        changes = _changes_for(spec, combo, where)
        label = ", ".join(f"{k} = {json.dumps(v)}" for k, v in combo.items())
        try:
            s = spec.base.with_changes(changes)
        except ScenarioError as e:
            raise _err(spec.origin, f"point {i} ({label})", str(e)) from None
        key = scenario_key(s)
        if key in by_key:
            j = by_key[key]
            raise _err(spec.origin, f"point {i} ({label})",
                       f"gives the same scenario as point {j} ({', '.join(f'{k} = {json.dumps(v)}' for k, v in points[j].params.items())}): "
                       f"a parameter changes nothing")
        by_key[key] = i
        points.append(Point(i, {n: combo.get(n) for n in names}, s, key))
    return points
