"""Shared helpers: the repository paths, a CLI runner, and fake RunResult documents.

Fake RunResults follow crates/schedlab-core/src/metrics.rs; they let the result,
comparison and reporting code be tested without running the engine. Tests marked by
using the ``engine`` fixture run the real simulator.
"""

from __future__ import annotations

import copy
import json
import os
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
BAD = EXAMPLES / "bad"


@pytest.fixture(autouse=True)
def _in_repo_root(monkeypatch):
    """Run every test from the repository root so relative example paths work."""
    monkeypatch.chdir(ROOT)


class Cli:
    def __init__(self):
        from schedlab.cli import app

        self.app = app
        self.runner = CliRunner()

    def __call__(self, *args: str):
        return self.runner.invoke(self.app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def cli() -> Cli:
    return Cli()


def fake_result(seed: int = 1, *, scenario: str = "fake", workload: dict | None = None,
                summary: dict | None = None, profile=(6, 6), wall_ns: int = 12345) -> dict:
    """A RunResult document of the core's shape with made-up figures."""
    return copy.deepcopy({
        "schema_version": 1,
        "scenario": scenario,
        "seed": seed,
        "machine": "topo(1,1,2,1)",
        "nr_cpus": 2,
        "kernel": {
            "version": {"major": profile[0], "minor": profile[1]},
            "policy": "Eevdf" if profile >= (6, 6) else "Cfs",
            "tunables": {"hz": 1000, "sched_latency_ns": 12000000, "sched_min_granularity_ns": 1500000,
                         "sched_wakeup_granularity_ns": 2000000, "sched_base_slice_ns": 1500000,
                         "sched_migration_cost_ns": 500000, "sched_nr_migrate": 32,
                         "sched_cfs_bandwidth_slice_us": 5000, "busy_factor": 16},
        },
        "features": {"PLACE_LAG": profile >= (6, 6), "SIS_NODE": False},
        "engine": {"events": 1000 + seed, "sim_ns": 10**9, "wall_ns": wall_ns, "stopped_by": "workload_done"},
        "summary": summary if summary is not None else {"migrations": 10.0 + seed, "idle_pct": 5.0},
        "workload": workload if workload is not None else {"makespan_s": 1.0 + seed / 10, "cpu_pct": 180.0},
        "tasks": [
            {"pid": 1, "name": "a", "group": "root", "run_ns": 5, "wait_ns": 1, "nr_switches": 3,
             "nr_migrations": 0, "nr_wakeups": 2, "start_ns": 0, "exit_ns": 10, "work_done_ns": 5, "sys_ns": 0},
            {"pid": 2, "name": "b", "group": "root", "run_ns": 6, "wait_ns": 2, "nr_switches": 4,
             "nr_migrations": 1, "nr_wakeups": 3, "start_ns": 0, "exit_ns": None, "work_done_ns": 6, "sys_ns": 1},
        ],
        "cpus": [
            {"cpu": c, "busy_ns": 7, "idle_ns": 3, "nr_switches": 4, "ipis_received": 1, "ticks": 9,
             "newidle_attempts": 2, "newidle_skips": 1, "newidle_pulls": 0, "periodic_pulls": 0,
             "shared_runq_pulls": 0, "nr_running_end": 0}
            for c in range(2)
        ],
        "groups": [
            {"name": "root", "usage_ns": 11, "quota_ns": None, "period_ns": 100000000, "nr_periods": 0,
             "nr_throttled": 0, "throttled_time": 0, "nr_bursts": 0, "burst_time": 0},
        ],
        "migrations_by_distance": {"same_llc": 1, "same_package": 0},
        "histograms": {
            "wakeup_latency": {"count": 5, "mean_ns": 1500.0, "p50_ns": 1000, "p90_ns": 2000, "p99_ns": 3000,
                               "p999_ns": 3000, "max_ns": 3000, "buckets": [[1000, 2], [2000, 2], [4000, 1]]},
        },
    })


def fake_json(*args, **kwargs) -> str:
    return json.dumps(fake_result(*args, **kwargs))


def example_files(pattern: str = "*.toml") -> list[Path]:
    return sorted(EXAMPLES.glob(pattern))


def default_sigint() -> None:
    """Popen's preexec_fn for a child the test sends Ctrl-C: a shell starts background
    jobs with SIGINT ignored, the child inherits that, and Python then installs no
    KeyboardInterrupt handler. CI launched from such a job would fail for that alone."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def rel(p: Path) -> str:
    return os.path.relpath(p, ROOT)
