"""Running a sweep: what is missing, on an executor, into the store, surviving failures.

- Only (point, seed) pairs without a row are submitted (resume is the normal case).
- Finished rows are buffered and written as one part file every ``flush_s`` seconds or
  ``flush_rows`` rows, and always on the way out (end, error, Ctrl-C).
- A run that raises (a limit hit, an internal error) is recorded under ``failures/`` and
  the sweep goes on; it is tried again on the next run.
- A pool that breaks (a worker killed: ``BrokenExecutor``) is replaced and the runs it
  held are resubmitted, up to ``max_attempts`` per run (then they count as failures).
"""

from __future__ import annotations

import concurrent.futures as cf
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..errors import InputError
from .executors import EXECUTORS, make_executor
from .progress import SweepProgress
from .spec import Point, SweepSpec
from .store import PARAM_PREFIX, Store, param_types
from .worker import run_point

__all__ = ["SweepOutcome", "SweepStatus", "SweepInterrupted", "run_sweep", "sweep_status"]

ExecutorLike = str | cf.Executor | Callable[[], cf.Executor]


@dataclass
class SweepOutcome:
    total: int  # rows the sweep has: points x seeds
    already: int  # rows there before this run
    computed: int  # rows written by this run
    failed: list[dict[str, Any]] = field(default_factory=list)
    restarts: int = 0  # executors replaced after breaking
    wall_s: float = 0.0
    not_submitted: int = 0  # missing runs left for a later run by ``limit``

    @property
    def complete(self) -> bool:
        return self.already + self.computed == self.total


@dataclass
class SweepStatus:
    name: str
    out: str
    points: int
    seeds: int
    total: int
    done: int
    duplicates: int
    stale: int  # rows of points the spec no longer has
    failures: list[dict[str, Any]]

    @property
    def missing(self) -> int:
        return self.total - self.done


def _row(point: Point, seed: int, measured: dict[str, Any], sweep: str) -> dict[str, Any]:
    row: dict[str, Any] = {"point_key": point.key, "seed": seed, "point": point.index, "sweep": sweep}
    row.update({f"{PARAM_PREFIX}{k}": v for k, v in point.params.items()})
    row.update(measured)
    row["schedlab_version"] = __version__
    return row


def _executor_factory(executor: ExecutorLike, workers: int | None, address: str | None) -> Callable[[], cf.Executor]:
    if isinstance(executor, str):
        return lambda: make_executor(executor, workers, address)
    if isinstance(executor, cf.Executor):
        return lambda: executor  # the caller's: used as is, never replaced
    return executor


def run_sweep(
    spec: SweepSpec,
    *,
    executor: ExecutorLike = "process",
    workers: int | None = None,
    address: str | None = None,
    progress: bool | None = None,
    flush_s: float = 2.0,
    flush_rows: int = 200,
    max_attempts: int = 3,
    limit: int | None = None,
) -> SweepOutcome:
    """Runs what is missing of ``spec`` into ``spec.out``; returns what happened.

    ``executor`` is a name (:data:`schedlab.sweep.executors.EXECUTORS`), an Executor,
    or a function returning a fresh one (called again if one breaks). ``limit`` stops
    after submitting that many runs (for trying a sweep out).
    """
    t0 = time.monotonic()
    if isinstance(executor, str) and executor not in EXECUTORS:
        raise InputError(f"unknown executor '{executor}': expected one of {', '.join(EXECUTORS)}")
    points = spec.points()  # validates every point before anything runs
    store = Store(spec.out)
    types = param_types({k: [pt.params.get(k) for pt in points] for k in (points[0].params if points else {})})
    with store.lock():
        store.write_manifest({**spec.manifest(), "schedlab_version": __version__})
        done = set(store.done())
        todo = deque((pt, seed) for pt in points for seed in spec.seeds if (pt.key, seed) not in done)
        total = len(points) * len(spec.seeds)
        outcome = SweepOutcome(total=total, already=total - len(todo), computed=0)
        if limit is not None:
            outcome.not_submitted = max(0, len(todo) - limit)
            todo = deque(list(todo)[:limit])
        factory = _executor_factory(executor, workers, address)
        attempts: dict[tuple[str, int], int] = {}
        buffer: list[dict[str, Any]] = []
        last_flush = time.monotonic()

        def flush() -> None:
            nonlocal last_flush
            if buffer:
                store.append(buffer, types)
                outcome.computed += len(buffer)
                buffer.clear()
            last_flush = time.monotonic()

        with SweepProgress(spec.name, total, outcome.already, enabled=progress) as bar:
            try:
                while todo:
                    ex = factory()
                    window = max(2, 4 * (workers or _workers_hint(ex)))
                    inflight: dict[cf.Future, tuple[Point, int]] = {}
                    broken = False
                    try:
                        while (todo or inflight) and not broken:
                            while todo and len(inflight) < window:
                                pt, seed = todo.popleft()
                                inflight[ex.submit(run_point, pt.scenario.json, seed)] = (pt, seed)
                            finished, _ = cf.wait(list(inflight), timeout=flush_s, return_when=cf.FIRST_COMPLETED)
                            for fut in finished:
                                pt, seed = inflight.pop(fut)
                                exc = fut.exception()
                                if exc is None:
                                    buffer.append(_row(pt, seed, fut.result(), spec.name))
                                    bar.ok()
                                elif isinstance(exc, cf.BrokenExecutor):
                                    broken = True
                                    inflight[fut] = (pt, seed)  # resubmitted below with the rest
                                else:
                                    store.record_failure(pt.key, seed, pt.index, pt.params, _one_line(exc))
                                    outcome.failed.append({"point": pt.index, "seed": seed, "error": _one_line(exc)})
                                    bar.fail()
                            if len(buffer) >= flush_rows or time.monotonic() - last_flush >= flush_s:
                                flush()
                    except KeyboardInterrupt:
                        # Ctrl-C, SIGTERM or SIGHUP: the runs in progress have nothing to keep
                        # (a row is a whole run), so their workers stop now rather than
                        # finishing (or going on under PID 1 once this process is gone).
                        _stop_workers(ex, executor)
                        raise
                    finally:
                        _shutdown(ex, executor)
                    if broken:
                        outcome.restarts += 1
                        retry = []
                        for pt, seed in inflight.values():
                            n = attempts[(pt.key, seed)] = attempts.get((pt.key, seed), 0) + 1
                            if n >= max_attempts:
                                msg = f"its worker died {n} times (killed, or out of memory)"
                                store.record_failure(pt.key, seed, pt.index, pt.params, msg)
                                outcome.failed.append({"point": pt.index, "seed": seed, "error": msg})
                                bar.fail()
                            else:
                                retry.append((pt, seed))
                        todo.extendleft(reversed(retry))
                        bar.note(f"a worker died: executor replaced, {len(retry)} run(s) resubmitted")
                        if isinstance(executor, cf.Executor):
                            raise RuntimeError("the executor broke (a worker died) and cannot be replaced: "
                                               "rerun the sweep to resume")
            except KeyboardInterrupt:
                flush()
                outcome.wall_s = time.monotonic() - t0
                raise SweepInterrupted(outcome) from None
            finally:
                flush()
    outcome.wall_s = time.monotonic() - t0
    return outcome


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C (or SIGTERM, SIGHUP): ``outcome`` counts the rows written."""

    def __init__(self, outcome: SweepOutcome):
        super().__init__("sweep interrupted")
        self.outcome = outcome


def _stop_workers(ex: cf.Executor, given: ExecutorLike) -> None:
    """Ends the worker processes of a local process pool (SIGTERM; they ignore SIGINT)."""
    if isinstance(given, cf.Executor) or not isinstance(ex, cf.ProcessPoolExecutor):
        return
    for proc in list((getattr(ex, "_processes", None) or {}).values()):
        try:
            proc.terminate()
        except (OSError, AttributeError):
            pass
    for proc in list((getattr(ex, "_processes", None) or {}).values()):
        try:
            proc.join(5)
        except (OSError, AttributeError, AssertionError):
            pass


def _workers_hint(ex: cf.Executor) -> int:
    n = getattr(ex, "_max_workers", None)
    if isinstance(n, int) and n > 0:
        return n
    from .executors import default_workers

    return default_workers()


def _shutdown(ex: cf.Executor, given: ExecutorLike) -> None:
    if isinstance(given, cf.Executor):
        return  # the caller's to shut down
    try:
        ex.shutdown(wait=False, cancel_futures=True)
    except Exception:  # noqa: BLE001 - a broken pool may complain while closing; nothing to save
        pass


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"


def sweep_status(spec: SweepSpec) -> SweepStatus:
    """How far ``spec`` is in its results directory (reads only keys)."""
    points = spec.points()
    store = Store(spec.out)
    keys = store.done()
    wanted = {(pt.key, s) for pt in points for s in spec.seeds}
    have = [k for k in keys if k in wanted]
    failures = [f for f in store.failures() if (f.get("point_key"), f.get("seed")) in wanted]
    return SweepStatus(name=spec.name, out=str(spec.out), points=len(points), seeds=len(spec.seeds),
                       total=len(wanted), done=len(set(have)), duplicates=len(have) - len(set(have)),
                       stale=len([k for k in keys if k not in wanted]), failures=failures)
