"""The same sweep through the local process pool and through Ray (and Dask) clusters
started on the loopback address: identical rows, every metric column.

Marked ``cluster``; skipped, saying why, where Ray or Dask is not installed
(``pip install '.[ray]'`` / ``'.[dask]'``; CI installs both)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT
from schedlab.sweep import load_spec, read_results
from test_sweep import write_spec

pytestmark = pytest.mark.cluster

GRID = """
seeds = [1, 2]
[set]
"run.duration_s" = 1.0
"run.warmup_s" = 0
[parameters]
"tasks.worker.count" = [4, 16, 64]
"groups.svc.cpu_max" = ["100000 100000", "200000 100000"]
[parameters.behaviour]
"expiring-5.3" = { "kernel.profile" = "5.3" }
"no-expiry-5.4" = { "kernel.profile" = "5.4" }
"""

# Differ by host and by run: how long a run took, which library version wrote it.
NOT_METRICS = {"run.wall_s"}


def _sweep(spec_path, out, *args) -> pd.DataFrame:
    res = subprocess.run([sys.executable, "-m", "schedlab", "sweep", str(spec_path), "--out", str(out), "-j", "2",
                          *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    df = read_results(out)
    return df.drop(columns=sorted(NOT_METRICS & set(df.columns))).sort_values(["point_key", "seed"]).reset_index(drop=True)


def _same_rows(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b) == 24
    pd.testing.assert_frame_equal(a, b, check_exact=True)


@pytest.fixture(scope="module")
def via_pool(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pool")
    spec = write_spec(tmp, GRID)
    return spec, _sweep(spec, tmp / "pool.sweep")


@pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                    reason="Ray is not installed (pip install '.[ray]'); the process pool is tested without it")
def test_ray_rows_identical_to_the_process_pool(via_pool, tmp_path):
    spec, pool = via_pool
    ray = _sweep(spec, tmp_path / "ray.sweep", "--executor", "ray")
    _same_rows(pool, ray)


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="Dask distributed is not installed (pip install '.[dask]')")
def test_dask_rows_identical_to_the_process_pool(via_pool, tmp_path):
    spec, pool = via_pool
    dask = _sweep(spec, tmp_path / "dask.sweep", "--executor", "dask")
    _same_rows(pool, dask)


def test_spec_of_the_grid_is_valid(tmp_path):
    assert load_spec(write_spec(tmp_path, GRID)).size == 24
