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
import gzip
import os
import re
from collections.abc import Iterator
from pathlib import Path

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


# serde's words for a value of the wrong type name Rust's types ("expected usize"): the
# same expectation in words, as the rest of the messages say it.
_RUST_TYPES = {
    "u8": "a whole number from 0 to 255", "u16": "a whole number from 0 to 65535",
    "u32": "a whole number from 0 to 4294967295", "u64": "a whole number ≥ 0", "u128": "a whole number ≥ 0",
    "usize": "a whole number ≥ 0", "i8": "a whole number from -128 to 127", "i16": "a whole number from -32768 to 32767",
    "i32": "a whole number from -2147483648 to 2147483647", "i64": "a whole number", "i128": "a whole number",
    "isize": "a whole number", "f32": "a number", "f64": "a number",
}
_RUST_TYPE_RE = re.compile(r"\bexpected (" + "|".join(_RUST_TYPES) + r")\b")


def plain_types(message: str) -> str:
    """``message`` with serde's Rust type names said in words ("expected usize" ->
    "expected a whole number ≥ 0", "floating point `1.5`" -> "number `1.5`")."""
    message = _RUST_TYPE_RE.sub(lambda m: f"expected {_RUST_TYPES[m.group(1)]}", message)
    message = re.sub(r"\bexpected struct \w+", "expected a table", message)
    return message.replace("floating point `", "number `").replace("expected a sequence", "expected a list") \
        .replace("expected a map", "expected a table")


_UNKNOWN_NAME = re.compile(r"^(unknown (?:field|variant) `([^`]*)`)(, expected one of )((?:`[^`]*`(?:, | or )?)+)(.*)$")
_UNKNOWN_PRESET = re.compile(r"^(unknown preset '([^']*)')(: expected one of )([\w.-]+(?:, [\w.-]+)*)(.*)$")


def did_you_mean(name: str, known) -> str:
    """`` (did you mean X?)`` for the known names closest to ``name`` (difflib's
    ratio of 0.6 or more and within 0.1 of the best; case aside when none is), or ``""``."""
    import difflib

    known = list(known)
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    if close:  # only the names about as close as the closest: one typo, not a list of guesses
        ratio = [difflib.SequenceMatcher(None, name, c).ratio() for c in close]
        close = [c for c, r in zip(close, ratio) if r >= ratio[0] - 0.1]
    if not close:
        lower = difflib.get_close_matches(name.lower(), [k.lower() for k in known], n=1, cutoff=0.6)
        close = [k for k in known if k.lower() in lower][:1]
    if not close:
        return ""
    return f" (did you mean {', '.join(close[:-1]) + ' or ' if len(close) > 1 else ''}{close[-1]}?)"


def suggest_names(field: str, message: str) -> str:
    """``message`` with "did you mean ...?" after a misspelt name: a field or variant
    serde does not know, a preset, a feature."""
    m = _UNKNOWN_NAME.match(message)
    if m:
        known = re.findall(r"`([^`]*)`", m.group(4))
        hint = did_you_mean(m.group(2), known).replace("mean ", "mean `").replace("?)", "`?)")
        hint = re.sub(r"(, | or )", r"`\1`", hint) if hint else ""
        return f"{m.group(1)}{hint}{m.group(3)}{m.group(4)}{m.group(5)}"
    m = _UNKNOWN_PRESET.match(message)
    if m:
        return f"{m.group(1)}{did_you_mean(m.group(2), m.group(4).split(', '))}{m.group(3)}{m.group(4)}{m.group(5)}"
    if field.startswith("kernel.features.") and message.startswith("unknown feature:"):
        import json

        from . import _core

        name = field[len("kernel.features."):]
        hint = did_you_mean(name, [f["name"] for f in json.loads(_core.features())])
        return message.replace("unknown feature:", f"unknown feature{hint}:", 1)
    return message


def plain_error(e: ScenarioError) -> ScenarioError:
    """``e`` with its message in words (:func:`plain_types`) and a "did you mean" for
    a misspelt name (:func:`suggest_names`); ``e`` itself when it has nothing to say
    differently."""
    message = getattr(e, "message", None)
    if not isinstance(message, str):
        return e
    field = getattr(e, "field", "") or ""
    better = suggest_names(field, plain_types(message))
    if better == message:
        return e
    return scenario_error(getattr(e, "origin", ""), field, better, getattr(e, "location", ""))


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


def read_input_file(path: str | os.PathLike, expected: str, *, trace: bool = False) -> str:
    """The text of a file the user named, or a :class:`ScenarioError` naming the file and
    what is wrong with it (missing, a directory, unreadable, not UTF-8, a broken .gz).
    ``expected`` says what the file should be ("a .toml or .json file"). A ``trace``
    whose name ends in ``.gz`` is decompressed, and its bytes that are not UTF-8 are
    replaced (a task's name may hold any byte) instead of refusing the file."""
    origin = os.fspath(path)
    errors = "replace" if trace else "strict"
    try:
        if trace and origin.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8", errors=errors) as f:
                return f.read()
        return Path(path).read_text(encoding="utf-8", errors=errors)
    except (gzip.BadGzipFile, EOFError):
        raise scenario_error(origin, "", "not gzip-compressed or cut short: expected a .gz file whole (name a plain-text file without .gz)") from None
    except FileNotFoundError:
        raise scenario_error(origin, "", "no such file") from None
    except IsADirectoryError:
        raise scenario_error(origin, "", f"is a directory, expected {expected}") from None
    except UnicodeDecodeError as e:
        raise scenario_error(origin, "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise scenario_error(origin, "", f"cannot read: {e.strerror or e}") from None
