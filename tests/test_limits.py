"""Run limits and Ctrl-C, as a user meets them: the run stops cleanly, keeps a partial
result marked as such (``engine.stopped_by``, ``engine.partial``), the command warns and
exits 3 (130 for Ctrl-C) and still prints or writes what it has."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import jsonschema
import pytest

import schedlab
from conftest import ROOT, default_sigint
from schedlab import schemas

RUN_SCHEMA = schemas.load("run-result")
PINGPONG = "examples/pipe_pingpong.toml"
# 500 simulated seconds of 768 tasks on 384 CPUs: minutes of work, stopped long before.
LONG = ("[machine]\ntopo = { sockets = 2, llcs = 12, cores = 8, smt = 2 }\n"
        "[[tasks]]\nname = \"w\"\ncount = 768\n"
        "program = [{ loop = { body = [{ run_exp = \"500us\" }, { sleep_exp = \"500us\" }] } }]\n"
        "[run]\nduration_s = 500.0\n")


def test_sim_time_limit_from_the_command(cli):
    r = cli("run", PINGPONG, "--seed", "1", "--json", "--max-sim-time", "2ms")
    assert r.exit_code == 3, r.output
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, RUN_SCHEMA)
    assert doc["engine"]["stopped_by"] == "max_sim_time" and doc["engine"]["partial"] is True
    assert doc["engine"]["sim_ns"] == 2_000_000
    assert r.stderr.startswith("warning: seed 1 stopped at its simulated-time limit (0.002 s simulated")


def test_event_limit_from_python_keeps_the_partial_result():
    res = schedlab.run(PINGPONG, seed=1, max_events=100)
    assert res.raw["engine"]["stopped_by"] == "max_events" and res.raw["engine"]["partial"]
    assert res.raw["engine"]["events"] == 100
    whole = schedlab.run(PINGPONG, seed=1)
    assert whole.raw["engine"]["partial"] is False


def test_several_seeds_each_stop_at_the_limit():
    rs = schedlab.run_many(PINGPONG, seeds=[1, 2], backend="process", workers=2, max_sim_time="1ms")
    assert [r.raw["engine"]["stopped_by"] for r in rs] == ["max_sim_time", "max_sim_time"]


def test_memory_estimate_refuses_before_running(tmp_path):
    p = tmp_path / "huge.toml"
    p.write_text(LONG.replace("count = 768", "count = 100000000"))
    with pytest.raises(schedlab.ScenarioError) as info:
        schedlab.run(str(p), max_memory="2GiB")
    e = info.value
    assert (e.origin, e.location, e.field) == (str(p), ":5:9", "tasks[0].count")
    assert "more than the memory limit of 2.0 GiB" in e.message


def test_interrupt_from_the_progress_callback_returns_the_partial_result(tmp_path):
    p = tmp_path / "long.toml"
    p.write_text(LONG)

    def stop(_fraction):
        raise KeyboardInterrupt

    with pytest.raises(schedlab.RunInterrupted) as info:
        schedlab.run(str(p), seed=3, progress=stop, trace=tmp_path / "t.json")
    (res,) = info.value.results
    assert res.seed == 3 and res.raw["engine"]["stopped_by"] == "interrupted" and res.raw["engine"]["partial"]
    assert res.raw["engine"]["events"] > 0
    assert json.loads((tmp_path / "t.json").read_text())["traceEvents"], "the trace so far is written"


def test_interrupt_reaches_runs_in_threads(tmp_path):
    p = tmp_path / "long.toml"
    p.write_text(LONG)
    timer = threading.Timer(2.0, schedlab._core.interrupt_runs)
    timer.start()
    try:
        with pytest.raises(schedlab.RunInterrupted) as info:
            schedlab.run_many(str(p), seeds=[1, 2], backend="thread", workers=2)
    finally:
        timer.cancel()
    assert [r.seed for r in info.value.results] == [1, 2]
    assert all(r.raw["engine"]["stopped_by"] == "interrupted" for r in info.value.results)


@pytest.mark.parametrize("seeds", [["1"], ["1", "2"]], ids=["one seed", "two seeds in processes"])
def test_ctrl_c_prints_what_the_runs_have(tmp_path, seeds):
    p = tmp_path / "long.toml"
    p.write_text(LONG)
    args = [sys.executable, "-m", "schedlab", "run", str(p), "--json", "-j", "2"]
    for s in seeds:
        args += ["--seed", s]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            preexec_fn=default_sigint)
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)  # a run going on to its end would take many minutes
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    doc = json.loads(out)
    docs = doc if isinstance(doc, list) else [doc]
    jsonschema.validate(doc, RUN_SCHEMA)
    assert [d["seed"] for d in docs] == [int(s) for s in seeds]
    assert all(d["engine"]["stopped_by"] == "interrupted" and d["engine"]["partial"] for d in docs)
    assert f"warning: interrupted: {len(seeds)} of {len(seeds)} seeds have a (partial) result" in err


def test_an_untrusted_name_never_leads_the_trace_out_of_the_directory(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    s = schedlab.load_scenario({"name": "../../escape", "machine": {"topo": {"cores": 2}},
                                "tasks": [{"name": "t", "program": [{"run": "1ms"}]}],
                                "run": {"duration_s": 0.001, "trace": True}})
    res = schedlab.run(s, seed=1)
    assert res.trace_path == "escape.seed1.pftrace"
    assert (work / "escape.seed1.pftrace").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
