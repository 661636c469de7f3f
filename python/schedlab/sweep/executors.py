"""Where sweep tasks run: any :class:`concurrent.futures.Executor`.

- ``process`` (default): the local process pool (forked workers on Linux);
- ``thread``: threads (the core releases the GIL); ``serial``: in the calling thread;
- ``ray``: Ray (``pip install 'schedlab[ray]'``): ``address`` is a cluster's
  (``ray://host:10001`` or ``host:6379``), or none for a local instance kept on the
  loopback address;
- ``dask``: Dask distributed (``pip install 'schedlab[dask]'``): ``address`` is a
  scheduler's (``tcp://host:8786``), or none for a local cluster on 127.0.0.1.

A sweep needs only ``submit`` and the futures it returns; pass your own executor to
:func:`schedlab.sweep.run_sweep` for anything else (submitit, a custom pool).
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..errors import InputError

__all__ = ["EXECUTORS", "make_executor", "SerialExecutor", "RayExecutor", "default_workers"]

EXECUTORS = ("process", "thread", "serial", "ray", "dask")


def default_workers() -> int:
    from ..parallel import default_workers as dw

    return dw()


class SerialExecutor(cf.Executor):
    """Runs each task in ``submit`` (debugging, profiling, one core)."""

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> cf.Future:
        fut: cf.Future = cf.Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: BLE001 - handed to the caller through the future
            if isinstance(e, KeyboardInterrupt):
                raise
            fut.set_exception(e)
        return fut


class RayExecutor(cf.Executor):
    """A thin ``concurrent.futures`` face on Ray tasks: ``submit`` sends a ``@ray.remote``
    task (one CPU) and returns its ObjectRef's future. Ray retries a task whose worker
    died (``max_retries``)."""

    def __init__(self, address: str | None = None, workers: int | None = None, max_retries: int = 3):
        # Never report usage over the network; a local instance stays on the loopback
        # address (Ray's single-machine mode: it otherwise binds the host's own address).
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if address is None:
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        try:
            import ray
        except ImportError:
            raise InputError("executor 'ray' needs Ray: pip install 'schedlab[ray]'") from None
        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address is None:
                kwargs.update(num_cpus=workers or default_workers(), _node_ip_address="127.0.0.1")
            else:
                kwargs["address"] = address
            ray.init(**kwargs)
        self._max_retries = max_retries
        self._remote: dict[Callable, Any] = {}
        self._lock = threading.Lock()

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> cf.Future:
        with self._lock:
            remote = self._remote.get(fn)
            if remote is None:
                remote = self._ray.remote(num_cpus=1, max_retries=self._max_retries)(fn)
                self._remote[fn] = remote
        return remote.remote(*args, **kwargs).future()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if self._owns and self._ray.is_initialized():
            self._ray.shutdown()


def _dask_executor(address: str | None, workers: int | None) -> cf.Executor:
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError("executor 'dask' needs Dask distributed: pip install 'schedlab[dask]'") from None
    if address is None:
        cluster = LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    else:
        cluster, client = None, Client(address)
    ex = client.get_executor(pure=False)
    close = ex.shutdown

    def shutdown(wait: bool = True, *, cancel_futures: bool = False) -> None:
        close(wait=wait)
        client.close()
        if cluster is not None:
            cluster.close()

    ex.shutdown = shutdown  # type: ignore[method-assign]
    return ex


def _mp_context():
    # As schedlab.parallel: fork on Linux (no re-import of __main__), spawn elsewhere.
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


def _ignore_sigint() -> None:
    # Ctrl-C is the driver's to handle (it writes what is finished and ends the pool's
    # workers with SIGTERM); workers print no traceback each. SIGTERM and SIGHUP keep
    # their default action (the driver's handlers are inherited across fork: reset them).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def make_executor(kind: str = "process", workers: int | None = None, address: str | None = None) -> cf.Executor:
    """A fresh executor of ``kind`` (one of :data:`EXECUTORS`)."""
    if kind not in EXECUTORS:
        raise InputError(f"unknown executor '{kind}': expected one of {', '.join(EXECUTORS)}")
    if address is not None and kind not in ("ray", "dask"):
        raise InputError(f"--address is for the ray and dask executors, not '{kind}'")
    n = workers or default_workers()
    if kind == "process":
        return cf.ProcessPoolExecutor(max_workers=n, mp_context=_mp_context(), initializer=_ignore_sigint)
    if kind == "thread":
        return cf.ThreadPoolExecutor(max_workers=n)
    if kind == "serial":
        return SerialExecutor()
    if kind == "ray":
        return RayExecutor(address, workers)
    return _dask_executor(address, workers)
