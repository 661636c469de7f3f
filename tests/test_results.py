"""Result DataFrames, built from fake RunResult documents (no engine needed)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import fake_result
from schedlab.api import trace_path_for
from schedlab.parallel import map_runs
from schedlab.results import Result, ResultSet, deterministic, figure


def test_summary_row_columns():
    r = Result(fake_result(seed=7))
    df = r.summary
    assert isinstance(df, pd.DataFrame) and len(df) == 1
    row = df.iloc[0]
    assert row["seed"] == 7
    assert row["kernel.version"] == "6.6" and row["kernel.policy"] == "eevdf"
    assert row["workload.makespan_s"] == pytest.approx(1.7)
    assert row["summary.migrations"] == 17.0
    assert row["engine.events"] == 1007
    assert row["migrations.same_llc"] == 1
    assert bool(row["feature.PLACE_LAG"]) is True and bool(row["feature.SIS_NODE"]) is False
    assert row["tunable.sched_migration_cost_ns"] == 500000
    assert list(df.columns[:6]) == ["scenario", "seed", "machine", "nr_cpus", "kernel.version", "kernel.policy"]


def test_per_task_cpu_group_frames():
    r = Result(fake_result(seed=3))
    assert list(r.tasks.columns[:3]) == ["seed", "pid", "name"] and len(r.tasks) == 2
    assert (r.tasks["seed"] == 3).all()
    assert len(r.cpus) == 2 and "newidle_skips" in r.cpus.columns
    assert r.groups.iloc[0]["name"] == "root"


def test_histograms_long_format():
    r = Result(fake_result(seed=2))
    h = r.histograms
    assert list(h.columns) == ["seed", "histogram", "upper_ns", "count"]
    assert h["count"].sum() == 5 and set(h["histogram"]) == {"wakeup_latency"}
    p = r.percentiles
    assert p.iloc[0]["p99_ns"] == 3000


def test_empty_frames_keep_columns():
    raw = fake_result()
    raw["tasks"], raw["histograms"] = [], {}
    r = Result(raw)
    assert "run_ns" in r.tasks.columns and r.tasks.empty
    assert r.histograms.empty and "upper_ns" in r.histograms.columns


def test_result_set_concatenates():
    rs = ResultSet(Result(fake_result(seed=s)) for s in (1, 2, 3))
    assert rs.seeds == [1, 2, 3]
    assert list(rs.summary["seed"]) == [1, 2, 3]
    assert len(rs.tasks) == 6 and sorted(set(rs.tasks["seed"])) == [1, 2, 3]
    assert rs.figure("makespan_s") == pytest.approx([1.1, 1.2, 1.3])
    assert [r.seed for r in rs] == [1, 2, 3] and rs[1].seed == 2


def test_figure_lookup():
    raw = fake_result(seed=1)
    assert figure(raw, "makespan_s") == pytest.approx(1.1)
    assert figure(raw, "workload.cpu_pct") == 180.0
    assert figure(raw, "idle_pct") == 5.0
    assert figure(raw, "engine.events") == 1001
    with pytest.raises(KeyError):
        figure(raw, "no_such_figure")


def test_deterministic_json_drops_wall_time():
    a = Result(fake_result(seed=1, wall_ns=1))
    b = Result(fake_result(seed=1, wall_ns=999))
    assert a.to_json() == b.to_json()
    assert "wall_ns" not in json.loads(a.to_json())["engine"]
    assert json.loads(a.to_json(wall_time=True))["engine"]["wall_ns"] == 1
    assert "wall_ns" in fake_result()["engine"] and "wall_ns" not in deterministic(fake_result())["engine"]


def test_trace_paths():
    assert trace_path_for("t.json", "x", 3, "perfetto", False) == "t.json"
    assert trace_path_for("t.json", "x", 3, "perfetto", True) == "t.seed3.json"
    assert trace_path_for("t.perfetto.json", "x", 3, "perfetto", True) == "t.seed3.perfetto.json"
    assert trace_path_for("out/{seed}.txt", "x", 3, "ftrace", True) == "out/3.txt"
    assert trace_path_for(None, "pingpong", 3, "perfetto", True) == "pingpong.seed3.pftrace"
    assert trace_path_for(None, "pingpong", 3, "json", True) == "pingpong.seed3.perfetto.json"
    assert trace_path_for("t.trace.txt", "x", 3, "ftrace", True) == "t.seed3.trace.txt"
    assert trace_path_for(None, "", 1, "ftrace", False) == "schedlab.seed1.trace.txt"


def test_map_runs_edges():
    assert map_runs([]) == []
    with pytest.raises(ValueError):
        map_runs([], backend="carrier-pigeon")
