"""What leaving a halted CPU costs on a virtual machine: measured here, charged in the model.

A guest without a cpuidle driver halts in `default_idle()`, one state the kernel knows
nothing about beyond its name. Its host decides the rest: KVM polls a while for the
halted vCPU (`halt_poll_ns`), then schedules its thread out, and the physical CPU may go
into its own idle states. A wakeup's cost therefore grows with how long the guest's CPU
was halted, by steps the guest cannot see (`cpuidle/guest_halt.rs` in the core).

The probe's `haltexit` mode measures the steps: per sleep length, how late a timer wakes
a thread on an idle CPU against the same thread on the same CPU kept busy by a
SCHED_IDLE spinner (which the wakeup preempts at once, so that CPU never halts). The
difference of the medians is the halt's exit at that idle length: a measured figure of
this host, not fitted to any validate-host row. It becomes the simulated host's
`[machine.guest_halt]` ladder, applied only to a guest (the `hypervisor` CPU flag) whose
idle is the bare halt (no cpuidle driver: a driver's states would already be charged
their own wake).
"""

from __future__ import annotations

import datetime
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .probe import ProbeError

# Sleep lengths measured, us: dense around KVM's default 200 us poll window.
SLEEPS_US = (20, 50, 100, 150, 200, 300, 500, 1000, 2000, 5000, 10000, 20000)


def rounds_for(sleep_us: int) -> int:
    """About 0.3 s of sleeping per point and side, at least 30 wakeups."""
    return max(30, min(400, 300_000 // sleep_us))


def halts_bare(cpuinfo: str, cpuidle_driver: str | None) -> bool:
    """A guest (x86's `hypervisor` flag) idling in the bare halt (no cpuidle driver)."""
    flags = next((line for line in cpuinfo.splitlines() if line.startswith("flags")), "")
    return "hypervisor" in flags.split() and cpuidle_driver in (None, "none")


def host_halts_bare() -> bool:
    """Whether this host is such a guest."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    drv = Path("/sys/devices/system/cpu/cpuidle/current_driver")
    return halts_bare(cpuinfo, drv.read_text().strip() if drv.exists() else None)


def _probe(exe: Path, sleep_us: int, busy: bool) -> dict[str, Any]:
    cmd = [str(exe), "haltexit", "-r", str(rounds_for(sleep_us)), "-s", str(sleep_us)] + (["-b"] if busy else [])
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise ProbeError(f"{' '.join(cmd)} exited with {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def ladder(points: list[dict[str, Any]], when: str) -> dict[str, Any]:
    """The `[machine.guest_halt]` table from measured points (sorted by sleep): from each
    sleep length on (the shortest from 0), the percentiles (deciles from an older probe)
    of the idle CPU's lateness less the busy CPU's median, never negative (the extra's
    distribution, least to greatest). Percentiles, because the top quantile is the
    largest of a few hundred samples: between deciles it would be drawn a tenth of the
    time (at 1 ms here, one 652 us sample of 400 made the simulated p99 633 us against
    the host's 72), between percentiles a hundredth."""
    stages = []
    for i, p in enumerate(points):
        base = p["busy"]["p50_ns"]
        qs = p["idle"].get("percentiles_ns") or p["idle"]["deciles_ns"]
        extra_us = [round(max(0.0, (q - base) / 1000.0), 1) for q in qs]
        stages.append([0 if i == 0 else p["sleep_us"], *extra_us])
    return {
        "stages": stages,
        "kind": "measured",
        "source": f"schedlab validate-host on this host, {when}: timer lateness after each sleep on an idle "
                  "CPU (percentiles) less the median on the CPU kept busy (probe haltexit)",
    }


def medians(guest_halt: dict[str, Any]) -> list[tuple[float, float]]:
    """Each stage's (idle_us, median extra_us), for the report."""
    out = []
    for idle_us, *extra in guest_halt["stages"]:
        out.append((idle_us, extra[len(extra) // 2]))
    return out


def measure(exe: Path, on_step: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measures every sleep length, busy then idle; returns the points and the ladder."""
    import time

    from .host import child_cpu_ns, cpu_busy_ns

    points = []
    busy0, own0, t0 = cpu_busy_ns(), child_cpu_ns(), time.monotonic_ns()
    for s in SLEEPS_US:
        if on_step:
            on_step(f"host: halt exit after {s} us idle")
        points.append({"sleep_us": s, "busy": _probe(exe, s, True), "idle": _probe(exe, s, False)})
    busy1, own1, t1 = cpu_busy_ns(), child_cpu_ns(), time.monotonic_ns()
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out: dict[str, Any] = {"points": points, "guest_halt": ladder(points, when)}
    if busy0 is not None and busy1 is not None:
        # The rest of the host's load: an idle CPU that another program uses is not idle.
        out["others_cpus"] = max(0, (busy1 - busy0) - (own1 - own0)) / max(1, t1 - t0)
    return out
