"""The constants a machine's runs may depend on, with the band each one's source supports.

From ``schedlab machines NAME --json``: every cost-table leaf (``cost_sources``: kind,
low, high, source; the value from ``cost``), and every idle state's wake time
(``idle_drivers[i].states[j].wake``, in ns; varied as ``cpuidle.STATE.wake_us``, the
key ``[machine.cost]`` takes). A constant whose band has zero width is never varied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..reproduce.registry import machine_info

__all__ = ["Constant", "machine_constants", "flatten"]


@dataclass(frozen=True)
class Constant:
    key: str  # as [machine.cost] and --cost take it
    nominal: float
    low: float
    high: float
    kind: str
    source: str
    integer: bool = False  # the cost table holds a whole number (lines, levels, entries)

    @property
    def width(self) -> float:
        return self.high - self.low


def flatten(doc: dict, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in doc.items():
        name = f"{prefix}.{k}" if prefix else k
        if isinstance(v, dict):
            out.update(flatten(v, name))
        else:
            out[name] = v
    return out


def machine_constants(machine: str) -> tuple[list[Constant], dict[str, str]]:
    """(constants with a band of non-zero width, {key: why not varied} for the others)."""
    info = machine_info(machine)
    values = flatten(info.get("cost", {}))
    out: list[Constant] = []
    why: dict[str, str] = {}
    for key, p in sorted(info.get("cost_sources", {}).items()):
        v = values.get(key)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            why[key] = "not a number"
            continue
        c = Constant(key, float(v), float(p["low"]), float(p["high"]), p["kind"], p["source"],
                     integer=isinstance(v, int))
        if c.width <= 0:
            why[key] = "zero-width band"
        else:
            out.append(c)
    # Idle states by name: an override sets the state of that name in every core type,
    # so a name whose wake differs between core types has no one nominal value.
    states: dict[str, list[dict]] = {}
    for drv in info.get("idle_drivers", []):
        for s in drv.get("states", []):
            states.setdefault(s["name"], []).append(s)
    for name, same in states.items():
        key = f"cpuidle.{name}.wake_us"
        wakes = {s["wake_ns"] for s in same}
        lows = {s["wake"]["low"] for s in same}
        highs = {s["wake"]["high"] for s in same}
        if len(wakes) > 1 or len(lows) > 1 or len(highs) > 1:
            why[key] = "differs between core types (one override sets them all)"
            continue
        s = same[0]
        c = Constant(key, s["wake_ns"] / 1000.0, s["wake"]["low"] / 1000.0, s["wake"]["high"] / 1000.0,
                     s["wake"]["kind"], s["wake"]["source"])
        if c.width <= 0:
            why[key] = "zero-width band"
        else:
            out.append(c)
    return out, why
