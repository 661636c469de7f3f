"""Runs the probe program on the host, one fresh cgroup per configuration.

The probe (probe.c beside this file) is compiled once per user into the cache
directory. Each configuration gets a new cgroup under the cpu controller, its limits
are written as a user would (quota, then burst), the probe is started inside it, and
the cgroup's cpu.stat is read when it exits. The cgroup is removed afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from ..errors import HostError
from .configs import Config
from .host import CgroupAccess, child_cpu_ns, cpu_busy_ns

SOURCE = Path(__file__).with_name("probe.c")


class ProbeError(HostError):
    """The probe could not be built or run."""


def build_probe(cc: str, cache: Path | None = None) -> Path:
    """Compiles probe.c (cached by its content's hash); returns the binary's path."""
    text = SOURCE.read_bytes()
    tag = hashlib.sha256(text).hexdigest()[:12]
    cache = cache or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "schedlab"
    cache.mkdir(parents=True, exist_ok=True)
    exe = cache / f"probe-{tag}"
    if exe.exists():
        return exe
    tmp = cache / f"probe-{tag}.{os.getpid()}.tmp"
    cmd = [cc, "-O2", "-pthread", "-o", str(tmp), str(SOURCE), "-lm"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ProbeError(f"{' '.join(cmd)} failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}")
    tmp.replace(exe)
    return exe


def spin_calibration(exe: Path) -> dict[str, float]:
    """The probe's `spincal`: the CPU time of one spin step and of one clock read here
    (configs.spin_cpu_ns turns a requested spin into the time it really takes)."""
    done = subprocess.run([str(exe), "spincal"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise ProbeError(f"{exe} spincal exited with {done.returncode}: {done.stderr.strip()}")
    out = json.loads(done.stdout)
    return {"step_ns": float(out["step_ns"]), "read_ns": float(out["read_ns"])}


class Cgroup:
    """A cgroup made for one configuration (v1 cpu hierarchy, or v2 with +cpu)."""

    def __init__(self, access: CgroupAccess, name: str):
        if access.version is None or access.base is None:
            raise ProbeError(access.reason)
        self.v = access.version
        parent = Path(access.base)
        if self.v == 2:
            # v2: controllers are enabled for children; our own parent keeps no tasks.
            parent = parent / "schedlab-validate"
            parent.mkdir(exist_ok=True)
            _enable_cpu(Path(access.base))
            _enable_cpu(parent)
        self.path = parent / name
        if self.path.exists():
            self.path.rmdir()
        self.path.mkdir()

    def set_limits(self, cfg: Config) -> None:
        # The largest weight (v1 MAX_SHARES = 1 << 18, v2 CGROUP_WEIGHT_MAX): whatever
        # else runs on the host then takes as little as it can from the probe.
        self._write("cpu.shares" if self.v == 1 else "cpu.weight", "262144" if self.v == 1 else "10000")
        if not cfg.limited:
            return
        if self.v == 1:
            self._write("cpu.cfs_period_us", str(cfg.period_us))
            self._write("cpu.cfs_quota_us", str(cfg.quota_us))
            if cfg.burst_us:
                self._write("cpu.cfs_burst_us", str(cfg.burst_us))
        else:
            self._write("cpu.max", f"{cfg.quota_us} {cfg.period_us}")
            if cfg.burst_us:
                self._write("cpu.max.burst", str(cfg.burst_us))

    def _write(self, name: str, value: str) -> None:
        try:
            (self.path / name).write_text(value)
        except OSError as e:
            raise ProbeError(f"writing {value!r} to {self.path / name}: {e.strerror}") from None

    def procs_file(self) -> str:
        return str(self.path / "cgroup.procs")

    def stat(self) -> dict[str, int]:
        """cpu.stat in the v1 units (ns for times), whichever version."""
        raw = {}
        for line in (self.path / "cpu.stat").read_text().splitlines():
            k, _, v = line.partition(" ")
            raw[k] = int(v)
        if self.v == 2:
            return {
                "usage_ns": raw.get("usage_usec", 0) * 1000,
                "nr_periods": raw.get("nr_periods", 0),
                "nr_throttled": raw.get("nr_throttled", 0),
                "throttled_time": raw.get("throttled_usec", 0) * 1000,
                "nr_bursts": raw.get("nr_bursts", 0),
                "burst_time": raw.get("burst_usec", 0) * 1000,
            }
        return {k: raw.get(k, 0) for k in ("nr_periods", "nr_throttled", "throttled_time", "nr_bursts", "burst_time")}

    def remove(self) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.02)


def _enable_cpu(path: Path) -> None:
    ctl = path / "cgroup.subtree_control"
    if "cpu" not in ctl.read_text().split():
        ctl.write_text("+cpu")


def run_config(exe: Path, access: CgroupAccess, cfg: Config, seconds: float, seed: int) -> dict[str, Any]:
    """Runs one configuration's probe in a fresh cgroup; returns the probe's JSON, the
    cgroup's cpu.stat and the CPU time the rest of the host used meanwhile."""
    cg = Cgroup(access, f"schedlab-{os.getpid()}-{cfg.name}")
    try:
        cg.set_limits(cfg)
        procs = cg.procs_file()

        def enter() -> None:  # in the child, before exec: join the cgroup
            with open(procs, "w") as f:
                f.write(str(os.getpid()))

        busy0, own0, t0 = cpu_busy_ns(), child_cpu_ns(), time.monotonic_ns()
        done = subprocess.run([str(exe), *cfg.probe_args(seconds, seed)], capture_output=True, text=True,
                              preexec_fn=enter, timeout=max(60.0, 20 * seconds))
        busy1, own1, t1 = cpu_busy_ns(), child_cpu_ns(), time.monotonic_ns()
        if done.returncode != 0:
            raise ProbeError(f"probe {cfg.name} exited with {done.returncode}: {done.stderr.strip()}")
        out = json.loads(done.stdout)
        out["cpu_stat"] = cg.stat()
        out["elapsed_ns"] = t1 - t0
        if busy0 is not None and busy1 is not None:
            # The probe's own CPU time, every thread (its rusage once reaped): the
            # pingpong and timer probes report no per-thread times.
            own = out["cpu_stat"].get("usage_ns") or (own1 - own0)
            out["others_cpu_ns"] = max(0, busy1 - busy0 - own)
        return out
    finally:
        cg.remove()
