"""Sweep progress on stderr: a rich bar (rows done of all, failures, elapsed, ETA) on a
terminal; elsewhere (CI logs, pipes) a plain line every ``every`` seconds."""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

__all__ = ["SweepProgress"]


class SweepProgress:
    def __init__(self, name: str, total: int, done: int, *, console: Console | None = None,
                 enabled: bool | None = None, every: float = 10.0):
        self.console = console or Console(stderr=True)
        self.bar = self.console.is_terminal if enabled is None else enabled
        self.name, self.total, self.done, self.failed = name, total, done, 0
        self.every = every
        self._resumed = done
        self._t0 = time.monotonic()
        self._last = self._t0
        self.progress: Progress | None = None
        if self.bar:
            self.progress = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("[red]{task.fields[failed]} failed", justify="right"),
                TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                console=self.console, transient=False)
            self.task = self.progress.add_task(f"sweep {name}", total=total, completed=done, failed=0)

    def __enter__(self) -> SweepProgress:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()

    def ok(self, n: int = 1) -> None:
        self.done += n
        if self.progress is not None:
            self.progress.advance(self.task, n)
        self._maybe_line()

    def fail(self, n: int = 1) -> None:
        self.failed += n
        if self.progress is not None:
            self.progress.update(self.task, failed=self.failed)
        self._maybe_line()

    def note(self, text: str) -> None:
        """A line above the bar (a worker restart, say)."""
        if self.progress is not None:
            self.progress.console.print(text, highlight=False)
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    def eta(self) -> float | None:
        ran = self.done - self._resumed
        left = self.total - self.done - self.failed
        elapsed = time.monotonic() - self._t0
        return elapsed / ran * left if ran > 0 else None

    def _maybe_line(self) -> None:
        if self.progress is not None:
            return
        now = time.monotonic()
        if now - self._last < self.every:
            return
        self._last = now
        eta = self.eta()
        sys.stderr.write(f"sweep {self.name}: {self.done}/{self.total} rows, {self.failed} failed, "
                         f"{now - self._t0:.0f} s elapsed" + (f", ETA {eta:.0f} s" if eta is not None else "") + "\n")
        sys.stderr.flush()
