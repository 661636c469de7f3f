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
