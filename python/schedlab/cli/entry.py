"""The ``schedlab`` entry point: registers every command on ``app`` (by importing its
module), tidies the help and runs it with usage errors as one line."""

from __future__ import annotations

import sys
from typing import NoReturn

import typer

from .._signals import interrupt_status
from . import (
    bench_cmd,  # noqa: F401  (registers bench)
    catalog_cmd,  # noqa: F401  (registers machines, features, workloads)
    host_cmd,  # noqa: F401  (registers validate-host)
    interchange_cmd,  # noqa: F401  (registers export-rt-app, trace-info, replay)
    netperf_cmd,  # noqa: F401  (registers netperf)
    reproduce_cmd,  # noqa: F401  (registers reproduce)
    run_cmd,  # noqa: F401  (registers run)
    sensitivity_cmd,  # noqa: F401  (registers sensitivity)
    studies_cmd,  # noqa: F401  (registers sweep, report, compare)
    tools_cmd,  # noqa: F401  (registers hackbench, schbench)
)
from .base import app, internal_error, is_usage_exit


def _reflow(doc: str) -> str:
    """A docstring as help text: each paragraph's lines joined (rich's help keeps a
    docstring's line breaks, so a sentence wrapped in the source broke mid-line in
    `--help`); paragraphs that are lists or indented blocks are left as they are."""
    import inspect

    out = []
    for para in inspect.cleandoc(doc).split("\n\n"):
        lines = para.split("\n")
        if any(line.startswith((" ", "-", "*", "\b")) for line in lines):
            out.append(para)
        else:
            out.append(" ".join(" ".join(lines).split()))
    return "\n\n".join(out)


def _tidy_help() -> None:
    """Every command's help reflowed, its first paragraph as the one-line summary of
    `schedlab --help`, and flags shown without a ``<bool>`` type (they take no value)."""
    for info in app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if doc:
            info.help = _reflow(doc)
            if info.short_help is None:
                info.short_help = info.help.split("\n\n")[0]
    try:
        from typer.core import TyperOption

        shown = TyperOption.display_type_rich

        def display_type_rich(self, ctx):
            return None if getattr(self, "is_flag", False) and self.metavar is None else shown(self, ctx)

        TyperOption.display_type_rich = display_type_rich
    except (ImportError, AttributeError):  # pragma: no cover - another typer: its own display
        pass


_tidy_help()


def main(argv: list[str] | None = None) -> NoReturn:
    """The ``schedlab`` command: ``app`` with usage errors (a bad option, a missing
    argument, an unknown command) as one line ``error: ...`` and exit status 2, like
    every other bad input, instead of click's boxed usage text."""
    from .. import _signals

    _signals.install()
    try:
        code = app(args=argv, prog_name="schedlab", standalone_mode=False)
    except (typer.Abort, KeyboardInterrupt):
        sys.stderr.write("error: interrupted\n")
        code = interrupt_status()
    except Exception as e:
        if not is_usage_exit(e):  # outside a command's errors() guard: still a bug
            sys.exit(internal_error(e))
        message = " ".join(str(e.format_message()).split())
        ctx = getattr(e, "ctx", None)
        hint = f" (see '{ctx.command_path} -h')" if ctx is not None and type(e).__name__ != "ClickException" else ""
        sys.stderr.write(f"error: {message}{hint}\n")
        code = e.exit_code
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
