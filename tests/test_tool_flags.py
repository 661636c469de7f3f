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


# ------------------------------------------------------------- command lines that paste
# (issue 50): the tools' flags as people type them, with the real tools' formats
# (rt-tests 2.4 cyclictest and hackbench, schbench.c, dbench 4.0's tbench).

def test_cyclictest_takes_the_usual_rt_command_line(cli):
    r = cli("cyclictest", "-m", "-q", "-S", "-a", "-n", "-p", "80", "-l", "100", *SMALL)
    assert r.exit_code == 0, r.output
    # -q: the summary only, as cyclictest -q prints it: no schedlab header line.
    assert r.stdout.startswith("# /dev/cpu_dma_latency set to 0us\nT: 0 "), r.stdout
    # -S: one thread per CPU (2 here), all at -p.
    assert re.findall(r"^T: ?(\d+) \(\s*\d+\) P:(\d+) I:(\d+) C:\s*(\d+)", r.stdout, re.M) == \
        [("0", "80", "1000", "100"), ("1", "80", "1500", "100")]
    # Flags with no simulated meaning are said once each, on stderr.
    assert r.stderr.count("note: --mlockall has no effect in a simulation") == 1, r.stderr
    assert r.stderr.count("note: --nanosleep") == 1, r.stderr
    assert "# schedlab cyclictest:" in cli("cyclictest", "-l", "10", *SMALL).stdout


def _ct_json(cli, *flags: str) -> dict:
    r = cli("cyclictest", "-l", "30", *SMALL, *flags, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_cyclictest_affinity_pins_the_threads(cli):
    # -a CPUSET: every thread round-robin on the set: both on CPU 1, CPU 0 never switches.
    doc = _ct_json(cli, "-t", "2", "-a", "1")
    assert [c["nr_switches"] for c in doc["cpus"]][0] == 0 and doc["cpus"][1]["nr_switches"] > 0
    # -a alone and -S: thread N on CPU N, so each CPU runs one and nothing migrates.
    for flags in (("-t", "2", "-a"), ("-S",)):
        doc = _ct_json(cli, *flags)
        assert all(c["nr_switches"] > 0 for c in doc["cpus"]) and all(t["nr_migrations"] == 0 for t in doc["tasks"])
    r = cli("cyclictest", "-l", "10", "-a", "5", *SMALL)
    assert r.exit_code == 2 and r.stderr == "error: -a 5: CPU 5 is not on topo(1,1,2,1) (2 CPUs: 0-1)\n", r.stderr
    r = cli("cyclictest", "-l", "10", "7", *SMALL)
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "after -a only" in r.stderr, r.stderr


def test_cyclictest_threads_share_the_priority_unless_priospread(cli):
    # rt-tests 2.x: every thread at -p; --priospread steps down from it.
    assert re.findall(r"P:(\d+)", _ct(cli, "-t", "3", "-p", "80")) == ["80", "80", "80"]
    assert re.findall(r"P:(\d+)", _ct(cli, "-t", "3", "-p", "80", "--priospread")) == ["80", "79", "78"]


def test_schbench_takes_no_locking(cli):
    plain, unlocked = _sb(cli), _sb(cli, "-L")
    assert unlocked.exit_code == 0, unlocked.output
    # -L is the mode modeled: the same run; without it, a note says the lock is not modeled.
    assert plain.stdout == unlocked.stdout
    assert "per-CPU lock around the work" in plain.stderr and "per-CPU lock" not in unlocked.stderr


def test_benchmarks_warn_when_nothing_completed(cli):
    r = cli("schbench", "-t", "2000", "-r", "0.01", "-L", *SMALL)
    assert r.exit_code == 0, r.output
    assert "\t  min=0, max=0\n" in r.stdout  # schbench prints an empty block so too
    assert "warning: no request completed in 0.01 s" in r.stderr, r.stderr
    assert "warning" not in _sb(cli, "-L").stderr
    r = cli("netperf", "-l", "0.00001", *SMALL)
    assert "warning: no transaction completed" in r.stderr, r.stderr


def test_hackbench_time_is_truncated_milliseconds_as_hackbench_prints_it():
    from schedlab.toolfmt import hackbench_text

    # hackbench.c: printf("Time: %lu.%03lu\n", tv_sec, tv_usec / 1000): truncated, not rounded.
    assert hackbench_text({"workload": {"time_s": 0.048999}}, {}).endswith("Time: 0.048\n")
    assert hackbench_text({"workload": {"time_s": 1.0005}}, {}).endswith("Time: 1.000\n")
    assert hackbench_text({"workload": {"time_s": 0.048999}}, {}, precise=True).endswith("Time: 0.048999000\n")


def test_hackbench_precise_prints_the_json_figure(cli):
    args = ("hackbench", "-g", "1", "-f", "4", "-l", "200", *SMALL)
    t = json.loads(cli(*args, "--json").stdout)["workload"]["time_s"]
    r = cli(*args, "--precise")
    assert r.exit_code == 0, r.output
    assert re.search(r"^Time: (\d+\.\d{9})$", r.stdout, re.M).group(1) == f"{t:.9f}"
    assert re.search(r"^Time: (\d+\.\d{3})$", cli(*args).stdout, re.M).group(1) == f"{int(t * 1000) / 1000:.3f}"


def test_tbench_prints_throughput_in_mb_per_sec(cli):
    from schedlab.toolfmt import DBENCH_BYTES_PER_OP

    assert round(DBENCH_BYTES_PER_OP, 2) == 5428.37  # dbench 4.0 client.txt: bytes over lines
    r = cli("tbench", "2", "-t", "2", *SMALL)
    assert r.exit_code == 0, r.output
    assert "Running for 2 seconds with load 'dbench_pairs' and minimum warmup 0 secs" in r.stdout
    m = re.search(r"^Throughput ([0-9.e+]+) MB/sec  2 clients  2 procs$", r.stdout, re.M)
    assert m, r.stdout
    w = json.loads(cli("tbench", "2", "-t", "2", *SMALL, "--json").stdout)["workload"]
    # No warm-up below 5 s: the generator's ops/s times the bytes of an operation.
    assert abs(float(m.group(1)) - w["ops_per_s"] * DBENCH_BYTES_PER_OP / 1e6) < 1e-3 * float(m.group(1))
    # From 5 s the first fifth is warm-up (dbench's default): the rate of what follows it.
    r5 = cli("tbench", "2", "-t", "5", *SMALL)
    assert "minimum warmup 1 secs" in r5.stdout
    mb5 = float(re.search(r"^Throughput ([0-9.e+]+) MB/sec", r5.stdout, re.M).group(1))
    assert abs(mb5 / float(m.group(1)) - 1) < 0.05, (mb5, m.group(1))
