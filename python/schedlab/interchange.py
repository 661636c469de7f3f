"""Formats other tools speak: rt-app JSON out, text traces (ftrace, ``perf script``) in.

The parsing and the replay are the Rust core's (``schedlab_core::interchange``); this
module reads files and shapes the answers. rt-app JSON *in* is
:meth:`schedlab.Scenario.from_rt_app` (or any ``.json`` file given to
:func:`schedlab.load_scenario`); the LISA-style builder is :mod:`schedlab.rtapp`.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import _core
from .errors import ScenarioError, scenario_error
from .scenario import Scenario, ScenarioLike, load_scenario, machine_spec

__all__ = ["to_rt_app", "read_trace", "replay_trace", "TraceTimelines"]


def _read(path: str | os.PathLike) -> str:
    origin = os.fspath(path)
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise scenario_error(origin, "", "no such file") from None
    except IsADirectoryError:
        raise scenario_error(origin, "", "is a directory, expected a file") from None
    except OSError as e:
        raise scenario_error(origin, "", f"cannot read: {e.strerror or e}") from None


def to_rt_app(scenario: ScenarioLike, seed: int | None = None) -> tuple[dict[str, Any], list[str]]:
    """The scenario's tasks as an rt-app JSON document (a dict in rt-app's key order)
    and notes on what rt-app does not carry as schedlab runs it. A generator's tasks
    are generated with ``seed`` (default: the scenario's first)."""
    s = load_scenario(scenario)
    try:
        text, notes = _core.rt_app_export(s.json, int(seed if seed is not None else s.seeds[0]))
    except ScenarioError as e:  # the core sees JSON text: name the scenario's file
        raise scenario_error(s.origin, getattr(e, "field", ""), getattr(e, "message", str(e))) from None
    return json.loads(text), list(notes)


@dataclass
class TraceTimelines:
    """Per-task timelines of a text trace: ``tasks`` (a list of dicts: pid, comm,
    first_seen_ns, forked_by, exit_ns, runs [[cpu, start, end]], sleeps [[start, end,
    woken_by]], run_ns, sleep_ns, wait_ns), ``warnings`` (what the trace lacked, counted)
    and the trace's ``flavour`` ("ftrace" or "perf")."""

    flavour: str
    start_ns: int
    end_ns: int
    nr_cpus: int
    warnings: dict[str, int]
    tasks: list[dict[str, Any]]


def read_trace(path: str | os.PathLike) -> TraceTimelines:
    """Reads an ftrace text trace (tracefs ``trace``, ``trace-cmd report`` with or
    without ``-R``) or ``perf script`` / ``perf sched script`` text."""
    doc = json.loads(_core.trace_timelines(_read(path), os.fspath(path)))
    return TraceTimelines(**doc)


def replay_trace(path: str | os.PathLike, machine: str, *, source_machine: str | None = None,
                 profile: str | None = None, name: str | None = None) -> tuple[Scenario, dict[str, int]]:
    """A scenario replaying a text trace's tasks on ``machine`` (a preset, ``topo(...)``
    or ``host``) with kernel ``profile``: each run burst becomes work scaled by the
    capacity of the CPU it ran on in ``source_machine`` (default: all 1024), each wakeup
    by a traced task a signal from it, other sleeps timed sleeps. Returns the scenario
    and the trace's warnings."""
    origin = os.fspath(path)
    stem = name or Path(origin).name.split(".")[0] or "replay"
    try:
        sjson, warnings = _core.trace_replay(_read(path), origin, json.dumps(machine_spec(machine)), source_machine, stem)
    except ValueError as e:
        raise scenario_error(origin, "machine", str(e)) from None
    doc = json.loads(sjson)
    if profile is not None:
        doc["kernel"]["profile"] = profile
    return Scenario.from_dict(doc, origin=origin), json.loads(warnings)
