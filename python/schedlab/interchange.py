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
from .errors import ScenarioError, read_input_file, scenario_error
from .scenario import Scenario, ScenarioLike, load_scenario, machine_spec

__all__ = ["to_rt_app", "read_trace", "replay_trace", "TraceTimelines", "LatencyRow", "sched_latency",
           "format_sched_latency"]


def _read(path: str | os.PathLike) -> str:
    # Recorded traces are kept compressed (perf script text packs ~30:1).
    return read_input_file(path, "a trace (perf script or ftrace text, .gz allowed)", trace=True)


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
    without ``-R``) or ``perf script`` / ``perf sched script`` text, gzip-compressed
    when its name ends in ``.gz``."""
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


@dataclass
class LatencyRow:
    """One task of ``perf sched latency``: CPU time, the waits for a CPU it had (from a
    wakeup or a preemption to the switch-in), their mean and the longest."""

    pid: int
    comm: str
    runtime_ns: int
    switches: int
    total_delay_ns: int
    max_delay_ns: int
    max_delay_start_ns: int
    max_delay_end_ns: int

    @property
    def avg_delay_ns(self) -> int:
        return self.total_delay_ns // self.switches if self.switches else 0


def sched_latency(tl: TraceTimelines) -> list[LatencyRow]:
    """``perf sched latency -p`` from a trace's timelines (tools/perf/builtin-sched.c:
    a wait runs from a task's wakeup, fork or preemption to its next switch-in). The
    runtime is the tasks' switch intervals (perf sums ``sched_stat_runtime``, which a
    trace may lack). Rows in perf's default
    order (average delay, maximum, switches, runtime; largest first); tasks with no
    wait are left out, as perf leaves them."""
    rows = []
    for t in tl.tasks:
        row = LatencyRow(t["pid"], t["comm"], t["run_ns"], 0, 0, 0, 0, 0)
        sleeps = {start: end for start, end, _ in t["sleeps"]}
        runs = sorted(t["runs"], key=lambda r: r[1])
        # (when it became runnable, when it ran): the first run's from its fork or wakeup.
        waits = [(t["first_seen_ns"], runs[0][1])] if runs and t["first_seen_ns"] < runs[0][1] else []
        for (_, _, prev_end), (_, start, _) in zip(runs, runs[1:]):
            if prev_end in sleeps:
                woken = sleeps[prev_end]
                if woken is None or woken > start:
                    continue
            else:
                woken = prev_end  # preempted: waiting from the switch-out
            waits.append((woken, start))
        for woken, start in waits:
            delay = start - woken
            row.switches += 1
            row.total_delay_ns += delay
            if delay > row.max_delay_ns or row.switches == 1:
                row.max_delay_ns, row.max_delay_start_ns, row.max_delay_end_ns = delay, woken, start
        if row.switches:
            rows.append(row)
    rows.sort(key=lambda r: (r.avg_delay_ns, r.max_delay_ns, r.switches, r.runtime_ns), reverse=True)
    return rows


def format_sched_latency(rows: list[LatencyRow]) -> str:
    """The rows in ``perf sched latency``'s table layout."""
    wide = " " + "-" * 139
    lines = ["", wide, "  Task                  |   Runtime ms  | Switches | Avg delay ms    | Max delay ms    "
             "| Max delay start           | Max delay end          |", wide]
    for r in rows:
        name = f"  {r.comm}:{r.pid} "
        lines.append(f"{name:<24}|{r.runtime_ns / 1e6:11.3f} ms |{r.switches:9d} | avg:{r.avg_delay_ns / 1e6:8.3f} ms | "
                     f"max:{r.max_delay_ns / 1e6:8.3f} ms | max start: {r.max_delay_start_ns / 1e9:12.6f} s | "
                     f"max end: {r.max_delay_end_ns / 1e9:12.6f} s")
    lines += [" " + "-" * 113,
              f"  TOTAL:                |{sum(r.runtime_ns for r in rows) / 1e6:11.3f} ms |{sum(r.switches for r in rows):9d} |",
              " " + "-" * 51, ""]
    return "\n".join(lines)
