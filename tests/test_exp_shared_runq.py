"""The shared-runq experiment and the benchmark tools: registration, scenarios validated by
the core, a real quick run on one machine whose rows follow the schema, and hackbench /
schbench printed in their tools' own format."""

from __future__ import annotations

import re

import jsonschema

import schedlab
from schedlab import schemas
from schedlab.reproduce import get
from schedlab.reproduce.experiments.shared_runq import VARIANTS, WORKLOADS
from schedlab.reproduce.report import rows_json
from schedlab.reproduce.runner import run_experiments


def test_registered_with_every_version_on_every_machine():
    e = get("shared-runq")
    assert e.machines == ("ryzen-7950x", "milan-72", "bergamo", "zen3-2s", "xeon-80")
    assert len(e.configs) == len(WORKLOADS) * len(VARIANTS) == 35
    assert e.published_value("milan-72", "make:none", "makespan_s") == 1608.69
    assert e.published_value("ryzen-7950x", "make:v1", "cpu_pct") == 3116
    assert e.published_value("bergamo", "hackbench:none", "time_s") is None


def test_scenarios_switch_one_version_each_and_validate():
    e = get("shared-runq")
    for config in e.configs:
        doc = e.scenario("bergamo", config, True)
        versions = [f for f in ("SHARED_RUNQ", "SHARED_RUNQ_V2", "SHARED_RUNQ_V3", "SHARED_RUNQ_V4")
                    if doc["kernel"]["features"].get(f)]
        assert len(versions) == (0 if config.endswith((":none", ":ni-random")) else 1), config
        if config.startswith("hhvm:"):
            assert doc["kernel"]["tunables"]["sched_migration_cost_ns"] == 0
        schedlab.load_scenario(doc)


def test_quick_run_rows_follow_the_schema_with_counters_and_changes():
    rows = rows_json(run_experiments([get("shared-runq")], quick=True, seeds=1, workers=1, machine="ryzen-7950x"))
    jsonschema.validate(rows, schemas.load("reproduce-rows"))
    by = {(r["config"], r["metric"]): r for r in rows}
    assert by[("make:none", "makespan_s")]["calibrated"]
    assert abs(by[("make:none", "makespan_s")]["simulated_mean"] - 590.52) < 1e-6
    assert not any(r["calibrated"] for r in rows if r["metric"] != "makespan_s")
    for w in WORKLOADS:
        assert by[(f"{w}:none", "shared_runq_pulls")]["simulated_mean"] == 0
        assert by[(f"{w}:ni-random", "shared_runq_pulls")]["simulated_mean"] == 0
    assert by[("hackbench:v2-all", "shared_runq_pulls")]["simulated_mean"] > 0
    assert by[("hackbench:v4", "newidle_domain_skips")]["simulated_mean"] > 0
    assert by[("hhvm:ni-random", "newidle_random_skips")]["simulated_mean"] > 0
    assert ("tbench:v4 vs tbench:none", "ops_per_s") in by
    # What the shared runqueue is for (work conservation): pulling from it at newidle
    # and wakeup leaves less idle time while a task waits in the LLC than no queue.
    iww = "idle_while_waiting_per_llc_ms"
    for w in ("make", "hackbench"):
        assert by[(f"{w}:none", iww)]["simulated_mean"] > 0
        assert by[(f"{w}:v2-all", iww)]["simulated_mean"] < by[(f"{w}:none", iww)]["simulated_mean"]


def test_hackbench_prints_like_rt_tests(cli):
    r = cli("hackbench", "-g", "2", "-f", "4", "-l", "10", "--pipe", "--machine", "topo(1,1,4,1)")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "Running in process mode with 2 groups using 8 file descriptors each (== 16 tasks)"
    assert lines[1] == "Each sender will pass 10 messages of 100 bytes"
    assert re.fullmatch(r"Time: \d+\.\d{3}", lines[2])


def test_schbench_prints_its_report(cli):
    r = cli("schbench", "-m", "1", "-t", "4", "-r", "0.3", "--machine", "topo(1,1,4,1)", "--feature", "SHARED_RUNQ_V4")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert re.search(r"^Wakeup Latencies percentiles \(usec\) runtime \d+ \(s\) \(\d+ total samples\)$", out, re.M)
    assert re.search(r"^Request Latencies percentiles \(usec\)", out, re.M)
    assert re.search(r"^\t\* 99\.0th: \d+", out, re.M)
    assert re.search(r"^\t  99\.9th: \d+", out, re.M)
    assert re.search(r"^average rps: \d+\.\d\d$", out, re.M)
    assert re.search(r"^sched delay: message \d+ \(usec\) worker \d+ \(usec\)$", out, re.M)


def test_tool_flags_are_checked(cli):
    r = cli("hackbench", "--feature", "SHARED_RUNQ=maybe")
    assert r.exit_code == 2 and "expected NAME" in r.stderr
    r = cli("schbench", "--feature", "SHARED_RUNQ", "--feature", "SHARED_RUNQ_V4", "-r", "0.1")
    assert r.exit_code == 2 and "at most one" in r.stderr
