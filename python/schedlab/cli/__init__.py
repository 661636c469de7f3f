"""The ``schedlab`` command (typer + rich). Orchestration only: loading, running and
simulating happen in the library; this module parses arguments, shows progress and
prints tables or JSON.

Exit status: 0 success; 2 bad input (scenario file, experiment or machine name,
option), printed as ONE line ``error: ...`` on stderr with no traceback; 3 a run hit its
limit; 70 an internal error (a schedlab bug); 130 interrupted (Ctrl-C), 143 and 129 stopped by
SIGTERM and SIGHUP, which are handled as Ctrl-C is (:mod:`schedlab._signals`).
"""

from .base import app
from .entry import main

__all__ = ["app", "main"]
