"""rt: what an RT hog leaves the fair class, before and after 6.12, and what a timer
thread's class buys it.

One CPU. ``hog-*``: a SCHED_FIFO priority-50 task that never sleeps beside a fair task
doing 1 ms units of work (``latency.fair_work.count``: units completed over the run, so
ms of fair CPU in it: 10 s, 2 s with --quick). Before 6.12 RT throttling stops the RT class for the rest of each
period once it used sched_rt_runtime_us (950 ms of 1 s): the fair task gets 50 ms a
second (``throttling-6.6``), none with ``sched_rt_runtime_us = -1``
(``unthrottled-6.6``). From 6.12 the fair deadline server (50 ms every 1 s per CPU) runs
fair tasks when RT starves them (``dl-server-6.12``), none with DL_SERVER off
(``server-off-6.12``). ``timer-*``: a cyclictest-style thread waking every 1 ms beside a
fair hog, as SCHED_FIFO 99 or SCHED_OTHER (6.12, idle states capped as cyclictest
holds /dev/cpu_dma_latency at 0): its timer wakeup latency. ``dl-*``: three
SCHED_DEADLINE tasks on the CPU, each reserving a third of 90 % (``dl-90pct-6.12``) or
110 % (``dl-110pct-6.12``) of the admissible bandwidth (sched_rt_runtime_us /
sched_rt_period_us, 950 ms of 1 s) every 1 s and working 90 % of it: at 90 % all three
are admitted and no job misses its deadline; at 110 % the third is refused with EBUSY as
sched_setattr() refuses it (``dl_refused``: it stays SCHED_OTHER, as a program that
ignores the error would) and the two admitted never miss. No published figure exists
for these: the rows are simulated figures only; the 50 ms a second is the tunables'
arithmetic (950 ms / 1 s; the server's 50 ms / 1 s), not a measurement.
"""

from __future__ import annotations

from ..registry import Metric, Source, experiment, machine_spec

NAME = "rt"
# config -> (profile, tunables, features, workload kind)
CONFIGS = {
    "throttling-6.6": ("6.6", {}, {}, "hog"),
    "unthrottled-6.6": ("6.6", {"sched_rt_runtime_us": -1}, {}, "hog"),
    "dl-server-6.12": ("6.12", {}, {}, "hog"),
    "server-off-6.12": ("6.12", {}, {"DL_SERVER": False}, "hog"),
    "timer-fifo-6.12": ("6.12", {"cpuidle_latency_req_ns": 0}, {}, "timer-fifo"),
    "timer-other-6.12": ("6.12", {"cpuidle_latency_req_ns": 0}, {}, "timer-other"),
    "dl-90pct-6.12": ("6.12", {}, {}, "dl-90"),
    "dl-110pct-6.12": ("6.12", {}, {}, "dl-110"),
}

# The admissible deadline bandwidth of one CPU, us of every 1 s: sched_rt_runtime_us
# of sched_rt_period_us (the kernel's defaults, 950,000 of 1,000,000; declared).
DL_ADMISSIBLE_US = 950_000

METRICS = [
    Metric("latency.fair_work.count", "ms", "fair task: ms of CPU over the run beside a FIFO hog"),
    Metric("summary.rt_throttles", "count", "RT throttling events"),
    Metric("summary.dl_server_picks", "count", "fair deadline server picks"),
    Metric("latency.timer_latency.p50_us", "us", "timer thread: median wakeup latency"),
    Metric("latency.timer_latency.max_us", "us", "timer thread: largest wakeup latency"),
    Metric("summary.dl_misses", "count", "deadline jobs finished after their deadline"),
    Metric("summary.dl_refused", "count", "deadline tasks refused by admission (EBUSY)"),
]


@experiment(
    name=NAME,
    title="RT beside fair on one CPU: RT throttling (<= 6.11) against the fair deadline server (6.12+), a timer thread's class, and deadline sets at 90 % and 110 % of the admissible bandwidth",
    source=Source("", "no published figure: simulated rows only",
                  merged="none: mainline's RT throttling (to v6.11) and fair deadline server (v6.12), "
                         "simulated without a published figure",
                  note="sched_rt_runtime_us / sched_rt_period_us and the fair server's 50 ms / 1 s are kernel defaults"),
    machines=["topo(1,1,1,1)"],
    configs=list(CONFIGS),
    baseline="throttling-6.6",
    metrics=METRICS,
    seeds=1,
    quick_seeds=1,
    description=__doc__.split("\n\n", 1)[1],
)
def build(machine: str, config: str, quick: bool) -> dict:
    seconds = 2.0 if quick else 10.0
    profile, tunables, features, kind = CONFIGS[config]
    if kind == "hog":
        tasks = [
            {"name": "rt-hog", "sched_attr": {"policy": "SCHED_FIFO", "priority": 50}, "program": [{"run": "1000s"}]},
            {"name": "fair", "program": [{"loop": {"body": ["mark", {"run": "1ms"}, {"record": {"histogram": "fair_work"}}]}}]},
        ]
    elif kind.startswith("dl-"):
        pct = int(kind.split("-")[1])
        runtime_us = DL_ADMISSIBLE_US * pct // 100 // 3
        work_us = runtime_us * 9 // 10
        tasks = [{"name": f"dl{i}",
                  "sched_attr": {"policy": "SCHED_DEADLINE", "runtime": f"{runtime_us}us", "period": "1s",
                                 "ebusy_stays_fair": True},
                  "program": [{"loop": {"body": [{"run": f"{work_us}us"}, {"periodic": {"period": "1s"}}]}}]}
                 for i in range(3)]
    else:
        timer = {"name": "cyclictest", "program": [{"loop": {"body": [{"periodic": {"period": "1ms"}}]}}]}
        if kind == "timer-fifo":
            timer["sched_attr"] = {"policy": "SCHED_FIFO", "priority": 99}
        tasks = [timer, {"name": "fair-hog", "program": [{"run": "1000s"}]}]
    return {
        "name": f"{NAME}-{config}",
        "machine": machine_spec(machine),
        "kernel": {"profile": profile, "tunables": tunables, "features": features},
        "tasks": tasks,
        "run": {"duration_s": seconds},
    }
