"""A deadlocked run says when the deadlock began: the last time a task blocked or
exited, not when the engine's check (a background timer's, at most once a simulated
second) noticed it."""

from __future__ import annotations

import schedlab

# a and b each wait for the other's signal: both are blocked from 2 ms on.
DEADLOCK = """
[machine]
topo = { sockets = 1, llcs = 1, cores = 2, smt = 1 }
[[tasks]]
name = "a"
program = [{ run = "2ms" }, { wait = "x" }, { signal = "y" }]
[[tasks]]
name = "b"
program = [{ run = "1ms" }, { wait = "y" }, { signal = "x" }]
[run]
duration_s = 5
"""


def test_deadlock_time_is_when_the_last_task_blocked(cli, tmp_path):
    path = tmp_path / "dl.toml"
    path.write_text(DEADLOCK)
    eng = schedlab.run(schedlab.load_scenario(path), seed=1).raw["engine"]
    assert eng["stopped_by"] == "deadlock"
    # Noticed later (the watchdog's check), begun as a blocked after its 2 ms of work.
    assert eng["sim_ns"] > 100_000_000
    assert 2_000_000 <= eng["deadlock_ns"] < 2_100_000
    r = cli("run", str(path))
    line = next(x for x in r.output.splitlines() if "deadlocked at" in x)
    assert "deadlocked at 0.002" in line, line
