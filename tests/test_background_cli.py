"""`--background` on reproduce and bench: every run's `[kernel] background` set from the
command line (issue 48: every reproduction and every bench case re-run with the kernel's
own work beside it)."""

from __future__ import annotations

import json

from schedlab.reproduce import registry
from schedlab.reproduce.runner import plan


def test_reproduce_background_sets_every_planned_runs_kernel_background():
    quiet = plan(registry.select(["timers"]), quick=True)
    busy = plan(registry.select(["timers"]), quick=True, background="kernel")
    assert [p.config for p in busy] == [p.config for p in quiet]
    for q, b in zip(quiet, busy, strict=True):
        assert "background" not in json.loads(q.scenario.json)["kernel"]
        assert json.loads(b.scenario.json)["kernel"]["background"] == "kernel"


def test_reproduce_background_refuses_an_unknown_value_naming_the_field(cli):
    r = cli("reproduce", "timers", "--quick", "--background", "bogus")
    assert r.exit_code != 0
    assert "kernel.background" in r.output and "expected `none` or `kernel`" in r.output
    assert "Traceback" not in r.output


def test_bench_background_adds_the_kernels_two_tasks_per_cpu(cli):
    rows = {}
    for bg in ("none", "kernel"):
        r = cli("bench", "rt", "--quick", "--json", "--background", bg)
        assert r.exit_code == 0, r.output
        rows[bg] = json.loads(r.stdout)["rows"][0]
        assert rows[bg]["error"] is None
    quiet, busy = rows["none"], rows["kernel"]
    assert busy["tasks"] - quiet["tasks"] == 2 * quiet["cpus"] + 1  # a kworker and a stopper per CPU, a kcompactd per node
    assert busy["sim_s"] == quiet["sim_s"] and busy["events"] > quiet["events"]


def test_bench_background_refuses_an_unknown_value_in_one_line(cli):
    r = cli("bench", "rt", "--quick", "--background", "bogus")
    assert r.exit_code == 2
    assert "--background: expected one of none, kernel, got 'bogus'" in r.output
    assert "internal error" not in r.output and "Traceback" not in r.output
