"""``schedlab validate-host``: schedlab against this machine's own kernel. Registered on
the app of :mod:`schedlab.cli` (imported at its end)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from .cli import app, err, errors, out

__all__ = ["validate_host_cmd"]


def _fmt(v: Optional[float]) -> str:
    if v is None:
        return "—"
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 0.01:
        return f"{v:.3f}"
    return f"{v:.2e}"


def _pct(v: Optional[float]) -> str:
    return "—" if v is None else f"{v * 100:+.0f} %"


def print_report(doc: dict) -> None:
    h = doc["host"]
    out.print(f"host: Linux {h['kernel_release']} (schedlab profile {h['profile']}), {h['nr_cpus']} CPUs, "
              f"HZ {h['hz'] or 'unknown'} ({h['hz_source']}), load average {h['loadavg']}")
    out.print(f"cgroup: {h['cgroup']['reason']}; compiler: {h['compiler'] or 'none'}")
    if not doc["compared"] and "reason" in doc:
        out.print(f"[bold]nothing compared[/bold]: {doc['reason']}")
        return
    for c in doc["configs"]:
        t = Table(title=f"{c['name']}: {c['what']}", title_justify="left")
        for col, just in (("metric", "left"), ("unit", "left"), ("real", "right"), ("schedlab", "right"), ("diff", "right")):
            t.add_column(col, justify=just, no_wrap=True)  # type: ignore[arg-type]
        for r in c["rows"]:
            t.add_row(r["metric"], r["unit"], _fmt(r["real"]), _fmt(r["sim"]), _pct(r["rel_diff"]))
        out.print(t)
        m = c.get("measurement", {})
        if "others_cpu_ns" in m:
            others = m["others_cpu_ns"] / max(1, m["elapsed_ns"])
            out.print(f"  the rest of the host used {others:.2f} CPUs meanwhile; schedlab: mean of {c['sim_seeds']} seeds")
    out.print("real = this machine's kernel (one run per configuration); diff = (schedlab - real) / real; "
              "cpu.stat as the kernel defines it (docs/schema.md)")


@app.command("validate-host")
def validate_host_cmd(
    configs: Optional[List[str]] = typer.Argument(None, help="Configurations to run (default: all; --list names them).",
                                                  show_default=False),
    seconds: float = typer.Option(5.0, "--seconds", "-s", min=0.5, help="Length of each workload, real and simulated."),
    seeds: int = typer.Option(3, "--seeds", "-n", min=1, help="Simulated seeds per configuration (averaged)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the report as JSON to this file."),
    sim_only: bool = typer.Option(False, "--sim-only", help="Run only the simulated side (no host probes)."),
    list_configs: bool = typer.Option(False, "--list", help="List the configurations and exit."),
) -> None:
    """Compare schedlab with this machine's kernel: the same bandwidth and latency
    workloads in a fresh cgroup per configuration and in the simulator (host topology,
    HZ and kernel version). Without the rights to make cgroups it says so and exits 0."""
    from .validate_host import configurations, validate_host
    from .validate_host.host import host_info

    with errors():
        if list_configs:
            for c in configurations(host_info().nr_cpus):
                out.print(f"{c.name:<20} {c.what}")
            return

        def step(msg: str) -> None:
            if sys.stderr.isatty():
                err.print(f"[dim]{msg}[/dim]")

        doc = validate_host(seconds=seconds, only=configs or None, seeds=seeds, sim_only=sim_only, on_step=step)
        print_report(doc)
        if json_out is not None:
            json_out.write_text(json.dumps(doc, indent=1) + "\n")
            out.print(f"wrote {json_out}")
