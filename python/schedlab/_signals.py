"""SIGTERM and SIGHUP handled like Ctrl-C by the ``schedlab`` command.

timeout(1), systemd, Slurm and CI runners stop a job with SIGTERM (a closed terminal
sends SIGHUP). Their default action killed the command at once: no partial result, and
the worker processes of a parallel run went on under PID 1. Here either raises
KeyboardInterrupt in the main thread, as Ctrl-C does, so every path that handles Ctrl-C
(runs stopped at their next check, workers stopped, the partial result printed) handles
them too; the exit status is then 128 + the signal's number (143 for SIGTERM, 129 for
SIGHUP), as a shell reports a command the signal ended, and 130 for Ctrl-C.
"""

from __future__ import annotations

import signal
import threading

__all__ = ["install", "interrupt_status", "received", "HANDLED"]

HANDLED = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)
_received: int | None = None


def _as_interrupt(signum, frame) -> None:
    global _received
    if _received is None:
        _received = signum
    raise KeyboardInterrupt(f"signal {signum}")


def install() -> None:
    """Makes SIGTERM and SIGHUP raise KeyboardInterrupt (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in HANDLED:
        signal.signal(sig, _as_interrupt)


def received() -> int | None:
    """The signal that interrupted the command (None: Ctrl-C or nothing)."""
    return _received


def interrupt_status() -> int:
    """The exit status of an interrupted command: 128 + signal (130 for Ctrl-C)."""
    return 128 + (_received if _received is not None else signal.SIGINT)
