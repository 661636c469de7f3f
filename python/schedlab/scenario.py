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
from pathlib import Path
from typing import Any, Mapping, Union

from . import _core
from .errors import scenario_error

__all__ = ["Scenario", "load_scenario", "ScenarioLike"]


class Scenario:
    """A validated scenario, normalized by the core.

    ``doc`` is the normalized document (a dict: every default filled in, durations as
    ``"<N>ns"``); ``json`` is the same as the compact JSON text the core runs.
    """

    __slots__ = ("json", "origin", "_doc")

    def __init__(self, normalized_json: str, origin: str):
        self.json = normalized_json
        self.origin = origin
        self._doc: dict[str, Any] | None = None

    # -- constructors -------------------------------------------------------------
    @classmethod
    def from_toml(cls, text: str, origin: str = "<toml>") -> "Scenario":
        """Parses TOML text."""
        return cls(_core.load_scenario(text, "toml", origin), origin)

    @classmethod
    def from_json(cls, text: str, origin: str = "<json>") -> "Scenario":
        """Parses JSON text."""
        return cls(_core.load_scenario(text, "json", origin), origin)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], origin: str = "<dict>") -> "Scenario":
        """Validates a Python dict of the same shape as the TOML file."""
        try:
            text = json.dumps(doc)
        except (TypeError, ValueError) as e:
            raise scenario_error(origin, "", f"not JSON-serializable: {e}") from None
        return cls(_core.load_scenario(text, "dict", origin), origin)

    @classmethod
    def from_file(cls, path: Union[str, os.PathLike]) -> "Scenario":
        """Reads a ``.toml`` or ``.json`` file (by extension; TOML otherwise)."""
        origin = os.fspath(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise scenario_error(origin, "", "no such file") from None
        except IsADirectoryError:
            raise scenario_error(origin, "", "is a directory, expected a .toml or .json file") from None
        except UnicodeDecodeError as e:
            raise scenario_error(origin, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
        except OSError as e:
            raise scenario_error(origin, "", f"cannot read: {e.strerror or e}") from None
        if origin.lower().endswith(".json"):
            return cls.from_json(text, origin)
        return cls.from_toml(text, origin)

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

    def with_changes(self, changes: Mapping[str, Any]) -> "Scenario":
        """Returns a new scenario with dotted-path changes applied and re-validated.

        ``s.with_changes({"kernel.profile": "6.5", "kernel.features.SIS_NODE": True})``
        """
        doc = self.doc
        for path, value in changes.items():
            node = doc
            parts = path.split(".")
            for p in parts[:-1]:
                nxt = node.get(p)
                if not isinstance(nxt, dict):
                    nxt = {}
                    node[p] = nxt
                node = nxt
            node[parts[-1]] = value
        return Scenario.from_dict(doc, origin=self.origin)

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


ScenarioLike = Union[Scenario, Mapping[str, Any], str, os.PathLike]


def load_scenario(source: ScenarioLike) -> Scenario:
    """Loads a scenario from a file path, a dict, or returns a :class:`Scenario` as is.

    Raises :class:`schedlab.ScenarioError` (one-line ``str()``) on any problem.
    """
    if isinstance(source, Scenario):
        return source
    if isinstance(source, Mapping):
        return Scenario.from_dict(source)
    if isinstance(source, (str, os.PathLike)):
        return Scenario.from_file(source)
    raise TypeError(f"expected a path, a dict or a Scenario, got {type(source).__name__}")
