"""The rt experiment (issue 35): scenarios and rows from a real --quick run."""

from __future__ import annotations

import json

from schedlab.reproduce import get


def test_scenarios_pair_the_kernels_and_the_timer_thread_classes():
    e = get("rt")
    m = "topo(1,1,1,1)"
    assert e.scenario(m, "throttling-6.6")["tasks"] == e.scenario(m, "dl-server-6.12")["tasks"]
    fifo, other = e.scenario(m, "timer-fifo-6.12"), e.scenario(m, "timer-other-6.12")
    assert fifo["tasks"][0]["sched_attr"] == {"policy": "SCHED_FIFO", "priority": 99}
    assert "sched_attr" not in other["tasks"][0]


def test_throttling_and_the_server_leave_fair_its_share_and_fifo_wakes_sooner():
    from typer.testing import CliRunner

    from schedlab.cli import app

    r = CliRunner().invoke(app, ["reproduce", "rt", "--quick", "--json", "-j", "1"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    v = {(d["config"], d["metric"]): d["simulated_mean"] for d in json.loads(r.stdout)}
    # 2 s: 50 ms a second either way (950 ms of each 1 s period to RT; the server's 50 ms).
    assert 95 <= v[("throttling-6.6", "latency.fair_work.count")] <= 101
    assert 95 <= v[("dl-server-6.12", "latency.fair_work.count")] <= 101
    # Nothing for fair with throttling off or without the server.
    assert v.get(("unthrottled-6.6", "latency.fair_work.count")) is None
    assert v.get(("server-off-6.12", "latency.fair_work.count")) is None
    assert v[("throttling-6.6", "rt_throttles")] == 2 and v[("dl-server-6.12", "dl_server_picks")] == 2
    # A FIFO timer thread preempts the fair hog at once and sleeps with no slack.
    assert v[("timer-fifo-6.12", "latency.timer_latency.p50_us")] < 10 < v[("timer-other-6.12", "latency.timer_latency.p50_us")]


def test_deadline_sets_at_90_and_110_percent_of_the_admissible_bandwidth():
    e = get("rt")
    m = "topo(1,1,1,1)"
    # 3 x 285 ms and 3 x 348.333 ms of 950 ms every 1 s.
    runtimes = [t["sched_attr"]["runtime"] for t in e.scenario(m, "dl-90pct-6.12")["tasks"]]
    assert runtimes == ["285000us"] * 3
    assert e.scenario(m, "dl-110pct-6.12")["tasks"][0]["sched_attr"]["runtime"] == "348333us"
    from typer.testing import CliRunner

    from schedlab.cli import app

    r = CliRunner().invoke(app, ["reproduce", "rt", "--quick", "--json", "-j", "1"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    v = {(d["config"], d["metric"]): d["simulated_mean"] for d in json.loads(r.stdout)}
    # 90 %: all admitted, no miss; 110 %: the third refused (EBUSY), the others never miss.
    assert (v[("dl-90pct-6.12", "dl_refused")], v[("dl-90pct-6.12", "dl_misses")]) == (0, 0)
    assert (v[("dl-110pct-6.12", "dl_refused")], v[("dl-110pct-6.12", "dl_misses")]) == (1, 0)
