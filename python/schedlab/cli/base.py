"""The ``schedlab`` app and what every command shares: the typer ``app`` with its global
options, the consoles, ``emit`` for tables, ``fail`` and the ``errors()`` guard that turns
an exception into one line and an exit status. The command modules import this one; it
imports none of them (``schedlab.cli.entry`` registers them)."""

from __future__ import annotations

import contextlib
import enum
import sys
from typing import Iterator, NoReturn

import typer
from rich.console import Console

from ..errors import InternalError, ScenarioError, SchedlabError, SimulationLimitError
from .._signals import interrupt_status

app = typer.Typer(
    name="schedlab",
    help="Deterministic discrete-event simulator of the Linux kernel's per-CPU scheduling machinery.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Piped or captured output is not squeezed to 80 columns (and emit() strips the padding).
out = Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False)


def emit(renderable) -> None:
    """Prints a table: as rich draws it on a terminal; piped or captured, without the
    trailing blanks that pad every line to the console's width."""
    if out.is_terminal:
        out.print(renderable)
        return
    with out.capture() as cap:
        out.print(renderable)
    text = "\n".join(line.rstrip() for line in cap.get().split("\n"))
    out.file.write(text if text.endswith("\n") else text + "\n")
    out.file.flush()


class TraceFormat(str, enum.Enum):
    perfetto = "perfetto"
    json = "json"
    ftrace = "ftrace"
    perf = "perf"


class Executor(str, enum.Enum):
    """Where `run` and `reproduce` spread their runs (sweep and sensitivity take the same
    option as text, with dask besides)."""

    process = "process"
    thread = "thread"
    ray = "ray"
    serial = "serial"


def executor_choice(executor: Executor, backend: "Executor | None") -> str:
    """The value of ``--executor``, or of the hidden ``--backend`` (its old name) when that
    was given, with a deprecation line on stderr."""
    if backend is not None:
        sys.stderr.write("warning: --backend is deprecated, use --executor (same values)\n")
        sys.stderr.flush()
        return backend.value
    return executor.value


def fail(message: str, code: int = 2) -> NoReturn:
    """Prints one line ``error: MESSAGE`` on stderr and exits with ``code``."""
    one_line = " ".join(str(message).split("\n")).strip()
    sys.stderr.write(f"error: {one_line}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


@contextlib.contextmanager
def errors() -> Iterator[None]:
    """Turns schedlab's errors and bad arguments into one line and an exit status."""
    try:
        yield
    except ScenarioError as e:
        fail(str(e), 2)
    except SimulationLimitError as e:
        fail(str(e), 3)
    except InternalError as e:
        fail(str(e), 70)
    except SchedlabError as e:  # pragma: no cover - every subclass is listed above
        fail(str(e), 70)
    except KeyError as e:
        fail(e.args[0] if e.args else str(e), 2)
    except ValueError as e:
        fail(str(e), 2)
    except OSError as e:
        fail(f"{e.filename or ''}: {e.strerror or e}".lstrip(": "), 2)
    except KeyboardInterrupt:
        fail("interrupted", interrupt_status())


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        out.print(f"schedlab {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """schedlab: what does this kernel mechanism do to my workload on that machine?"""


def _cell(v) -> str:
    from ..reproduce.report import fmt

    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return fmt(v)

