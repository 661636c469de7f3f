"""Running many (scenario, seed) jobs in parallel.

Backends: ``"process"`` (default; a ``ProcessPoolExecutor``; on Linux its workers are
forked, so scripts without an ``if __name__ == "__main__"`` guard, notebooks and
``python -`` work as they are, and the executor forks every worker up front, before
it starts any thread of its own), ``"thread"`` (the core releases the GIL, so threads
run in parallel too), ``"ray"`` (if Ray is installed: ``pip install
'schedlab[ray]'``) and ``"serial"``. Every run is independent and deterministic, so the
backend never changes a result.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Union

from . import _core
from .api import trace_format_for, trace_path_for
from .results import Result, ResultSet
from .scenario import ScenarioLike, load_scenario

__all__ = ["Job", "map_runs", "run_many", "BACKENDS", "default_workers"]

BACKENDS = ("process", "thread", "ray", "serial")


@dataclass(frozen=True)
class Job:
    """One run: a normalized scenario (JSON text), a seed and where its trace goes."""

    scenario_json: str
    seed: int
    trace_path: Optional[str] = None
    trace_format: str = "perfetto"
    origin: Optional[str] = None  # the scenario's file, named in its errors


def _mp_context():
    # fork needs no re-import of __main__ (spawn and forkserver re-run an unguarded
    # script in every worker); elsewhere than Linux, fork is unsafe, so spawn.
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def run_job(job: Job) -> str:
    """Runs one job in this process; returns the RunResult JSON text."""
    return _core.run(job.scenario_json, job.seed, job.trace_path, job.trace_format, None, job.origin)


def default_workers() -> int:
    """Processes to use: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def map_runs(
    jobs: Sequence[Job],
    *,
    workers: Optional[int] = None,
    backend: str = "process",
    on_done: Optional[Callable[[int], None]] = None,
) -> list[str]:
    """Runs every job and returns their RunResult JSON texts in job order.

    ``on_done(i)`` is called in the calling thread as job ``i`` finishes. The first
    failure cancels what has not started and is raised.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend '{backend}': expected one of {', '.join(BACKENDS)}")
    n = len(jobs)
    workers = min(workers or default_workers(), max(n, 1))
    if n == 0:
        return []
    if backend == "serial" or workers == 1 or n == 1:
        out = []
        for i, job in enumerate(jobs):
            out.append(run_job(job))
            if on_done:
                on_done(i)
        return out
    if backend == "ray":
        return _map_ray(jobs, workers, on_done)
    if backend == "thread":
        pool: cf.Executor = cf.ThreadPoolExecutor(max_workers=workers)
    else:
        pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context())
    results: list[Optional[str]] = [None] * n
    with pool:
        futures = {pool.submit(run_job, job): i for i, job in enumerate(jobs)}
        try:
            for fut in cf.as_completed(futures):
                i = futures[fut]
                results[i] = fut.result()
                if on_done:
                    on_done(i)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return [r for r in results if r is not None]


def _map_ray(jobs: Sequence[Job], workers: int, on_done: Optional[Callable[[int], None]]) -> list[str]:
    try:
        import ray
    except ImportError:
        raise ValueError("backend 'ray' needs Ray: pip install 'schedlab[ray]'") from None
    if not ray.is_initialized():
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_job)
    refs = [remote.remote(job) for job in jobs]
    index = {ref: i for i, ref in enumerate(refs)}
    results: list[Optional[str]] = [None] * len(jobs)
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            results[index[ref]] = ray.get(ref)
            if on_done:
                on_done(index[ref])
    return [r for r in results if r is not None]


def run_many(
    scenario: ScenarioLike,
    seeds: Optional[Sequence[int]] = None,
    *,
    workers: Optional[int] = None,
    backend: str = "process",
    trace: Optional[Union[str, os.PathLike, bool]] = None,
    trace_format: Optional[str] = None,
    on_done: Optional[Callable[[int], None]] = None,
) -> ResultSet:
    """Runs one scenario with several seeds in parallel; returns a :class:`ResultSet`
    in seed order. ``seeds`` defaults to the scenario's ``[run] seeds``.

    ``trace`` as in :func:`schedlab.run`; with several seeds each trace file gets a
    ``.seed<N>`` suffix (or put ``{seed}`` in the path).
    """
    s = load_scenario(scenario)
    seeds = list(s.seeds if seeds is None else seeds)
    trace_format = trace_format_for(trace, trace_format)
    several = len(seeds) > 1
    paths: list[Optional[str]] = []
    for seed in seeds:
        if trace is True or (trace is None and s.trace):
            paths.append(trace_path_for(None, s.name, seed, trace_format, several))
        elif trace not in (None, False):
            paths.append(trace_path_for(trace, s.name, seed, trace_format, several))  # type: ignore[arg-type]
        else:
            paths.append(None)
    jobs = [Job(s.json, int(seed), p, trace_format, s.origin) for seed, p in zip(seeds, paths)]
    texts = map_runs(jobs, workers=workers, backend=backend, on_done=on_done)
    return ResultSet(Result.from_json(t, p) for t, p in zip(texts, paths))
