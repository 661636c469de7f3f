"""This host's background, measured: ``schedlab validate-host --record-background FILE``.

Every thread's ``/proc/<pid>/task/<tid>/schedstat`` (CPU time run, and the times it was
switched in) is read at the start and the end of an interval while the recorder sleeps;
the threads are grouped into sources by name (digits written N), scheduling policy and
pinning. A source's wakeups per second are its switch-ins over the interval, its run per
wakeup its CPU time over them. The file written is a profile a scenario names
(``[kernel] background_profile = "FILE"``, docs/scenario.md): each source becomes threads
waking at that rate in the model (workload/background.rs ``profile_tasks``).

Left out, and said so in the file: the recorder's own threads; the per-CPU work that
``background = "kernel"`` models by mechanism (the vmstat kworkers, the stoppers,
kcompactd); and threads that exited during the interval (their counts are gone with
them). Threads
started during it count from zero. Interrupts and softirqs per CPU, and the interruptions
a busy loop sees, are recorded as comments: the model has no sources for them yet.
"""

from __future__ import annotations

import gc
import os
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

PF_KTHREAD = 0x00200000
POLICIES = {0: "SCHED_OTHER", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH", 5: "SCHED_IDLE", 6: "SCHED_DEADLINE"}
# What background = "kernel" models by mechanism (workload/background.rs): left out of a
# profile so that the two together count each wakeup once.
MODELED = (re.compile(r"^kworker/N:N[H]?-mm_percpu_wq$"), re.compile(r"^migration/N$"), re.compile(r"^kcompactdN$"))


@dataclass(frozen=True)
class Thread:
    comm: str
    run_ns: int
    switches: int
    policy: int
    rt_priority: int
    nice: int
    kthread: bool
    cpus: str
    start: int


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def threads(exclude_pid: int | None = None) -> dict[tuple[int, int], Thread]:
    """Every thread of the host now, by (pid, tid)."""
    out: dict[tuple[int, int], Thread] = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == exclude_pid:
            continue
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            base = f"/proc/{pid}/task/{tid}"
            sched, stat, comm, status = (_read(f"{base}/{f}") for f in ("schedstat", "stat", "comm", "status"))
            if not (sched and stat and comm and status):
                continue  # exited meanwhile
            run_ns, _wait, switches = (int(x) for x in sched.split()[:3])
            # stat's fields after the comm's closing parenthesis: field N is [N - 3].
            f = stat.rsplit(")", 1)[1].split()
            cpus = re.search(r"Cpus_allowed_list:\s*(\S+)", status)
            out[(int(pid), int(tid))] = Thread(comm.strip(), run_ns, switches, int(f[38]), int(f[37]), int(f[16]),
                                               bool(int(f[6]) & PF_KTHREAD), cpus.group(1) if cpus else "", int(f[19]))
    return out


def _counters(path: str) -> dict[str, list[int]]:
    """/proc/interrupts or /proc/softirqs: per source, a count per CPU."""
    text = _read(path) or ""
    lines = text.splitlines()
    if not lines:
        return {}
    ncpu = len(lines[0].split())
    out = {}
    for line in lines[1:]:
        parts = line.split()
        if not parts:
            continue
        counts = [int(x) for x in parts[1:1 + ncpu] if x.isdigit()]
        if len(counts) == ncpu:
            out[parts[0].rstrip(":")] = counts
    return out


def _source_name(comm: str) -> str:
    return re.sub(r"\d+", "N", comm)


def busy_loop_gaps(seconds: float, cpu: int | None, threshold_ns: int = 20_000) -> dict[str, Any]:
    """Interruptions a busy loop sees: gaps between two successive clock reads longer than
    ``threshold_ns`` (the loop itself takes well under 1 us a turn), on ``cpu``."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        before = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {cpu})
    gaps: list[int] = []
    clock = time.perf_counter_ns
    was = gc.isenabled()
    gc.disable()
    try:
        end = clock() + int(seconds * 1e9)
        last = clock()
        while last < end:
            now = clock()
            if now - last > threshold_ns:
                gaps.append(now - last)
            last = now
    finally:
        if was:
            gc.enable()
        if cpu is not None and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, before)
    gaps.sort()

    def q(p: float) -> float:
        return gaps[min(len(gaps) - 1, int(p * len(gaps)))] / 1e3 if gaps else 0.0

    return {"seconds": seconds, "cpu": cpu, "threshold_us": threshold_ns / 1e3, "per_s": len(gaps) / seconds,
            "p50_us": q(0.5), "p99_us": q(0.99), "max_us": gaps[-1] / 1e3 if gaps else 0.0}


def record(seconds: float = 30.0, busy_loop_s: float = 2.0, on_step: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measures the host's background over ``seconds``; returns the profile (the table a
    scenario's ``background_profile`` takes, with the measurement beside it)."""
    me = os.getpid()
    nr_cpus = os.cpu_count() or 1
    if on_step:
        on_step(f"host: background over {seconds:g} s (this process sleeps meanwhile)")
    a, irq_a, soft_a = threads(me), _counters("/proc/interrupts"), _counters("/proc/softirqs")
    t0 = time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - t0
    b, irq_b, soft_b = threads(me), _counters("/proc/interrupts"), _counters("/proc/softirqs")
    groups: dict[tuple, dict[str, Any]] = {}
    left_out: dict[str, float] = {}
    for key, t in b.items():
        was = a.get(key)
        if was is not None and was.start != t.start:
            was = None  # the tid was reused: a new thread, counted from its start
        # A kworker's name changes with the work it last ran: its counts go to the name
        # it has at the end.
        switches = t.switches - (was.switches if was else 0)
        run_ns = t.run_ns - (was.run_ns if was else 0)
        if switches <= 0:
            continue
        name = _source_name(t.comm)
        if any(p.match(name) for p in MODELED):
            left_out[name] = left_out.get(name, 0.0) + switches / elapsed
            continue
        pinned = t.kthread and re.fullmatch(r"\d+", t.cpus) is not None
        g = groups.setdefault((name, pinned, t.policy, t.rt_priority, t.nice), {"threads": set(), "switches": 0, "run_ns": 0})
        g["threads"].add(key)
        g["switches"] += switches
        g["run_ns"] += max(0, run_ns)
    sources = []
    for (name, pinned, policy, prio, nice), g in groups.items():
        n = len(g["threads"])
        per_cpu = pinned and n == nr_cpus
        rate = g["switches"] / elapsed
        src: dict[str, Any] = {"name": name, "wakeups_per_s": round(rate / nr_cpus if per_cpu else rate, 3),
                               "run_us": round(g["run_ns"] / g["switches"] / 1e3, 2)}
        if per_cpu:
            src["per_cpu"] = True
        else:
            src["tasks"] = n
        if nice:
            src["nice"] = nice
        if policy in (1, 2):
            src["fifo_priority"] = prio
        elif policy not in (0, 3):
            src["policy_measured"] = POLICIES.get(policy, str(policy))
        sources.append(src)
    sources.sort(key=lambda s: (-s["wakeups_per_s"] * (nr_cpus if s.get("per_cpu") else 1), s["name"]))

    def rates(x: dict[str, list[int]], y: dict[str, list[int]]) -> dict[str, list[float]]:
        out = {k: [round((v - u) / elapsed, 1) for u, v in zip(x[k], y[k], strict=True)] for k in y if k in x}
        return {k: v for k, v in out.items() if any(v)}

    if on_step:
        on_step(f"host: a busy loop on CPU {nr_cpus - 1} for {busy_loop_s:g} s")
    gaps = busy_loop_gaps(busy_loop_s, nr_cpus - 1) if busy_loop_s > 0 else None
    when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    return {
        "origin": f"measured: schedlab validate-host --record-background on {socket.gethostname()} "
                  f"({os.uname().release}, {nr_cpus} CPUs), {when}, over {elapsed:.1f} s",
        "source": sources,
        "measurement": {"seconds": round(elapsed, 3), "nr_cpus": nr_cpus, "threads_seen": len(b),
                        "left_out_modeled_by_kernel_background": {k: round(v, 3) for k, v in sorted(left_out.items())},
                        "interrupts_per_s": rates(irq_a, irq_b), "softirqs_per_s": rates(soft_a, soft_b),
                        "busy_loop": gaps},
    }


def profile_toml(profile: dict[str, Any]) -> str:
    """The profile as the file a scenario names: a ``[background_profile]`` table; what
    the model does not take (interrupts, softirqs, a busy loop's gaps) as comments."""
    def val(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return repr(v)

    m = profile.get("measurement", {})
    lines = ["# A host's background for schedlab: [kernel] background = \"kernel\" with",
             "# background_profile = \"<this file>\" (docs/scenario.md). Written by",
             "# schedlab validate-host --record-background.",
             "#"]
    left = m.get("left_out_modeled_by_kernel_background") or {}
    if left:
        lines.append("# left out (background = \"kernel\" models them): "
                     + ", ".join(f"{k} {v:g}/s" for k, v in left.items()))
    for what in ("interrupts_per_s", "softirqs_per_s"):
        for k, v in (m.get(what) or {}).items():
            lines.append(f"# {what.replace('_per_s', '')} {k}: {', '.join(f'{x:g}' for x in v)} a second per CPU (not modeled)")
    gaps = m.get("busy_loop")
    if gaps:
        lines.append(f"# a busy loop on CPU {gaps['cpu']} for {gaps['seconds']:g} s: {gaps['per_s']:.1f} interruptions a second "
                     f"over {gaps['threshold_us']:g} us, p50 {gaps['p50_us']:.1f} us, p99 {gaps['p99_us']:.1f} us, "
                     f"max {gaps['max_us']:.1f} us")
    lines += ["", "[background_profile]", f"origin = {val(profile['origin'])}"]
    for s in profile["source"]:
        lines += ["", "[[background_profile.source]]"]
        for k, v in s.items():
            if k == "policy_measured":
                lines.append(f"# policy on the host: {v} (run as SCHED_OTHER)")
                continue
            lines.append(f"{k} = {val(v)}")
    return "\n".join(lines) + "\n"


def scenario_table(profile: dict[str, Any]) -> dict[str, Any]:
    """The ``background_profile`` table of a scenario from :func:`record`'s profile (the
    measurement and what the model does not take left out)."""
    return {"origin": profile["origin"],
            "source": [{k: v for k, v in s.items() if k != "policy_measured"} for s in profile["source"]]}
