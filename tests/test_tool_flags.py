"""`schedlab hackbench` and `schedlab schbench` take their tools' flags and model them as
the tools do: hackbench's -T / -P (rt-tests src/hackbench/hackbench.c: getopt keeps the
last), schbench's -R, -w, -A and -p (github.com/masoncl/schbench schbench.c)."""

from __future__ import annotations

import json
import re

SMALL = ("--machine", "topo(1,1,2,1)")


def _hb(cli, *flags: str) -> dict:
    r = cli("hackbench", "-g", "2", "-f", "4", "-l", "50", *SMALL, *flags, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    doc["engine"].pop("wall_ns", None)  # the host's time, not the run's
    return doc


def test_hackbench_threads_and_processes_are_different_runs(cli):
    procs, threads = _hb(cli), _hb(cli, "-T")
    # A thread's exit does not tear down an address space: the threaded run is shorter.
    assert threads["workload"]["time_s"] < procs["workload"]["time_s"]
    assert _hb(cli, "-P") == procs
    # getopt keeps the last of -T and -P.
    assert _hb(cli, "-T", "-P") == procs and _hb(cli, "-P", "-T") == threads
    r = cli("hackbench", "-g", "1", "-f", "2", "-l", "5", *SMALL, "-P", "-T")
    assert r.stdout.startswith("Running in threaded mode"), r.stdout


def _sb(cli, *flags: str):
    return cli("schbench", "-m", "1", "-t", "2", "-r", "1", *SMALL, *flags)


def test_schbench_requests_per_second(cli):
    r = cli("schbench", "-m", "1", "-t", "2", "-r", "2", *SMALL, "-R", "100", "--json")
    assert r.exit_code == 0, r.output
    w = json.loads(r.stdout)["workload"]
    # 100 requests posted each second, each run once: the rate is the one asked for.
    assert w["rps"] == 100.0
    # A worker records a wakeup once per second (it slept once), a request per request.
    assert w["wakeup_samples"] <= 2 * 2 + 2 and w["request_samples"] == 200


def test_schbench_pipe_mode_reports_transfers(cli):
    r = _sb(cli, "-p", "4096")
    assert r.exit_code == 0, r.output
    assert "Request Latencies" not in r.stdout
    m = re.search(r"^avg worker transfer: ([0-9.]+) ops/sec ([0-9.]+)(B|KB|MB|GB)/s$", r.stdout, re.M)
    assert m and float(m.group(1)) > 0, r.stdout
    assert re.search(r"^\t  20\.0th: \d+", r.stdout, re.M), r.stdout


def test_schbench_warmup_is_ignored_below_30_s_as_schbench_does(cli):
    a, b = _sb(cli), _sb(cli, "-w", "5")
    assert b.exit_code == 0, b.output
    assert a.stdout == b.stdout
    # With 30 s and more it resets the statistics after the warm-up: [run] warmup_s, so
    # the samples cover the last 25 s only.
    full = cli("schbench", "-m", "1", "-t", "2", "-r", "30", "-n", "1", *SMALL, "--json")
    warm = cli("schbench", "-m", "1", "-t", "2", "-r", "30", "-n", "1", *SMALL, "-w", "5", "--json")
    assert full.exit_code == 0 and warm.exit_code == 0, warm.output
    f, w = json.loads(full.stdout), json.loads(warm.stdout)
    assert w["engine"]["sim_ns"] == 30_000_000_000
    ratio = w["workload"]["request_samples"] / f["workload"]["request_samples"]
    assert 0.75 < ratio < 0.92, ratio


def test_schbench_auto_rps_settles_on_a_rate(cli):
    r = cli("schbench", "-m", "1", "-t", "2", "-r", "1", *SMALL, "-A", "50")
    assert r.exit_code == 0, r.output
    m = re.search(r"^final rps goal was (\d+)$", r.stdout, re.M)
    assert m, r.stdout
    # 2 CPUs half busy with requests of ~5.6 ms (-F 256 -n 5) and a 100 us sleep: about
    # one CPU's worth, 1 / 5.7 ms = 175 requests a second.
    assert 120 <= int(m.group(1)) <= 230, m.group(0)


def _ct(cli, *flags: str) -> str:
    r = cli("cyclictest", "-l", "300", *SMALL, *flags)
    assert r.exit_code == 0, r.output
    return r.stdout


def test_cyclictest_prints_a_line_per_thread_and_a_histogram_that_sums_to_the_cycles(cli):
    out = _ct(cli, "-t", "2", "-p", "80", "-h", "400")
    stats = re.findall(r"^T: ?(\d+) \(\s*(\d+)\) P:(\d+) I:(\d+) C:\s*(\d+) Min:\s*(\d+) Act:\s*(\d+) Avg:\s*(\d+) Max:\s*(\d+)$", out, re.M)
    # -h: every thread at -p (without it, thread i at -p minus i).
    assert [(t[0], t[2], t[3], t[4]) for t in stats] == [("0", "80", "1000", "300"), ("1", "80", "1000", "300")]
    rows = [line.split() for line in out.splitlines() if re.match(r"^\d{6} ", line)]
    assert len(rows) == 400 and [r[0] for r in rows[:2]] == ["000000", "000001"]
    totals = [sum(int(r[1 + j]) for r in rows) for j in range(2)]
    overflows = [int(x) for x in re.search(r"^# Histogram Overflows: (.*)$", out, re.M).group(1).split()]
    # Every cycle is counted once: in a 1-us bin below -h, or as an overflow.
    assert [t + o for t, o in zip(totals, overflows)] == [300, 300]
    for t in stats:
        mn, avg, mx = int(t[5]), int(t[7]), int(t[8])
        assert mn <= avg <= mx


def test_cyclictest_distance_spreads_the_intervals_unless_a_histogram_is_asked(cli):
    assert re.findall(r"I:(\d+)", _ct(cli, "-t", "3")) == ["1000", "1500", "2000"]
    assert re.findall(r"I:(\d+)", _ct(cli, "-t", "3", "-h", "10")) == ["1000", "1000", "1000"]
    r = cli("cyclictest", "--policy", "rr", *SMALL)
    assert r.exit_code == 2 and "needs a priority" in r.output
