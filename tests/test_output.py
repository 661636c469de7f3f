"""Output for people (issue 50): `schedlab run`'s table shows what the run used, sorts
percentiles by value, prints perf sched latency's per-task table with --tasks and
--plot writes the plots alone."""

from __future__ import annotations

import re

from schedlab.cli.run_cmd import _task_rows, figure_sort_key

PINGPONG = "examples/pipe_pingpong.toml"


def _rows(stdout: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^ (\S+)\s+│", stdout, re.M)]


def test_run_hides_figures_zero_in_every_seed_unless_all(cli):
    r = cli("run", PINGPONG, "--seed", "1", "--seed", "2")
    assert r.exit_code == 0, r.output
    shown = _rows(r.stdout)
    # A pipe ping-pong has no shared runqueue and arms no timer: those counters are 0.
    assert "summary.shared_runq_pulls" not in shown and "summary.timers_armed" not in shown
    assert "summary.wakeups" in shown and "engine.stopped_by" in shown
    m = re.search(r"^\((\d+) figures are 0 in every seed.*--all shows them\)$", r.stdout, re.M)
    assert m, r.stdout
    full = _rows(cli("run", PINGPONG, "--seed", "1", "--seed", "2", "--all").stdout)
    assert "summary.shared_runq_pulls" in full
    assert len(full) - len(shown) == int(m.group(1))


def test_percentiles_sort_by_value():
    names = ["wakeup_p999_us", "wakeup_p99_us", "wakeup_p50_us", "wakeup_samples", "wakeup_p90_us", "wakeup_p95_us"]
    assert sorted(names, key=figure_sort_key) == ["wakeup_p50_us", "wakeup_p90_us", "wakeup_p95_us", "wakeup_p99_us",
                                                  "wakeup_p999_us", "wakeup_samples"]
    # A p inside a word is no percentile.
    assert sorted(["rps_p50", "rps_p20", "ops_per_s"], key=figure_sort_key) == ["ops_per_s", "rps_p20", "rps_p50"]


def test_run_table_lists_p99_before_p999(cli):
    r = cli("run", "examples/schbench.toml", "--seed", "1")
    assert r.exit_code == 0, r.output
    shown = _rows(r.stdout)
    for prefix in ("workload.wakeup", "workload.request"):
        pct = [n for n in shown if re.fullmatch(rf"{prefix}_p\d+_us", n)]
        assert pct == [f"{prefix}_p{p}_us" for p in (50, 90, 95, 99, 999)], pct


def test_run_tasks_prints_perf_sched_latency_columns(cli):
    r = cli("run", PINGPONG, "--seed", "1", "--tasks")
    assert r.exit_code == 0, r.output
    assert re.search(r"^ task\s+┃ runtime ms ┃ switches ┃ wakeups ┃ avg delay ms ┃ migrations$", r.stdout, re.M), r.stdout
    lines = {m.group(1): m.groups()[1:] for m in re.finditer(
        r"^ (\w+:\d+)\s+│\s+([\d.]+) │\s+([\d,]+) │\s+([\d,]+) │\s+([\d.]+) │\s+([\d,]+)$", r.stdout, re.M)}
    assert set(lines) == {"ping:1", "pong:2"}, r.stdout
    # 20,000 rounds: each side is woken 20,000 times and switched in once more at its start.
    assert lines["ping:1"][1:3] == ("20,001", "20,000")
    assert "as perf sched latency" not in cli("run", PINGPONG, "--seed", "1").stdout


def test_task_rows_sort_by_average_delay_as_perf():
    raw = {"tasks": [{"pid": 1, "name": "a", "run_ns": 2_000_000, "wait_ns": 1_000_000, "nr_switches": 10,
                      "nr_wakeups": 9, "nr_migrations": 3},
                     {"pid": 2, "name": "b", "run_ns": 1_000_000, "wait_ns": 9_000_000, "nr_switches": 3,
                      "nr_wakeups": 3, "nr_migrations": 0},
                     {"pid": 3, "name": "idle", "run_ns": 0, "wait_ns": 0, "nr_switches": 0, "nr_wakeups": 0,
                      "nr_migrations": 0}]}
    rows = _task_rows(raw)
    assert [r[0] for r in rows] == ["b:2", "a:1", "idle:3"]
    assert rows[0][4] == 3.0 and rows[1][4] == 0.1 and rows[2][4] == 0.0  # ms: wait over switches


def test_compare_and_sweeps_list_p99_before_p999(cli):
    """figures() (a sweep's columns, compare's rows) orders percentiles as `run` does."""
    from schedlab.figures import figures

    raw = {"workload": {"wakeup_p999_us": 3.0, "wakeup_p99_us": 2.0, "wakeup_p50_us": 1.0, "wakeup_samples": 9},
           "summary": {"wakeups": 4}}
    names = [n for n in figures(raw) if n.startswith("workload.")]
    assert names == ["workload.wakeup_p50_us", "workload.wakeup_p99_us", "workload.wakeup_p999_us",
                     "workload.wakeup_samples"]
    r = cli("compare", "examples/schbench.toml", "--set", "kernel.profile=6.5", "--set", "kernel.profile=6.6",
            "-n", "1", "--all", "--json", "-m", "workload.wakeup_p")
    assert r.exit_code == 0, r.output
    import json

    pct = [d["metric"] for d in json.loads(r.stdout)["metrics"] if re.fullmatch(r"workload\.wakeup_p\d+_us", d["metric"])]
    assert pct == [f"workload.wakeup_p{p}_us" for p in (50, 90, 95, 99, 999)], pct
