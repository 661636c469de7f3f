"""Per-run views (``schedlab run SCENARIO --plot DIR``):

- a per-CPU timeline of a short window from the first seed's trace (one row per CPU, one
  bar per task run, coloured by task name);
- wakeup-latency CDFs from each seed's histogram;
- for groups with a quota, the CPU time each period got (from the trace) against the
  quota, with cpu.stat's nr_throttled / nr_periods;
- idle residency per cpuidle state per CPU, where the result has it
  (``cpus[i].idle_states``: ``name``, ``usage``, ``time_ns``, as sysfs cpuidle reports).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .page import PALETTE, Report, mpl, plotly_go, series_colors, subplots

__all__ = ["run_report", "trace_slices", "timeline_window", "usage_per_period", "latency_cdf", "idle_residency"]

TIMELINE_SLICES = 600  # about this many task runs in the timeline window
MAX_TIMELINE_CPUS = 96


# ----------------------------------------------------------------------------- data
def trace_slices(path: str | Path) -> list[tuple[int, int, int, str, int]]:
    """(cpu, start_ns, end_ns, task name, pid) of every task run in a Perfetto (Chrome
    JSON) trace written by schedlab, sorted by start."""
    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    out = []
    for e in events:
        if e.get("ph") == "X":
            start = round(float(e["ts"]) * 1000)
            args = e.get("args", {})
            out.append((int(args.get("cpu", e.get("tid", 0))), start, start + round(float(e.get("dur", 0)) * 1000),
                        str(e.get("name", "")), int(args.get("pid", -1))))
    out.sort(key=lambda s: (s[1], s[0]))
    return out


def timeline_window(slices: Sequence[tuple], sim_ns: int, target: int = TIMELINE_SLICES) -> tuple[int, int]:
    """A window [start, end) from the middle of the run holding about ``target`` task runs."""
    if not slices:
        return 0, max(sim_ns, 1)
    mid = sim_ns // 2
    starts = [s[1] for s in slices]
    import bisect

    i = bisect.bisect_left(starts, mid)
    if i >= len(slices) - 1:
        i = max(0, len(slices) - target)
    j = min(len(slices) - 1, i + target)
    start, end = slices[i][1], max(slices[j][1], slices[i][2])
    return start, max(end, start + 1000)


def family(name: str) -> str:
    """``worker-12`` -> ``worker``: copies of a task share a colour."""
    return re.sub(r"-\d+$", "", name)


def usage_per_period(slices: Sequence[tuple], pids: set[int], period_ns: int, sim_ns: int) -> list[float]:
    """CPU time (ns) the tasks ``pids`` ran in each period [k P, (k+1) P), summed over CPUs."""
    n = max(1, math.ceil(sim_ns / period_ns))
    out = [0.0] * n
    for _, a, b, _, pid in slices:
        if pid not in pids:
            continue
        k = a // period_ns
        while a < b and k < n:
            edge = (k + 1) * period_ns
            out[k] += min(b, edge) - a
            a = edge
            k += 1
    return out


# The summary's percentiles: (field, fraction of samples at or below it).
CDF_PERCENTILES = (("p20_ns", 0.2), ("p50_ns", 0.5), ("p90_ns", 0.9), ("p99_ns", 0.99), ("p999_ns", 0.999))


def latency_cdf(hist: dict[str, Any]) -> tuple[list[float], list[float]]:
    """(µs, cumulative fraction): the histogram's log-spaced buckets (at their upper
    bounds) with the summary's own percentiles as points of the curve, so the curve
    crosses 1/2 at the p50 the tables print (the coarse buckets alone crossed it at a
    bucket bound, up to a factor 2 away): below a percentile's value the curve stays
    under its fraction, from it on it is at least that."""
    import math

    buckets = hist.get("buckets", [])
    total = sum(c for _, c in buckets) or 1
    pts: list[tuple[float, float]] = []
    acc = 0
    if buckets:
        pts.append((max(buckets[0][0], 1) / 2e3, 0.0))  # the curve rises from 0 at the first bucket
    for upper, count in buckets:
        acc += count
        pts.append((max(upper, 1) / 1e3, acc / total))
    marks = sorted((hist[f] / 1e3, q) for f, q in CDF_PERCENTILES if hist.get(f) is not None and buckets)
    pts += marks
    pts.sort(key=lambda p: (p[0], p[1]))
    xs, ys = [], []
    for x, y in pts:
        for mx, q in marks:
            if mx <= x:
                y = max(y, q)
            else:
                y = min(y, math.nextafter(q, 0.0))
        if ys:
            y = max(y, ys[-1])
        xs.append(x)
        ys.append(y)
    return xs, ys


def idle_residency(raw: dict[str, Any]) -> tuple[list[str], list[int], dict[str, list[float]], dict[str, int]] | None:
    """(state names, CPUs, seconds per state per CPU, entries per state) or None when the
    result has no ``idle_states``."""
    cpus = [c for c in raw.get("cpus", []) if c.get("idle_states")]
    if not cpus:
        return None
    names = list(dict.fromkeys(s["name"] for c in cpus for s in c["idle_states"]))
    secs = {n: [] for n in names}
    usage = {n: 0 for n in names}
    for c in cpus:
        by = {s["name"]: s for s in c["idle_states"]}
        for n in names:
            secs[n].append(by.get(n, {}).get("time_ns", 0) / 1e9)
            usage[n] += int(by.get(n, {}).get("usage", 0))
    return names, [c.get("cpu", i) for i, c in enumerate(cpus)], secs, usage


# ----------------------------------------------------------------------------- views
def _timeline(rep: Report, raw: dict, slices: list) -> None:
    plt, go = mpl(), plotly_go()
    sim_ns = int(raw.get("engine", {}).get("sim_ns", 0))
    start, end = timeline_window(slices, sim_ns)
    window = [s for s in slices if s[2] > start and s[1] < end]
    active = sorted({s[0] for s in window})
    nr = int(raw.get("nr_cpus", 0) or (max(active) + 1 if active else 1))
    shown = active[:MAX_TIMELINE_CPUS]
    fams = list(dict.fromkeys(family(s[3]) for s in window))
    color = dict(zip(fams, series_colors(len(fams))))
    unit = 1e3 if end - start < 20e6 else 1e6  # µs or ms on the axis
    uname = "µs" if unit == 1e3 else "ms"
    fig, ax = plt.subplots(figsize=(11, 0.9 + 0.16 * max(len(shown), 4)))
    row = {c: k for k, c in enumerate(shown)}
    pfig = go.Figure()
    for f in fams:
        mine = [s for s in window if family(s[3]) == f and s[0] in row]
        bars = [(max(s[1], start) / unit, (min(s[2], end) - max(s[1], start)) / unit) for s in mine]
        by_cpu: dict[int, list] = {}
        for s, xw in zip(mine, bars):
            by_cpu.setdefault(s[0], []).append(xw)
        for cpu, ranges in by_cpu.items():
            ax.broken_barh(ranges, (row[cpu] - 0.4, 0.8), color=color[f], linewidth=0)
        pfig.add_trace(go.Bar(base=[b[0] for b in bars], x=[b[1] for b in bars], y=[f"CPU {s[0]}" for s in mine],
                              orientation="h", name=f, marker_color=color[f], marker_line_width=0,
                              customdata=[[s[3], s[4]] for s in mine],
                              hovertemplate=f"%{{customdata[0]}} (pid %{{customdata[1]}})<br>%{{base:.1f}} + "
                                            f"%{{x:.2f}} {uname}<extra></extra>"))
    for f in fams[:12]:
        ax.plot([], [], color=color[f], lw=6, label=f)
    ax.set_yticks(range(len(shown)))
    ax.set_yticklabels([f"CPU {c}" for c in shown], fontsize=6 if len(shown) > 24 else 8)
    ax.set_ylim(len(shown) - 0.5, -0.5)
    ax.set_xlim(start / unit, end / unit)
    ax.set_xlabel(f"simulated time ({uname})")
    ax.grid(False)
    if fams:
        ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    idle = nr - len(shown)
    pfig.update_layout(barmode="overlay", template="plotly_white", height=int(160 + 16 * max(len(shown), 4)),
                       xaxis_title=f"simulated time ({uname})", bargap=0.15,
                       yaxis={"autorange": "reversed", "type": "category"}, margin={"t": 30, "l": 60, "r": 10, "b": 40})
    rep.figure("timeline", f"per-CPU timeline, seed {raw.get('seed')}: {len(window)} task runs in "
                           f"{(end - start) / 1e6:.3f} ms from the middle of the run"
                           + (f"; {idle} CPUs ran nothing in the window and are not shown" if idle > 0 else ""),
               fig, pfig)


def _latency(rep: Report, raws: list[dict]) -> None:
    from ..figures import RATE_SUFFIX  # rates (per second) are not latencies

    names = list(dict.fromkeys(n for r in raws for n, h in r.get("histograms", {}).items()
                               if h.get("count") and not n.endswith(RATE_SUFFIX)))
    if not names:
        rep.text("No latency histogram has samples.", muted=True)
        return
    plt = mpl()
    fig, axes = plt.subplots(1, len(names), figsize=(5.5 * len(names), 3.6), squeeze=False)
    pfig = subplots(1, len(names), names)
    go = plotly_go()
    for i, name in enumerate(names):
        ax = axes[0][i]
        for k, r in enumerate(raws):
            h = r.get("histograms", {}).get(name)
            if not h or not h.get("count"):
                continue
            xs, ys = latency_cdf(h)
            c = series_colors(len(raws))[k]
            ax.step(xs, ys, where="post", color=c, label=f"seed {r.get('seed')}")
            pfig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line={"shape": "hv", "color": c},
                                      name=f"seed {r.get('seed')}", legendgroup=str(k), showlegend=(i == 0)),
                           row=1, col=i + 1)
        first = next((r["histograms"][name] for r in raws if r.get("histograms", {}).get(name, {}).get("count")), {})
        floor = latency_cdf(first)[0][1] if first.get("buckets") else 1.0  # the first bucket's upper bound
        for q, ls in (("p50_ns", ":"), ("p99_ns", "--")):
            if first.get(q):
                us = first[q] / 1e3
                # A percentile inside the first bucket is drawn at its bound ("≤ bound").
                ax.axvline(max(us, floor), color="grey", ls=ls, lw=0.8,
                           label=f"{q[:-3]} = {us:.3g} µs" if us >= floor else f"{q[:-3]} ≤ {floor:g} µs")
        ax.set_xscale("log")
        ax.set_xlabel(f"{name} (µs; bucket upper bounds and the percentiles)")
        ax.set_ylabel("fraction of samples ≤ x")
        ax.set_ylim(0, 1.02)
        ax.legend(fontsize=7, frameon=False)
        pfig.update_xaxes(type="log", title_text=f"{name} (µs)", row=1, col=i + 1)
    fig.tight_layout()
    pfig.update_layout(template="plotly_white", height=380, yaxis_title="fraction ≤ x", margin={"t": 40, "b": 40})
    rep.figure("latency-cdf", "latency CDFs, one line per seed (from the log-spaced histogram buckets)", fig, pfig)


def _throttling(rep: Report, raw: dict, slices: list) -> None:
    from ..results import bandwidth_figures

    limited = [g for g in raw.get("groups", []) if g.get("quota_ns") is not None and g.get("period_ns")]
    if not limited:
        return
    plt, go = mpl(), plotly_go()
    sim_ns = int(raw.get("engine", {}).get("sim_ns", 0))
    figs = bandwidth_figures(raw)
    fig, axes = plt.subplots(len(limited), 1, figsize=(11, 2.8 * len(limited)), squeeze=False)
    pfig = subplots(len(limited), 1, [f"group {g['name']}" for g in limited])
    for i, g in enumerate(limited):
        pids = {t["pid"] for t in raw.get("tasks", []) if t.get("group") == g["name"]}
        per = [v / 1e6 for v in usage_per_period(slices, pids, int(g["period_ns"]), sim_ns)]
        quota = g["quota_ns"] / 1e6
        ax = axes[0 if len(limited) == 1 else i][0]
        ax.bar(range(len(per)), per, width=0.9, color=PALETTE[0], label="CPU time in the period (trace)")
        ax.axhline(quota, color=PALETTE[3], lw=1.2, label=f"quota {quota:g} ms")
        f = figs.get(g["name"], {})
        ax.set_title(f"group {g['name']}: cpu.stat nr_throttled {f.get('nr_throttled', 0):.0f} of "
                     f"{f.get('nr_periods', 0):.0f} periods, usage {f.get('usage_of_quota', math.nan):.3f} of quota",
                     fontsize=9)
        ax.set_xlabel(f"period ({g['period_ns'] / 1e6:g} ms each)")
        ax.set_ylabel("ms of CPU")
        ax.legend(fontsize=7, frameon=False)
        pfig.add_trace(go.Bar(x=list(range(len(per))), y=per, marker_color=PALETTE[0], name=f"{g['name']} CPU time",
                              hovertemplate="period %{x}: %{y:.2f} ms<extra></extra>"), row=i + 1, col=1)
        pfig.add_hline(y=quota, line_color=PALETTE[3], row=i + 1, col=1)
    fig.tight_layout()
    pfig.update_layout(template="plotly_white", height=int(260 * len(limited) + 60), showlegend=False,
                       margin={"t": 40, "b": 40})
    rep.figure("throttling-per-period", "CPU time each bandwidth period gave the group (from the trace's task "
                                        "runs, all CPUs) against its quota; the title gives cpu.stat's totals",
               fig, pfig)


def _idle(rep: Report, raw: dict) -> None:
    res = idle_residency(raw)
    if res is None:
        rep.text("Idle residency per state: this result has no `cpus[].idle_states` (a core without "
                 "cpuidle states); nothing to plot.", muted=True)
        return
    names, cpus, secs, usage = res
    plt, go = mpl(), plotly_go()
    fig, ax = plt.subplots(figsize=(11, 0.9 + 0.14 * max(len(cpus), 8)))
    left = [0.0] * len(cpus)
    pfig = go.Figure()
    for n, c in zip(names, series_colors(len(names))):
        ax.barh(range(len(cpus)), secs[n], left=left, color=c, height=0.8, label=f"{n} ({usage[n]:,} entries)")
        left = [a + b for a, b in zip(left, secs[n])]
        pfig.add_trace(go.Bar(y=[f"CPU {c_}" for c_ in cpus], x=secs[n], orientation="h", name=n, marker_color=c))
    ax.set_yticks(range(len(cpus)))
    ax.set_yticklabels([f"CPU {c}" for c in cpus], fontsize=6 if len(cpus) > 24 else 8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds in the state")
    ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    pfig.update_layout(barmode="stack", template="plotly_white", height=int(160 + 14 * max(len(cpus), 8)),
                       yaxis={"autorange": "reversed"}, xaxis_title="seconds in the state", margin={"t": 30})
    rep.figure("idle-residency", f"idle residency per cpuidle state and CPU, seed {raw.get('seed')}", fig, pfig)


def run_report(out_dir: Path, raws: Sequence[dict], trace: str | Path | None, title: str | None = None) -> Report:
    """Writes the per-run report of one scenario's runs (``raws``: RunResult dicts, one
    per seed; ``trace``: the first seed's Perfetto trace, if any)."""
    from ..figures import figures
    from ..reproduce.compare import mean_std
    from ..reproduce.report import fmt

    raws = list(raws)
    first = raws[0]
    v = first.get("kernel", {}).get("version", {})
    rep = Report(title or f"schedlab run: {first.get('scenario') or '(unnamed)'}", Path(out_dir))
    rep.text(f"Machine **{first.get('machine')}** ({first.get('nr_cpus')} CPUs), kernel profile "
             f"{v.get('major')}.{v.get('minor')} ({str(first.get('kernel', {}).get('policy', '')).upper()}), "
             f"seeds {', '.join(str(r.get('seed')) for r in raws)}.")
    figs = [figures(r) for r in raws]
    names = [n for n in dict.fromkeys(k for f in figs for k in f)
             if not n.startswith("summary.") or n in ("summary.migrations", "summary.wakeups", "summary.utilization",
                                                      "summary.context_switches")]
    rows = []
    for n in names:
        vals = [f.get(n, math.nan) for f in figs]
        m, s = mean_std(vals)
        rows.append([n] + [fmt(x) for x in vals] + ([f"{fmt(m)} ± {fmt(s, m)}"] if len(raws) > 1 else []))
    rep.heading("Figures")
    rep.table(["figure"] + [f"seed {r.get('seed')}" for r in raws] + (["mean ± std"] if len(raws) > 1 else []), rows)
    slices = trace_slices(trace) if trace else []
    rep.heading("Per-CPU timeline")
    if slices:
        _timeline(rep, first, slices)
    else:
        rep.text("No trace: no timeline.", muted=True)
    rep.heading("Wakeup latency")
    _latency(rep, raws)
    if any(g.get("quota_ns") is not None for g in first.get("groups", [])):
        rep.heading("CPU bandwidth: throttling per period")
        if slices:
            _throttling(rep, first, slices)
    rep.heading("Idle residency")
    _idle(rep, first)
    rep.write()
    return rep
