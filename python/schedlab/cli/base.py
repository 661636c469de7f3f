"""The ``schedlab`` app and what every command shares: the typer ``app`` with its global
options, the consoles, ``emit`` for tables, ``fail`` and the ``errors()`` guard that turns
an exception into one line and an exit status. The command modules import this one; it
imports none of them (``schedlab.cli.entry`` registers them)."""

from __future__ import annotations

import contextlib
import enum
import os
import sys
import traceback
from collections.abc import Iterator
from typing import NoReturn

import typer
from rich.console import Console

from .._signals import interrupt_status
from ..errors import HostError, InputError, InternalError, ScenarioError, SimulationLimitError

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
    trace_cmd = "trace-cmd"
    parquet = "parquet"


class Executor(str, enum.Enum):
    """Where `run` and `reproduce` spread their runs (sweep and sensitivity take the same
    option as text, with dask besides)."""

    process = "process"
    thread = "thread"
    ray = "ray"
    serial = "serial"


def executor_choice(executor: Executor, backend: Executor | None) -> str:
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


# Set by --debug (or SCHEDLAB_DEBUG=1): an internal error prints its traceback.
_debug = False


def debugging() -> bool:
    return _debug or os.environ.get("SCHEDLAB_DEBUG", "") not in ("", "0")


def is_usage_exit(e: BaseException) -> bool:
    """typer's Exit and Abort and click's usage errors (typer vendors click, so matched
    by shape): how a command stops on purpose, never a bug."""
    if isinstance(e, (typer.Exit, typer.Abort)):
        return True
    return hasattr(e, "format_message") and isinstance(getattr(e, "exit_code", None), int)


def internal_error(e: BaseException) -> int:
    """Reports an exception from schedlab's own code: one line on stderr, the traceback
    before it with --debug. Returns the exit status, 70 (EX_SOFTWARE)."""
    if debugging():
        traceback.print_exception(type(e), e, e.__traceback__, file=sys.stderr)
    what = " ".join(f"{type(e).__name__}: {e}".split())
    sys.stderr.write(f"internal error: {what}; this is a bug in schedlab "
                     "(run with --debug for the traceback)\n")
    sys.stderr.flush()
    return 70


def _path_error(e: OSError) -> bool:
    """A file or directory the user named that cannot be used as such (missing, not
    allowed, a file where a directory goes): bad input, not a bug."""
    return e.filename is not None and isinstance(
        e, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError, FileExistsError))


@contextlib.contextmanager
def errors() -> Iterator[None]:
    """Turns an exception into one line and an exit status: bad input (a scenario, an
    option, a name, a path) 2, a run's limit 3, anything else from schedlab's code 70."""
    try:
        yield
    except (ScenarioError, InputError, HostError) as e:
        fail(str(e), 2)
    except SimulationLimitError as e:
        fail(str(e), 3)
    except InternalError as e:
        fail(str(e), 70)
    except KeyboardInterrupt:
        fail("interrupted", interrupt_status())
    except OSError as e:
        if not _path_error(e):
            raise typer.Exit(internal_error(e)) from e
        fail(f"{e.filename}: {e.strerror or e}", 2)
    except Exception as e:
        if is_usage_exit(e):
            raise
        raise typer.Exit(internal_error(e)) from e


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        out.print(f"schedlab {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="On an internal error (exit 70), print the traceback "
                               "(also SCHEDLAB_DEBUG=1)."),
) -> None:
    """schedlab: what does this kernel mechanism do to my workload on that machine?"""
    global _debug
    _debug = debug


def _cell(v) -> str:
    from ..reproduce.report import fmt

    if isinstance(v, bool) or isinstance(v, str):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        return f"{int(v):,}"
    return fmt(v)

