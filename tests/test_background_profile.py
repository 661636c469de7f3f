"""A host's background as a profile (issue 48): validate-host --record-background
measures every thread's wakeups and CPU time into a file, a scenario names the file as
``[kernel] background_profile``, and its sources run as daemons."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import schedlab
from schedlab import ScenarioError
from schedlab.scenario import Scenario
from schedlab.validate_host.background import profile_toml, record, scenario_table

HAS_SCHEDSTAT = Path(f"/proc/self/task/{os.getpid()}/schedstat").exists()

PROFILE = {
    "origin": "estimate: a test's",
    "source": [
        {"name": "daemon", "wakeups_per_s": 40.0, "run_us": 100.0, "tasks": 2},
        {"name": "kthread/N", "wakeups_per_s": 5.0, "run_us": 20.0, "per_cpu": True, "policy_measured": "SCHED_IDLE"},
        {"name": "irq/N-virtio", "wakeups_per_s": 3.0, "run_us": 10.0, "tasks": 1, "fifo_priority": 50},
    ],
    "measurement": {"seconds": 1.0, "nr_cpus": 2, "interrupts_per_s": {"LOC": [10.0, 4.0]}, "softirqs_per_s": {},
                    "busy_loop": {"seconds": 1.0, "cpu": 1, "threshold_us": 20.0, "per_s": 5.0, "p50_us": 25.0,
                                  "p99_us": 60.0, "max_us": 70.0},
                    "left_out_modeled_by_kernel_background": {"migration/N": 0.5}},
}


def scenario_naming(profile_file: str) -> str:
    return textwrap.dedent(f"""\
        [machine]
        topo = {{ cores = 2 }}
        [kernel]
        background = "kernel"
        background_profile = "{profile_file}"
        [[tasks]]
        name = "work"
        program = [{{ loop = {{ count = 200, body = [{{ run = "1ms" }}, {{ sleep = "4ms" }}] }} }}]
        [run]
        until = "workload_done"
        """)


def test_a_profile_file_is_read_relative_to_the_scenario_and_its_sources_run_as_daemons(tmp_path):
    (tmp_path / "host.toml").write_text(profile_toml(PROFILE))
    (tmp_path / "s.toml").write_text(scenario_naming("host.toml"))
    s = Scenario.from_file(tmp_path / "s.toml")
    read = s.doc["kernel"]["background_profile"]
    want = scenario_table(PROFILE)
    assert read["origin"] == want["origin"]
    assert [{k: got[k] for k in w} for got, w in zip(read["source"], want["source"], strict=True)] == want["source"]
    r = schedlab.run(s, seed=1)
    names = {t["name"] for t in r.raw["tasks"]}
    assert {"daemon#0", "daemon#1", "kthread/N#0", "kthread/N#1", "irq/N-virtio#0"} <= names
    # The run ends with the scenario's task (200 x 5 ms), not with the daemons.
    assert r.raw["engine"]["stopped_by"] == "workload_done"
    assert 0.99 < r.raw["engine"]["sim_ns"] / 1e9 < 1.1
    woke = sum(t["nr_wakeups"] for t in r.raw["tasks"] if t["name"].startswith("daemon#"))
    assert 15 <= woke <= 70, woke  # 40 a second for ~1 s


def test_the_files_comments_carry_what_the_model_does_not_take():
    text = profile_toml(PROFILE)
    assert "# interrupts LOC: 10, 4 a second per CPU (not modeled)" in text
    assert "busy loop on CPU 1" in text and "migration/N 0.5/s" in text
    assert "# policy on the host: SCHED_IDLE" in text and "policy_measured" not in text.split("[background_profile]")[1]


def test_a_missing_or_malformed_profile_is_refused_naming_the_field_and_file(tmp_path):
    (tmp_path / "s.toml").write_text(scenario_naming("nope.toml"))
    with pytest.raises(ScenarioError) as e:
        Scenario.from_file(tmp_path / "s.toml")
    assert "kernel.background_profile" in str(e.value) and "nope.toml" in str(e.value)
    (tmp_path / "bad.toml").write_text('[background_profile]\norigin = "x"\n[[background_profile.source]]\nname = "d"\n'
                                       'wakeups_per_s = -1.0\nrun_us = 1.0\n')
    (tmp_path / "s2.toml").write_text(scenario_naming("bad.toml"))
    with pytest.raises(ScenarioError) as e:
        Scenario.from_file(tmp_path / "s2.toml")
    assert "kernel.background_profile.source[0].wakeups_per_s" in str(e.value)


def test_validate_host_background_profile_refuses_a_missing_file_in_one_line(cli, tmp_path):
    r = cli("validate-host", "--sim-only", "cyclictest", "--background-profile", str(tmp_path / "none.toml"))
    assert r.exit_code == 2
    assert "kernel.background_profile" in r.output and "none.toml" in r.output and "Traceback" not in r.output


@pytest.mark.skipif(not HAS_SCHEDSTAT, reason="no /proc/<pid>/task/<tid>/schedstat on this host")
def test_record_counts_a_threads_wakeups_and_run():
    # A child naming itself bgprobe-test wakes every 10 ms and runs ~0.2 ms of CPU each time.
    child = textwrap.dedent("""\
        import ctypes, time
        ctypes.CDLL(None).prctl(15, b"bgprobe-test", 0, 0, 0)
        print("ready", flush=True)
        while True:
            t = time.perf_counter()
            while time.perf_counter() - t < 0.0002:
                pass
            time.sleep(0.01)
        """)
    p = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        prof = record(2.0, busy_loop_s=0.05)
    finally:
        p.kill()
        p.wait()
    src = [s for s in prof["source"] if s["name"] == "bgprobe-test"]
    assert len(src) == 1, [s["name"] for s in prof["source"]]
    assert 40 <= src[0]["wakeups_per_s"] <= 110, src[0]  # at most 1 / 10.2 ms; fewer on a loaded host
    assert 100 <= src[0]["run_us"] <= 2000, src[0]
    assert src[0]["tasks"] == 1
    # The recorder's own threads are not in it; the file it writes loads.
    assert not any(s["name"].startswith("pytest") for s in prof["source"])
    Scenario.from_dict({"machine": {"topo": {"cores": 1}}, "kernel": {"background_profile": scenario_table(prof)},
                        "tasks": [{"name": "t", "program": [{"run": "1ms"}]}], "run": {"duration_s": 0.1}})



def test_validate_host_runs_its_simulated_sides_with_the_profile():
    from schedlab.validate_host import _with_host
    from schedlab.validate_host import tools as vt

    tool = next(t for t in vt.tools(2) if t.name == "cyclictest")
    doc = _with_host(vt.scenario(tool, "6.18", 250, 0.2), None, scenario_table(PROFILE))
    assert doc["kernel"]["background"] == "kernel"
    assert doc["kernel"]["background_profile"]["origin"] == PROFILE["origin"]
    raw = schedlab.run(doc, seed=1).raw
    assert any(t["name"].startswith("daemon#") for t in raw["tasks"])
    # cyclictest's samples are its threads' alone: 200 periods of 1 ms on each.
    ct = [t for t in raw["tasks"] if not ("#" in t["name"] or t["name"].startswith(("kworker/", "migration/")))]
    assert raw["histograms"]["timer_latency"]["count"] <= 200 * len(ct)
