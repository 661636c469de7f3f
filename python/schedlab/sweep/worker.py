"""What one sweep task does, in whatever process or node the executor picks: run one
(scenario, seed) and return its row's measured part. Self-contained and picklable by
reference (``schedlab.sweep.worker.run_point``), so any executor can ship it."""

from __future__ import annotations

import json
import time
from typing import Any

__all__ = ["run_point", "measured_row"]


def measured_row(raw: dict[str, Any]) -> dict[str, Any]:
    """The columns a RunResult gives a row: identity, every figure
    (:func:`schedlab.figures.figures`), then ``feature.*`` and ``tunable.*`` as in force."""
    from ..figures import figures
    from ..results import kernel_version

    kernel = raw.get("kernel", {})
    row: dict[str, Any] = {
        "scenario": raw.get("scenario", ""),
        "machine": raw.get("machine", ""),
        "nr_cpus": raw.get("nr_cpus"),
        "kernel.version": kernel_version(raw),
        "kernel.policy": str(kernel.get("policy", "")).lower(),
        "engine.stopped_by": raw.get("engine", {}).get("stopped_by", ""),
    }
    row.update(figures(raw))
    for k, v in raw.get("features", {}).items():
        row[f"feature.{k}"] = bool(v)
    for k, v in kernel.get("tunables", {}).items():
        row[f"tunable.{k}"] = v
    return row


def run_point(scenario_json: str, seed: int) -> dict[str, Any]:
    """Runs one seed of one point; returns its measured columns plus ``run.wall_s`` (how
    long the run took on this host: the one column that differs between reruns)."""
    from .. import _core

    t0 = time.perf_counter()
    raw = json.loads(_core.run(scenario_json, int(seed), None, "perfetto", None))
    row = measured_row(raw)
    row["run.wall_s"] = time.perf_counter() - t0
    return row
