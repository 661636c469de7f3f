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
import json
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from . import _core
from .api import check_seed, core_run, trace_format_for, trace_path_for
from .errors import InputError, RunInterrupted, ScenarioError, with_location
from .limits import limits_json
from .results import Result, ResultSet
from .scenario import ScenarioLike, load_scenario

__all__ = ["Job", "map_runs", "run_many", "BACKENDS", "default_workers"]

BACKENDS = ("process", "thread", "ray", "serial")


@dataclass(frozen=True)
class Job:
    """One run: a normalized scenario (JSON text), a seed and where its trace goes."""

    scenario_json: str
    seed: int
    trace_path: str | None = None
    trace_format: str = "perfetto"
    origin: str | None = None  # the scenario's file, named in its errors
    limits: str | None = None  # the core's Limits as JSON (schedlab.limits)
    # Leave the per-task list out of the returned result: callers that read only the
    # summary figures (reproductions) would otherwise hold tens of MB per run at real
    # scale (a make of 28,000 units has 56,000 tasks).
    without_tasks: bool = False
    # Record the LISA-style check of EAS decisions (summary.eas_check_*; api.run's eas_check).
    eas_check: bool = False


def _mp_context():
    # fork needs no re-import of __main__ (spawn and forkserver re-run an unguarded
    # script in every worker); elsewhere than Linux, fork is unsafe, so spawn.
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


# Ctrl-C in a worker process: a run in progress stops at its next check (the core's
# progress tick runs this handler) and returns its partial result; a worker between runs
# starts no other. Nothing raises in a worker, so no traceback reaches the terminal.
_interrupted = False


def _on_sigint(signum, frame) -> None:
    global _interrupted
    _interrupted = True
    _core.interrupt_runs()


def _worker_init() -> None:
    # SIGTERM and SIGHUP (a supervisor stopping the job, sent to the whole group) stop the
    # run in progress the same way: its partial result goes back to the parent.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_sigint)


def run_job(job: Job) -> str | None:
    """Runs one job in this process; returns the RunResult JSON text (None in a worker
    process that was interrupted before the job started)."""
    if _interrupted:
        return None
    try:
        text = core_run(job.scenario_json, job.seed, job.trace_path, job.trace_format, None, job.origin, job.limits,
                        job.eas_check)
    except OSError as e:  # the core's only I/O is the trace the caller named
        raise InputError(str(e)) from None
    if job.without_tasks:
        raw = json.loads(text)
        raw.pop("tasks", None)
        raw.pop("eas_check", None)  # the decisions; their sums stay in the summary
        text = json.dumps(raw)
    return text


def _stopped_by(text: str | None) -> str | None:
    if text is None:
        return None
    return json.loads(text).get("engine", {}).get("stopped_by")


def default_workers() -> int:
    """Processes to use: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def map_runs(
    jobs: Sequence[Job],
    *,
    workers: int | None = None,
    backend: str = "process",
    on_done: Callable[[int], None] | None = None,
    on_result: Callable[[int, str], None] | None = None,
) -> list[str]:
    """Runs every job and returns their RunResult JSON texts in job order.

    ``on_done(i)`` is called in the calling thread as job ``i`` finishes, after
    ``on_result(i, text)`` with its result (what a caller keeps as it goes). The first
    failure cancels what has not started and is raised. Ctrl-C stops the runs in progress
    at their next check and raises :class:`_Interrupted` with the texts there are (None
    for jobs that never ran).
    """
    if backend not in BACKENDS:
        raise InputError(f"unknown backend '{backend}': expected one of {', '.join(BACKENDS)}")
    n = len(jobs)
    workers = min(workers or default_workers(), max(n, 1))
    if n == 0:
        return []
    if backend == "serial" or workers == 1 or n == 1:
        out: list[str | None] = []
        for i, job in enumerate(jobs):
            text = run_job(job)
            out.append(text)
            if _stopped_by(text) == "interrupted":
                raise _Interrupted(out + [None] * (n - len(out)))
            if on_result:
                on_result(i, text)
            if on_done:
                on_done(i)
        return [t for t in out if t is not None]
    if backend == "ray":
        return _map_ray(jobs, workers, on_done, on_result)
    if backend == "thread":
        pool: cf.Executor = cf.ThreadPoolExecutor(max_workers=workers)
    else:
        pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context(), initializer=_worker_init)
    results: list[str | None] = [None] * n
    with pool:
        futures = {pool.submit(run_job, job): i for i, job in enumerate(jobs)}
        try:
            for fut in cf.as_completed(futures):
                i = futures[fut]
                results[i] = fut.result()
                if on_result:
                    on_result(i, results[i])
                if on_done:
                    on_done(i)
        except KeyboardInterrupt:
            raise _Interrupted(_collect_interrupted(pool, futures, results)) from None
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    if any(_stopped_by(r) == "interrupted" for r in results):  # a worker saw the Ctrl-C first
        raise _Interrupted(results)
    return [r for r in results if r is not None]


class _Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`map_runs`: ``texts`` in job order, None where a job never ran."""

    def __init__(self, texts: list[str | None]):
        super().__init__("interrupted")
        self.texts = texts


def _collect_interrupted(pool: cf.Executor, futures: dict, results: list[str | None]) -> list[str | None]:
    """After Ctrl-C in the caller: cancel what has not started, tell the runs in progress
    to stop (threads share this process's interrupt; worker processes get SIGINT, as a
    terminal's Ctrl-C already sent them) and gather what they return."""
    for f in futures:
        f.cancel()
    _core.interrupt_runs()
    if isinstance(pool, cf.ProcessPoolExecutor):
        # The executor keeps its workers in a private dict; a signal sent with `kill` to
        # this process alone would otherwise leave them running to the end.
        for proc in list(getattr(pool, "_processes", {}).values()):
            try:
                os.kill(proc.pid, signal.SIGINT)
            except (OSError, AttributeError):
                pass
    for fut, i in futures.items():
        if fut.cancelled():
            continue
        try:
            results[i] = fut.result(timeout=600)
        except BaseException:  # a run that failed or vanished adds nothing partial
            results[i] = None
    return results


def _map_ray(jobs: Sequence[Job], workers: int, on_done: Callable[[int], None] | None,
             on_result: Callable[[int, str], None] | None = None) -> list[str]:
    try:
        import ray
    except ImportError:
        raise InputError("backend 'ray' needs Ray: pip install 'schedlab[ray]'") from None
    if not ray.is_initialized():
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    remote = ray.remote(run_job)
    refs = [remote.remote(job) for job in jobs]
    index = {ref: i for i, ref in enumerate(refs)}
    results: list[str | None] = [None] * len(jobs)
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        for ref in done:
            results[index[ref]] = ray.get(ref)
            if on_result:
                on_result(index[ref], results[index[ref]])
            if on_done:
                on_done(index[ref])
    return [r for r in results if r is not None]


def run_many(
    scenario: ScenarioLike,
    seeds: Sequence[int] | None = None,
    *,
    workers: int | None = None,
    backend: str = "process",
    trace: str | os.PathLike | bool | None = None,
    trace_format: str | None = None,
    on_done: Callable[[int], None] | None = None,
    max_events: int | None = None,
    max_sim_time: str | float | None = None,
    max_wall_time: str | float | None = None,
    max_memory: str | int | None = None,
) -> ResultSet:
    """Runs one scenario with several seeds in parallel; returns a :class:`ResultSet`
    in seed order. ``seeds`` defaults to the scenario's ``[run] seeds``.

    ``trace`` as in :func:`schedlab.run`; with several seeds each trace file gets a
    ``.seed<N>`` suffix (or put ``{seed}`` in the path). Limits as in :func:`schedlab.run`,
    for each run; Ctrl-C raises :class:`schedlab.RunInterrupted` with the partial results.
    """
    s = load_scenario(scenario)
    seeds = list(s.seeds if seeds is None else seeds)
    trace_format = trace_format_for(trace, trace_format)
    several = len(seeds) > 1
    paths: list[str | None] = []
    for seed in seeds:
        if trace is True or (trace is None and s.trace):
            paths.append(trace_path_for(None, s.name, seed, trace_format, several))
        elif trace not in (None, False):
            paths.append(trace_path_for(trace, s.name, seed, trace_format, several))  # type: ignore[arg-type]
        else:
            paths.append(None)
    limits = limits_json(max_events, max_sim_time, max_wall_time, max_memory)
    jobs = [Job(s.json, check_seed(seed), p, trace_format, s.origin, limits) for seed, p in zip(seeds, paths)]
    try:
        texts = map_runs(jobs, workers=workers, backend=backend, on_done=on_done)
    except ScenarioError as e:
        raise with_location(e) from None
    except _Interrupted as e:
        partial = [Result.from_json(t, p) for t, p in zip(e.texts, paths) if t is not None]
        raise RunInterrupted(ResultSet(partial)) from None
    return ResultSet(Result.from_json(t, p) for t, p in zip(texts, paths))
