"""`schedlab validate-host`: schedlab against the kernel of the machine it runs on.

Where the host allows it (root, a cgroup hierarchy with the cpu controller, v1 or v2,
and a C compiler), every configuration of `configs.configurations()` runs twice: on the
real kernel (the probe program in a fresh cgroup, cpu.stat and per-thread CPU time
read back) and in schedlab on the host's topology (sysfs), HZ and kernel version. The
two are printed side by side with relative differences and written as JSON. Without
those rights nothing is compared: the report says why and the command succeeds.

The real figures come from a shared machine: whatever else runs there competes with
the probe. The probe's cgroup gets the largest cpu weight, so the rest of the host
takes as little from it as the kernel allows; each configuration runs `repeats` times
(their spread is reported), and each run records how much CPU the rest of the host
used meanwhile (/proc/stat less the run's own): above 0.2 CPUs its rows are marked.
Each row with a bar (issue 29: usage ±5 %, throttled share ±0.05, throttled_time
±25 %, per-thread share min/max ±0.05, burst_time and nr_bursts ±25 %, or inside the
real spread where that is wider) gets a verdict.

Beside the probes, rt-tests' cyclictest and hackbench run on the host and in schedlab
with the same parameters (`tools.py`), and `--rt-app FILE` compares one rt-app file
per thread from rt-app's own logs (`rtapp.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UnknownNameError
from . import sidebyside as _cmp
from .configs import Config, configurations, scenario
from .host import HostInfo, host_info
from .probe import ProbeError

__all__ = ["validate_host", "configurations", "HostInfo"]


def validate_host(
    seconds: float = 5.0,
    only: list[str] | None = None,
    seeds: int = 3,
    sim_only: bool = False,
    on_step: Callable[[str], None] | None = None,
    repeats: int = 3,
    background: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Runs the comparison; returns the report document (see module doc).

    ``only`` restricts to named configurations or tools; ``sim_only`` skips the host
    (the simulated side alone, e.g. to look at the model on a host without rights);
    ``repeats`` real runs per configuration give its spread; ``background`` (a
    ``background_profile`` table, validate_host/background.py) runs every simulated side
    with the kernel's background and that profile.
    """
    from .. import run_many
    from . import tools as _tools

    info = host_info()
    all_cfgs = configurations(info.nr_cpus)
    all_tools = _tools.tools(info.nr_cpus)
    cfgs = [c for c in all_cfgs if not only or c.name in only]
    tls = [t for t in all_tools if not only or t.name in only]
    if only:
        names = [c.name for c in all_cfgs] + [t.name for t in all_tools]
        unknown = sorted(set(only) - set(names))
        if unknown:
            raise UnknownNameError(f"unknown configuration(s) {', '.join(unknown)}: expected some of {', '.join(names)}")
    doc: dict[str, Any] = {"host": info.to_dict(), "seconds": seconds, "repeats": repeats, "compared": False,
                           "configs": [], "tools": []}
    if background is not None:
        doc["background_profile"] = background
    can_probe = info.cgroup.version is not None and info.compiler is not None
    if not can_probe and not sim_only:
        doc["reason"] = info.cgroup.reason if info.cgroup.version is None else "no C compiler (cc, gcc or clang) to build the probe"
        return doc
    exe = None
    if not sim_only and cfgs:
        from .probe import build_probe

        exe = build_probe(info.compiler)  # type: ignore[arg-type]
    ladder = _guest_halt(doc, info, sim_only, on_step)
    spin = None
    if exe is not None:
        from .probe import spin_calibration

        spin = doc["probe_spin"] = spin_calibration(exe)
    for cfg in cfgs:
        entry: dict[str, Any] = {"name": cfg.name, "what": cfg.what}
        if exe is not None:
            from .probe import run_config

            entry["measurements"] = []
            for r in range(repeats):
                if on_step:
                    on_step(f"host: {cfg.name} ({r + 1}/{repeats})")
                entry["measurements"].append(run_config(exe, info.cgroup, cfg, seconds, seed=r + 1))
        if on_step:
            on_step(f"schedlab: {cfg.name}")
        sim_doc = _with_host(scenario(cfg, info.profile, info.hz, seconds, info.nr_cpus, spin), ladder, background)
        runs = run_many(sim_doc, seeds=list(range(1, seeds + 1)))
        entry["sim_seeds"] = seeds
        entry["sim"] = _cmp.mean_figures([_cmp.sim_figures(cfg, r.raw) for r in runs])
        doc["configs"].append(_config_rows(cfg, entry, doc["host"]))
    for tool in tls:
        entry = {"name": tool.name, "what": tool.what, "command": tool.command(seconds, "FILE")}
        if not sim_only:
            why = _tools.available(tool)
            if why:
                entry["skipped"] = why
            else:
                entry["measurements"] = []
                try:
                    for r in range(repeats):
                        if on_step:
                            on_step(f"host: {tool.name} ({r + 1}/{repeats})")
                        entry["measurements"].append(_tools.run_tool(tool, info.cgroup, seconds))
                except ProbeError as e:
                    # The host refused what the tool needs (an RT runtime): no real side.
                    del entry["measurements"]
                    entry["skipped"] = str(e)
        if on_step:
            on_step(f"schedlab: {tool.name}")
        runs = run_many(_with_host(_tools.scenario(tool, info.profile, info.hz, seconds), ladder, background),
                        seeds=list(range(1, seeds + 1)))
        entry["sim_seeds"] = seeds
        entry["sim"] = _cmp.mean_figures([_tools.sim_figures(tool, r.raw) for r in runs])
        doc["tools"].append(_tool_rows(tool, entry))
    doc["compared"] = not sim_only
    return doc


def _guest_halt(doc: dict[str, Any], info: HostInfo, sim_only: bool,
                on_step: Callable[[str], None] | None) -> dict[str, Any] | None:
    """On a guest that idles in the bare halt, measures what leaving it costs (`halt.py`)
    and records it in the report; returns the simulated host's ladder, or None."""
    from . import halt

    if not halt.host_halts_bare():
        doc["guest_halt"] = {"applied": False, "why": "not a guest idling in the bare halt (a hypervisor flag and no cpuidle driver)"}
        return None
    if sim_only or info.compiler is None:
        doc["guest_halt"] = {"applied": False, "why": "not measured (--sim-only)" if sim_only else "no C compiler for the probe"}
        return None
    from .probe import build_probe

    measured = halt.measure(build_probe(info.compiler), on_step)
    doc["guest_halt"] = {"applied": True, **measured}
    return measured["guest_halt"]


def _with_host(sim_doc: dict[str, Any], ladder: dict[str, Any] | None,
               background: dict[str, Any] | None = None) -> dict[str, Any]:
    """A simulated side with what was measured of the host: its halt's ladder, and its
    background (the kernel's own work with the host's measured profile)."""
    if ladder is not None:
        sim_doc["machine"]["guest_halt"] = ladder
    if background is not None:
        sim_doc.setdefault("kernel", {}).update({"background": "kernel", "background_profile": background})
    return sim_doc


def _measured(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """The real runs of an entry (a report of one run per configuration kept it alone)."""
    if "measurement" in entry:
        entry["measurements"] = [entry.pop("measurement")]
    return entry.get("measurements", [])


def _others(entry: dict[str, Any], ms: list[dict[str, Any]]) -> bool:
    """Other load on the host per real run, in CPUs; whether any exceeded BUSY_CPUS."""
    entry["others_cpus"] = [m["others_cpu_ns"] / max(1, m["elapsed_ns"]) for m in ms if "others_cpu_ns" in m]
    return any(o > _cmp.BUSY_CPUS for o in entry["others_cpus"])


def _config_rows(cfg: Config, entry: dict[str, Any], host: dict[str, Any]) -> dict[str, Any]:
    ms = _measured(entry)
    reals = [_cmp.real_figures(cfg, m) for m in ms]
    if reals:
        entry["real"] = _cmp.mean_figures(reals)
    busy = _others(entry, ms)
    vendor = bool(host.get("vendor_sched")) and cfg.threads > 1 and not cfg.pin
    entry["rows"] = _cmp.compare(entry.get("real", {}), entry["sim"], _cmp.spread(reals) if len(reals) > 1 else None, busy,
                                 vendor_placement=vendor)
    return entry


def _tool_rows(tool: Any, entry: dict[str, Any]) -> dict[str, Any]:
    from . import tools as _tools

    ms = _measured(entry)
    reals = [f for f in (_tools.real_figures(tool, m) for m in ms) if f]
    if reals:
        entry["real"] = _cmp.mean_figures(reals)
    busy = _others(entry, ms)
    entry["rows"] = _cmp.compare(entry.get("real", {}), entry["sim"], _cmp.spread(reals) if len(reals) > 1 else None, busy,
                                 metrics=_tools.METRICS, tolerances={})
    return entry


def recompare(doc: dict[str, Any]) -> dict[str, Any]:
    """Recomputes the figures and rows of a saved report from its raw measurements and
    its simulated figures (the comparison logic, without a host)."""
    from . import tools as _tools

    by_name = {c.name: c for c in configurations(doc["host"]["nr_cpus"])}
    for entry in doc["configs"]:
        _config_rows(by_name[entry["name"]], entry, doc["host"])
    tool_by_name = {t.name: t for t in _tools.tools(doc["host"]["nr_cpus"])}
    for entry in doc.get("tools", []):
        _tool_rows(tool_by_name[entry["name"]], entry)
    return doc
