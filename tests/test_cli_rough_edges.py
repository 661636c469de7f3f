"""Rough edges a new user hit (issue 33), each pinned by a test that fails without its fix:
SIGTERM/SIGHUP handled like Ctrl-C, `sweep --limit` a normal partial run, rates in
per-second units, hackbench/schbench JSON deterministic."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, fake_result

PINGPONG = (ROOT / "examples" / "pipe_pingpong.toml").read_text()


def long_pingpong(tmp_path: Path) -> Path:
    """The pingpong example, long enough (minutes) to be stopped while it runs."""
    p = tmp_path / "long.toml"
    p.write_text(PINGPONG.replace("count = 20000", "count = 200000000"))
    return p


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _start(args: list[str], tmp_path: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "schedlab", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_workers(proc: subprocess.Popen, n: int, timeout: float = 60.0) -> list[int]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        kids = [c for c in _children(proc.pid) if _alive(c)]
        if len(kids) >= n:
            time.sleep(1.0)  # the workers are into their runs
            return kids
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError("the workers never started")


@pytest.mark.parametrize("sig,status", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_run_several_seeds_stops_on_signal_with_partial_result(tmp_path, sig, status):
    scen = long_pingpong(tmp_path)
    proc = _start(["run", str(scen), "--seed", "1", "--seed", "2", "--seed", "3", "-j", "2"], tmp_path)
    workers = _wait_for_workers(proc, 2)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "interrupted" in err
    assert "seed 1" in out and "engine.stopped_by" in out  # the partial result is printed
    time.sleep(0.5)
    assert not [w for w in workers if _alive(w)], "pool workers left running"


def test_sweep_stops_on_sigterm_and_ends_its_workers(tmp_path):
    scen = long_pingpong(tmp_path)
    spec = tmp_path / "s.toml"
    spec.write_text(f'name = "long"\nbase = "{scen}"\nseeds = [1, 2, 3, 4]\n\n[parameters]\n'
                    '"kernel.profile" = ["6.5", "6.6"]\n')
    proc = _start(["sweep", str(spec), "-j", "2"], tmp_path)
    workers = _wait_for_workers(proc, 2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "computed now" in out and "interrupted" in err  # the partial outcome, then why
    time.sleep(0.5)
    assert not [w for w in workers if _alive(w)], "pool workers left running"


def test_sweep_limit_is_a_normal_partial_run(cli, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(f'name = "small"\nbase = "{ROOT / "examples" / "two_hogs_one_cpu.toml"}"\nseeds = [1, 2]\n\n'
                    '[set]\n"run.duration_s" = 0.05\n\n[parameters]\n"kernel.profile" = ["6.5", "6.6"]\n')
    r = cli("sweep", spec, "--limit", "3", "-j", "1")
    assert r.exit_code == 0, r.output
    assert "stopped at --limit 3: 1 of 4 runs left" in r.stdout
    r = cli("sweep", spec, "-j", "1")  # the rest, then complete
    assert r.exit_code == 0, r.output
    assert "report:" in r.stdout


def test_rate_histograms_are_per_second_not_microseconds():
    from schedlab.figures import figures

    raw = fake_result()
    raw["histograms"] = {
        "req": {"count": 4, "mean_ns": 2000, "p50_ns": 1500, "p90_ns": 3000, "p99_ns": 3500, "p999_ns": 3500,
                "max_ns": 3600, "min_ns": 900, "p20_ns": 1000},
        "req_per_second": {"count": 10, "mean_ns": 5551, "p20_ns": 5000, "p50_ns": 5551, "p90_ns": 6000,
                           "p99_ns": 6100, "p999_ns": 6100, "min_ns": 4000, "max_ns": 6100},
    }
    f = figures(raw)
    assert f["rate.req.p50_per_s"] == 5551 and f["rate.req.bins"] == 10
    assert f["latency.req.p50_us"] == 1.5
    assert not [k for k in f if k.startswith("latency.req_per_second")]


@pytest.mark.parametrize("tool,args", [("hackbench", ["-g", "1", "-f", "2", "-l", "5"]),
                                       ("schbench", ["-m", "1", "-t", "2", "-r", "0.02"])])
def test_tool_json_is_deterministic(cli, tool, args):
    a = cli(tool, *args, "--machine", "topo(1,1,2,1)", "--json")
    b = cli(tool, *args, "--machine", "topo(1,1,2,1)", "--json")
    assert a.exit_code == 0, a.output
    assert "wall_ns" not in json.loads(a.stdout)["engine"]
    assert a.stdout == b.stdout


def test_result_keeps_wall_time_apart():
    from schedlab.results import Result

    r = Result(fake_result(wall_ns=77))
    assert "wall_ns" not in r.raw["engine"] and r.wall_ns == 77
    assert json.loads(r.to_json(wall_time=True))["engine"]["wall_ns"] == 77


# -------------------------------------------------------------------------- reports
def test_series_colours_are_all_different():
    from schedlab.report.page import PALETTE, series_colors

    assert series_colors(3) == list(PALETTE[:3])
    for n in (8, 9, 12, 30):
        assert len(set(series_colors(n))) == n


def test_latency_cdf_crosses_one_half_at_the_tables_p50():
    from schedlab.report.run import latency_cdf

    # Coarse buckets say 60 % are <= 1 us; the histogram's own p50 is 1.5 us.
    hist = {"buckets": [[1000, 6], [2000, 4]], "p50_ns": 1500, "p90_ns": 1900, "p99_ns": 2000}
    xs, ys = latency_cdf(hist)
    first = next(x for x, y in zip(xs, ys) if y >= 0.5)
    assert first == 1.5
    assert ys == sorted(ys) and ys[-1] == 1.0


def test_sweep_report_says_its_table_shows_top_and_bottom(tmp_path):
    import pandas as pd

    from schedlab.report.sweep import _extremes

    df = pd.DataFrame({"param.n": list(range(20)), "m": [float(i) for i in range(20)]})
    headers, rows, shown, total = _extremes(df, "m", ["param.n"])
    assert (shown, total) == (10, 20)
    assert ["…", "…", "…", "…"] in rows  # the gap between the top 5 and the bottom 5


def test_timeline_axis_is_simulated_time(tmp_path):
    import schedlab
    from schedlab.report.run import run_report

    s = schedlab.load_scenario(ROOT / "examples" / "pipe_pingpong.toml")
    trace = tmp_path / "t.perfetto.json"
    res = schedlab.run(s, seed=1, trace=trace)
    run_report(tmp_path, [res.raw], trace)
    html = (tmp_path / "report.html").read_text()
    assert "time since" not in html and "simulated time (" in html


# ------------------------------------------------------------- progress, large inputs
def test_long_run_logs_progress_when_not_on_a_terminal():
    import io

    from schedlab._progress import RunProgress

    log = io.StringIO()
    with RunProgress("big seed 1", every_s=0.0, enabled=False, stream=log) as p:
        p(0.25)
        p(float("nan"))  # a run that ends with its workload: no fraction, events only
    lines = log.getvalue().splitlines()
    assert "big seed 1: 25% of the simulated time, 1 million events so far" in lines[0]
    assert lines[1].endswith("big seed 1: 2 million events so far")


def test_large_file_refused_before_it_is_parsed(cli, tmp_path):
    big = tmp_path / "big.toml"
    task = '[[tasks]]\nname = "t{i}"\nprogram = [ {{ run = "1ms" }} ]\n'
    big.write_text('name = "big"\n[machine]\npreset = "bergamo"\n' + "".join(task.format(i=i) for i in range(30000)))
    r = cli("run", big, "--max-memory", "64MiB")
    assert r.exit_code == 2
    assert "needs about" in r.output and "to read" in r.output and "64.0 MiB" in r.output


# -------------------------------------------------------- parameters, silent clamps
def test_workloads_lists_every_swap_bench_parameter(cli):
    r = cli("workloads", "swap_bench", "--json")
    names = {p["name"] for p in json.loads(r.stdout)["params"]}
    assert {"memory_reclaim", "mapper_run", "mapper_sleep", "extra_mappers", "cpu"} <= names


@pytest.mark.parametrize("cost,expect", [
    ("miss_parallelism = 0", "miss_parallelism' must be at least 1"),
    ('"cache.llc_kib" = 1e30', "must be a whole number up to 2^53, got 1e30"),
    ("smt_slowdown = -1e300", "got -1e300"),
])
def test_cost_overrides_not_clamped_in_silence(cli, tmp_path, cost, expect):
    scen = tmp_path / "c.toml"
    scen.write_text(PINGPONG.replace('topo = { sockets = 1, llcs = 2, cores = 4, smt = 2 }',
                                     f'topo = {{ sockets = 1, llcs = 2, cores = 4, smt = 2 }}\ncost = {{ {cost} }}'))
    r = cli("run", scen)
    assert r.exit_code == 2, r.output
    assert expect in r.output and "18446744073709551615" not in r.output and len(r.output) < 400


def test_run_takes_set_profile_feature(cli):
    r = cli("run", "examples/pipe_pingpong.toml", "--seed", "1", "--json", "--profile", "6.5", "--feature", "SIS_NODE=0",
            "--set", "tasks.ping.program.0.loop.count=50", "--set", "tasks.pong.program.0.loop.count=50")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["kernel"]["version"] == {"major": 6, "minor": 5} and doc["features"]["SIS_NODE"] is False
    assert doc["summary"]["context_switches"] < 1000  # 50 rounds, not 20000


def test_help_shows_no_bool_type_and_no_broken_lines(cli):
    r = cli("run", "--help")
    assert "<bool>" not in r.output
    assert "prints what it has" in " ".join(r.output.split())
    h = cli("hackbench", "--help")
    assert "``" not in h.output


def test_a_phone_says_it_runs_schedutil_and_eas_by_default(cli):
    """Issue 50: the phone presets default to the governor their kernels ship with."""
    r = cli("machines", "pixel6")
    assert r.exit_code == 0, r.output
    assert "cpufreq governor: schedutil (its kernel's default), with energy-aware scheduling" in " ".join(r.stdout.split())
    doc = json.loads(cli("machines", "snapdragon-888", "--json").stdout)
    assert (doc["governor"], doc["energy_model"]) == ("schedutil", False)
    assert json.loads(cli("machines", "xeon-80", "--json").stdout)["governor"] == "performance"
