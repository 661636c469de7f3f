"""A rich progress bar on stderr that appears only once work has lasted about a second."""

from __future__ import annotations

import threading
from typing import Optional

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

    def __init__(self, description: str, total: Optional[float] = None, *, delay: float = 1.0,
                 console: Optional[Console] = None, enabled: Optional[bool] = None, units: bool = True):
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
        self._timer: Optional[threading.Timer] = None

    def _start(self) -> None:
        with self._lock:
            if not self._closed and not self._started:
                self._started = True
                self.progress.start()

    def __enter__(self) -> "DelayedProgress":
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
