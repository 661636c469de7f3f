"""Checks of the flags that name something the core knows (a machine, a kernel profile,
a feature, a tunable, seeds, a trace file), made when the command line is read so that
the error names the flag and the command, not a field of a file or of ``<dict>``, and
suggests the name meant ("did you mean ...?") as difflib finds it.

Each ``check_*`` is a typer callback: a bad value raises click's ``BadParameter``, which
`schedlab.cli.entry.main` prints as one line ``error: Invalid value for '--flag': ...
(see 'schedlab CMD -h')`` with exit status 2."""

from __future__ import annotations

import json
import os
from functools import cache

import typer

from .. import _core
from ..errors import did_you_mean

try:  # typer 0.2x vendors click
    from typer._click.globals import get_current_context
except ImportError:  # pragma: no cover - a typer on click
    from click import get_current_context

__all__ = ["check_machine", "check_profile", "check_features", "check_tunables", "check_seeds", "check_trace_suffix",
           "did_you_mean", "flag_error"]


def flag_error(flag: str, message: str) -> typer.BadParameter:
    """A usage error about ``flag`` raised from a command's body (when a check needs
    another flag's value too): printed as the callbacks' are."""
    hint = " / ".join(f"'{f}'" for f in flag.split(" / "))  # "-r / --runtime" as click names an option
    return typer.BadParameter(message, ctx=get_current_context(silent=True), param_hint=hint)


@cache
def preset_names() -> tuple[str, ...]:
    return tuple(m["name"] for m in json.loads(_core.machines()))


@cache
def feature_names() -> tuple[str, ...]:
    return tuple(f["name"] for f in json.loads(_core.features()))


@cache
def tunable_names() -> tuple[str, ...]:
    names: list[str] = []
    for t in json.loads(_core.tunables()):
        names.append(t["name"])
        if t.get("alias"):
            names.append(t["alias"])
    return tuple(names)


def check_machine(value: str | None) -> str | None:
    """--machine: a preset, ``topo(S,L,C,T)`` or ``host``."""
    if value is None:
        return value
    name = value.strip()
    if name == "host" or name.startswith("topo"):
        try:
            _core.machine_spec(name)
        except ValueError as e:
            raise typer.BadParameter(str(e)) from None
        return value
    presets = preset_names()
    if name not in presets:
        raise typer.BadParameter(f"unknown preset '{name}'{did_you_mean(name, presets)}: expected one of "
                                 f"{', '.join(presets)}, topo(SOCKETS,LLCS,CORES,SMT) or host")
    return value


def check_profile(value: str | None) -> str | None:
    """--profile: a kernel release the core has a profile for (its own check)."""
    if value is None or value == "host":
        return value
    try:
        _core.kernel(value, 8)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    return value


def check_duration(value: str | None) -> str | None:
    """--max-sim-time / --max-wall-time: a duration (30s, 500ms, 2min), checked here so
    the error names the flag (the limit's own check names its field)."""
    from ..errors import InputError
    from ..limits import parse_seconds

    try:
        parse_seconds("", value)
    except InputError as e:
        raise typer.BadParameter(str(e).removeprefix(": ")) from None
    return value


def check_size(value: str | None) -> str | None:
    """--max-memory: a size (2GiB, 512MiB, a number of bytes), said under the flag."""
    from ..errors import InputError
    from ..limits import parse_bytes

    try:
        parse_bytes("", value)
    except InputError as e:
        raise typer.BadParameter(str(e).removeprefix(": ")) from None
    return value


def profile_input(value: str, command: str) -> None:
    """``--profile`` / ``-p`` of a command that reports bad input from its body (an
    :class:`InputError`, one line under ``errors()``), said as a usage error is."""
    try:
        check_profile(value)
    except typer.BadParameter as e:
        from ..errors import InputError

        raise InputError(f"Invalid value for '--profile' / '-p': {e.message} (see 'schedlab {command} -h')") from None


def check_features(values: list[str] | None) -> list[str] | None:
    """--feature NAME, NAME=1 or NAME=0: the name must be a feature."""
    names = feature_names()
    for v in values or []:
        name, _, val = v.partition("=")
        name = name.strip()
        if not name or val not in ("", "0", "1", "true", "false"):
            raise typer.BadParameter(f"'{v}': expected NAME, NAME=1 or NAME=0")
        if name not in names and name != "SWQUEUE":  # SWQUEUE: the core's other name of SHARED_RUNQ
            raise typer.BadParameter(f"unknown feature '{name}'{did_you_mean(name, names)}: `schedlab features` "
                                     "lists them")
    return values


def check_tunables(values: list[str] | None) -> list[str] | None:
    """--tunable NAME=VALUE: the name must be a tunable (its kernel name or alias)."""
    names = tunable_names()
    for v in values or []:
        name, eq, _ = v.partition("=")
        name = name.strip()
        if not eq or not name:
            raise typer.BadParameter(f"'{v}': expected NAME=VALUE")
        if name not in names:
            raise typer.BadParameter(f"unknown tunable '{name}'{did_you_mean(name, names)}: `schedlab tunables` "
                                     "lists them")
    return values


def check_seeds(values: list[int] | None) -> list[int] | None:
    """A repeated --seed: a seed is deterministic, so running it twice would only count
    its figures twice in the mean and the spread."""
    seen: set[int] = set()
    for s in values or []:
        if s in seen:
            raise typer.BadParameter(f"seed {s} is given twice: each seed once (a seed's run is the same every "
                                     "time, so a second one would count its figures twice)")
        seen.add(s)
    return values


#: The trace file suffixes `run --trace` knows without --trace-format, by format.
TRACE_SUFFIXES = {".pftrace": "perfetto", ".perfetto-trace": "perfetto", ".pb": "perfetto", ".json": "json",
                  ".txt": "ftrace", ".perf.txt": "perf", ".perf": "perf", ".dat": "trace-cmd", ".parquet": "parquet"}


def check_trace_suffix(path: os.PathLike | None, trace_format: object | None) -> None:
    """--trace PATH without --trace-format: the format comes from the suffix, so one the
    formats do not have (``x.pdf``) is refused rather than written as protobuf; a name
    without a suffix is a Perfetto trace, as before."""
    if path is None or trace_format is not None:
        return
    name = os.path.basename(os.fspath(path)).replace("{seed}", "0").lower()
    if name.endswith(tuple(TRACE_SUFFIXES)):
        return
    suffix = os.path.splitext(name)[1]
    if not suffix or name.startswith(".") and name.count(".") == 1 or suffix[1:].isdigit() or suffix.startswith(".seed"):
        return
    by_format: dict[str, list[str]] = {}
    for s, f in TRACE_SUFFIXES.items():
        by_format.setdefault(f, []).append(s)
    known = ", ".join(f"{' or '.join(s)} ({f})" for f, s in by_format.items())
    raise flag_error("--trace", f"{os.fspath(path)}: unknown trace file suffix '{suffix}': expected {known}, no "
                                "suffix (perfetto), or name the format with --trace-format")
