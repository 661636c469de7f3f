"""The reproduction framework: registry, comparison, calibration, reports and the JSON rows'
schema. Runs are faked here (see test_run.py for the real engine)."""

from __future__ import annotations

import json
import math

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import fake_json, fake_result
from schedlab import schemas
from schedlab.reproduce import ROW_FIELDS, Experiment, Metric, Published, Source, compare, get, registry
from schedlab.reproduce.compare import mean_std
from schedlab.reproduce.report import fmt, markdown, rows_json, write_markdown
from schedlab.reproduce.runner import run_experiments

ROW_SCHEMA = schemas.load("reproduce-rows")


def fake_runner(factor: dict[str, float]):
    """A runner whose makespan is seed-dependent and scaled per kernel profile."""

    def runner(jobs, on_done):
        out = []
        for i, job in enumerate(jobs):
            doc = json.loads(job.scenario_json)
            prof = doc["kernel"]["profile"]
            out.append(fake_json(job.seed, scenario=doc["name"],
                                 workload={"makespan_s": factor[prof] * (10 + job.seed), "cpu_pct": 3000.0 + job.seed}))
            on_done(i)
        return out

    return runner


def test_make_core_is_registered():
    e = get("make-core")
    assert e.machines == ("ryzen-7950x",)
    assert e.configs == ("cfs-6.5", "eevdf-6.6") and e.baseline == "cfs-6.5"
    assert [m.key for m in e.metrics] == ["makespan_s", "cpu_pct"]
    assert e.source.seed == "000_8095fe63da30d972.txt" and "7950X" in e.source.table
    assert e.published == []  # nothing published for CFS vs EEVDF
    assert not any(m.calibrate for m in e.metrics)


def test_make_core_scenarios():
    e = get("make-core")
    doc = e.scenario("topo(1,2,4,2)", "eevdf-6.6", quick=True)
    assert doc["kernel"]["profile"] == "6.6"
    assert doc["workload"]["kind"] == "make"
    assert doc["workload"]["params"]["jobs"] == 16  # make -j$(nproc)
    assert doc["workload"]["params"]["unit_mean"] == "40ms"
    assert doc["run"] == {"until": "workload_done"}
    assert e.scenario("topo(1,2,4,2)", "cfs-6.5", quick=False)["workload"]["params"]["units"] == 1500


def test_make_core_on_its_preset():
    """Needs the ryzen-7950x preset: the exact scenario the issue specifies."""
    doc = get("make-core").scenario("ryzen-7950x", "cfs-6.5", quick=False)
    assert doc["machine"] == {"preset": "ryzen-7950x"}
    assert doc["workload"]["params"] == {"jobs": 32, "units": 1500, "unit_mean": "40ms"}


def test_rows_from_fake_runs_match_schema():
    rows = run_experiments([get("make-core")], quick=True, seeds=3, machine="topo(1,2,4,2)",
                           runner=fake_runner({"6.5": 1.0, "6.6": 0.9}))
    doc = rows_json(rows)
    jsonschema.validate(doc, ROW_SCHEMA)
    assert [tuple(d) for d in doc] == [ROW_FIELDS] * len(doc)
    by = {(d["config"], d["metric"]): d for d in doc}
    assert set(by) == {(c, m) for c in ("cfs-6.5", "eevdf-6.6", "eevdf-6.6 vs cfs-6.5") for m in ("makespan_s", "cpu_pct")}
    cfs = by[("cfs-6.5", "makespan_s")]
    assert cfs["simulated_mean"] == pytest.approx(12.0) and cfs["simulated_std"] == pytest.approx(1.0)
    assert cfs["n_seeds"] == 3 and cfs["published"] is None and cfs["ratio"] is None and cfs["calibrated"] is False
    change = by[("eevdf-6.6 vs cfs-6.5", "makespan_s")]
    assert change["unit"] == "ratio" and change["simulated_mean"] == pytest.approx(0.9)
    assert change["simulated_std"] == pytest.approx(0.0, abs=1e-12)


def test_calibration_scales_absolute_level_only():
    exp = Experiment(
        name="calib-test", title="t", source=Source("seed.txt", "Table 1"), machines=("m",), configs=("before", "after"),
        build=lambda m, c, q: {}, baseline="before", metrics=(Metric("makespan_s", "s", calibrate=True), Metric("cpu_pct", "%")),
        published=[Published("m", "before", "makespan_s", 100.0), Published("m", "after", "makespan_s", 80.0),
                   Published("m", "after vs before", "cpu_pct", 1.5)],
    )
    runs = {("m", "before"): [fake_result(s, workload={"makespan_s": 10.0 + s, "cpu_pct": 100.0}) for s in (1, 2)],
            ("m", "after"): [fake_result(s, workload={"makespan_s": 9.0 + s, "cpu_pct": 150.0}) for s in (1, 2)]}
    rows = {(r.config, r.metric): r for r in compare(exp, runs)}
    scale = 100.0 / 11.5
    before, after = rows[("before", "makespan_s")], rows[("after", "makespan_s")]
    assert before.calibrated and after.calibrated and before.scale == pytest.approx(scale)
    assert before.simulated_mean == pytest.approx(100.0) and before.ratio == pytest.approx(1.0)
    assert after.simulated_mean == pytest.approx(10.5 * scale)
    assert after.ratio == pytest.approx(10.5 * scale / 80.0)
    change = rows[("after vs before", "makespan_s")]
    assert not change.calibrated and change.scale is None
    assert change.published == pytest.approx(0.8)
    assert change.simulated_mean == pytest.approx((10 / 11 + 11 / 12) / 2)
    assert rows[("after vs before", "cpu_pct")].published == 1.5
    assert not rows[("before", "cpu_pct")].calibrated
    jsonschema.validate(rows_json(list(rows.values())), ROW_SCHEMA)
    md = markdown(exp, list(rows.values()))
    assert "†" in md and f"{scale:.4g}" in md


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(0.1, 1e4), st.floats(0.1, 1e4)), min_size=1, max_size=6),
       st.floats(0.1, 1e4))
def test_change_ratio_is_never_calibrated(pairs, published_base):
    """Whatever the calibration factor, the before/after ratio is the uncalibrated one."""
    def exp(calibrate):
        return Experiment(name="p", title="t", source=Source("s", "t"), machines=("m",), configs=("a", "b"),
                          build=lambda *a: {}, baseline="a", metrics=(Metric("x", "s", calibrate=calibrate),),
                          published=[Published("m", "a", "x", published_base)])
    runs = {("m", "a"): [fake_result(i, workload={"x": a}) for i, (a, _) in enumerate(pairs)],
            ("m", "b"): [fake_result(i, workload={"x": b}) for i, (_, b) in enumerate(pairs)]}
    cal = {r.config: r for r in compare(exp(True), runs)}
    raw = {r.config: r for r in compare(exp(False), runs)}
    assert cal["b vs a"].simulated_mean == pytest.approx(raw["b vs a"].simulated_mean)
    assert cal["a"].simulated_mean == pytest.approx(published_base)
    assert cal["a"].calibrated and not raw["a"].calibrated
    expected = sum(b / a for a, b in pairs) / len(pairs)
    assert raw["b vs a"].simulated_mean == pytest.approx(expected)


def test_mean_std():
    assert mean_std([]) == (None, None)
    assert mean_std([2.0]) == (2.0, 0.0)
    m, s = mean_std([1.0, 2.0, 3.0])
    assert m == 2.0 and s == pytest.approx(1.0)
    assert mean_std([1.0, math.nan, 3.0]) == (2.0, pytest.approx(math.sqrt(2)))


def test_fmt():
    assert fmt(None) == "—"
    assert fmt(590.52) == "590.5"
    assert fmt(3103.0) == "3,103"
    assert fmt(1.23456) == "1.235"
    assert fmt(0.012345) == "0.01235"
    assert fmt(0.5, 590.52) == "0.5"


def test_adding_an_experiment_is_one_registration():
    @registry.experiment(name="zz-test-only", title="t", source=Source("s.txt", "T"), machines=["topo(1,1,2,1)"],
                         configs=["a", "b"], baseline="a", metrics=[Metric("makespan_s", "s")])
    def build(machine, config, quick):
        return {"name": f"zz-{config}", "machine": registry.machine_spec(machine),
                "kernel": {"profile": "6.5" if config == "a" else "6.6"},
                "tasks": [{"name": "t", "program": [{"run": "1ms"}]}], "run": {"until": "workload_done"}}

    try:
        assert registry.get("zz-test-only").build is build
        assert "zz-test-only" in [e.name for e in registry.all_experiments()]
        rows = run_experiments([registry.get("zz-test-only")], seeds=2, runner=fake_runner({"6.5": 1.0, "6.6": 2.0}))
        assert len(rows) == 3
        with pytest.raises(ValueError):
            registry.register(Experiment(name="zz-test-only", title="x", source=Source("s", "t"), machines=(),
                                         configs=("a",), build=build, baseline="a", metrics=()))
    finally:
        registry._REGISTRY.pop("zz-test-only", None)


def test_cli_reproduce_json_and_markdown_with_fake_runs(cli, monkeypatch, tmp_path):
    """The CLI's --json output (with runs faked) validates against the documented schema."""
    import schedlab.reproduce.runner as runner_mod

    fake = fake_runner({"6.5": 1.0, "6.6": 1.1})
    monkeypatch.setattr(runner_mod, "map_runs", lambda jobs, workers=None, backend="process", on_done=None, **_:
                        fake(jobs, on_done or (lambda i: None)))
    r = cli("reproduce", "make-core", "--quick", "--json", "--machine", "topo(1,2,4,2)", "--out", tmp_path / "md")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, ROW_SCHEMA)
    assert {d["n_seeds"] for d in doc} == {2}  # quick: 2 seeds
    assert all(d["experiment"] == "make-core" and d["machine"] == "topo(1,2,4,2)" for d in doc)
    md = (tmp_path / "md" / "make-core.md").read_text()
    assert md.startswith("# make-core:") and "| topo(1,2,4,2) | eevdf-6.6 vs cfs-6.5 | makespan_s | ratio |" in md
    r = cli("reproduce", "make-core", "--seeds", "4", "--machine", "topo(1,2,4,2)")
    assert r.exit_code == 0, r.output
    assert "make-core" in r.stdout and "± " in r.stdout and "Implement shared wakequeue in CFS" in r.stdout and "000_8095fe63da30d972" not in r.stdout


def test_write_markdown(tmp_path):
    e = get("make-core")
    rows = compare(e, {("m", c): [fake_result(1)] for c in e.configs})
    paths = write_markdown(tmp_path, [e], rows, "0.0")
    assert [p.name for p in paths] == ["make-core.md"]
    assert "Generated by schedlab 0.0." in paths[0].read_text()


def test_table_says_how_many_seeds_each_row_has():
    from rich.console import Console

    from schedlab.reproduce.compare import Row
    from schedlab.reproduce.report import rich_tables

    rows = [Row("e", "m", "a", "x", "s", None, 1.0, 0.1, 5, False, None, None),
            Row("e", "m", "b vs a", "x", "ratio", None, 1.0, 0.1, 3, False, None, None)]
    console = Console(width=200, record=True)
    for t in rich_tables(rows, []):
        console.print(t)
    text = console.export_text()
    assert "over the 5 seeds run" in text and "n = seeds with a value" in text
    line = next(ln for ln in text.splitlines() if "b vs a" in ln)
    assert " 3 " in line
    # All rows complete: no n column, one count in the title.
    full = [rows[0]]
    console = Console(width=200, record=True)
    for t in rich_tables(full, []):
        console.print(t)
    assert "n = seeds" not in console.export_text()


def test_reproduction_jobs_leave_out_the_per_task_list():
    """Reproductions read summary figures only: their jobs return results without the
    per-task list (tens of MB per run at real scale), everything else unchanged."""
    from schedlab.parallel import Job, run_job
    from schedlab.scenario import Scenario

    s = Scenario.from_dict({"name": "t", "machine": {"topo": {"cores": 2}},
                            "tasks": [{"name": "w", "count": 3, "program": [{"run": "1ms"}, {"sleep": "1ms"}]}],
                            "run": {"duration_s": 0.02}})
    full = json.loads(run_job(Job(s.json, 1)))
    slim = json.loads(run_job(Job(s.json, 1, without_tasks=True)))
    assert len(full["tasks"]) == 3 and "tasks" not in slim
    for d in (full, slim):
        d.pop("tasks", None)
        d["engine"].pop("wall_ns", None)
    assert full == slim


# ------------------------------------------------------------------ --out resumes
def _table(stdout: str) -> str:
    """The printed tables, without the line naming the report's directory."""
    return "\n".join(line for line in stdout.splitlines() if not line.startswith("Full report:"))


def test_reproduce_out_resumes_after_an_interruption(cli, tmp_path, monkeypatch):
    """Ctrl-C during `schedlab reproduce --out DIR` keeps the finished runs in DIR/runs;
    the same command again reruns only the others and prints the same tables (issue 50)."""
    import schedlab.parallel as parallel

    args = ("reproduce", "timers", "--quick", "-j", "1", "--executor", "serial")  # 2 configs x 3 seeds
    whole = cli(*args, "--out", tmp_path / "whole")
    assert whole.exit_code == 0, whole.output
    assert len(list((tmp_path / "whole" / "runs").glob("*.json"))) == 6

    real, calls = parallel.run_job, []

    def interrupted_after_4(job):
        if len(calls) == 4:
            raise KeyboardInterrupt  # Ctrl-C during the 5th run
        calls.append(job.seed)
        return real(job)

    monkeypatch.setattr(parallel, "run_job", interrupted_after_4)
    out = tmp_path / "resumed"
    r = cli(*args, "--out", out)
    assert r.exit_code == 130, r.output
    assert r.stderr.strip().splitlines()[-1] == \
        f"error: interrupted: 4 of 6 runs kept in {out}/runs; the same command resumes"
    assert len(list((out / "runs").glob("*.json"))) == 4

    calls.clear()
    monkeypatch.setattr(parallel, "run_job", lambda job: calls.append(job.seed) or real(job))
    r = cli(*args, "--out", out)
    assert r.exit_code == 0, r.output
    assert f"note: {out}/runs: reusing 4 of 6 runs finished before; running the other 2" in r.stderr
    assert len(calls) == 2
    assert _table(r.stdout) == _table(whole.stdout)
    assert (out / "timers.md").read_text() == (tmp_path / "whole" / "timers.md").read_text()

    # Everything kept: nothing runs again.
    calls.clear()
    r = cli(*args, "--out", out)
    assert r.exit_code == 0 and calls == [] and "reusing all 6 runs" in r.stderr, r.output
    assert _table(r.stdout) == _table(whole.stdout)


def test_run_store_keys_on_what_the_result_depends_on(tmp_path):
    from schedlab.parallel import Job
    from schedlab.reproduce.runner import RunStore

    store = RunStore(tmp_path)
    a = Job('{"x": 1}', 1, without_tasks=True)
    assert len({store.path(j) for j in (a, Job('{"x": 1}', 2, without_tasks=True), Job('{"x": 2}', 1, without_tasks=True),
                                        Job('{"x": 1}', 1), Job('{"x": 1}', 1, without_tasks=True, eas_check=True))}) == 5
    assert store.lookup(a) is None
    store.save(a, json.dumps({"engine": {"stopped_by": "interrupted", "partial": True}}))
    assert store.lookup(a) is None  # a partial result is never kept
    store.save(a, json.dumps({"engine": {"stopped_by": "duration", "partial": False}}))
    assert json.loads(store.lookup(a))["engine"]["stopped_by"] == "duration" and store.reused == 1
    store.path(a).write_text('{"engine": ')  # cut short: rerun, not trusted
    assert store.lookup(a) is None
