"""A rich progress bar on stderr that appears only once work has lasted about a second."""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

__all__ = ["DelayedProgress"]


class DelayedProgress:
    """Context manager: ``advance()`` per finished unit, or ``fraction(f)`` for one long run.

    Nothing is drawn for work that ends within ``delay`` seconds, nor when stderr is not
    a terminal (CI logs and ``--json`` pipelines stay clean).
    """

    def __init__(self, description: str, total: float | None = None, *, delay: float = 1.0,
                 console: Console | None = None, enabled: bool | None = None, units: bool = True):
        self.console = console or Console(stderr=True)
        self.enabled = self.console.is_terminal if enabled is None else enabled
        columns = [SpinnerColumn(), TextColumn("[progress.description]{task.description}"), BarColumn()]
        columns += [MofNCompleteColumn()] if units else [TaskProgressColumn()]
        columns += [TimeElapsedColumn(), TimeRemainingColumn()]
        self.progress = Progress(*columns, console=self.console, transient=True, redirect_stdout=False,
                                 redirect_stderr=False)
        self.task = self.progress.add_task(description, total=total)
        self.delay = delay
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        self._timer: threading.Timer | None = None

    def _start(self) -> None:
        with self._lock:
            if not self._closed and not self._started:
                self._started = True
                self.progress.start()

    def __enter__(self) -> DelayedProgress:
        if self.enabled:
            self._timer = threading.Timer(self.delay, self._start)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._closed = True
            if self._started:
                self.progress.stop()

    def set_total(self, total: float) -> None:
        self.progress.update(self.task, total=total)

    def advance(self, _index: object = None, amount: float = 1) -> None:
        self.progress.advance(self.task, amount)

    def fraction(self, f: float) -> None:
        self.progress.update(self.task, completed=max(0.0, min(1.0, f)) * (self.progress.tasks[0].total or 1))


class RunsProgress:
    """Progress over groups of runs (a reproduction's experiments): a rich bar per group
    and one for all runs when stdout and stderr are terminals; otherwise plain log lines
    on stderr as each group finishes and every 10 % of the runs (a log or a pipe gets
    progress it can read, with no control codes).

    ``set_jobs(names)`` gives each run's group in run order; ``advance(i)`` marks run ``i``
    done (any order)."""

    def __init__(self, title: str, *, enabled: bool | None = None, stream=None):
        import sys
        import time

        self.title = title
        self.stream = stream or sys.stderr
        self._time = time.monotonic
        self.t0 = self._time()
        if enabled is None:
            enabled = sys.stdout.isatty() and self.stream.isatty()
        self.bars = enabled
        self.progress: Progress | None = None
        self.names: list[str] = []
        self.left: dict[str, int] = {}
        self.total_of: dict[str, int] = {}
        self.done = 0
        self._next_log = 0.1
        self._tasks: dict[str, int] = {}
        self._all = None
        self._lock = threading.Lock()

    def __enter__(self) -> RunsProgress:
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()

    def log(self, text: str) -> None:
        self.stream.write(f"[{self._time() - self.t0:6.1f} s] {text}\n")
        self.stream.flush()

    def set_jobs(self, names: list[str]) -> None:
        self.names = list(names)
        for n in self.names:
            self.left[n] = self.left.get(n, 0) + 1
        self.total_of = dict(self.left)
        if self.bars:
            self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                     MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                                     console=Console(stderr=True), transient=True)
            self._all = self.progress.add_task(f"[bold]{self.title}[/]: all runs", total=len(self.names))
            for n, k in self.total_of.items():
                self._tasks[n] = self.progress.add_task(f"  {n}", total=k)
            self.progress.start()
        else:
            self.log(f"{self.title}: {len(self.names)} runs in {len(self.total_of)} experiments: "
                     + ", ".join(f"{n} ({k})" for n, k in self.total_of.items()))

    def advance(self, index: int) -> None:
        with self._lock:
            name = self.names[index] if 0 <= index < len(self.names) else "?"
            self.done += 1
            self.left[name] = self.left.get(name, 1) - 1
            if self.progress is not None:
                self.progress.advance(self._all)
                if name in self._tasks:
                    self.progress.advance(self._tasks[name])
                return
            if self.left.get(name) == 0:
                self.log(f"{name}: its {self.total_of.get(name, 0)} runs done ({self.done}/{len(self.names)} in all)")
            elif self.names and self.done / len(self.names) >= self._next_log:
                self.log(f"{self.done}/{len(self.names)} runs done")
            while self.names and self.done / len(self.names) >= self._next_log:
                self._next_log += 0.1


# The core calls a run's progress callback once every 2^20 events (engine/mod.rs).
EVENTS_PER_TICK = 1 << 20


class RunProgress:
    """Progress of one long run, fed by the core's progress callback (``fraction`` of the
    simulated time, NaN for a run that ends with its workload). On a terminal: a bar
    (or a pulsing one) after a second; otherwise a log line on stderr every
    ``every_s`` seconds, so a run in a log or behind a pipe is not silent for minutes.
    Events are counted from the callbacks (one per 2^20 events)."""

    def __init__(self, description: str, *, every_s: float = 10.0, enabled: bool | None = None, stream=None):
        import sys
        import time

        self.description = description
        self.stream = stream or sys.stderr
        self._time = time.monotonic
        self.t0 = self._time()
        self.every_s = every_s
        self.ticks = 0
        self._next = self.t0 + every_s
        terminal = self.stream.isatty() if enabled is None else enabled
        self.bar = DelayedProgress(description, total=1.0, units=False, enabled=terminal) if terminal else None

    def __enter__(self) -> RunProgress:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def __call__(self, fraction: float) -> None:
        import math

        self.ticks += 1
        known = fraction is not None and not math.isnan(fraction)
        if self.bar is not None:
            if known:
                self.bar.fraction(fraction)
            else:
                self.bar.set_total(None)
            return
        now = self._time()
        if now >= self._next:
            self._next = now + self.every_s
            done = f"{fraction:.0%} of the simulated time, " if known else ""
            self.stream.write(f"[{now - self.t0:6.1f} s] {self.description}: {done}"
                              f"{self.ticks * EVENTS_PER_TICK / 1e6:,.0f} million events so far\n")
            self.stream.flush()
