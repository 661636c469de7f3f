"""Sweeps: specs, the Parquet dataset, resume, failures, and surviving a killed worker or
a killed sweep (real processes killed with SIGKILL)."""

from __future__ import annotations

import concurrent.futures as cf
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import schedlab
from conftest import ROOT
from schedlab.sweep import Store, load_spec, read_results, run_sweep, sweep_status

BW = (ROOT / "examples" / "bandwidth_whatif.toml").as_posix()


def write_spec(tmp_path: Path, body: str, name: str = "s.toml") -> Path:
    p = tmp_path / name
    p.write_text(f'base = "{BW}"\n' + body)
    return p


SMALL = """
seeds = [1, 2]
[set]
"run.warmup_s" = 0.0
"run.duration_s" = 0.5
[parameters]
"tasks.worker.count" = [4, 8]
[parameters.behaviour]
"expiring-5.3" = { "kernel.profile" = "5.3" }
"burst-5.14" = { "kernel.profile" = "5.14", "groups.svc.cfs_burst_us" = 100000 }
"""

# Long enough runs (about 0.1 s each, 36 of them) that a kill lands mid-sweep.
SLOW = """
seeds = [1, 2, 3]
[set]
"run.warmup_s" = 0.0
"run.duration_s" = 25.0
"tasks.worker.program.0.loop.body.1.sleep_exp" = "1500us"
"groups.svc.cpu_max" = "400000 100000"
[parameters]
"tasks.worker.count" = [16, 32, 48, 64]
"kernel.profile" = ["5.3", "5.4", "5.14"]
"""


# ------------------------------------------------------------------------- specs
def test_grid_points_and_params(tmp_path):
    spec = load_spec(write_spec(tmp_path, SMALL))
    pts = spec.points()
    assert spec.size == 8 and len(pts) == 4
    assert [p.params for p in pts] == [
        {"tasks.worker.count": 4, "behaviour": "expiring-5.3"}, {"tasks.worker.count": 4, "behaviour": "burst-5.14"},
        {"tasks.worker.count": 8, "behaviour": "expiring-5.3"}, {"tasks.worker.count": 8, "behaviour": "burst-5.14"}]
    d = pts[1].scenario.doc
    assert d["kernel"]["profile"] == "5.14" and d["groups"][0]["cfs_burst_us"] == 100000
    assert d["tasks"][0]["count"] == 4 and d["run"]["duration_s"] == 0.5
    assert len({p.key for p in pts}) == 4
    assert spec.out == tmp_path / "s.sweep"
    # The key is the scenario's: the same point in another spec has the same key.
    again = load_spec(write_spec(tmp_path, SMALL.replace("seeds = [1, 2]", "seeds = 5"), "t.toml"))
    assert [p.key for p in again.points()] == [p.key for p in pts] and again.seeds == [1, 2, 3, 4, 5]


def test_listed_points_and_value_tables(tmp_path):
    spec = load_spec(write_spec(tmp_path, """
[[parameters.duty]]
value = 0.5
"tasks.worker.program.0.loop.body.1.sleep_exp" = "1ms"
[[parameters.duty]]
value = 0.25
"tasks.worker.program.0.loop.body.1.sleep_exp" = "3ms"
[[points]]
duty = 0.25
"tasks.worker.count" = 2
[[points]]
duty = 0.5
"""))
    pts = spec.points()
    assert [p.params for p in pts] == [{"duty": 0.25, "tasks.worker.count": 2}, {"duty": 0.5, "tasks.worker.count": None}]
    assert pts[0].scenario.doc["tasks"][0]["count"] == 2


@pytest.mark.parametrize("body,words", [
    ('[parameters]\n"groups.pod.cpu_max" = ["1 2"]\n', "point 0 (groups.pod.cpu_max = \"1 2\")"),
    ('[parameters]\n"tasks.worker.count" = [4, -1]\n', "tasks.worker.count = -1: invalid value"),
    ('[parameters]\n"kernel.profile" = ["5.3", "5.3"]\n', 'value "5.3" is listed twice'),
    ('[parameters]\n"run.seeds" = [[1], [2]]\n', "gives the same scenario as point 0"),
    ('bogus = 1\n[parameters]\n"kernel.profile" = ["5.3"]\n', "bogus: unknown key"),
    ('seeds = 0\n[parameters]\n"kernel.profile" = ["5.3"]\n', "seeds: expected at least 1"),
    ("", "nothing to sweep"),
])
def test_spec_errors_name_the_spec(tmp_path, body, words):
    p = write_spec(tmp_path, body)
    with pytest.raises(schedlab.ScenarioError) as info:
        load_spec(p).points()
    line = str(info.value)
    assert line.startswith(str(p)) and words in line and "\n" not in line, line


# ------------------------------------------------------------------ dataset, resume
def test_rows_resume_and_new_seeds(tmp_path):
    spec = load_spec(write_spec(tmp_path, SMALL))
    first = run_sweep(spec, executor="serial", progress=False)
    assert (first.total, first.already, first.computed, first.failed) == (8, 0, 8, [])
    df = read_results(spec.out)
    assert len(df) == 8 and not df.duplicated(["point_key", "seed"]).any()
    for col in ("param.tasks.worker.count", "param.behaviour", "group.svc.throttled_share",
                "latency.wakeup_latency.p99_us", "summary.migrations",
                "feature.BW_BURST", "tunable.hz", "run.wall_s", "kernel.version"):
        assert col in df.columns, col
    assert str(df["param.tasks.worker.count"].dtype) == "int64" and str(df["group.svc.usage_ms"].dtype) == "float64"
    assert set(df.loc[df["param.behaviour"] == "burst-5.14", "kernel.version"]) == {"5.14"}
    # Nothing is missing: a rerun computes nothing.
    assert run_sweep(spec, executor="serial", progress=False).computed == 0
    # One more seed: only its runs are computed, the old rows are kept.
    more = load_spec(write_spec(tmp_path, SMALL.replace("seeds = [1, 2]", "seeds = [1, 2, 3]")), out=spec.out)
    again = run_sweep(more, executor="serial", progress=False)
    assert (again.already, again.computed) == (8, 4)
    df = read_results(spec.out)
    assert len(df) == 12 and sorted(df.groupby("seed").size()) == [4, 4, 4]
    st = sweep_status(more)
    assert (st.total, st.done, st.missing, st.duplicates, st.stale) == (12, 12, 0, 0, 0)
    # Seeds are deterministic: seed 1 of point 0 is the same run however often it is computed.
    a = schedlab.run(spec.points()[0].scenario, seed=1)
    row = df[(df["point"] == 0) & (df["seed"] == 1)].iloc[0]
    assert row["summary.migrations"] == a.raw["summary"]["migrations"]


class _FailingExecutor(cf.ThreadPoolExecutor):
    """Raises inside the task for seed 2 (a run that fails, as a limit hit would)."""

    def submit(self, fn, /, *args, **kwargs):
        if args[1] == 2:
            return super().submit(lambda: (_ for _ in ()).throw(schedlab.SimulationLimitError("max events hit")))
        return super().submit(fn, *args, **kwargs)


def test_failures_are_recorded_and_retried(tmp_path):
    spec = load_spec(write_spec(tmp_path, SMALL))
    out = run_sweep(spec, executor=lambda: _FailingExecutor(max_workers=2), progress=False)
    assert out.computed == 4 and len(out.failed) == 4 and not out.complete
    assert all("SimulationLimitError: max events hit" in f["error"] for f in out.failed)
    st = sweep_status(spec)
    assert (st.done, st.missing, len(st.failures)) == (4, 4, 4)
    # The next run retries exactly the failed ones and clears their records.
    again = run_sweep(spec, executor="serial", progress=False)
    assert (again.already, again.computed, again.failed) == (4, 4, [])
    assert sweep_status(spec).failures == [] and len(read_results(spec.out)) == 8


def test_second_writer_is_refused(tmp_path):
    spec = load_spec(write_spec(tmp_path, SMALL))
    with Store(spec.out).lock():
        with pytest.raises(ValueError, match="another sweep is writing here"):
            run_sweep(spec, executor="serial", progress=False)


def test_documented_queries(tmp_path):
    """The pandas and DuckDB queries of docs/sweeps.md."""
    spec = load_spec(write_spec(tmp_path, SMALL))
    run_sweep(spec, executor="serial", progress=False)
    import pandas as pd

    df = pd.read_parquet(spec.out / "rows")
    by = df.groupby("param.behaviour")["group.svc.throttled_share"].mean()
    assert set(by.index) == {"expiring-5.3", "burst-5.14"}
    duckdb = pytest.importorskip("duckdb", reason="DuckDB is optional: pip install 'schedlab[analysis]'")
    rows = duckdb.sql(f"""
        SELECT "param.behaviour" AS behaviour, avg("group.svc.throttled_share") AS throttled
        FROM read_parquet('{spec.out}/rows/*.parquet', union_by_name = true)
        GROUP BY 1 ORDER BY 1""").fetchall()
    assert [r[0] for r in rows] == ["burst-5.14", "expiring-5.3"]
    assert rows[1][1] == pytest.approx(by["expiring-5.3"])


# ------------------------------------------------------------- killing processes
def _children(pid: int) -> list[int]:
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return kids


def _sweep_cmd(spec: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "schedlab", "sweep", str(spec), "-j", "2", "--flush-s", "0.2", *extra]


def _wait_for(cond, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting for the sweep")
        time.sleep(0.02)


def _parts(spec) -> list[Path]:
    return sorted((spec.out / "rows").glob("part-*.parquet"))


def _one_row_each(spec) -> None:
    df = read_results(spec.out)
    assert len(df) == spec.size
    assert df.groupby(["point_key", "seed"]).size().eq(1).all()
    assert set(zip(df["point_key"], df["seed"])) == {(p.key, s) for p in spec.points() for s in spec.seeds}
    assert not list(spec.out.rglob("*.tmp"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the pool's workers")
def test_kill_9_of_a_worker_mid_sweep(tmp_path):
    spec = load_spec(write_spec(tmp_path, SLOW))
    proc = subprocess.Popen(_sweep_cmd(tmp_path / "s.toml"), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: _parts(spec) and len(_children(proc.pid)) >= 1)
        rows_before = len(read_results(spec.out))
        assert 0 < rows_before < spec.size  # mid-way
        os.kill(_children(proc.pid)[0], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert "a worker died" in stderr
    _one_row_each(spec)
    assert "computed now" in stdout


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the pool's workers")
def test_kill_9_of_the_sweep_then_resume(tmp_path):
    spec = load_spec(write_spec(tmp_path, SLOW))
    proc = subprocess.Popen(_sweep_cmd(tmp_path / "s.toml"), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _wait_for(lambda: len(_parts(spec)) >= 2)
    kids = _children(proc.pid)
    proc.kill()  # SIGKILL: no chance to flush, clean up or stop the workers
    proc.wait()
    for k in kids:
        try:
            os.kill(k, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.1)
    written = read_results(spec.out)  # only whole part files: every row readable
    assert 0 < len(written) < spec.size and not written.duplicated(["point_key", "seed"]).any()
    st = sweep_status(spec)
    assert (st.done, st.missing) == (len(written), spec.size - len(written))
    res = subprocess.run(_sweep_cmd(tmp_path / "s.toml"), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    _one_row_each(spec)
    assert re.search(r"already there\D+(\d+)", res.stdout).group(1) == str(len(written))
    # The rows written before the kill are untouched by the resume.
    after = read_results(spec.out).set_index(["point_key", "seed"])
    before = written.set_index(["point_key", "seed"])
    assert after.loc[before.index, "summary.migrations"].tolist() == before["summary.migrations"].tolist()


def test_sweep_command_status_and_errors(cli, tmp_path):
    spec = write_spec(tmp_path, SMALL)
    r = cli("sweep", spec, "--status")
    assert r.exit_code == 0 and "0 of 8 rows (4 points x 2 seeds), 8 missing, 0 failed" in r.stdout
    r = cli("sweep", spec, "--executor", "serial", "--limit", "3")
    # --limit is a partial run by request (issue 33), not a failure.
    assert r.exit_code == 0 and "stopped at --limit 3: 5 of 8 runs left" in r.stdout and not r.stderr
    r = cli("sweep", spec, "--executor", "serial")
    assert r.exit_code == 0, r.output
    assert "computed now" in r.stdout and "report: schedlab report" in r.stdout
    r = cli("sweep", spec, "--status")
    assert "8 of 8 rows (4 points x 2 seeds), 0 missing, 0 failed" in r.stdout and "complete" in r.stdout
    bad = write_spec(tmp_path, '[parameters]\n"tasks.worker.nice" = [0, 99]\n', "bad.toml")
    r = cli("sweep", bad)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and str(bad) in r.stderr and "tasks.worker.nice = 99" in r.stderr
    r = cli("sweep", spec, "--executor", "nope")
    assert r.exit_code == 2 and "unknown executor 'nope'" in r.stderr
