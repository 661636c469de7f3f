"""Runs through the real engine: the CLI and the API end to end.

These need the simulation core and the machine presets (they fail, not skip, while
either is missing)."""

from __future__ import annotations

import json
import subprocess
import sys

import jsonschema
import pytest

import schedlab
from conftest import default_sigint, example_files, rel
from schedlab import schemas

RUN_SCHEMA = schemas.load("run-result")
ROW_SCHEMA = schemas.load("reproduce-rows")
EXAMPLES = example_files()
PINGPONG = "examples/pipe_pingpong.toml"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_run_json_twice_identical(cli, path):
    a = cli("run", rel(path), "--json", "--seed", "7")
    assert a.exit_code == 0, a.output
    b = cli("run", rel(path), "--json", "--seed", "7")
    assert a.stdout == b.stdout
    doc = json.loads(a.stdout)
    jsonschema.validate(doc, RUN_SCHEMA)
    assert doc["seed"] == 7 and "wall_ns" not in doc["engine"]
    assert doc["scenario"] == schedlab.load_scenario(rel(path)).name


def test_run_several_seeds_json_list(cli):
    r = cli("run", PINGPONG, "--json", "--seed", "1", "--seed", "2", "--wall-time")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, RUN_SCHEMA)
    assert [d["seed"] for d in doc] == [1, 2]
    assert all("wall_ns" in d["engine"] for d in doc)


def test_run_table_output(cli):
    r = cli("run", PINGPONG)  # the scenario's own seeds: 1, 2, 3
    assert r.exit_code == 0, r.output
    assert "seed 1" in r.stdout and "seed 3" in r.stdout and "mean ± std" in r.stdout
    assert "engine.events" in r.stdout


def test_api_run_records_seed_features_tunables():
    res = schedlab.run(PINGPONG, seed=3)
    assert res.seed == 3
    df = res.summary
    assert df.loc[0, "seed"] == 3 and df.loc[0, "kernel.version"] == "6.6" and df.loc[0, "kernel.policy"] == "eevdf"
    assert "feature.PLACE_LAG" in df.columns and bool(df.loc[0, "feature.PLACE_LAG"])
    assert "tunable.sched_base_slice_ns" in df.columns
    names = set(res.tasks["name"])
    assert any(n.startswith("ping") for n in names) and any(n.startswith("pong") for n in names)
    assert len(res.cpus) == 16
    assert res.raw["engine"]["stopped_by"] == "workload_done"


def test_api_scenario_default_seed_and_features_change():
    s = schedlab.load_scenario(PINGPONG)
    assert schedlab.run(s).seed == s.seeds[0]
    cfs = schedlab.run(s.with_changes({"kernel.profile": "6.5"}), seed=1)
    assert cfs.summary.loc[0, "kernel.policy"] == "cfs"
    assert cfs.features["GENTLE_FAIR_SLEEPERS"] is True


@pytest.mark.parametrize("backend", ["process", "thread"])
def test_parallel_equals_serial(backend):
    serial = schedlab.run_many(PINGPONG, seeds=[1, 2, 3], backend="serial")
    par = schedlab.run_many(PINGPONG, seeds=[1, 2, 3], backend=backend, workers=2)
    assert par.seeds == [1, 2, 3]
    assert par.to_json() == serial.to_json()
    one = schedlab.run(PINGPONG, seed=2)
    assert one.to_json() == serial[1].to_json()


def test_progress_callback_and_trace_files(tmp_path):
    seen: list[float] = []
    res = schedlab.run(PINGPONG, seed=1, trace=tmp_path / "t.json", progress=seen.append)
    assert all(0.0 <= f <= 1.0 for f in seen)
    assert res.trace_path == str(tmp_path / "t.json")
    doc = json.loads((tmp_path / "t.json").read_text())
    names = {str(e.get("name")) for e in doc["traceEvents"] if e.get("ph") == "X"}
    assert any(n.startswith("ping") for n in names) and any(n.startswith("pong") for n in names)
    schedlab.run(PINGPONG, seed=1, trace=tmp_path / "t.txt", trace_format="ftrace")
    text = (tmp_path / "t.txt").read_text()
    assert text.startswith("# tracer: nop") and "sched_switch" in text


def test_cli_trace_several_seeds(cli, tmp_path):
    r = cli("run", PINGPONG, "--seed", "1", "--seed", "2", "--trace", tmp_path / "pp.json")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "pp.seed1.json").exists() and (tmp_path / "pp.seed2.json").exists()


def test_make_generator_figures():
    res = schedlab.run("examples/make_generator.toml", seed=1)
    w = res.workload
    assert w["makespan_s"] > 0
    assert 0 < w["cpu_pct"] <= 100 * res.raw["nr_cpus"]


def test_reproduce_make_core_quick(cli, tmp_path):
    r = cli("reproduce", "make-core", "--quick", "--json", "--out", tmp_path)
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)
    jsonschema.validate(rows, ROW_SCHEMA)
    assert {(d["config"], d["metric"]) for d in rows} == {
        (c, m) for c in ("cfs-6.5", "eevdf-6.6", "eevdf-6.6 vs cfs-6.5") for m in ("makespan_s", "cpu_pct")}
    for d in rows:
        assert d["machine"] == "ryzen-7950x" and d["n_seeds"] == 2
        assert d["published"] is None and d["ratio"] is None and d["calibrated"] is False
        assert d["simulated_mean"] is not None and d["simulated_mean"] > 0
    assert (tmp_path / "make-core.md").exists()


def test_run_many_from_an_unguarded_script():
    """Process workers must not re-run the caller's script (no __main__ guard, stdin)."""
    script = ("import schedlab\n"
              "rs = schedlab.run_many('examples/pipe_pingpong.toml', seeds=[1, 2], backend='process', workers=2)\n"
              "print(rs.seeds)\n")
    r = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[1, 2]"


def test_event_limit_keeps_results_and_warns(cli, tmp_path):
    p = tmp_path / "limited.toml"
    p.write_text(open(PINGPONG).read().replace("seeds = [1, 2, 3]", "seeds = [1]\nmax_events = 1000"))
    r = cli("run", str(p), "--json")
    assert r.exit_code == 3, r.output  # a partial result
    doc = json.loads(r.stdout)
    assert doc["engine"]["stopped_by"] == "max_events" and doc["engine"]["events"] <= 1001
    assert r.stderr.startswith("warning: seed 1 stopped at its event limit")


def test_deadlock_keeps_results_warns_and_exits_3(cli, tmp_path):
    # Each waits for the other first: both block at once and nothing is left to run.
    p = tmp_path / "deadlock.toml"
    p.write_text("[machine]\ntopo = { sockets = 1, llcs = 1, cores = 2, smt = 1 }\n"
                 "[[tasks]]\nname = \"a\"\nprogram = [{ wait = \"b-done\" }, { signal = \"a-done\" }]\n"
                 "[[tasks]]\nname = \"b\"\nprogram = [{ wait = \"a-done\" }, { signal = \"b-done\" }]\n"
                 "[run]\nuntil = \"workload_done\"\n")
    r = cli("run", str(p), "--json")
    assert r.exit_code == 3, r.output
    assert json.loads(r.stdout)["engine"]["stopped_by"] == "deadlock"
    assert "deadlocked" in r.stderr and "Traceback" not in r.stderr


def test_ctrl_c_stops_a_long_run_inside_the_run(tmp_path):
    # 500 simulated seconds of 768 tasks on 384 CPUs would take minutes; SIGINT must end
    # it at the engine's next check, not after the run.
    import signal
    import time

    p = tmp_path / "long.toml"
    p.write_text("[machine]\ntopo = { sockets = 2, llcs = 12, cores = 8, smt = 2 }\n"
                 "[[tasks]]\nname = \"w\"\ncount = 768\n"
                 "program = [{ loop = { body = [{ run_exp = \"500us\" }, { sleep_exp = \"500us\" }] } }]\n"
                 "[run]\nduration_s = 500.0\n")
    proc = subprocess.Popen([sys.executable, "-m", "schedlab", "run", str(p)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)  # a hang would take minutes
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
