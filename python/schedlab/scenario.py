"""Loading scenarios: TOML/JSON files, text, or Python dicts -> a validated :class:`Scenario`.

Validation is the Rust core's (its ``Scenario`` type is the one source of truth for
the schema); this module only reads files and picks the format. Every failure is a
:class:`schedlab.ScenarioError` whose ``str()`` is one line naming the file, the line
and column where known, the field and what was expected.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Mapping
from typing import Any

from . import _core
from .errors import ScenarioError, core_input, plain_error, read_input_file, scenario_error
from .machine_names import machine_spec

__all__ = ["Scenario", "load_scenario", "ScenarioLike", "machine_spec"]


class Scenario:
    """A validated scenario, normalized by the core.

    ``doc`` is the normalized document (a dict: every default filled in, durations as
    ``"<N>ns"``); ``json`` is the same as the compact JSON text the core runs. ``notes``
    lists what an rt-app import approximated or left out (empty otherwise).
    """

    __slots__ = ("json", "origin", "_doc", "notes")

    def __init__(self, normalized_json: str, origin: str, notes: list[str] | None = None):
        self.json = normalized_json
        self.origin = origin
        self._doc: dict[str, Any] | None = None
        self.notes: list[str] = list(notes or [])

    # -- constructors -------------------------------------------------------------
    @classmethod
    def _load(cls, text: str, fmt: str, origin: str, machine: str | None) -> Scenario:
        # The core reads the machine name in the same call that loads the scenario; a
        # malformed name is an InputError, as machine_spec() raises it.
        with core_input():
            try:
                normalized, notes = _core.load_scenario(text, fmt, origin, machine or None)
            except ScenarioError as e:
                raise plain_error(e) from None
        return cls(normalized, origin, notes)

    @classmethod
    def from_toml(cls, text: str, origin: str = "<toml>", machine: str | None = None) -> Scenario:
        """Parses TOML text (``[workload] rt_app = "file.json"`` reads that file, relative
        to ``origin``'s directory). ``machine`` (a preset, ``topo(S,L,C,T)`` or ``host``)
        replaces the scenario's machine."""
        return cls._load(text, "toml", origin, machine)

    @classmethod
    def from_json(cls, text: str, origin: str = "<json>", machine: str | None = None) -> Scenario:
        """Parses JSON text: a scenario, or an rt-app workload (a ``"tasks"`` object)."""
        return cls._load(text, "json", origin, machine)

    @classmethod
    def from_rt_app(cls, text: str, origin: str = "<rt-app>", machine: str | None = None) -> Scenario:
        """Imports rt-app JSON (comments, trailing commas and repeated keys welcome).
        ``machine`` overrides the file's ``"schedlab": {"machine": ...}`` (default: a
        synthetic 8-CPU machine); ``notes`` says what was approximated."""
        return cls._load(text, "rtapp", origin, machine)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], origin: str = "<dict>") -> Scenario:
        """Validates a Python dict of the same shape as the TOML file."""
        try:
            text = json.dumps(doc)
        except (TypeError, ValueError) as e:
            raise scenario_error(origin, "", f"not JSON-serializable: {e}") from None
        try:
            normalized, notes = _core.load_scenario(text, "dict", origin)
        except ScenarioError as e:
            raise plain_error(e) from None
        return cls(normalized, origin, notes)

    @classmethod
    def from_file(cls, path: str | os.PathLike, machine: str | None = None,
                  max_memory: int | None = None) -> Scenario:
        """Reads a ``.toml`` or ``.json`` file (by extension; TOML otherwise); a ``.json``
        file may be an rt-app workload. ``-`` reads standard input (JSON if it starts
        with ``{``, else TOML). A YAML file is refused as such. A file too large to read
        within ``max_memory`` bytes (default: the memory available) is refused before it
        is parsed."""
        origin = os.fspath(path)
        if origin == "-":
            return cls.from_stdin(machine)
        if origin.lower().endswith((".yaml", ".yml")):
            raise scenario_error(origin, "", YAML_REFUSED) from None
        check_input_memory(origin, max_memory)
        text = read_input_file(path, "a .toml or .json file")
        if origin.lower().endswith(".json"):
            return cls.from_json(text, origin, machine)
        return cls._from_toml_not_yaml(text, origin, machine)

    @classmethod
    def from_stdin(cls, machine: str | None = None) -> Scenario:
        """Reads a scenario from standard input (origin ``<stdin>``): JSON if its first
        character other than a blank is ``{``, else TOML."""
        import sys

        try:
            text = sys.stdin.read()
        except UnicodeDecodeError as e:
            raise scenario_error(STDIN, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
        if not text.strip():
            raise scenario_error(STDIN, "", "empty: expected a TOML or JSON scenario on standard input")
        if text.lstrip().startswith("{"):
            return cls.from_json(text, STDIN, machine)
        return cls._from_toml_not_yaml(text, STDIN, machine)

    @classmethod
    def _from_toml_not_yaml(cls, text: str, origin: str, machine: str | None) -> Scenario:
        """TOML, where a YAML mapping that is not TOML is refused as YAML (TOML's own
        error, "key with no value, expected `=`", would not say what is wrong)."""
        try:
            return cls.from_toml(text, origin, machine)
        except ScenarioError as e:
            line = yaml_line(text) if not getattr(e, "field", "") else None
            if line is None:
                raise
            raise scenario_error(origin, "", f"YAML, not TOML (line {line} reads as YAML's `key: value`): schedlab "
                                 "reads TOML or JSON scenarios (docs/scenario.md)") from None

    # -- views --------------------------------------------------------------------
    @property
    def doc(self) -> dict[str, Any]:
        """The normalized document as a dict (a copy: edit it and call ``from_dict``)."""
        if self._doc is None:
            self._doc = json.loads(self.json)
        return copy.deepcopy(self._doc)

    @property
    def name(self) -> str:
        return self._peek().get("name", "") or ""

    @property
    def seeds(self) -> list[int]:
        """The seeds the scenario asks for (``[run] seeds``; default ``[1]``)."""
        return list(self._peek().get("run", {}).get("seeds", [1]))

    @property
    def trace(self) -> bool:
        """Whether the scenario asks for a trace (``[run] trace = true``)."""
        return bool(self._peek().get("run", {}).get("trace", False))

    def with_changes(self, changes: Mapping[str, Any]) -> Scenario:
        """Returns a new scenario with dotted-path changes applied and re-validated.

        ``s.with_changes({"kernel.profile": "6.5", "kernel.features.SIS_NODE": True,
        "groups.svc.cpu_max": "50000 100000", "tasks.0.count": 8})``

        Paths: :mod:`schedlab.changes` (list elements by index or by ``name``). An error
        blames the change, not the file: its ``field`` is the path as given and its line
        reads ``PATH = VALUE: what is wrong (a change to ORIGIN)``.
        """
        from .changes import ChangePathError, apply_changes, blame, describe

        try:
            doc, canon = apply_changes(self.doc, changes)
        except ChangePathError as e:
            raise _change_error(self.origin, e.path, describe(changes, [e.path]) if e.path in changes else e.path,
                                e.message) from None
        try:
            return Scenario.from_dict(doc, origin=self.origin)
        except ScenarioError as e:
            field = getattr(e, "field", "") or ""
            message = getattr(e, "message", None) or str(e)
            culprits = blame(field, canon) or list(changes)
            sub = next((canon[p] for p in culprits if canon[p] == field), None)
            detail = message if sub is not None or not field else f"{field}: {message}"
            raise _change_error(self.origin, culprits[0] if len(culprits) == 1 else ", ".join(culprits),
                                describe(changes, culprits), detail) from None

    def _peek(self) -> dict[str, Any]:
        if self._doc is None:
            self._doc = json.loads(self.json)
        return self._doc

    def __repr__(self) -> str:
        return f"Scenario(name={self.name!r}, origin={self.origin!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scenario) and self.json == other.json

    def __hash__(self) -> int:
        return hash(self.json)

    def __reduce__(self):
        return (Scenario, (self.json, self.origin))


def _change_error(origin: str, field: str, head: str, message: str) -> ScenarioError:
    """A ScenarioError about a change: ``field`` is the changed path, the line starts with
    the change itself."""
    err = ScenarioError(f"{head}: {message} (a change to {origin})")
    err.origin = origin
    err.location = ""
    err.field = field
    err.message = message
    return err


ScenarioLike = Scenario | Mapping[str, Any] | str | os.PathLike

#: The origin of a scenario read from standard input (``schedlab run -``).
STDIN = "<stdin>"
YAML_REFUSED = "a YAML file: schedlab reads TOML or JSON scenarios (docs/scenario.md)"
# A YAML mapping's first key (`machine:`, `name: x`), which TOML never starts a line with.
_YAML_KEY = re.compile(r"^(---\s*$|[A-Za-z_][\w.-]*:(\s|$))")


def yaml_line(text: str) -> int | None:
    """The line number of the first line of ``text`` that reads as YAML's ``key: value``
    (or a ``---`` document start) when no earlier line reads as TOML, else None."""
    for n, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        return n if _YAML_KEY.match(stripped) else None
    return None


# Reading a scenario file (the core's parse and normalization, then the CLI's views of
# it) takes about this many bytes per byte of input: measured, `schedlab run` of a
# 2.2 MB TOML of 20,000 tasks peaked at 242 MB RSS against 40 MB for a small file
# (90 bytes per byte; issue 33 saw 3.8 GB for 50 MB, 76); rounded up.
PARSE_BYTES_PER_INPUT_BYTE = 96
# Files from this size on get a note on stderr before they are read (it takes a while).
LARGE_INPUT_BYTES = 8 * 1024 * 1024


def input_size(path: str | os.PathLike) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def check_input_memory(origin: str, max_memory: int | None = None) -> None:
    """Refuses a file whose reading alone would need more than ``max_memory`` bytes
    (default: what the machine has available), before anything is parsed."""
    size = input_size(origin)
    if not size:
        return
    need = size * PARSE_BYTES_PER_INPUT_BYTE
    limit = max_memory if max_memory is not None else _core.available_memory()
    if limit is not None and need > limit:
        from .limits import format_bytes

        raise scenario_error(origin, "", f"a {format_bytes(size)} file needs about {format_bytes(need)} to read "
                             f"({PARSE_BYTES_PER_INPUT_BYTE} bytes per byte, measured), more than the memory limit "
                             f"of {format_bytes(limit)} (by default the memory available; --max-memory)")


def load_scenario(source: ScenarioLike, machine: str | None = None,
                  max_memory: int | None = None) -> Scenario:
    """Loads a scenario from a file path (TOML, JSON, or an rt-app JSON workload), a
    dict, or returns a :class:`Scenario` as is. ``machine`` (a preset, ``topo(...)`` or
    ``host``) replaces the machine of a file's scenario.

    Raises :class:`schedlab.ScenarioError` (one-line ``str()``) on any problem.
    """
    if isinstance(source, Scenario):
        return source
    if isinstance(source, Mapping):
        return Scenario.from_dict(source)
    if isinstance(source, (str, os.PathLike)):
        return Scenario.from_file(source, machine, max_memory)
    raise TypeError(f"expected a path, a dict or a Scenario, got {type(source).__name__}")
