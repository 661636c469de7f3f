"""How one validate-host configuration's threads share the CPUs, on the host and in the
simulator, from a scheduler trace of each (issue 29 item 2).

    python -m schedlab.validate_host.sched_trace unlimited --seconds 10

The host side runs the probe in a fresh cgroup (as `schedlab validate-host` does) while
a private tracefs instance records sched_switch, sched_waking, sched_wakeup(_new) and
sched_migrate_task; the simulator side runs the same scenario with an ftrace-text
trace. Both are read by one parser and summarised:

- `switch_ins_from_idle_recorded`: switches out of idle against switches into it: the
  6.18 VM this was built on records about half of the former, so no figure here is
  read from switch-ins alone (the usage is the probe's own, or the group's);
- `idle_while_waiting`: share of the time some CPU has no probe thread while another
  has two or more (one runs, the others wait);
- `preemptions_per_s` and `preempted_after_us` (median run before a preemption);
- `wakeups_onto_busy_per_s` and `wakee_runs_within_50us` (share of those that run
  within 50 us: wakeup preemption);
- migrations per second at wakeup, by a CPU going idle (newidle balance: the sleeping
  thread's context) and by an idle CPU (idle balance);
- `home_cpu_share`: of the threads' sleeps, the share that began on the CPU where that
  thread slept most (1.0: each thread keeps to one CPU; 1/CPUs: no preference);
- `wakeups_busy_prev_idle_other` (per second) and `busy_prev_kept`: wakeups raised on the
  thread's previous CPU while it runs another task and another CPU is surely idle (see
  `busy_prev_wakeups`), and the share of them the kernel left on the busy CPU. Mainline's
  select_idle_sibling() takes the idle CPU unless SIS_UTIL stops the scan.

Needs root and tracefs for the host side; `--sim-only` runs the simulator alone.
"""

from __future__ import annotations

import argparse
import bisect
import re
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(\S+)\s+(\d+\.\d+): (\w+): (.*)$")
FIELD = re.compile(r"(\w+)=(.*?)(?= \w+=| ==> |$)")
EVENTS = ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task")


def summarise(lines: Iterable[str], is_probe, ncpu: int) -> dict[str, float]:
    """The figures above from ftrace text lines; `is_probe(comm)` picks the threads."""
    lines = list(lines)
    state: dict[str, tuple[bool, int]] = {}  # pid -> (runnable, cpu)
    running: dict[int, str | None] = {c: None for c in range(ncpu)}
    since: dict[str, float] = {}
    last_waking: dict[str, float] = {}
    pending: dict[int, tuple[str, float]] = {}
    c: Counter = Counter()
    runs, lat = [], []
    sleeps_on: Counter = Counter()  # (pid, cpu) -> sleeps that began there
    t_first = t_last = last = None
    window = (0.0, 0.0)  # time and idle-while-waiting integrals at t_last
    for line in lines:
        m = LINE.match(line)
        if not m or m.group(6) not in EVENTS:
            continue
        ctx, cpu, _flags, ts, ev = m.group(1).strip(), int(m.group(3)), m.group(4), float(m.group(5)), m.group(6)
        if cpu >= ncpu:
            continue
        d = dict(FIELD.findall(m.group(7)))
        if last is not None and t_first is not None:
            dt = ts - last
            n = Counter(cp for (r, cp) in state.values() if r)
            c["t"] += dt
            if any(n[i] == 0 for i in range(ncpu)) and any(n[i] >= 2 for i in range(ncpu)):
                c["iww"] += dt
        last = ts
        if ev == "sched_switch":
            prev, nxt = d.get("prev_pid", ""), d.get("next_pid", "")
            c["from_idle"] += d.get("prev_pid") == "0"
            c["to_idle"] += d.get("next_pid") == "0"
            if is_probe(d.get("prev_comm", "")) or is_probe(d.get("next_comm", "")):
                t_first = ts if t_first is None else t_first
                t_last = ts
                window = (c["t"], c["iww"])
            if is_probe(d.get("prev_comm", "")):
                st = d.get("prev_state", "R")[:1]
                if st in "SD":
                    state[prev] = (False, cpu)
                    sleeps_on[(prev, cpu)] += 1
                elif st == "R" and prev in since:
                    c["preempt"] += 1
                    runs.append(ts - since[prev])
            running[cpu] = nxt if is_probe(d.get("next_comm", "")) else None
            if running[cpu]:
                since[nxt] = ts
            if cpu in pending:
                pid, t0 = pending.pop(cpu)
                if nxt == pid:
                    lat.append(ts - t0)
            continue
        if not is_probe(d.get("comm", "")):
            continue
        pid = d["pid"]
        if ev == "sched_waking":
            last_waking[pid] = ts
            if not state.get(pid, (False, 0))[0]:
                state[pid] = (True, state.get(pid, (False, int(d["target_cpu"])))[1])
        elif ev in ("sched_wakeup", "sched_wakeup_new"):
            tc = int(d["target_cpu"])
            state[pid] = (True, tc)
            if running.get(tc) and running[tc] != pid:
                c["onto_busy"] += 1
                pending[tc] = (pid, ts)
        else:
            dest = int(d["dest_cpu"])
            if pid in state:
                state[pid] = (state[pid][0], dest)
            if abs(ts - last_waking.get(pid, -1.0)) < 50e-6:
                c["mig_wakeup"] += 1
            elif is_probe(ctx) and cpu == dest:
                c["mig_newidle"] += 1
            elif ctx == "<idle>" and cpu == dest:
                c["mig_idle"] += 1
            else:
                c["mig_other"] += 1
    span = (t_last - t_first) if t_first is not None and t_last is not None and t_last > t_first else 0.0
    per_s = (lambda k: c[k] / span) if span else (lambda k: 0.0)
    runs.sort()
    t, iww = window
    most: dict[str, int] = {}
    for (pid, _), n in sleeps_on.items():
        most[pid] = max(most.get(pid, 0), n)
    nr_sleeps = sum(sleeps_on.values())
    busy_n, busy_kept = busy_prev_wakeups(lines, is_probe)
    return {
        "switch_ins_from_idle_recorded": c["from_idle"] / c["to_idle"] if c["to_idle"] else 1.0,
        "idle_while_waiting": iww / t if t else 0.0,
        "preemptions_per_s": per_s("preempt"),
        "preempted_after_us": runs[len(runs) // 2] * 1e6 if runs else 0.0,
        "wakeups_onto_busy_per_s": per_s("onto_busy"),
        "wakee_runs_within_50us": sum(1 for x in lat if x < 50e-6) / len(lat) if lat else 0.0,
        "migrations_at_wakeup_per_s": per_s("mig_wakeup"),
        "migrations_newidle_per_s": per_s("mig_newidle"),
        "migrations_idle_balance_per_s": per_s("mig_idle"),
        "home_cpu_share": sum(most.values()) / nr_sleeps if nr_sleeps else 0.0,
        "wakeups_busy_prev_idle_other_per_s": busy_n / span if span else 0.0,
        "busy_prev_kept": busy_kept / busy_n if busy_n else 0.0,
    }


def busy_prev_wakeups(lines: list[str], is_probe) -> tuple[int, int]:
    """Wakeups of a probe thread raised on its previous CPU while that CPU ran a task,
    with another CPU surely idle; returns (how many, how many stayed on the busy CPU).

    A CPU counts as surely idle at t when its last event before t left it idle and its
    first event after t still ran in the idle task's context: a trace that drops some
    switches out of idle can then only make a busy CPU look unsure, never idle."""
    events = []
    for line in lines:
        m = LINE.match(line)
        if m and m.group(6) in EVENTS:
            events.append((float(m.group(5)), int(m.group(3)), m.group(2) == "0", m.group(6), dict(FIELD.findall(m.group(7)))))
    times: dict[int, list[float]] = {}
    idle_before: dict[int, list[bool]] = {}
    idle_after: dict[int, list[bool]] = {}
    for ts, cpu, in_idle, ev, d in events:
        times.setdefault(cpu, []).append(ts)
        idle_before.setdefault(cpu, []).append(in_idle)
        idle_after.setdefault(cpu, []).append(d.get("next_pid") == "0" if ev == "sched_switch" else in_idle)

    def surely_idle(cpu: int, t: float) -> bool:
        ts = times.get(cpu, [])
        i = bisect.bisect_left(ts, t)
        return 0 < i < len(ts) and idle_after[cpu][i - 1] and idle_before[cpu][i]

    slept_on: dict[str, int] = {}
    pending: dict[str, int] = {}
    n = kept = 0
    for ts, cpu, in_idle, ev, d in events:
        if ev == "sched_switch":
            if is_probe(d.get("prev_comm", "")) and d.get("prev_state", "R")[:1] in "SD":
                slept_on[d.get("prev_pid", "")] = cpu
        elif ev == "sched_waking" and is_probe(d.get("comm", "")):
            pid = d["pid"]
            pending.pop(pid, None)  # a waking with no wakeup (already runnable) is not one
            if slept_on.get(pid) == cpu and not in_idle and any(surely_idle(o, ts) for o in times if o != cpu):
                pending[pid] = cpu
        elif ev == "sched_wakeup" and d.get("pid") in pending:
            prev = pending.pop(d["pid"])
            n += 1
            kept += int(d["target_cpu"]) == prev
    return n, kept


def sim_trace(cfg, seconds: float, seed: int, profile: str, hz: int | None, nr_cpus: int, path: Path) -> float:
    """Runs the scenario with an ftrace-text trace at `path`; returns the group's usage
    in CPUs."""
    import schedlab

    from .configs import scenario

    r = schedlab.run(scenario(cfg, profile, hz, seconds, nr_cpus), seed=seed, trace=str(path), trace_format="ftrace")
    return next(g["usage_ns"] for g in r.raw["groups"] if g["name"] == "probe") / (seconds * 1e9)


def tracefs_root() -> Path | None:
    for line in Path("/proc/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[2] == "tracefs":
            return Path(parts[1])
    return None


def host_trace(cfg, seconds: float, seed: int, path: Path) -> dict:
    """Runs the probe under a private tracefs instance; writes its trace to `path`."""
    from .host import cgroup_access, find_compiler
    from .probe import build_probe, run_config

    root = tracefs_root()
    if root is None:
        raise SystemExit("no tracefs mounted (mount -t tracefs nodev DIR)")
    cc = find_compiler()
    if cc is None:
        raise SystemExit("no C compiler for the probe")
    exe = build_probe(cc)
    inst = root / "instances" / f"schedlab-{cfg.name}"
    try:
        inst.mkdir()
    except OSError as e:
        raise SystemExit(f"{inst}: cannot make a tracefs instance ({e.strerror}); remove it if a run left it") from None
    try:
        (inst / "buffer_size_kb").write_text("65536")
        for ev in EVENTS:
            (inst / "events" / "sched" / ev / "enable").write_text("1")
        (inst / "tracing_on").write_text("1")
        res = run_config(exe, cgroup_access(), cfg, seconds, seed)
        (inst / "tracing_on").write_text("0")
        path.write_text((inst / "trace").read_text())
    finally:
        (inst / "tracing_on").write_text("0")
        inst.rmdir()
    return res


def main(argv: list[str] | None = None) -> None:
    from .configs import configurations
    from .host import host_info

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sim-only", action="store_true")
    ap.add_argument("--keep", type=Path, help="directory to keep both traces in")
    a = ap.parse_args(argv)
    info = host_info()
    cfg = next((c for c in configurations(info.nr_cpus) if c.name == a.config), None)
    if cfg is None or cfg.kind != "threads":
        raise SystemExit(f"{a.config}: expected a threads configuration of validate-host")
    out = a.keep or Path(tempfile.mkdtemp(prefix="schedlab-sched-trace-"))
    out.mkdir(parents=True, exist_ok=True)
    sides = {}
    if not a.sim_only:
        res = host_trace(cfg, a.seconds, a.seed, out / "host.trace.txt")
        others = res.get("others_cpu_ns", 0) / res["elapsed_ns"]
        print(f"host: the rest of the host used {others:.2f} CPUs meanwhile")
        with open(out / "host.trace.txt") as f:
            sides["host"] = summarise(f, lambda comm: comm.startswith("probe-"), info.nr_cpus)
        sides["host"]["usage"] = sum(t["cpu_ns"] for t in res["threads"]) / res["wall_ns"]
    usage = sim_trace(cfg, a.seconds, a.seed, info.profile, info.hz, info.nr_cpus, out / "sim.trace.txt")
    with open(out / "sim.trace.txt") as f:
        sides["schedlab"] = summarise(f, lambda comm: re.fullmatch(r"t\d+", comm) is not None, info.nr_cpus)
    sides["schedlab"]["usage"] = usage
    print(f"{cfg.name}: {cfg.what}; {info.kernel_release}, HZ {info.hz}, {info.nr_cpus} CPUs; traces in {out}")
    names = list(sides)
    print(f"{'figure':32s}" + "".join(f"{n:>12s}" for n in names))
    for k in next(iter(sides.values())):
        print(f"{k:32s}" + "".join(f"{sides[n][k]:12.3f}" for n in names))


if __name__ == "__main__":
    main()
