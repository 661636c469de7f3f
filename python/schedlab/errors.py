"""Exceptions schedlab raises.

The classes are defined by the Rust bindings (``schedlab._core``, module name
``schedlab``) so that the core's errors arrive as these exact types:

- :class:`SchedlabError` -- base of everything below.
- :class:`ScenarioError` -- a scenario that cannot be run as written. Attributes
  ``origin`` (file or ``<dict>``), ``location`` (``":LINE:COL"`` or ``""``),
  ``field`` (dotted path such as ``machine.preset``) and ``message``; ``str()`` is
  the one-line form ``ORIGIN:LINE:COL: FIELD: MESSAGE``.
- :class:`SimulationLimitError` -- a run stopped at its event or wall-time limit.
- :class:`InternalError` -- an invariant broke inside the simulator (a bug).

Defined here, in Python:

- :class:`InputError` -- anything else the user gave that cannot be used as given (an
  option's value, an experiment or preset name, a results directory); also a
  ``ValueError``, as these were before. :class:`UnknownNameError` is the one for a name
  that is not known, also a ``KeyError``. The CLI prints either as one line and exits 2;
  any other exception from schedlab's own code is a bug (exit 70, ``schedlab.cli.base``).
  The bindings report bad names and versions as plain ``ValueError``: :func:`core_input`
  types them on the way out. :class:`HostError` (an ``OSError``) says the host cannot
  run what ``validate-host`` asked; it exits 2 as well.

And one that is not an error: :class:`RunInterrupted`, the ``KeyboardInterrupt`` that
Ctrl-C raises out of :func:`schedlab.run` and :func:`schedlab.run_many`, carrying the
partial results the interrupted runs had (``engine.stopped_by == "interrupted"``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ._core import InternalError, ScenarioError, SchedlabError, SimulationLimitError

__all__ = [
    "SchedlabError",
    "ScenarioError",
    "SimulationLimitError",
    "InternalError",
    "InputError",
    "UnknownNameError",
    "HostError",
    "core_input",
    "RunInterrupted",
    "scenario_error",
]


class InputError(SchedlabError, ValueError):
    """Input that cannot be used as given; ``str()`` is its one line."""


class UnknownNameError(InputError, KeyError):
    """A name that is not among the known ones (an experiment, a figure, a generator)."""

    def __str__(self) -> str:  # KeyError's own str() quotes the message
        return str(self.args[0]) if self.args else ""


class HostError(SchedlabError, OSError):
    """The machine schedlab runs on cannot do what was asked (a tool missing, no rights
    to make cgroups, a probe that failed): the user's to fix, so bad input too."""


@contextlib.contextmanager
def core_input() -> Iterator[None]:
    """Around a call into the bindings with what the user gave (a preset, a kernel
    version, an arch): the ``ValueError`` it raises for bad input becomes an
    :class:`InputError`; the core's own classes pass unchanged."""
    try:
        yield
    except ValueError as e:
        if isinstance(e, SchedlabError):
            raise
        raise InputError(str(e)) from e


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run: ``results`` holds what the runs had when they stopped (each
    with ``engine.stopped_by == "interrupted"`` and ``engine.partial``; finished seeds
    are whole), in seed order; runs that had not started are missing."""

    def __init__(self, results):
        super().__init__("interrupted")
        self.results = results


def with_location(e: ScenarioError) -> ScenarioError:
    """Adds ``:LINE:COL`` to an error the core found once the run was built (it knows the
    field, not the line), when its origin is a TOML file that still reads."""
    origin, field = getattr(e, "origin", ""), getattr(e, "field", "")
    if getattr(e, "location", "") or not field or not str(origin).lower().endswith(".toml"):
        return e
    try:
        with open(origin, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return e
    from . import _core

    location = _core.toml_location(text, field)
    return scenario_error(origin, field, e.message, location) if location else e


def scenario_error(origin: str, field: str, message: str, location: str = "") -> ScenarioError:
    """Builds a :class:`ScenarioError` raised from Python (e.g. a file that cannot be read)."""
    head = f"{origin}{location}" or "<scenario>"
    line = f"{head}: {field}: {message}" if field else f"{head}: {message}"
    err = ScenarioError(line)
    err.origin = origin
    err.location = location
    err.field = field
    err.message = message
    return err
