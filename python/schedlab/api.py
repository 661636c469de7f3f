"""``schedlab.run``: one scenario, one seed, one call into the core."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable

from . import _core
from .errors import InputError, RunInterrupted, ScenarioError, with_location
from .limits import limits_json
from .results import Result, ResultSet
from .scenario import ScenarioLike, load_scenario

__all__ = ["run", "trace_path_for", "trace_format_for", "check_seed", "core_run"]


def check_seed(seed: object) -> int:
    """A seed as the core takes it (0 .. 2**64 - 1), or ValueError naming it."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise InputError(f"seed: expected a whole number from 0 to 2**64 - 1, got {seed!r}")
    return seed

#: Trace formats and the suffix of their default file names: Perfetto protobuf, Chrome
#: JSON (with the ftrace text embedded), tracefs text, ``perf script`` text, trace-cmd's
#: trace.dat (``trace-cmd report``, KernelShark).
TRACE_SUFFIX = {"perfetto": ".pftrace", "json": ".perfetto.json", "ftrace": ".trace.txt", "perf": ".perf.txt",
                "trace-cmd": ".dat", "parquet": ".parquet"}


def core_run(scenario_json: str, seed: int, path: str | None, trace_format: str, *args: object) -> str:
    """``_core.run`` with a trace in any of :data:`TRACE_SUFFIX`'s formats: a Parquet one
    is written by the core as staging rows, then turned into its tables here
    (:mod:`schedlab.trace_parquet`)."""
    if trace_format != "parquet" or path is None:
        return _core.run(scenario_json, seed, path, trace_format, *args)
    from .trace_parquet import CORE_FORMAT, staging_path, write_tables

    staging = staging_path(path)
    try:
        text = _core.run(scenario_json, seed, staging, CORE_FORMAT, *args)
        write_tables(staging, path)
    finally:
        if os.path.isdir(staging):  # a run that failed leaves its rows
            shutil.rmtree(staging, ignore_errors=True)
    return text


def trace_format_for(trace: str | os.PathLike | bool | None, trace_format: str | None) -> str:
    """The trace format to write: ``trace_format`` if given, else from the file's
    suffix (``.json`` Chrome JSON, ``.perf.txt`` perf script, ``.txt`` ftrace text,
    ``.dat`` trace-cmd's trace.dat, ``.parquet`` the compact tables), else Perfetto protobuf."""
    if trace_format is not None:
        if trace_format not in TRACE_SUFFIX:
            raise InputError(f"unknown trace format '{trace_format}': expected one of {', '.join(TRACE_SUFFIX)}")
        return trace_format
    if isinstance(trace, (str, os.PathLike)):
        name = os.fspath(trace).lower()
        if name.endswith(".json"):
            return "json"
        if name.endswith(".perf.txt") or name.endswith(".perf"):
            return "perf"
        if name.endswith(".txt"):
            return "ftrace"
        if name.endswith(".dat"):
            return "trace-cmd"
        if name.endswith(".parquet"):
            return "parquet"
    return "perfetto"


def safe_file_name(name: str) -> str:
    """A scenario's name as a file name in the current directory: a name from an untrusted
    file ("../../x", "/etc/x") never leads a default output path out of it."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name or "").strip("._")
    return cleaned[:100] or "schedlab"


def trace_path_for(template: str | os.PathLike | None, name: str, seed: int, fmt: str,
                   several: bool) -> str | None:
    """Resolves where a run's trace goes.

    ``template`` may contain ``{seed}``; otherwise, when several seeds share one template,
    ``.seed<N>`` is inserted before the extension. ``template=None`` gives
    ``<scenario name>.seed<N>.perfetto.json`` (or ``.trace.txt``) in the current directory.
    """
    if template is None:
        return f"{safe_file_name(name)}.seed{seed}{TRACE_SUFFIX[fmt]}"
    t = os.fspath(template)
    if "{seed}" in t:
        return t.replace("{seed}", str(seed))
    if not several:
        return t
    root, ext = os.path.splitext(t)
    for inner in (".perfetto", ".trace", ".perf"):
        if root.endswith(inner):
            root, ext = root[: -len(inner)], inner + ext
    return f"{root}.seed{seed}{ext}"


def run(
    scenario: ScenarioLike,
    seed: int | None = None,
    *,
    trace: str | os.PathLike | bool | None = None,
    trace_format: str | None = None,
    progress: Callable[[float], None] | None = None,
    max_events: int | None = None,
    max_sim_time: str | float | None = None,
    max_wall_time: str | float | None = None,
    max_memory: str | int | None = None,
    eas_check: bool = False,
    rtapp_logs: bool = False,
) -> Result:
    """Runs a scenario with one seed and returns its :class:`Result`.

    ``scenario`` is a path (TOML/JSON), a dict or a :class:`Scenario`. ``seed`` defaults
    to the scenario's first seed. ``trace`` is a file path (or True for a default name;
    a scenario with ``[run] trace = true`` gets the default name too): the trace is written
    there while the run goes, in ``trace_format``: "perfetto" (protobuf), "json" (Chrome
    JSON), "ftrace" (tracefs text), "perf" (``perf script`` text), "trace-cmd"
    (trace.dat) or "parquet" (a directory of switch / wakeup / idle tables,
    :mod:`schedlab.trace_parquet`); by default from the file's suffix
    (:func:`trace_format_for`).
    ``progress(fraction)`` is called now and then from the running thread.
    The GIL is released while the core runs.

    Limits (:mod:`schedlab.limits`): ``max_events``, ``max_sim_time`` and ``max_wall_time``
    (``"30s"`` or seconds) and ``max_memory`` (``"2GiB"`` or bytes; default: the memory
    this process can still take) stop the run with a partial result
    (``engine.partial``); a scenario whose memory estimate exceeds ``max_memory`` is
    refused before it starts. Ctrl-C stops the run within about a million events and
    raises :class:`schedlab.RunInterrupted` holding the partial result.

    ``eas_check`` records every energy-aware wakeup decision (find_energy_efficient_cpu())
    with its energy and the best allowed CPU's on the same snapshot, LISA-style:
    ``result.raw["eas_check"]`` lists them and ``summary.eas_check_*`` sums them
    (:mod:`schedlab.eas_check`). Off by default; it does not change the run.

    ``rtapp_logs`` records rt-app's per-activation log of every task whose phases are
    marked (an rt-app file's): ``result.raw["rtapp_logs"]``, one pass per entry, which
    :func:`schedlab.interchange.write_rtapp_logs` writes as rt-app's log files. Off by
    default; it does not change the run.
    """
    s = load_scenario(scenario)
    if seed is None:
        seed = s.seeds[0]
    seed = check_seed(seed)
    trace_format = trace_format_for(trace, trace_format)
    path = None
    if trace is True or (trace is None and s.trace):
        path = trace_path_for(None, s.name, seed, trace_format, False)
    elif trace not in (None, False):
        path = trace_path_for(trace, s.name, seed, trace_format, False)
    limits = limits_json(max_events, max_sim_time, max_wall_time, max_memory)
    try:
        text = core_run(s.json, seed, path, trace_format, progress, s.origin, limits, eas_check, rtapp_logs)
    except ScenarioError as e:
        raise with_location(e) from None
    except OSError as e:  # the core's only I/O is the trace the caller named
        raise InputError(str(e)) from None
    res = Result.from_json(text, path)
    if res.raw.get("engine", {}).get("stopped_by") == "interrupted":
        raise RunInterrupted(ResultSet([res]))
    return res
