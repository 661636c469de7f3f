"""schedlab: a deterministic discrete-event simulator of the Linux kernel's per-CPU
scheduling machinery on modeled multicore machines.

Quick use::

    import schedlab
    res = schedlab.run("examples/pipe_pingpong.toml", seed=7)
    res.summary          # one-row DataFrame: figures, seed, features, tunables
    many = schedlab.run_many("examples/pipe_pingpong.toml", seeds=[1, 2, 3])
    many.summary         # one row per seed

The Rust core does the simulation (one call per run, GIL released); this package
loads scenarios, runs seeds in parallel processes, shapes results as pandas
DataFrames, and holds the CLI (``schedlab``) and the reproductions of published
results (``schedlab reproduce``).
"""

from __future__ import annotations

from . import _core
from .api import run
from .errors import InputError, InternalError, RunInterrupted, ScenarioError, SchedlabError, SimulationLimitError, UnknownNameError
from .parallel import run_many
from .results import Result, ResultSet
from .scenario import Scenario, load_scenario

__version__: str = _core.version()

__all__ = [
    "__version__",
    "run",
    "run_many",
    "load_scenario",
    "Scenario",
    "Result",
    "ResultSet",
    "SchedlabError",
    "ScenarioError",
    "InputError",
    "UnknownNameError",
    "SimulationLimitError",
    "InternalError",
    "RunInterrupted",
]
