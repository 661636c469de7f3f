"""What the host is and what it lets us do: kernel version, HZ, CPUs, the cgroup cpu
controller (v1 or v2), a C compiler.

Every probe of the machine lives here, so the comparison logic can be tested on
recorded data without a host.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import _core


@dataclass
class CgroupAccess:
    """Where configuration cgroups are created, or why they cannot be."""

    version: int | None  # 1 or 2; None = no access
    base: str | None  # directory under which per-configuration cgroups are made
    reason: str  # why not, or how


@dataclass
class HostInfo:
    kernel_release: str
    profile: str  # "6.18.44": what schedlab's kernel profile is called (sublevel kept)
    hz: int | None
    hz_source: str
    nr_cpus: int
    loadavg: str
    cgroup: CgroupAccess
    compiler: str | None
    # Scheduler boot parameters mainline does not have (`vendor_sched_params`): the host
    # kernel's scheduler is patched, and schedlab models mainline.
    vendor_sched: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def kernel_profile(release: str) -> str:
    """'6.18.44-fc-v657' -> '6.18.44': the stable sublevel is kept, since stable
    backports change scheduler features (NI_RANDOM came to 6.18 in a stable release).
    The core's mapping, so a host scenario and validate-host agree."""
    return _core.kernel_profile(release) or release


def _mounts() -> list[tuple[str, str, list[str]]]:
    out = []
    try:
        for line in Path("/proc/self/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 4:
                out.append((parts[1], parts[2], parts[3].split(",")))
    except OSError:
        pass
    return out


def cgroup_access() -> CgroupAccess:
    """Finds a place to create cgroups with the cpu controller: a v1 hierarchy with
    `cpu` among its options, or the v2 hierarchy whose controllers include `cpu`."""
    if os.geteuid() != 0:
        return CgroupAccess(None, None, "not running as root: creating cgroups needs root")
    for mnt, fstype, opts in _mounts():
        if fstype == "cgroup" and "cpu" in opts:
            if os.access(mnt, os.W_OK):
                return CgroupAccess(1, mnt, f"cgroup v1 cpu controller at {mnt}")
    for mnt, fstype, _ in _mounts():
        if fstype == "cgroup2":
            try:
                controllers = Path(mnt, "cgroup.controllers").read_text().split()
            except OSError:
                continue
            if "cpu" in controllers and os.access(mnt, os.W_OK):
                return CgroupAccess(2, mnt, f"cgroup v2 with the cpu controller at {mnt}")
    return CgroupAccess(None, None, "no writable cgroup hierarchy with the cpu controller (v1 or v2) is mounted")


def find_compiler() -> str | None:
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return shutil.which(cc)
    return None


#: The scheduler's own boot parameters in mainline 6.18 (kernel/sched: __setup and
#: early_param; Documentation/admin-guide/kernel-parameters.txt).
MAINLINE_SCHED_PARAMS = ("sched_proxy_exec", "sched_thermal_decay_shift", "sched_verbose")


def vendor_sched_params(cmdline: str) -> list[str]:
    """The `sched_*` parameters of a kernel command line that mainline does not know.

    This host was found to boot with `sched_vcpu_pack=15` (a vendor patch whose
    `vcpu_pack_room()` sits in fair.c's wakeup path): it keeps a woken thread on its busy
    vCPU when another is idle, where mainline's select_idle_sibling() takes the idle one
    (docs/validate-host.md). Placement figures on such a host are not mainline's."""
    args = cmdline.split(" -- ")[0].split()
    return [a for a in args if a.startswith("sched_") and a.split("=")[0] not in MAINLINE_SCHED_PARAMS]


def host_info() -> HostInfo:
    kernel = json.loads(_core.host_kernel())
    try:
        load = Path("/proc/loadavg").read_text().strip()
    except OSError:
        load = "?"
    return HostInfo(
        kernel_release=kernel["release"],
        profile=kernel["profile"],
        hz=kernel["hz"],
        hz_source=kernel["hz_source"],
        nr_cpus=os.cpu_count() or 1,
        loadavg=load,
        cgroup=cgroup_access(),
        compiler=find_compiler(),
        vendor_sched=vendor_sched_params(_read("/proc/cmdline")),
    )


def _read(path: str) -> str:
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def cpu_busy_ns() -> int | None:
    """All CPUs' task time so far: user, nice, system and steal (/proc/stat, USER_HZ
    ticks -> ns). Interrupt and softirq time is left out: most of it during a
    measurement is the measured program's own (its timers' expiries, a loopback tool's
    packets), and what runs while its CPU idles is in no task's time, so its cgroup's
    usage does not hold it and counting it would call the program's own work other
    load. (Without CONFIG_IRQ_TIME_ACCOUNTING an interrupt that lands on the program's
    thread is in both; leaving it out can only make other load look smaller, by at most
    that share.)"""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, _irq, _softirq, steal = (int(x) for x in fields[:8])
    tick_ns = 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    return (user + nice + system + steal) * tick_ns


def child_cpu_ns() -> int:
    """CPU time (user + system) of every child process reaped so far, all its threads
    (getrusage RUSAGE_CHILDREN): a tool's own CPU time, once it has exited."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int((ru.ru_utime + ru.ru_stime) * 1e9)
