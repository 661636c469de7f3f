"""rt-app in and out, the LISA-style builder, text traces in and replayed, Perfetto
protobuf out: each through the library and the command a user types."""

from __future__ import annotations

import collections
import json
import os
import re
import shutil
from pathlib import Path

import pytest

import schedlab
from schedlab.interchange import read_trace, replay_trace, to_rt_app
from schedlab.rtapp import Barrier, Periodic, Phase, Run, Sleep, Task, to_json, to_scenario

ROOT = Path(__file__).resolve().parent.parent
RTAPP = ROOT / "examples" / "rt-app"
PINGPONG = ROOT / "examples" / "pipe_pingpong.toml"
THROTTLED = ROOT / "examples" / "throttled_group.toml"


# ------------------------------------------------------------------------- rt-app in
@pytest.mark.parametrize("path", sorted((RTAPP / "tutorial").glob("*.json")), ids=lambda p: p.name)
def test_every_rt_app_tutorial_example_loads(path):
    s = schedlab.load_scenario(path)
    assert s.doc["tasks"] and s.name == path.stem
    assert any("synthetic 8-CPU machine" in n for n in s.notes)


def test_an_rt_app_file_runs_from_the_command_line(cli):
    r = cli("run", str(RTAPP / "tutorial" / "example2.json"), "--machine", "topo(1,1,2,1)", "--json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    # 10 % load: run 10 ms every 100 ms for 2 s, on 2 CPUs.
    assert res["nr_cpus"] == 2 and res["engine"]["stopped_by"] == "duration"
    busy = sum(c["busy_ns"] for c in res["cpus"]) / 2e9
    assert 0.09 < busy < 0.11


def test_a_toml_scenario_takes_its_workload_from_an_rt_app_file(tmp_path):
    shutil.copy(RTAPP / "tutorial" / "example10.json", tmp_path / "w.json")
    (tmp_path / "s.toml").write_text(
        '[machine]\ntopo = { cores = 2 }\n[workload]\nrt_app = "w.json"\n'
        '[[groups]]\nname = "tg1"\ncpu_max = "10000 100000"\n[run]\nduration_s = 1\n')
    s = schedlab.load_scenario(tmp_path / "s.toml")
    assert s.doc["workload"] is None and s.doc["tasks"][0]["group"] == "tg1"
    res = schedlab.run(s)
    # The scenario's own limit on /tg1 throttles the rt-app thread (20 ms of every 100).
    g = next(g for g in res.raw["groups"] if g["name"] == "tg1")
    assert g["nr_throttled"] > 0
    (tmp_path / "bad.toml").write_text('[machine]\ntopo = { cores = 2 }\n[workload]\nrt_app = "nope.json"\n[run]\nduration_s = 1\n')
    with pytest.raises(schedlab.ScenarioError) as e:
        schedlab.load_scenario(tmp_path / "bad.toml")
    assert str(e.value).startswith(f"{tmp_path / 'bad.toml'}:4:10: workload.rt_app: cannot read {tmp_path / 'nope.json'}")


def test_the_scx_sim_case_from_rt_app_equals_the_toml_scenario():
    a = schedlab.load_scenario(RTAPP / "scx_sim_768.json")
    b = schedlab.load_scenario(RTAPP / "scx_sim_768.toml")
    da, db = a.doc, b.doc
    for d in (da, db):
        d.pop("name"), d.pop("description")
    # The file's `global` object is kept for export only (a run reads none of it).
    assert da.pop("rt_app") == {"calibration": "CPU0", "default_policy": "SCHED_OTHER", "duration": 5}
    assert da == db
    # The same scenario gives the same result, bit for bit: the full 5 s of both.
    secs = 5.0
    ra = schedlab.run(a, seed=1).raw
    rb = schedlab.run(b, seed=1).raw
    for r in (ra, rb):  # Result.raw leaves the host's wall time out (Result.wall_ns)
        r.pop("scenario")
    assert ra == rb
    assert ra["engine"]["sim_ns"] == int(secs * 1e9) and ra["summary"]["wakeups"] > 768


BAD_INPUTS = [
    ("broken.json", '{\n "tasks": {\n  "t": { "run": 10 "sleep": 5 }\n }\n}\n',
     "broken.json:3: json: expected ',' or '}' in an object (a missing comma?)"),
    ("unknown.json", '{\n "tasks": {\n  "t": {\n   "run": 10,\n   "spin": 5\n  }\n }\n}\n',
     "unknown.json:5: tasks.t.spin: unknown event 'spin'"),
    ("negative.json", '{ "tasks": { "t": {\n "loop": 2,\n "sleep": -5 } } }\n',
     "negative.json:3: tasks.t.sleep: negative duration -5 µs: expected µs >= 0"),
]


@pytest.mark.parametrize("name,text,want", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_malformed_rt_app_files_name_file_line_and_field(cli, tmp_path, name, text, want):
    p = tmp_path / name
    p.write_text(text)
    r = cli("run", str(p))
    assert r.exit_code == 2
    assert r.stderr.startswith(f"error: {tmp_path}/{want}"), r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_trace_with_garbage_lines_names_file_and_line(cli, tmp_path):
    p = tmp_path / "t.txt"
    p.write_text("# tracer: nop\n"
                 "  a-10 [000] d..2. 1.000000000: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=b next_pid=11 next_prio=120\n"
                 "this is not a trace line\n")
    r = cli("trace-info", str(p))
    assert r.exit_code == 2
    assert r.stderr.startswith(f"error: {p}:3: line: not a trace event line"), r.stderr
    p.write_text("  a-10 [000] d..2. 1.0: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=? ==> next_comm=b next_pid=11 next_prio=120\n")
    r = cli("trace-info", str(p))
    assert r.stderr.startswith(f"error: {p}:1: sched_switch.prev_state: expected a task state"), r.stderr


# ------------------------------------------------------------------------ rt-app out
def test_a_scenario_exports_to_rt_app_and_loads_back(cli, tmp_path):
    doc, notes = to_rt_app(PINGPONG)
    out = tmp_path / "pp.json"
    r = cli("export-rt-app", str(PINGPONG), "-o", str(out))
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text()) == doc
    back = schedlab.load_scenario(out)
    orig = schedlab.load_scenario(PINGPONG)
    # The import marks where each rt-app phase begins (its log line); nothing else differs.
    assert [_unmarked(t["program"]) for t in back.doc["tasks"]] == [t["program"] for t in orig.doc["tasks"]]
    assert back.doc["tasks"][0]["program"][0]["loop"]["body"][0] == "rt_app_phase"


def _unmarked(program: list) -> list:
    """A program without its rt_app_phase marks."""
    out = []
    for op in program:
        if op == "rt_app_phase":
            continue
        if isinstance(op, dict) and "loop" in op:
            op = {"loop": {**op["loop"], "body": _unmarked(op["loop"]["body"])}}
        out.append(op)
    return out


# ----------------------------------------------------------------- the LISA builder
def test_builder_matches_lisa_and_the_json_importer():
    # LISA's own test (tests/test_wlgen_rtapp.py::test_profile_periodic_smoke).
    assert Phase(Periodic(duty_cycle_pct=20, period=100e-3, duration=1)).to_json() == [
        {"loop": 10, "run": 20000, "timer": {"period": 100000, "ref": "unique"}}]
    assert Phase(Run(1) + Barrier("my_barrier")).to_json() == [{"loop": 1, "run": 1000000, "barrier": "my_barrier"}]
    profile = {"ui": Phase(Periodic(duty_cycle_pct=25, period=16e-3, duration=0.5)) + Phase(Run(2e-3) + Sleep(1e-3), loop=4, cpus=[1]),
               "bg": Task(Phase(Run(0.01) * 3), instance=2)}
    built = to_scenario(profile, machine="topo(1,1,2,1)", duration=1)
    text = json.dumps(to_json(profile, machine="topo(1,1,2,1)", duration=1))
    assert built == schedlab.Scenario.from_rt_app(text, origin="rtapp.json")
    ui = built.doc["tasks"][0]["program"]
    assert ui[0]["loop"]["count"] == 31 and ui[1] == {"set_affinity": "1"}
    res = schedlab.run(built)
    assert res.raw["engine"]["stopped_by"] == "workload_done"


# --------------------------------------------------------------- traces in, replay
def test_trace_info_and_replay_from_the_command_line(cli, tmp_path):
    t = tmp_path / "pp.trace.txt"
    r = cli("run", str(PINGPONG), "--seed", "1", "--trace", str(t))
    assert r.exit_code == 0, r.output
    assert "sched_wakeup:" in t.read_text()
    tl = read_trace(t)
    assert tl.flavour == "ftrace" and tl.warnings["missing_wakeups"] == 0
    r = cli("trace-info", str(t))
    assert r.exit_code == 0 and "woken most by" in r.stdout
    saved = tmp_path / "replay.json"
    r = cli("replay", str(t), "--machine", "topo(1,2,4,1)", "--profile", "6.5", "--save", str(saved), "--json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["engine"]["stopped_by"] == "workload_done" and res["nr_cpus"] == 8
    assert json.loads(saved.read_text())["kernel"]["profile"] == "6.5"
    s, warnings = replay_trace(t, "topo(1,1,4,1)")
    assert warnings["unknown_pids"] == 0 and len(s.doc["tasks"]) == len(tl.tasks)


# ------------------------------------------------------------- Perfetto protobuf out
def _proto_counts(path: Path):
    pb = pytest.importorskip("perfetto.protos.perfetto.trace.perfetto_trace_pb2",
                             reason="the perfetto package (pip install '.[test]') holds Perfetto's trace descriptors")
    t = pb.Trace()
    t.ParseFromString(path.read_bytes())
    switches, kinds, prints, threads = collections.Counter(), collections.Counter(), [], {}
    for p in t.packet:
        if p.HasField("ftrace_events"):
            for e in p.ftrace_events.event:
                k = e.WhichOneof("event")
                kinds[k] += 1
                if k == "sched_switch":
                    switches[p.ftrace_events.cpu] += 1
                if k == "print":
                    prints.append(e.print.buf)
        if p.HasField("process_tree"):
            for th in p.process_tree.threads:
                threads[th.tid] = th.name
    return switches, kinds, prints, threads


def test_perfetto_protobuf_decodes_against_perfettos_own_descriptors(tmp_path):
    t = tmp_path / "bw.pftrace"
    res = schedlab.run(THROTTLED, seed=1, trace=t)
    switches, kinds, prints, threads = _proto_counts(t)
    # One sched_switch per context switch of each CPU, as the run counted them.
    assert dict(switches) == {c["cpu"]: c["nr_switches"] for c in res.raw["cpus"] if c["nr_switches"]}
    assert kinds["sched_waking"] == kinds["sched_wakeup"] and kinds["cpu_idle"] > 0 and kinds["cpu_frequency"] == res.raw["nr_cpus"]
    # The throttled group shows as a counter track.
    assert any(p.startswith("C|0|throttled CPUs: batch|") for p in prints)
    assert {t["name"] for t in res.raw["tasks"]} <= set(threads.values())


def _trace_processor_shell() -> str | None:
    path = os.environ.get("SCHEDLAB_TRACE_PROCESSOR")
    if path and Path(path).is_file():
        return path
    return shutil.which("trace_processor_shell") or shutil.which("trace_processor")


def test_trace_processor_finds_the_sched_switch_rows_per_cpu(tmp_path):
    shell = _trace_processor_shell()
    if shell is None:
        pytest.skip("trace_processor_shell is not installed (the perfetto package downloads it on first use, "
                    "from a host this machine cannot reach); set SCHEDLAB_TRACE_PROCESSOR to a binary")
    tp_mod = pytest.importorskip("perfetto.trace_processor")
    t = tmp_path / "pp.pftrace"
    res = schedlab.run(PINGPONG, seed=1, trace=t)
    tp = tp_mod.TraceProcessor(trace=str(t), config=tp_mod.TraceProcessorConfig(bin_path=shell, ingest_ftrace_in_raw=True))
    rows = tp.query("select cpu, count(*) as n from ftrace_event where name = 'sched_switch' group by cpu")
    got = {r.cpu: r.n for r in rows}
    tp.close()
    assert got == {c["cpu"]: c["nr_switches"] for c in res.raw["cpus"] if c["nr_switches"]}


def test_every_trace_format_carries_the_mechanism_events(tmp_path):
    for suffix in (".json", ".trace.txt", ".perf.txt"):
        t = tmp_path / f"bw{suffix}"
        schedlab.run(THROTTLED, seed=1, trace=t)
        text = t.read_text()
        if suffix == ".json":
            doc = json.loads(text)
            assert any(e.get("ph") == "C" and e["name"].startswith("throttled CPUs") for e in doc["traceEvents"])
            assert "sched_switch:" in doc["systemTraceEvents"]
            # Slices are on the tasks' own threads, not on fake CPU threads of pid 0.
            assert all(e["pid"] != 0 for e in doc["traceEvents"] if e.get("ph") == "X")
        else:
            assert "schedlab_cfs_throttle" in text and "schedlab_cfs_unthrottle" in text
            # Timestamps to the ns.
            assert any(".000" not in line.split(":")[0][-10:] for line in text.splitlines() if "sched_switch" in line)


# --------------------------------------------------------- bad traces, kept pids
TRACE_3001 = """\
# tracer: nop
          <idle>-0       [000] d..2.  100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=worker next_pid=3001 next_prio=120
          worker-3001    [000] d..2.  100.002000: sched_switch: prev_comm=worker prev_pid=3001 prev_prio=120 prev_state=S ==> next_comm=helper next_pid=3002 next_prio=120
          helper-3002    [000] d..3.  100.003000: sched_waking: comm=worker pid=3001 prio=120 target_cpu=000
          helper-3002    [000] d..2.  100.004000: sched_switch: prev_comm=helper prev_pid=3002 prev_prio=120 prev_state=S ==> next_comm=worker next_pid=3001 next_prio=120
          worker-3001    [000] d..2.  100.006000: sched_switch: prev_comm=worker prev_pid=3001 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
"""


def test_trace_info_refuses_an_empty_trace_and_backwards_time_in_one_line(cli, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# tracer: nop\n#\n")
    for cmd in (["trace-info", str(empty)], ["replay", str(empty), "--machine", "topo(1,1,2,1)"]):
        r = cli(*cmd)
        assert r.exit_code == 2, r.output
        assert r.output.strip() == f"error: {empty}: trace: no events: the file is empty or holds only comments and headers"
    lines = TRACE_3001.splitlines()
    back = tmp_path / "back.txt"
    back.write_text("\n".join(lines[:3] + [lines[4], lines[3]] + lines[5:]) + "\n")
    r = cli("trace-info", str(back))
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert r.output.startswith(f"error: {back}:5: timestamp: 100.003000 s is before 100.004000 s of line 4"), r.output


def test_a_replay_keeps_the_traced_pids(cli, tmp_path):
    t = tmp_path / "t.txt"
    t.write_text(TRACE_3001)
    out = tmp_path / "replayed.txt"
    r = cli("replay", str(t), "--machine", "topo(1,1,2,1)", "--json", "--trace", str(out))
    assert r.exit_code == 0, r.output
    assert sorted((x["pid"], x["name"]) for x in json.loads(r.stdout)["tasks"]) == [(3001, "worker"), (3002, "helper")]
    # The replay's own trace names them by the same pids.
    assert {x["pid"] for x in read_trace(out).tasks} == {3001, 3002}


# ------------------------------------------------- real traces, inconsistent switches
DATA = ROOT / "tests" / "data"


def _latency_runtimes(path: Path) -> dict[int, float]:
    """`perf sched latency -p`'s Runtime column, ms by pid."""
    out = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 2 and cells[1].endswith(" ms") and ":" in cells[0] and cells[0].rsplit(":", 1)[1].isdigit():
            out[int(cells[0].rsplit(":", 1)[1])] = float(cells[1][:-3])
    return out


def _assert_no_overlapping_runs(tasks: list[dict]) -> None:
    runs = sorted((cpu, start, end, t["pid"]) for t in tasks for cpu, start, end in t["runs"])
    for a, b in zip(runs, runs[1:]):
        assert a[0] != b[0] or a[2] <= b[1], f"pid {a[3]}'s run {a[:3]} overlaps pid {b[3]}'s {b[:3]}"


def test_trace_info_on_a_recorded_perf_sched_pipe_trace_agrees_with_perf_sched_latency(cli):
    r = cli("trace-info", str(DATA / "perf_sched_pipe.perf.txt.gz"), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["flavour"] == "perf" and doc["warnings"]["inconsistent_switches"] > 0
    want = _latency_runtimes(DATA / "perf_sched_pipe.latency.txt")
    tasks = {t["pid"]: t for t in doc["tasks"]}
    pipe = [pid for pid, t in tasks.items() if t["comm"] == "sched-pipe"]
    assert len(pipe) == 2
    # The benchmark's two tasks switch ~2000 times each: their switch intervals and perf's
    # sched_stat_runtime sums agree. (Tasks of a few long runs differ by where the kernel
    # emitted its last stat_runtime before a switch, up to 6 % here: not compared.)
    for pid in pipe:
        assert tasks[pid]["run_ns"] / 1e6 == pytest.approx(want[pid], rel=0.01), (pid, tasks[pid]["run_ns"], want[pid])
    # After an inconsistent switch nothing reopens from the trace's start: the kworker
    # perf gives 0.010 ms got 54 ms that way.
    assert tasks[41]["run_ns"] / 1e6 == pytest.approx(want[41], abs=0.01)
    _assert_no_overlapping_runs(doc["tasks"])


def test_trace_info_closes_the_run_an_inconsistent_switch_ends(cli):
    r = cli("trace-info", str(DATA / "inconsistent_switch.trace.txt"), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    # The intervals the file's header works out by hand.
    assert {t["pid"]: t["run_ns"] for t in doc["tasks"]} == {10: 1_000_000, 11: 2_000_000, 12: 1_000_000,
                                                             13: 2_000_000, 14: 2_500_000}
    assert (doc["warnings"]["inconsistent_switches"], doc["warnings"]["cut_runs"]) == (1, 1)
    _assert_no_overlapping_runs(doc["tasks"])
    # The replay is built from the same timelines: each task's work is its CPU time.
    s, _ = replay_trace(DATA / "inconsistent_switch.trace.txt", "topo(1,1,2,1)")
    work = {t["pid"]: sum(int(op["run"][:-2]) for op in t["program"] if "run" in op) for t in s.doc["tasks"]}
    assert work == {10: 1_000_000, 11: 2_000_000, 12: 1_000_000, 13: 2_000_000, 14: 2_500_000}
    assert {t["pid"]: t["start"] for t in s.doc["tasks"]}[13] == "500000ns"


def test_a_gz_trace_that_is_not_gzip_is_one_line(cli, tmp_path):
    p = tmp_path / "t.txt.gz"
    p.write_text(TRACE_3001)
    r = cli("trace-info", str(p))
    assert r.exit_code == 2, r.output
    assert r.output.strip() == (f"error: {p}: not gzip-compressed or cut short: expected a .gz file whole "
                                "(name a plain-text file without .gz)")


def test_sched_latency_prints_perf_sched_latencys_table_from_a_trace_and_a_run(cli):
    r = cli("sched", "latency", str(DATA / "perf_sched_pipe.perf.txt.gz"))
    assert r.exit_code == 0, r.output
    perf = (DATA / "perf_sched_pipe.latency.txt").read_text().splitlines()
    ours = r.stdout.splitlines()
    # perf's header and footer lines, character for character.
    assert ours[:4] == perf[:4] and ours[-3] == perf[-5] and ours[-1] == perf[-3]
    rows = {line.split("|")[0].strip(): line.split("|") for line in ours[4:-3]}
    want = {line.split("|")[0].strip(): line.split("|") for line in perf[4:-5]}
    for task in ("sched-pipe:7240", "sched-pipe:7260"):
        assert float(rows[task][1].split()[0]) == pytest.approx(float(want[task][1].split()[0]), rel=0.01)
        # The longest wait, its start and end (7260's from its fork, perf's from its
        # sched_wakeup_new 4 µs later).
        max_ms = lambda cells: float(cells[4].split()[1])  # noqa: E731
        assert max_ms(rows[task]) == pytest.approx(max_ms(want[task]), abs=0.005)
        assert rows[task][6] == want[task][6]
    # On a run: each task's runtime and total wait are the run's own (run_ns, wait_ns).
    r = cli("sched", "latency", str(PINGPONG), "--seed", "1")
    assert r.exit_code == 0, r.output
    res = json.loads(schedlab.run(PINGPONG, seed=1).to_json())
    for t in res["tasks"]:
        cells = next(line.split("|") for line in r.stdout.splitlines() if line.strip().startswith(f"{t['name']}:{t['pid']} "))
        switches = int(cells[2])
        assert float(cells[1].split()[0]) == pytest.approx(t["run_ns"] / 1e6, abs=0.0005)
        assert float(cells[3].split()[1]) == pytest.approx(t["wait_ns"] / switches / 1e6, abs=0.0005)
    r = cli("sched", "latency", "no-such.trace.txt")
    assert r.exit_code == 2 and r.output.strip() == "error: no-such.trace.txt: no such file"


# ------------------------------------------------------- perf sched timehist | map
def _gz_text(path: Path) -> str:
    import gzip

    return gzip.decompress(path.read_bytes()).decode()


def _timehist_rows(text: str) -> dict[tuple[str, str, str], tuple[float, float, float]]:
    """(time, [cpu], task) -> (wait, delay, run) ms of `perf sched timehist` lines."""
    rows = {}
    for line in text.splitlines()[3:]:
        f = line.split()
        rows[(f[0], f[1], f[2])] = (float(f[3]), float(f[4]), float(f[5]))
    return rows


def test_sched_timehist_agrees_with_perfs_own_on_a_recorded_trace(cli):
    r = cli("sched", "timehist", str(DATA / "perf_sched_pipe300.perf.txt.gz"))
    assert r.exit_code == 0, r.output
    perf_text = _gz_text(DATA / "perf_sched_pipe300.timehist.txt.gz")
    assert r.stdout.splitlines()[:3] == perf_text.splitlines()[:3]
    ours, perf = _timehist_rows(r.stdout), _timehist_rows(perf_text)
    pipe = [k for k in perf if k[2].startswith("sched-pipe[")]
    assert len(pipe) == 601
    # perf attributes a switch to the sample's task, the timelines to prev_pid: the 7
    # inconsistent switches leave a line or two apart. Times and run/wait columns agree
    # to perf script's microsecond stamps.
    both = [k for k in pipe if k in ours]
    assert len(both) >= 598
    assert sum(abs(ours[k][2] - perf[k][2]) <= 0.0011 for k in both) >= len(both) - 1
    assert sum(abs(ours[k][0] - perf[k][0]) <= 0.0011 for k in both) >= len(both) - 2
    # perf 6.1 restarts a delay only at a wakeup; a line after a wakeup agrees.
    woke = [k for k in both if perf[k][1] > 0]
    assert len(woke) > 250 and sum(abs(ours[k][1] - perf[k][1]) <= 0.0011 for k in woke) >= len(woke) - 3


def test_sched_timehist_counts_wait_delay_and_run_as_perf_does(cli, tmp_path):
    t = tmp_path / "t.txt"
    t.write_text(TRACE_3001 + """\
          <idle>-0       [000] d..2.  100.007000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=helper next_pid=3002 next_prio=120
          helper-3002    [000] d..2.  100.008000: sched_switch: prev_comm=helper prev_pid=3002 prev_prio=120 prev_state=R ==> next_comm=worker next_pid=3001 next_prio=120
          worker-3001    [000] d..2.  100.009500: sched_switch: prev_comm=worker prev_pid=3001 prev_prio=120 prev_state=S ==> next_comm=helper next_pid=3002 next_prio=120
          helper-3002    [000] d..2.  100.010000: sched_switch: prev_comm=helper prev_pid=3002 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
""")
    r = cli("sched", "timehist", str(t))
    assert r.exit_code == 0, r.output
    got = [line.split() for line in r.stdout.splitlines()[3:]]
    assert got == [
        # worker ran from the trace's first instant; helper is first seen at its switch-in.
        ["100.002000", "[0000]", "worker[3001]", "0.000", "0.000", "2.000"],
        ["100.004000", "[0000]", "helper[3002]", "0.000", "0.000", "2.000"],
        # Woken at 100.003, on at 100.004: 1 ms of delay inside 2 ms off the CPU.
        ["100.006000", "[0000]", "worker[3001]", "2.000", "1.000", "2.000"],
        ["100.007000", "[0000]", "<idle>", "0.000", "0.000", "1.000"],
        # No wakeup of helper is traced: off the CPU 3 ms, no delay.
        ["100.008000", "[0000]", "helper[3002]", "3.000", "0.000", "1.000"],
        ["100.009500", "[0000]", "worker[3001]", "2.000", "0.000", "1.500"],
        # Preempted at 100.008, back at 100.0095: all of it a delay.
        ["100.010000", "[0000]", "helper[3002]", "1.500", "1.500", "0.500"],
    ]


def test_sched_map_agrees_with_perfs_own_on_a_recorded_trace(cli):
    r = cli("sched", "map", str(DATA / "perf_sched_pipe300.perf.txt.gz"))
    assert r.exit_code == 0, r.output
    pattern = re.compile(r"  (.*?)\s+(\d+\.\d{6}) secs ?(.*)$")

    def lines(text: str) -> list[tuple[str, int, int, str]]:
        out = []
        for line in text.splitlines():
            m = pattern.match(line)
            assert m, line
            # (time, starred CPU, the stamp's column, the legend)
            out.append((m.group(2), m.group(1).index("*") // 4, line.index(m.group(2)), m.group(3)))
        return out

    ours, perf = lines(r.stdout), lines(_gz_text(DATA / "perf_sched_pipe300.map.txt.gz"))
    assert len(perf) == 617 and len(ours) >= 610
    # perf attributes the 7 inconsistent switches otherwise; every other line is at the
    # same time, on the same CPU, in the same columns.
    mine = collections.Counter(x[:3] for x in ours)
    same = sum((mine & collections.Counter(x[:3] for x in perf)).values())
    assert same >= 612, sorted((collections.Counter(x[:3] for x in perf) - mine).elements())[:10]
    # Each task is named once, at its first switch-in, the idle task as perf names it.
    legends = [x[3] for x in ours if x[3]]
    assert len(legends) == len(set(legends)) and any(x.endswith("=> sched-pipe:7212") for x in legends)
    assert [x[3] for x in ours if x[0] == "9842.213582"] == [".  => swapper:0"]
    assert [x[3] for x in perf if x[0] == "9842.213582"] == [".  => swapper:0"]


def test_sched_timehist_and_map_on_a_run_add_up_to_its_tasks(cli):
    res = json.loads(schedlab.run(PINGPONG, seed=1).to_json())
    r = cli("sched", "timehist", str(PINGPONG), "--seed", "1")
    assert r.exit_code == 0, r.output
    run_ms: dict[str, float] = collections.defaultdict(float)
    lines = 0
    for line in r.stdout.splitlines()[3:]:
        f = line.split()
        run_ms[f[2]] += float(f[5])
        lines += 1
    for t in res["tasks"]:
        # Each line is truncated to the microsecond.
        assert run_ms[f"{t['name']}[{t['pid']}]"] == pytest.approx(t["run_ns"] / 1e6, abs=0.001 * lines), t["name"]
    r = cli("sched", "map", str(PINGPONG), "--seed", "1")
    assert r.exit_code == 0, r.output
    assert len(r.stdout.splitlines()) == lines  # one line per switch in both views
    r = cli("sched", "map", str(PINGPONG), "--seed", "1", "--compact")
    assert r.exit_code == 0, r.output
    first = r.stdout.splitlines()[0]
    # Only the CPUs seen so far: one cell on the first line, which names its CPU.
    assert first.startswith("  *A0   ") and first.endswith(" (CPU 4)"), first
    r = cli("sched", "map", "no-such.trace.txt")
    assert r.exit_code == 2 and r.output.strip() == "error: no-such.trace.txt: no such file"


# ------------------------------------------------------------------ rt-app's logs
RTAPP_PERIODIC = """{
  "tasks": { "tick": { "loop": -1, "run": 3000, "timer": { "ref": "t", "period": 10000 } },
             "hog": { "loop": -1, "run": 100000, "sleep": 1, "priority": 19 } },
  "global": { "duration": 1, "log_basename": "periodic" }
}
"""


def _rtapp_log(path: Path) -> tuple[str, list[list[int]]]:
    lines = path.read_text().splitlines()
    return lines[0], [[int(x) for x in line.split()] for line in lines[1:]]


def test_rtapp_logs_are_rt_apps_per_activation_lines(cli, tmp_path):
    f = tmp_path / "periodic.json"
    f.write_text(RTAPP_PERIODIC)
    logs = tmp_path / "logs"
    r = cli("run", str(f), "--machine", "topo(1,1,1,1)", "--rtapp-logs", str(logs), "--json")
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert sorted(p.name for p in logs.iterdir()) == ["periodic-hog.log", "periodic-tick.log"]
    header, rows = _rtapp_log(logs / "periodic-tick.log")
    # rt-app's header, column for column (src/rt-app.c thread_body()).
    assert header == ("#idx     perf      run   period           start             end          rel_st"
                      "      slack c_duration   c_period     wu_lat")
    assert 97 <= len(rows) <= 100
    tick = next(t for t in res["tasks"] if t["name"] == "tick")
    for i, (idx, perf, run, period, start, end, rel, slack, c_dur, c_per, wu) in enumerate(rows):
        assert (idx, perf, c_dur, c_per, rel) == (res["tasks"].index(tick), 3000, 3000, 10000, start)
        assert abs(period - (end - start)) <= 1 and (i + 1 == len(rows) or rows[i + 1][4] == end)
        # Each pass: its run, the slack left to the deadline, the wakeup's lateness (at
        # least the 50 µs timer slack of a SCHED_OTHER task; more where the hog keeps the
        # CPU a while), adding up to the period.
        assert abs(slack + run + wu - period) <= 3 and 50 <= wu < 1000, rows[i]
        # Its 3 ms of work take 3 ms or, where the hog has the CPU a while, a little more.
        assert 3000 <= run < 5000 and abs(period - 10000) < 1000, rows[i]
    runs = sorted(r[2] for r in rows)
    assert runs[len(runs) // 2] < 3100  # most passes run at once: nice 0 against nice 19
    # The grid holds: passes end on average one period apart.
    assert (rows[-1][5] - rows[0][5]) / (len(rows) - 1) == pytest.approx(10000, abs=5)
    assert sum(r[2] for r in rows) == pytest.approx(tick["run_ns"] / 1e3, rel=0.01)
    # The hog has no timer: no slack, no period of its own.
    _, hog = _rtapp_log(logs / "periodic-hog.log")
    assert hog and all(r[7] == 0 and r[9] == 0 and r[8] == 100000 for r in hog)
    # The log does not change the run.
    plain = json.loads(cli("run", str(f), "--machine", "topo(1,1,1,1)", "--json").stdout)
    assert "rtapp_logs" not in plain and plain["tasks"] == res["tasks"]


def test_rtapp_logs_of_a_scenario_without_phases_warn(cli, tmp_path):
    r = cli("run", str(PINGPONG), "--rtapp-logs", str(tmp_path / "l"))
    assert r.exit_code == 0, r.output
    assert "no task marks rt-app phases" in r.output


# ------------------------------------------------------------- trace.dat out
SWITCH_LINE = re.compile(r"\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d{9}): sched_switch:\s+(.*):(\d+) \[-?\d+\] (\S+) ==> (.*):(\d+) \[")


def _cpu_time_of_switches(report: str, end_ns: int) -> tuple[dict[int, int], int]:
    """Per-pid CPU time the sched_switch lines of `trace-cmd report -t` imply (a run from
    a switch-in to the next switch on that CPU, the last one to `end_ns`), and how many
    switches there were."""
    running: dict[int, tuple[int, int]] = {}
    cpu_time: dict[int, int] = collections.defaultdict(int)
    n = 0
    for line in report.splitlines():
        m = SWITCH_LINE.search(line)
        if not m:
            continue
        n += 1
        cpu, ts, prev, nxt = int(m[1]), int(m[2]) * 10**9 + int(m[3]), int(m[5]), int(m[8])
        if cpu in running:
            pid, since = running[cpu]
            assert pid == prev, line
            cpu_time[pid] += ts - since
        running[cpu] = (nxt, ts)
    for pid, since in running.values():
        cpu_time[pid] += end_ns - since
    cpu_time.pop(0, None)
    return dict(cpu_time), n


@pytest.mark.skipif(shutil.which("trace-cmd") is None,
                    reason="trace-cmd is not installed (Debian: apt-get install trace-cmd; .ci/run installs it)")
def test_trace_cmd_report_reads_a_runs_trace_dat_to_the_nanosecond(tmp_path):
    import subprocess

    # Sleeps past the 27-bit delta of an event header (134 ms): time extends.
    gaps = tmp_path / "gaps.toml"
    gaps.write_text('[machine]\ntopo = { cores = 2 }\n[[tasks]]\nname = "t"\nprogram = [{ run = "1ms" }, '
                    '{ sleep = "700ms" }, { run = "1ms" }, { sleep = "3s" }, { run = "2ms" }]\n[run]\nduration_s = 5\n')
    for scenario in (PINGPONG, THROTTLED, gaps):
        dat = tmp_path / f"{scenario.stem}.dat"
        res = schedlab.run(scenario, seed=1, trace=dat)
        assert not list(tmp_path.glob("*.tmp")), "the staged pages are removed"
        done = subprocess.run(["trace-cmd", "report", "-t", str(dat)], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and "sched_switch" in done.stdout, done.stderr[-2000:]
        text = tmp_path / f"{scenario.stem}.trace.txt"
        schedlab.run(scenario, seed=1, trace=text)
        doc = json.loads(res.to_json())
        cpu_time, n = _cpu_time_of_switches(done.stdout, doc["engine"]["sim_ns"])
        # Every sched_switch of the run, and the CPU time they imply is the run's own.
        assert n == text.read_text().count(": sched_switch: ") >= 6
        assert cpu_time == {t["pid"]: t["run_ns"] for t in doc["tasks"] if t["run_ns"]}, scenario.name
    # The comms come from the saved cmdlines and the events' own fields.
    assert "ping:1 [120]" in subprocess.run(["trace-cmd", "report", str(tmp_path / "pipe_pingpong.dat")],
                                            capture_output=True, text=True, timeout=300).stdout


# ------------------------------------------------------------ the compact trace
def test_a_parquet_trace_holds_every_switch_wakeup_and_idle_event(cli, tmp_path):
    from schedlab.trace_parquet import read_table

    out = tmp_path / "run.parquet"
    r = cli("run", str(THROTTLED), "--seed", "1", "--trace", str(out), "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert sorted(p.name for p in out.iterdir()) == ["idle.parquet", "meta.json", "switch.parquet", "tasks.parquet",
                                                     "wakeup.parquet"]
    assert not list(tmp_path.glob("*.staging")), "the staging rows are removed"
    text = tmp_path / "run.trace.txt"
    schedlab.run(THROTTLED, seed=1, trace=text)
    ftrace = text.read_text()
    sw, wk, idle = (read_table(out, t).to_pydict() for t in ("switch", "wakeup", "idle"))
    # The same events as the text trace, in time order.
    assert len(sw["ts"]) == ftrace.count(": sched_switch: ") > 10
    assert len(wk["ts"]) == sum(ftrace.count(f": {e}: ") for e in ("sched_waking", "sched_wakeup", "sched_wakeup_new"))
    assert len(idle["ts"]) == ftrace.count(": cpu_idle: ")
    assert sw["ts"] == sorted(sw["ts"]) and set(sw["prev_state"]) <= {"R", "S", "X"}
    # The CPU time the switches imply is each task's own, to the nanosecond.
    running: dict[int, tuple[int, int]] = {}
    cpu_time: dict[int, int] = collections.defaultdict(int)
    for ts, cpu, prev, nxt in zip(sw["ts"], sw["cpu"], sw["prev_pid"], sw["next_pid"]):
        if cpu in running:
            assert running[cpu][0] == prev
            cpu_time[prev] += ts - running[cpu][1]
        running[cpu] = (nxt, ts)
    for pid, since in running.values():
        cpu_time[pid] += doc["engine"]["sim_ns"] - since
    cpu_time.pop(0, None)
    assert dict(cpu_time) == {t["pid"]: t["run_ns"] for t in doc["tasks"] if t["run_ns"]}
    tasks = read_table(out, "tasks").to_pydict()
    assert {(p, c) for p, c in zip(tasks["pid"], tasks["comm"])} >= {(t["pid"], t["name"]) for t in doc["tasks"]}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["end_ns"] == doc["engine"]["sim_ns"] and meta["nr_cpus"] == len(doc["cpus"])
    # DuckDB reads the tables as they are.
    duckdb = pytest.importorskip("duckdb")
    # (The throttled hogs never sleep: every switch leaves them runnable.)
    n = duckdb.sql(f"SELECT count(*) FROM '{out}/switch.parquet' WHERE prev_state = 'R'").fetchall()[0][0]
    assert n == sw["prev_state"].count("R") > 0


def test_the_trace_suffixes_the_readme_names_are_taken(cli, tmp_path):
    # `--trace run.dat` was refused as an unknown suffix although the README names it.
    for name in ("run.dat", "run.parquet"):
        r = cli("run", str(PINGPONG), "--seed", "1", "--trace", str(tmp_path / name), "--max-sim-time", "10ms")
        assert r.exit_code == 3 and "stopped at its simulated-time limit" in r.output, r.output  # a partial run
        assert (tmp_path / name).exists()


# ------------------------------------------------------ exported files on real rt-app
def _rt_app(doc: dict, tmp_path: Path, seconds: int = 1) -> str:
    """Runs real rt-app on `doc` for `seconds` in tmp_path; returns its output."""
    import subprocess

    doc = json.loads(json.dumps(doc))
    doc["global"].update(duration=seconds, logdir=str(tmp_path), log_basename="run")
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc, indent=1))
    done = subprocess.run(["rt-app", str(path)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout + done.stderr


needs_rt_app = pytest.mark.skipif(shutil.which("rt-app") is None, reason="rt-app is not installed (Debian: apt-get install rt-app)")


def test_schbench_exports_without_steps_rt_app_would_skip(cli, tmp_path):
    out = tmp_path / "schbench.json"
    r = cli("export-rt-app", str(ROOT / "examples" / "schbench.toml"), "-o", str(out))
    assert r.exit_code == 0, r.output
    text = out.read_text()
    for skipped in ("schedlab.wake_all", "schedlab.post", "sem_wait", "sem_post"):
        assert skipped not in text, skipped
    # A generator with a bounded channel (hackbench's sockets) has no rt-app form.
    hb = tmp_path / "hb.toml"
    hb.write_text('[machine]\ntopo = { cores = 2 }\n[workload]\nkind = "hackbench"\nparams = { groups = 1, fds = 2 }\n'
                  '[run]\nuntil = "workload_done"\n')
    r = cli("export-rt-app", str(hb))
    assert r.exit_code == 2, r.output
    assert r.output.strip() == (f"error: {hb}: tasks.sender-0.0.program[1].loop.body[1]: step 'send' has no rt-app form "
                                "(a write to bounded channel 'hb0.0' that blocks when it is full; rt-app has no bounded "
                                "queue): not exported")


@needs_rt_app
def test_real_rt_app_runs_exported_schbench_and_a_tutorial_file_to_completion(tmp_path):
    doc, _ = to_rt_app(ROOT / "examples" / "schbench.toml")
    out = _rt_app(doc, tmp_path / "schbench" if (tmp_path / "schbench").mkdir() is None else tmp_path)
    assert "Invalid" not in out and "Unknown" not in out, out[-2000:]
    logs = list((tmp_path / "schbench").glob("run-worker-0-*.log"))
    assert len(logs) == 16
    # Workers completed requests: each log has lines past its two header lines.
    assert sum(len(p.read_text().splitlines()) - 2 for p in logs) > 0
    # A tutorial file with mem and iorun events, imported then exported.
    doc, _ = to_rt_app(schedlab.load_scenario(RTAPP / "tutorial" / "example6.json"))
    assert "mem" in json.dumps(doc) and "iorun" in json.dumps(doc)
    (tmp_path / "ex6").mkdir()
    out = _rt_app(doc, tmp_path / "ex6")
    assert "Unknown" not in out, out[-2000:]
    assert len((tmp_path / "ex6" / "run-thread0-0.log").read_text().splitlines()) > 10
