"""A sensitivity study through local Ray and Dask clusters (loopback) gives the same rows
as in-process: the runs ship as (scenario, seed) to whichever worker.

Marked ``cluster``; skipped, saying why, where Ray or Dask is not installed (CI installs
both)."""

from __future__ import annotations

import importlib.util

import pytest

from schedlab.sweep.executors import make_executor
from test_sensitivity import _study

pytestmark = pytest.mark.cluster


@pytest.fixture(scope="module")
def in_process():
    rows, _ = _study()
    return [r.to_dict() for r in rows]


def _via(kind: str, tmp_path):
    ex = make_executor(kind, workers=2)
    try:
        rows, designs = _study(tmp_path / kind, ex)
    finally:
        ex.shutdown(wait=True)
    assert [c.key for c in designs[0].kept] == ["context_switch_ns"]
    return [r.to_dict() for r in rows]


@pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                    reason="Ray is not installed (pip install '.[ray]'); the process pool is tested without it")
def test_sensitivity_on_ray_matches_in_process(in_process, tmp_path):
    assert _via("ray", tmp_path) == in_process


@pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                    reason="Dask distributed is not installed (pip install '.[dask]')")
def test_sensitivity_on_dask_matches_in_process(in_process, tmp_path):
    assert _via("dask", tmp_path) == in_process


def test_sensitivity_on_the_process_pool_matches_in_process(in_process, tmp_path):
    assert _via("process", tmp_path) == in_process
