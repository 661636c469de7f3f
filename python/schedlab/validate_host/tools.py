"""rt-tests beside the probes: cyclictest's timer wakeup latency and hackbench's
``Time:``, each run on the host (in a fresh cgroup, as the probes are) and in schedlab
with the same parameters.

- cyclictest (rt-tests ``src/cyclictest/cyclictest.c``): ``-t N`` threads, each
  sleeping with clock_nanosleep(TIMER_ABSTIME) to the next multiple of ``-i`` µs, ``-l``
  times, measuring how late each wakeup is. Run with ``--policy=other`` (SCHED_OTHER):
  schedlab has no SCHED_FIFO yet (issue 34), so the comparison is of the fair class,
  whose hrtimer sleeps carry the task's 50 µs timer slack. ``-h`` gives the per-µs
  histogram (and sets the threads' distance to 0). schedlab: the same threads as
  ``periodic`` steps (absolute grid) and the engine's ``timer_latency`` histogram,
  measured as cyclictest measures (user code running again minus the due time).
- hackbench (rt-tests ``src/hackbench/hackbench.c``): its ``Time:`` line against
  ``schedlab hackbench`` (the ``hackbench`` generator) with the same flags.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from .host import CgroupAccess, child_cpu_ns, cpu_busy_ns

# Histogram range of cyclictest's -h, µs: wakeups later than this count as overflows.
HIST_MAX_US = 10_000


@dataclass
class Tool:
    name: str
    what: str
    binary: str  # the rt-tests program
    args: dict[str, Any] = field(default_factory=dict)

    def command(self, seconds: float, json_path: str = "") -> list[str]:
        a = self.args
        if self.binary == "cyclictest":
            loops = max(1, int(round(seconds * 1e6 / a["interval_us"])))
            policy = ["-p", str(a["priority"])] if a.get("priority") else ["--policy=other"]
            return ["cyclictest", "-q", "-m", *policy, "-t", str(a["threads"]), "-i", str(a["interval_us"]),
                    "-l", str(loops), "-h", str(HIST_MAX_US), f"--json={json_path}"]
        cmd = ["hackbench", "-g", str(a["groups"]), "-f", str(a["fds"]), "-l", str(a["loops"]), "-s", str(a["datasize"])]
        if a.get("pipe"):
            cmd.append("-p")
        cmd.append("-T" if a.get("threads") else "-P")
        return cmd


def tools(nr_cpus: int) -> list[Tool]:
    """cyclictest with one thread per CPU at 1 ms; hackbench as processes and as threads
    (rt-tests' defaults but 4 groups: about 0.1 s on 2 CPUs)."""
    hb = {"groups": 4, "fds": 20, "loops": 100, "datasize": 100, "pipe": False}
    return [
        Tool("cyclictest", f"cyclictest -t {nr_cpus} -i 1000 --policy=other: timer wakeup latency as SCHED_OTHER",
             "cyclictest", {"threads": nr_cpus, "interval_us": 1000}),
        Tool("cyclictest-fifo", f"cyclictest -t {nr_cpus} -i 1000 -p 99: timer wakeup latency as SCHED_FIFO 99 (-h: every thread at 99)",
             "cyclictest", {"threads": nr_cpus, "interval_us": 1000, "priority": 99}),
        Tool("hackbench", "hackbench -g 4 -P: 160 processes over sockets", "hackbench", dict(hb, threads=False)),
        Tool("hackbench-threads", "hackbench -g 4 -T: the same as threads of one process", "hackbench", dict(hb, threads=True)),
    ]


def available(tool: Tool) -> str | None:
    """None if the program is installed, else why not."""
    if shutil.which(tool.binary) is None:
        return f"{tool.binary} is not installed (Debian: apt-get install rt-tests)"
    return None


# ------------------------------------------------------------------ the host side
def run_tool(tool: Tool, access: CgroupAccess, seconds: float) -> dict[str, Any]:
    """Runs the tool once in a fresh cgroup; returns its figures' raw material, the CPU
    time it used and the CPU time the rest of the host used meanwhile."""
    from .configs import Config
    from .probe import Cgroup, ProbeError

    cg = Cgroup(access, f"schedlab-{os.getpid()}-{tool.name}")
    with tempfile.TemporaryDirectory(prefix="schedlab-tool-") as tmp:
        json_path = os.path.join(tmp, "out.json")
        try:
            cg.set_limits(Config(tool.name, tool.what, "tool"))
            rt = cg.path / "cpu.rt_runtime_us"
            if tool.binary == "cyclictest" and rt.exists():
                # A new v1 group has no RT runtime (CONFIG_RT_GROUP_SCHED): cyclictest's
                # check_privs() tries SCHED_FIFO once before measuring. 10 ms a second lets
                # the check pass for SCHED_OTHER threads; FIFO threads get 100 ms (they use
                # a few us per ms). The groups' sum must stay under the root's 950 ms, and
                # a removed group's share may not be back yet: EINVAL says so.
                try:
                    rt.write_text("100000" if tool.args.get("priority") else "10000")
                except OSError as e:
                    raise ProbeError(f"{rt}: the RT runtime was refused ({e.strerror}); other groups hold it") from e
            procs = cg.procs_file()

            def enter() -> None:
                with open(procs, "w") as f:
                    f.write(str(os.getpid()))

            cmd = tool.command(seconds, json_path)
            busy0, own0, t0 = cpu_busy_ns(), child_cpu_ns(), time.monotonic_ns()
            done = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=enter, timeout=max(120.0, 30 * seconds), cwd=tmp)
            busy1, own1, t1 = cpu_busy_ns(), child_cpu_ns(), time.monotonic_ns()
            if done.returncode != 0:
                raise ProbeError(f"{' '.join(cmd)} exited with {done.returncode}: {done.stderr.strip()[-300:]}")
            out: dict[str, Any] = {"command": cmd, "elapsed_ns": t1 - t0, "cpu_ns": own1 - own0}
            if busy0 is not None and busy1 is not None:
                out["others_cpu_ns"] = max(0, busy1 - busy0 - out["cpu_ns"])
            if tool.binary == "cyclictest":
                out["cyclictest"] = json.loads(open(json_path).read())
            else:
                out["stdout"] = done.stdout
            return out
        finally:
            cg.remove()


def hackbench_time(stdout: str) -> float | None:
    """Seconds of hackbench's ``Time: 0.345`` line."""
    m = re.search(r"^Time:\s*([0-9.]+)", stdout, re.M)
    return float(m.group(1)) if m else None


def _percentile(hist: dict[int, int], overflow: int, q: float) -> float:
    """The q-quantile (µs) of a per-µs histogram whose `overflow` samples lie beyond it."""
    n = sum(hist.values()) + overflow
    rank = q * n
    seen = 0
    for us in sorted(hist):
        seen += hist[us]
        if seen >= rank:
            return float(us)
    return float(HIST_MAX_US)  # in the overflow: a lower bound


def real_figures(tool: Tool, m: dict[str, Any]) -> dict[str, float]:
    if tool.binary == "hackbench":
        t = hackbench_time(m.get("stdout", ""))
        return {} if t is None else {"time_s": t}
    threads = m["cyclictest"]["thread"].values()
    hist: dict[int, int] = {}
    cycles = 0
    for th in threads:
        cycles += int(th["cycles"])
        for us, n in th.get("histogram", {}).items():
            hist[int(us)] = hist.get(int(us), 0) + int(n)
    overflow = max(0, cycles - sum(hist.values()))
    mean = sum(float(th["avg"]) * int(th["cycles"]) for th in threads) / max(1, cycles)
    return {"samples": float(cycles), "min_us": float(min(th["min"] for th in threads)), "mean_us": mean,
            "p50_us": _percentile(hist, overflow, 0.50), "p99_us": _percentile(hist, overflow, 0.99),
            "max_us": float(max(th["max"] for th in threads))}


# ------------------------------------------------------------------ the simulated side
def scenario(tool: Tool, profile: str, hz: int | None, seconds: float) -> dict[str, Any]:
    kernel: dict[str, Any] = {"profile": profile}
    if hz:
        kernel["tunables"] = {"hz": hz}
    doc: dict[str, Any] = {"name": f"validate-host:{tool.name}", "machine": {"host": True}, "kernel": kernel}
    a = tool.args
    if tool.binary == "cyclictest":
        # set_latency_target(): cyclictest holds /dev/cpu_dma_latency at 0 while it runs
        # (as `schedlab cyclictest` models it unless --laptop): a cpuidle driver then
        # keeps its CPUs in POLL; without one the halt cannot be refused.
        kernel.setdefault("tunables", {})["cpuidle_latency_req_ns"] = 0
        loops = max(1, int(round(seconds * 1e6 / a["interval_us"])))
        # -h sets every thread's interval to -i (distance 0).
        body = [{"periodic": {"period": f"{a['interval_us']}us"}}]
        task = {"name": "cyclictest", "count": a["threads"], "program": [{"loop": {"count": loops, "body": body}}]}
        if a.get("priority"):
            task["sched_attr"] = {"policy": "SCHED_FIFO", "priority": a["priority"]}
        doc["tasks"] = [task]
        doc["run"] = {"until": "workload_done"}
    else:
        params = {k: a[k] for k in ("groups", "fds", "loops", "datasize", "pipe", "threads")}
        doc["workload"] = {"kind": "hackbench", "params": params}
        doc["run"] = {"until": "workload_done"}
    return doc


def sim_figures(tool: Tool, raw: dict[str, Any]) -> dict[str, float]:
    if tool.binary == "hackbench":
        t = raw.get("workload", {}).get("time_s")
        return {} if t is None else {"time_s": float(t)}
    h = raw["histograms"]["timer_latency"]
    return {"samples": float(h["count"]), "min_us": h["min_ns"] / 1e3, "mean_us": h["mean_ns"] / 1e3,
            "p50_us": h["p50_ns"] / 1e3, "p99_us": h["p99_ns"] / 1e3, "max_us": h["max_ns"] / 1e3}


METRICS = [
    ("time_s", "s", "hackbench's Time: from the start signal to the last worker reaped"),
    ("samples", "", "wakeups measured, all threads"),
    ("min_us", "us", "earliest wakeup after its due time"),
    ("mean_us", "us", "mean wakeup latency"),
    ("p50_us", "us", "median wakeup latency"),
    ("p99_us", "us", "99th percentile"),
    ("max_us", "us", "latest wakeup"),
]
