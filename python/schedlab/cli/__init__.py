"""The ``schedlab`` command (typer + rich). Orchestration only: loading, running and
simulating happen in the library; this package parses arguments, shows progress and
prints tables or JSON. ``base`` holds the app and the error guard, one ``*_cmd`` module
per group of commands, ``entry`` registers them and holds ``main()``.

Exit status: 0 success; 2 bad input (scenario file, experiment or machine name,
option, a path or host that cannot be used), printed as ONE line ``error: ...`` on
stderr with no traceback; 3 a run hit its limit; 70 an internal error (a schedlab bug:
one line, the traceback with ``--debug`` or SCHEDLAB_DEBUG=1); 130 interrupted (Ctrl-C),
143 and 129 stopped by SIGTERM and SIGHUP, which are handled as Ctrl-C is
(:mod:`schedlab._signals`).
"""

from .base import app
from .entry import main

__all__ = ["app", "main"]
