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
           "format_sched_latency", "Switch", "switches", "sched_timehist", "sched_map", "write_rtapp_logs"]


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


# ----------------------------------------------------------------- perf sched timehist | map

@dataclass(frozen=True)
class Switch:
    """One ``sched_switch`` the timelines imply: at ``time_ns`` CPU ``cpu`` leaves ``prev``
    (a pid, 0 for the idle task) in ``prev_state`` ('R' preempted, 'S' asleep, 'X' gone)
    for ``next``."""

    time_ns: int
    cpu: int
    prev: int
    prev_state: str
    next: int


def switches(tl: TraceTimelines) -> list[Switch]:
    """The context switches of a trace's timelines, in time order: each CPU's runs laid
    end to end, the idle task (pid 0) in every gap. A run open at the trace's first or
    last instant has no switch there (a run cut by the trace looks the same)."""
    sleep_starts = {t["pid"]: {start for start, _, _ in t["sleeps"]} for t in tl.tasks}
    exits = {t["pid"]: t["exit_ns"] for t in tl.tasks}
    by_cpu: dict[int, list[tuple[int, int, int]]] = {}
    for t in tl.tasks:
        for cpu, start, end in t["runs"]:
            by_cpu.setdefault(cpu, []).append((start, end, t["pid"]))

    def state(pid: int, end: int) -> str:
        if end in sleep_starts.get(pid, ()):
            return "S"
        return "X" if exits.get(pid) is not None and end >= exits[pid] else "R"

    out = []
    for cpu, runs in by_cpu.items():
        runs.sort()
        for i, (start, end, pid) in enumerate(runs):
            before = runs[i - 1] if i else None
            if before is None or before[1] < start:
                if start > tl.start_ns:  # idle until this run (the trace's first event if none before)
                    out.append(Switch(start, cpu, 0, "R", pid))
            after = runs[i + 1] if i + 1 < len(runs) else None
            if after is not None and after[0] <= end:
                out.append(Switch(end, cpu, pid, state(pid, end), after[2]))
            elif end < tl.end_ns or state(pid, end) != "R":  # at the last instant, only a switch to sleep or exit shows
                out.append(Switch(end, cpu, pid, state(pid, end), 0))
    out.sort(key=lambda s: (s.time_ns, s.cpu))
    return out


def _usec_stamp(ns: int) -> str:
    """perf's timestamp__scnprintf_usec(): seconds.microseconds."""
    us = ns // 1000
    return f"{us // 1_000_000}.{us % 1_000_000:06d}"


def _msec(ns: int) -> str:
    """perf's print_sched_time(ns, 6): msec.usec, truncated."""
    return f"{ns // 1_000_000:6d}.{ns % 1_000_000 // 1000:03d} "


def sched_timehist(tl: TraceTimelines) -> str:
    """``perf sched timehist``'s default view of a trace: a line per context switch for
    the task leaving the CPU, with its wait time (off the CPU since its last switch-out),
    scheduling delay (from its wakeup, fork or preemption to its switch-in) and run time
    (since the CPU's previous switch), as builtin-sched.c's timehist_update_runtime_stats()
    counts them in mainline perf. Older perf (6.1, Debian 12's) starts a delay only at a
    wakeup, so a preempted task, and the idle task, show 0 there."""
    comm = {t["pid"]: t["comm"] for t in tl.tasks}
    # Each run's (ready-to-run time, previous switch-out) by (pid, its end); None where
    # there is none (a simulated trace starts at 0, so 0 is a time, not perf's "unset").
    before: dict[tuple[int, int], tuple[int | None, int | None]] = {}
    for t in tl.tasks:
        woken = {start: end for start, end, _ in t["sleeps"]}
        runs = sorted(t["runs"], key=lambda r: r[1])
        for i, (_, start, end) in enumerate(runs):
            out = runs[i - 1][2] if i else None
            if out is None:
                ready = t["first_seen_ns"] if t["first_seen_ns"] < start else None
            else:
                ready = woken[out] if out in woken else out
            before[(t["pid"], end)] = (ready if ready is not None and ready <= start else None, out)
    # A run open at the trace's first instant counts from there (perf, which has no
    # switch before it, shows such a run's first line with no run time).
    last_switch = {cpu: start for t in tl.tasks for cpu, start, _ in t["runs"] if start == tl.start_ns}
    idle_out: dict[int, int] = {}
    width = 30
    lines = []
    for s in switches(tl):
        tprev = last_switch.get(s.cpu)
        if s.prev == 0:
            # The idle task leaves the CPU runnable: its delay runs from its last switch-out.
            ready = out = idle_out.get(s.cpu)
            idle_out[s.cpu] = s.time_ns
            name = "<idle>"
        else:
            ready, out = before.get((s.prev, s.time_ns), (None, None))
            name = f"{comm.get(s.prev, '')}[{s.prev}]"
        run = delay = wait = 0
        if tprev is not None:
            run = s.time_ns - tprev
            delay = tprev - ready if ready is not None and ready <= tprev else 0
            wait = tprev - out if out is not None and out <= tprev else 0
        width = max(width, len(name))
        lines.append(f"{_usec_stamp(s.time_ns):>15} [{s.cpu:04d}]  {name:<{width}} {_msec(wait)}{_msec(delay)}{_msec(run)}")
        last_switch[s.cpu] = s.time_ns
    dots = "-" * 30
    header = [f"{'time':>15} {'cpu':>6}  {'task name':<30}  {'wait time':>9}  {'sch delay':>9}  {'run time':>9}",
              f"{'':>15} {'':<6}  {'[tid/pid]':<30}  {'(msec)':>9}  {'(msec)':>9}  {'(msec)':>9}",
              f"{dots[:15]} {dots[:6]}  {dots}  {dots[:9]}  {dots[:9]}  {dots[:9]}"]
    return "\n".join(header + lines) + "\n"


def sched_map(tl: TraceTimelines, compact: bool = False) -> str:
    """``perf sched map``'s view of a trace: a line per context switch with what every
    CPU runs (the CPU that switched starred), each task by a two-character name given at
    its first switch-in ('.' the idle task) and spelled out then (builtin-sched.c's
    map_switch_event()). ``compact`` shows only the CPUs that switched so far, in the order
    they first did, as ``--compact`` does."""
    comm = {t["pid"]: t["comm"] for t in tl.tasks}
    short: dict[int, str] = {}
    letter, digit = "A", "0"
    current: dict[int, int] = {}
    shown: list[int] = [] if compact else list(range(tl.nr_cpus))
    lines = []
    for s in switches(tl):
        new = s.next not in short
        if new and s.next == 0:
            short[0] = ". "
        elif new:
            short[s.next] = letter + digit
            if letter < "Z":
                letter = chr(ord(letter) + 1)
            else:
                letter, digit = "A", (chr(ord(digit) + 1) if digit < "9" else "0")
        new_cpu = s.cpu not in current
        if compact and new_cpu:
            shown.append(s.cpu)
        current[s.cpu] = s.next
        cells = "".join(("*" if cpu == s.cpu else " ") + (f"{short[current[cpu]]:>2} " if cpu in current else "   ")
                        for cpu in shown)
        legend = f"{short[s.next]} => {'swapper' if s.next == 0 else comm.get(s.next, '')}:{s.next}" if new else ""
        if compact and new_cpu:
            legend += f" (CPU {s.cpu})"
        lines.append(f"  {cells}  {_usec_stamp(s.time_ns):>12} secs {legend}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ rt-app's own logs

RTAPP_LOG_HEADER = "{} {:>8} {:>8} {:>8} {:>15} {:>15} {:>15} {:>10} {:>10} {:>10} {:>10}".format(
    "#idx", "perf", "run", "period", "start", "end", "rel_st", "slack", "c_duration", "c_period", "wu_lat")


def _us(ns: int) -> int:
    """rt-app's timespec_to_usec(): rounded to the nearest microsecond."""
    return (ns + 500) // 1000 if ns >= 0 else -((-ns + 500) // 1000)


def write_rtapp_logs(result: Any, directory: str | os.PathLike, basename: str = "rt-app") -> list[Path]:
    """Writes rt-app's per-activation logs of a run made with ``rtapp_logs=True``: one
    ``<basename>-<task>.log`` per task with marked phases, a line per pass of a phase in
    the columns of rt-app's log_timing() (src/rt-app_utils.c), µs: idx (the task's index),
    perf (the work its run events did, µs at capacity 1024: rt-app counts loops of its
    calibrated busy-wait), run (their wall time), period (the pass's), start, end and
    rel_st (simulated time; rt-app's start and end are CLOCK_MONOTONIC), slack, c_duration,
    c_period, wu_lat. Returns the files written."""
    raw = result.raw if hasattr(result, "raw") else result
    if "rtapp_logs" not in raw:
        raise ValueError("the run recorded no rt-app logs: run it with rtapp_logs=True")
    tasks = raw.get("tasks", [])
    by_task: dict[int, list[dict[str, Any]]] = {}
    for p in raw["rtapp_logs"]:
        by_task.setdefault(p["task"], []).append(p)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for idx, passes in sorted(by_task.items()):
        name = tasks[idx]["name"] if idx < len(tasks) else f"task{idx}"
        lines = [RTAPP_LOG_HEADER]
        for p in passes:
            start, end = _us(p["start_ns"]), _us(p["end_ns"])
            lines.append("{:4d} {:8d} {:8d} {:8d} {:15d} {:15d} {:15d} {:10d} {:10d} {:10d} {:10d}".format(
                idx, _us(p["work_ns"]), _us(p["run_ns"]), _us(p["end_ns"] - p["start_ns"]), start, end, start,
                _us(p["slack_ns"]), _us(p["c_duration_ns"]), _us(p["c_period_ns"]), _us(p["wu_lat_ns"])))
        path = out / f"{basename}-{name}.log"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        written.append(path)
    return written
