"""`schedlab validate-host`: schedlab against the kernel of the machine it runs on.

Where the host allows it (root, a cgroup hierarchy with the cpu controller, v1 or v2,
and a C compiler), every configuration of `configs.configurations()` runs twice: on the
real kernel (the probe program in a fresh cgroup, cpu.stat and per-thread CPU time
read back) and in schedlab on the host's topology (sysfs), HZ and kernel version. The
two are printed side by side with relative differences and written as JSON. Without
those rights nothing is compared: the report says why and the command succeeds.

The real figures come from a shared machine: whatever else runs there competes with
the probe. The probe's cgroup gets the largest cpu weight, so the rest of the host
takes as little from it as the kernel allows, and each measurement records how much
CPU the rest of the host used meanwhile.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from . import compare as _cmp
from .configs import Config, configurations, scenario
from .host import HostInfo, host_info

__all__ = ["validate_host", "configurations", "HostInfo"]


def validate_host(
    seconds: float = 5.0,
    only: Optional[list[str]] = None,
    seeds: int = 3,
    sim_only: bool = False,
    on_step: Optional[Callable[[str], None]] = None,
) -> dict[str, Any]:
    """Runs the comparison; returns the report document (see module doc).

    ``only`` restricts to named configurations; ``sim_only`` skips the host probes
    (the simulated side alone, e.g. to look at the model on a host without rights).
    """
    from .. import run_many

    info = host_info()
    cfgs = [c for c in configurations(info.nr_cpus) if not only or c.name in only]
    if only:
        unknown = sorted(set(only) - {c.name for c in cfgs})
        if unknown:
            names = ", ".join(c.name for c in configurations(info.nr_cpus))
            raise KeyError(f"unknown configuration(s) {', '.join(unknown)}: expected some of {names}")
    doc: dict[str, Any] = {"host": info.to_dict(), "seconds": seconds, "compared": False, "configs": []}
    can_probe = info.cgroup.version is not None and info.compiler is not None
    if not can_probe and not sim_only:
        doc["reason"] = info.cgroup.reason if info.cgroup.version is None else "no C compiler (cc, gcc or clang) to build the probe"
        return doc
    exe = None
    if not sim_only:
        from .probe import build_probe

        exe = build_probe(info.compiler)  # type: ignore[arg-type]
    for cfg in cfgs:
        entry: dict[str, Any] = {"name": cfg.name, "what": cfg.what}
        if exe is not None:
            from .probe import run_config

            if on_step:
                on_step(f"host: {cfg.name}")
            entry["measurement"] = run_config(exe, info.cgroup, cfg, seconds, seed=1)
            entry["real"] = _cmp.real_figures(cfg, entry["measurement"])
        if on_step:
            on_step(f"schedlab: {cfg.name}")
        sim_doc = scenario(cfg, info.profile, info.hz, seconds, info.nr_cpus)
        runs = run_many(sim_doc, seeds=list(range(1, seeds + 1)))
        entry["sim_seeds"] = seeds
        entry["sim"] = _cmp.mean_figures([_cmp.sim_figures(cfg, r.raw) for r in runs])
        entry["rows"] = _cmp.compare(entry.get("real", {}), entry["sim"])
        doc["configs"].append(entry)
    doc["compared"] = exe is not None
    return doc


def recompare(doc: dict[str, Any]) -> dict[str, Any]:
    """Recomputes the figures and rows of a saved report from its raw measurements and
    its simulated figures (the comparison logic, without a host)."""
    by_name = {c.name: c for c in configurations(doc["host"]["nr_cpus"])}
    for entry in doc["configs"]:
        cfg: Config = by_name[entry["name"]]
        if "measurement" in entry:
            entry["real"] = _cmp.real_figures(cfg, entry["measurement"])
        entry["rows"] = _cmp.compare(entry.get("real", {}), entry["sim"])
    return doc
