"""Per-period cpu.stat of one validate-host configuration, on the host and in the
simulator, side by side: where the two timelines part (issue 29).

    python -m schedlab.validate_host.period_trace no-burst --seconds 10

The host side runs the probe in a fresh cgroup (as `schedlab validate-host` does) and
reads the cgroup's cpu.stat once per bandwidth period (the sampler's phase against the
kernel's period timer is arbitrary). The simulator side runs the same scenario stopped in
the middle of each period and differences its cpu.stat. Both are printed as per-period
rows: nr_throttled, throttled_time and burst_time (ms) in that period. The probe's sleeps
are random (exponential), so the two timelines agree in distribution, not period by
period.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import threading
import time

from .configs import Config, configurations, scenario
from .host import cgroup_access, find_compiler, host_info
from .probe import Cgroup, build_probe


def host_periods(cfg: Config, seconds: float, seed: int) -> list[dict[str, int]]:
    """cpu.stat deltas per period of the real cgroup while the probe runs."""
    access = cgroup_access()
    cc = find_compiler()
    if cc is None:
        raise SystemExit("no C compiler for the probe")
    exe = build_probe(cc)
    cg = Cgroup(access, f"schedlab-trace-{os.getpid()}-{cfg.name}")
    rows: list[dict[str, int]] = []
    try:
        cg.set_limits(cfg)
        procs = cg.procs_file()

        def enter() -> None:
            with open(procs, "w") as f:
                f.write(str(os.getpid()))

        stop = threading.Event()
        period_s = cfg.period_us / 1e6

        def sample() -> None:
            last = cg.stat()
            nxt = time.monotonic() + period_s
            while not stop.is_set():
                time.sleep(max(0.0, nxt - time.monotonic()))
                nxt += period_s
                cur = cg.stat()
                rows.append({k: cur[k] - last.get(k, 0) for k in ("nr_periods", "nr_throttled", "throttled_time", "burst_time")})
                last = cur

        th = threading.Thread(target=sample, daemon=True)
        th.start()
        subprocess.run([str(exe), *cfg.probe_args(seconds, seed)], capture_output=True, text=True, preexec_fn=enter,
                       timeout=max(60.0, 20 * seconds))
        stop.set()
        th.join()
    finally:
        cg.remove()
    return rows


def sim_periods(cfg: Config, seconds: float, seed: int, profile: str, hz: int | None, nr_cpus: int,
                rows: int) -> list[dict[str, int]]:
    """The simulator's cpu.stat per period: the same run stopped in the middle of each
    period (a run's first T seconds do not depend on its length), differenced."""
    import schedlab

    doc = scenario(cfg, profile, hz, seconds, nr_cpus)
    doc["machine"] = {"topo": {"cores": nr_cpus}}
    period = cfg.period_us * 1000
    keys = ("nr_periods", "nr_throttled", "throttled_time", "burst_time")
    out, last = [], {k: 0 for k in keys}
    for i in range(min(rows, int(seconds * 1e9 // period))):
        doc["run"] = {"duration_s": ((i + 1) * period + period // 2) / 1e9}
        g = next(g for g in schedlab.run(doc, seed=seed).raw["groups"] if g["name"] == "probe")
        out.append({k: g[k] - last[k] for k in keys})
        last = {k: g[k] for k in keys}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rows", type=int, default=30)
    a = ap.parse_args(argv)
    info = host_info()
    cfg = next(c for c in configurations(info.nr_cpus) if c.name == a.config)
    host = host_periods(cfg, a.seconds, a.seed)
    sim = sim_periods(cfg, a.seconds, a.seed, info.profile, info.hz, info.nr_cpus, a.rows)
    print(f"{cfg.name}: {cfg.what}; host {info.kernel_release}, HZ {info.hz}, {info.nr_cpus} CPUs")
    print("period | host nr_thr  thr_ms  burst_ms | sim nr_thr  thr_ms  burst_ms")
    for i in range(min(a.rows, len(host), len(sim))):
        h, s = host[i], sim[i]
        print(f"{i:6d} | {h['nr_throttled']:10d} {h['throttled_time'] / 1e6:7.2f} {h['burst_time'] / 1e6:9.2f} | "
              f"{s['nr_throttled']:10d} {s['throttled_time'] / 1e6:7.2f} {s['burst_time'] / 1e6:9.2f}")
    n = min(a.rows, len(host), len(sim))
    tot = lambda rs, k: sum(r[k] for r in rs[:n])  # noqa: E731
    print(f"total  | {tot(host, 'nr_throttled'):10d} {tot(host, 'throttled_time') / 1e6:7.1f} {tot(host, 'burst_time') / 1e6:9.1f} | "
          f"{tot(sim, 'nr_throttled'):10d} {tot(sim, 'throttled_time') / 1e6:7.1f} {tot(sim, 'burst_time') / 1e6:9.1f}")


if __name__ == "__main__":
    main()
