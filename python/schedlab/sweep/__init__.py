"""Parameter sweeps: a spec (TOML) -> a grid or list of points x seeds, run on any
``concurrent.futures`` executor, stored as a Parquet dataset that resumes.

::

    from schedlab.sweep import load_spec, run_sweep, read_results
    spec = load_spec("sweeps/bandwidth.toml")
    run_sweep(spec)                      # local process pool; executor="ray" / "dask" / any Executor
    df = read_results(spec.out)          # pandas: one row per (point, seed)

Modules: ``spec`` (the TOML format and the points), ``executors``, ``worker`` (one run),
``store`` (the results directory), ``driver`` (resume, failures, broken pools),
``progress``.
"""

from __future__ import annotations

import os
from typing import Any

from .driver import SweepOutcome, SweepStatus, run_sweep, sweep_status
from .executors import EXECUTORS, make_executor
from .spec import Parameter, Point, SweepSpec, load_spec, scenario_key
from .store import Store

__all__ = ["EXECUTORS", "make_executor", "SweepOutcome", "SweepStatus", "run_sweep", "sweep_status", "Parameter",
           "Point", "SweepSpec", "load_spec", "scenario_key", "Store", "read_results"]


def read_results(out_dir: str | os.PathLike) -> Any:
    """The dataset of a sweep directory as a pandas DataFrame, one row per (point, seed),
    sorted by point then seed."""
    df = Store(out_dir).table().to_pandas()
    if len(df):
        df = df.sort_values(["point", "seed"], kind="stable").reset_index(drop=True)
    return df
