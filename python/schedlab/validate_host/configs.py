"""The configurations `schedlab validate-host` runs: the probe's arguments on the host
and the same workload as a schedlab scenario.

Sizes scale with the host's CPU count C, so the same list means the same thing on a
2-CPU VM and on a 64-CPU server. A bursty thread spins `work` of CPU time, then sleeps
an exponentially distributed time of mean `sleep` (its duty cycle is work/(work+sleep)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: How much CPU time a bursty probe thread spins between two reads of its CPU-time
#: clock: spin_cpu() does 1000 additions of volatile variables, then one
#: clock_gettime(CLOCK_THREAD_CPUTIME_ID) system call (probe.c). Estimate: 1-3 ns an
#: addition plus the call; band 1-10 us. Each read runs update_curr() in the kernel
#: (task_sched_runtime()), so an EEVDF slice or a group's runtime that runs out is
#: seen within a read, not at the next tick. The figures do not move within the band
#: (docs/validate-host.md).
PROBE_CPUTIME_POLL = "3us"


def spin_cpu_ns(work_ns: float, step_ns: float, read_ns: float) -> float:
    """The CPU time probe.c's spin_cpu(work) really takes: one clock read, then whole
    steps (1000 additions and a read) until the clock has passed `work`. `step_ns` and
    `read_ns` are measured on the host by the probe's `spincal` mode (`probe_spin`)."""
    steps = max(1, math.ceil(work_ns / step_ns)) if step_ns > 0 else 1
    return read_ns + steps * step_ns


@dataclass
class Config:
    name: str
    what: str
    kind: str  # "threads", "pingpong" or "timerlat"
    threads: int = 1
    fast: int = 0  # threads that never sleep
    work_us: int = 1000
    sleep_us: int = 1000
    expo: bool = True
    pin: bool = False
    quota_us: int | None = None  # None = unlimited
    period_us: int = 100_000
    burst_us: int = 0
    rounds: int = 0

    @property
    def limited(self) -> bool:
        return self.quota_us is not None

    def probe_args(self, seconds: float, seed: int) -> list[str]:
        if self.kind == "threads":
            args = ["threads", "-t", str(self.threads), "-d", f"{seconds:g}", "-f", str(self.fast),
                    "-w", str(self.work_us), "-s", str(self.sleep_us), "-S", str(seed)]
            return args + (["-e"] if self.expo else []) + (["-p"] if self.pin else [])
        if self.kind == "pingpong":
            return ["pingpong", "-r", str(self.rounds), "-w", str(self.work_us)]
        return ["timerlat", "-r", str(self.rounds), "-s", str(self.sleep_us)]


def configurations(c: int) -> list[Config]:
    """The bandwidth configurations and the latency probes for a host of `c` CPUs."""
    q = 100_000  # the default period, us
    return [
        Config("unlimited", f"{2 * c} bursty threads (2 ms / 3 ms), no limit: demand 0.8 C",
               "threads", threads=2 * c, work_us=2000, sleep_us=3000),
        Config("quota-below-demand", f"{2 * c} bursty threads (2 ms / 3 ms) under C/2 CPUs",
               "threads", threads=2 * c, work_us=2000, sleep_us=3000, quota_us=q * c // 2),
        Config("quota-above-demand", f"{2 * c} bursty threads (1 ms / 9 ms): demand 0.2 C, limit C/2",
               "threads", threads=2 * c, work_us=1000, sleep_us=9000, quota_us=q * c // 2),
        Config("no-burst", f"{c} bursty threads (10 ms / 40 ms): demand 0.2 C, limit C/4",
               "threads", threads=c, work_us=10_000, sleep_us=40_000, quota_us=q * c // 4),
        Config("burst", "as no-burst, with cpu.cfs_burst_us = the quota",
               "threads", threads=c, work_us=10_000, sleep_us=40_000, quota_us=q * c // 4, burst_us=q * c // 4),
        Config("short-period", f"{2 * c} bursty threads (1 ms / 4 ms) under C/4 CPUs, 10 ms period",
               "threads", threads=2 * c, work_us=1000, sleep_us=4000, quota_us=10_000 * c // 4, period_us=10_000),
        Config("many-threads", f"{16 * c} bursty threads (1 ms / 31 ms): demand C/2, limit 3C/8",
               "threads", threads=16 * c, work_us=1000, sleep_us=31_000, quota_us=q * 3 * c // 8),
        Config("cpu-bound", f"{2 * c} CPU-bound threads under C/2 CPUs",
               "threads", threads=2 * c, fast=2 * c, quota_us=q * c // 2),
        Config("cpu-bound-unlimited", f"{c + 1} CPU-bound threads, no limit: one CPU shared by two",
               "threads", threads=c + 1, fast=c + 1),
        Config("fibtest", f"fibtest -t {c}: a fast thread on CPU 0, slow ones (1 us / 10 ms) on the others, 10 ms / 100 ms",
               "threads", threads=c, fast=1, work_us=1, sleep_us=10_000, expo=False, pin=True, quota_us=10_000),
        Config("pipe-pingpong", "two threads passing a byte through two pipes (1 us of work a side)",
               "pingpong", work_us=1, rounds=20_000),
        Config("timer-1ms", "one thread sleeping 1 ms, 2000 times: how late it wakes",
               "timerlat", sleep_us=1000, rounds=2000),
    ]


def scenario(cfg: Config, host_profile: str, hz: int | None, seconds: float, nr_cpus: int,
             spin: dict[str, float] | None = None) -> dict[str, Any]:
    """The configuration as a schedlab scenario on the host's own topology (`nr_cpus`
    online CPUs): the same threads, limits, pinning and length as the probe's. `spin`
    (the probe's `spincal`: step_ns, read_ns) replaces the estimated clock-read interval
    with the measured one, and the pingpong's work with what spin_cpu() really spins."""
    kernel: dict[str, Any] = {"profile": host_profile}
    if hz:
        kernel["tunables"] = {"hz": hz}
    doc: dict[str, Any] = {"name": f"validate-host:{cfg.name}", "machine": {"host": True}, "kernel": kernel}
    group: dict[str, Any] = {"name": "probe"}
    if cfg.limited:
        group.update(cfs_quota_us=cfg.quota_us, cfs_period_us=cfg.period_us)
        if cfg.burst_us:
            group["cfs_burst_us"] = cfg.burst_us
    doc["groups"] = [group]

    def us(v: int) -> str:
        return f"{v}us"

    if cfg.kind == "threads":
        sleep = {"sleep_exp" if cfg.expo else "sleep": us(cfg.sleep_us)}
        slow = [{"loop": {"body": [{"run": us(cfg.work_us)}, sleep]}}]
        fast = [{"run": "100000s"}]
        tasks = []
        for i in range(cfg.threads):
            t: dict[str, Any] = {"name": f"t{i}", "group": "probe", "program": fast if i < cfg.fast else slow}
            if i >= cfg.fast:
                # probe.c's spin_cpu() reads CLOCK_THREAD_CPUTIME_ID every 1000 additions
                # (the fast threads, spin_cpu(0), never do): see PROBE_CPUTIME_POLL.
                t["cputime_poll"] = f"{round(spin['step_ns'])}ns" if spin else PROBE_CPUTIME_POLL
            if cfg.pin:
                t["affinity"] = str(i % nr_cpus)  # the probe's -p
            tasks.append(t)
        doc["tasks"] = tasks
        doc["run"] = {"duration_s": seconds}
    elif cfg.kind == "pingpong":
        work = f"{round(spin_cpu_ns(cfg.work_us * 1000, spin['step_ns'], spin['read_ns']))}ns" if spin else us(cfg.work_us)
        doc["workload"] = {"kind": "pingpong", "params": {"rounds": cfg.rounds, "work": work, "threads": True}}
        doc["run"] = {"until": "workload_done"}
    else:
        body = [{"sleep": us(cfg.sleep_us)}]
        doc["tasks"] = [{"name": "timerlat", "group": "probe", "program": [{"loop": {"count": cfg.rounds, "body": body}}]}]
        doc["run"] = {"until": "workload_done"}
    return doc
