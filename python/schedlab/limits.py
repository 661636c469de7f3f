"""Run limits from Python and the command line: parsing ``"30s"``, ``"2GiB"`` and
friends into the core's ``Limits`` (``crates/schedlab-core/src/api.rs``).

A run that reaches a limit stops cleanly with a partial result: ``engine.stopped_by``
names the limit (``max_events``, ``max_sim_time``, ``max_wall_time``, ``max_memory``) and
``engine.partial`` is true. Memory is also checked before a run is built: a scenario
whose estimate exceeds the limit (default: the memory this process can still take) is a
:class:`schedlab.ScenarioError` naming the file and the task spec.
"""

from __future__ import annotations

import json
import re

from .errors import InputError

__all__ = ["limits_json", "parse_seconds", "parse_bytes", "format_bytes", "PARTIAL_STOPS"]

Number = int | float | str | None

#: ``engine.stopped_by`` values of a run that stopped short of what its scenario asked.
PARTIAL_STOPS = ("max_events", "max_sim_time", "max_wall_time", "max_memory", "deadlock", "interrupted")

_UNITS_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
_UNITS_B = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
            "g": 1000**3, "gb": 1000**3, "gib": 1024**3, "t": 1000**4, "tb": 1000**4, "tib": 1024**4}


def parse_seconds(name: str, value: Number) -> float | None:
    """``"30s"``, ``"500ms"``, ``"2min"`` or a number of seconds -> seconds (> 0)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InputError(f"{name}: expected a duration like 30s, 500ms or 2min, got {value!r}")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(ns|us|µs|ms|s|min|h)\s*", str(value))
        if not m:
            raise InputError(f"{name}: '{value}' is not a duration like 30s, 500ms or 2min")
        seconds = float(m.group(1)) * _UNITS_S[m.group(2)]
    if not (seconds > 0 and seconds < 1e12):
        raise InputError(f"{name}: expected a positive duration, got {value!r}")
    return seconds


def parse_bytes(name: str, value: Number) -> int | None:
    """``"2GiB"``, ``"512MiB"``, ``"4G"`` or a number of bytes -> bytes (> 0)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InputError(f"{name}: expected a size like 2GiB or 512MiB, got {value!r}")
    if isinstance(value, (int, float)):
        n = float(value)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([A-Za-z]*)\s*", str(value))
        if not m or m.group(2).lower() not in _UNITS_B:
            raise InputError(f"{name}: '{value}' is not a size like 2GiB, 512MiB or a number of bytes")
        n = float(m.group(1)) * _UNITS_B[m.group(2).lower()]
    if not (1 <= n < 2**64):
        raise InputError(f"{name}: expected a positive size, got {value!r}")
    return int(n)


def format_bytes(n: float) -> str:
    """``3.3 GiB``, ``512.0 MiB``, ``900 B``."""
    for unit, size in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


def limits_json(max_events: int | None = None, max_sim_time: Number = None, max_wall_time: Number = None,
                max_memory: Number = None) -> str | None:
    """The core's ``Limits`` as JSON, or None when no limit is given."""
    doc: dict[str, int] = {}
    if max_events is not None:
        if isinstance(max_events, bool) or not isinstance(max_events, int) or not 1 <= max_events < 2**64:
            raise InputError(f"max_events: expected a positive whole number, got {max_events!r}")
        doc["max_events"] = max_events
    sim = parse_seconds("max_sim_time", max_sim_time)
    if sim is not None:
        doc["max_sim_ns"] = max(1, round(sim * 1e9))
    wall = parse_seconds("max_wall_time", max_wall_time)
    if wall is not None:
        doc["max_wall_ns"] = max(1, round(wall * 1e9))
    mem = parse_bytes("max_memory", max_memory)
    if mem is not None:
        doc["max_memory"] = mem
    return json.dumps(doc) if doc else None
