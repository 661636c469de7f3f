"""The report of a sweep directory: each chosen metric against each parameter.

In a panel for parameter P, every combination of the *other* parameters is one thin line
(its value at each P is the mean over seeds; the error bar spans the seeds' min..max),
coloured by the other parameter with the fewest values; the thick line of each colour
is the mean of its thin lines. So one panel shows both the trend along P and how much
it depends on the rest of the grid.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..reproduce.report import fmt
from .page import Report, mpl, plotly_go, series_colors, subplots

__all__ = ["sweep_report", "default_metrics"]

MAX_METRICS = 6


def default_metrics(columns: Sequence[str]) -> list[str]:
    """Workload figures, usage/throttling of limited groups, wakeup latency p50/p99."""
    picks = [c for c in columns if c.startswith("workload.")]
    picks += [c for c in columns if c.startswith("group.") and c.endswith((".usage_of_quota", ".throttled_share"))]
    picks += [c for c in columns if c.startswith("latency.wakeup_latency.") and c.endswith((".p50_us", ".p99_us"))]
    if not picks:
        picks = [c for c in ("summary.migrations", "summary.utilization") if c in columns]
    return picks[:MAX_METRICS]


def _order(values: Sequence[Any], declared: Sequence[Any]) -> list[Any]:
    seen = [v for v in declared if v in set(values)] if declared else []
    rest = sorted({v for v in values if v not in seen}, key=lambda v: (str(type(v)), v))
    return seen + rest


def _label(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def _panel_data(df, metric: str, param: str, params: list[str], declared: dict[str, list]):
    """For one (metric, parameter): x values, colour parameter and the lines."""
    others = [p for p in params if p != param]
    xs = _order(df[param].dropna().tolist(), declared.get(param, []))
    color = min(others, key=lambda p: (df[p].nunique(), -others.index(p))) if others else None
    per_point = df.groupby(["point"] + params, dropna=False)[metric].agg(["mean", "min", "max", "count"]).reset_index()
    lines = []
    groups = per_point.groupby(others, dropna=False, sort=False) if others else [((), per_point)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        ctx = dict(zip(others, key))
        g = g.set_index(param)
        pts = [(xs.index(x), g.loc[x, "mean"], g.loc[x, "min"], g.loc[x, "max"]) for x in xs if x in g.index]
        lines.append((ctx, pts))
    colors = _order([ctx.get(color) for ctx, _ in lines], declared.get(color, [])) if color else [None]
    return xs, color, colors, lines


def _draw_mpl(ax, xs, color, colors, lines, metric: str, param: str) -> None:
    for cval, c in zip(colors, series_colors(len(colors))):
        mine = [pts for ctx, pts in lines if color is None or ctx.get(color) == cval]
        for pts in mine:
            if not pts:
                continue
            x = [p[0] for p in pts]
            y = [p[1] for p in pts]
            err = [[_spread(p[1], p[2]) for p in pts], [_spread(p[3], p[1]) for p in pts]]
            ax.errorbar(x, y, yerr=err, color=c, alpha=0.25, lw=0.8, capsize=1.5, elinewidth=0.6)
        means = _mean_line(xs, mine)
        ax.plot([m[0] for m in means], [m[1] for m in means], color=c, lw=2.4, marker="o", ms=4,
                label=f"{_short(color)} = {_label(cval)}" if color else "mean")
    ax.set_xticks(range(len(xs)))
    ax.set_xticklabels([_label(x) for x in xs], rotation=0)
    ax.set_xlabel(param)
    ax.set_ylabel(metric)


def _spread(high: float, low: float) -> float:
    """An error bar's length, high - low, at least 0: where the seeds agree, the mean of
    equal floats can land an ulp outside their min..max (mean - min = -1e-13), and
    matplotlib refuses a negative yerr."""
    d = high - low
    return d if not d < 0 else 0.0


def _short(column: str | None) -> str:
    return (column or "").removeprefix("param.")


def _mean_line(xs, lines_pts):
    out = []
    for i in range(len(xs)):
        vals = [p[1] for pts in lines_pts for p in pts if p[0] == i and p[1] == p[1]]
        if vals:
            out.append((i, sum(vals) / len(vals)))
    return out


def _draw_plotly(fig, row: int, col: int, xs, color, colors, lines, metric: str, param: str, show_legend: bool):
    go = plotly_go()
    labels = [_label(x) for x in xs]
    for cval, c in zip(colors, series_colors(len(colors))):
        mine = [(ctx, pts) for ctx, pts in lines if color is None or ctx.get(color) == cval]
        for ctx, pts in mine:
            if not pts:
                continue
            hover = ", ".join(f"{k} = {_label(v)}" for k, v in ctx.items())
            fig.add_trace(go.Scatter(
                x=[labels[p[0]] for p in pts], y=[p[1] for p in pts], mode="lines+markers",
                line={"color": c, "width": 1}, marker={"size": 4}, opacity=0.3, showlegend=False,
                error_y={"type": "data", "symmetric": False, "array": [_spread(p[3], p[1]) for p in pts],
                         "arrayminus": [_spread(p[1], p[2]) for p in pts], "thickness": 0.8, "width": 2},
                hovertemplate=f"{param} = %{{x}}<br>{metric} = %{{y:.4g}}<br>{hover}<extra></extra>"),
                row=row, col=col)
        means = _mean_line(xs, [pts for _, pts in mine])
        fig.add_trace(go.Scatter(
            x=[labels[m[0]] for m in means], y=[m[1] for m in means], mode="lines+markers",
            line={"color": c, "width": 3}, name=f"{_short(color)} = {_label(cval)}" if color else "mean",
            legendgroup=f"{color}={cval}", showlegend=show_legend), row=row, col=col)
    fig.update_xaxes(title_text=param, type="category", categoryorder="array", categoryarray=labels, row=row, col=col)


def sweep_report(out_dir: Path, report_dir: Path | None = None, metrics: list[str] | None = None) -> Report:
    """Builds (and writes) the report of the sweep in ``out_dir`` into ``report_dir``
    (default ``out_dir/report``)."""
    from ..sweep import Store, read_results

    store = Store(out_dir)
    manifest = store.manifest()
    if manifest is None:
        raise InputError(f"{out_dir}: not a sweep directory (no sweep.json): run `schedlab sweep SPEC` first")
    df = read_results(out_dir)
    keys = {p["key"] for p in manifest["points"]}
    stale = 0
    if len(df):
        stale = int((~df["point_key"].isin(keys)).sum())
        df = df[df["point_key"].isin(keys)]
    params = [p["column"] for p in manifest["parameters"]] or \
        [c for c in df.columns if c.startswith("param.")]
    declared = {p["column"]: p["values"] for p in manifest["parameters"]}
    chosen = metrics or manifest.get("report", {}).get("metrics") or default_metrics(list(df.columns))
    missing = [m for m in chosen if m not in df.columns]
    chosen = [m for m in chosen if m in df.columns]
    rep = Report(f"sweep {manifest['name']}", report_dir or out_dir / "report")
    total = len(manifest["points"]) * len(manifest["seeds"])
    failures = store.failures()
    rep.text((manifest.get("description") or "").strip() or "A schedlab parameter sweep.")
    rep.table(["points", "seeds", "rows", "missing", "failed runs", "spec", "base scenario", "schedlab"],
              [[len(manifest["points"]), len(manifest["seeds"]), len(df), total - len(df), len(failures),
                f"`{manifest.get('spec', '')}`", f"`{manifest.get('base', '')}`", manifest.get("schedlab_version", "")]])
    rep.heading("Parameters")
    rep.table(["parameter", "values"], [[p["name"], ", ".join(_label(v) for v in p["values"])]
                                        for p in manifest["parameters"]])
    if stale:
        rep.text(f"{stale} stored rows belong to points the spec no longer has; they are left out.", muted=True)
    if missing:
        rep.text(f"Not in the dataset, so not plotted: {', '.join(f'`{m}`' for m in missing)}.", muted=True)
    if len(df) == 0 or not params:
        rep.text("No rows yet: nothing to plot.")
        rep.write()
        return rep
    plt = mpl()
    for metric in chosen:
        rep.heading(f"`{metric}` against each parameter")
        n = len(params)
        fig, axes = plt.subplots(1, n, figsize=(max(4.2 * n, 6), 3.6), squeeze=False, sharey=True)
        pfig = subplots(1, n, [p.removeprefix("param.") for p in params], shared_yaxes=True, horizontal_spacing=0.04)
        legends: set = set()
        for i, param in enumerate(params):
            data = _panel_data(df, metric, param, params, declared)
            _draw_mpl(axes[0][i], *data, metric, param.removeprefix("param."))
            axes[0][i].legend(fontsize=6, frameon=False)  # each panel may colour by another parameter
            if i:
                axes[0][i].set_ylabel("")
            _draw_plotly(pfig, 1, i + 1, *data, metric, param.removeprefix("param."), show_legend=data[1] not in legends)
            legends.add(data[1])
        fig.suptitle(f"{metric}: mean over seeds (bars: min..max over seeds)", fontsize=10)
        fig.tight_layout()
        pfig.update_layout(height=420, margin={"t": 60, "l": 60, "r": 20, "b": 50}, template="plotly_white",
                           yaxis_title=metric, legend={"orientation": "h", "y": -0.25})
        rep.figure(f"sweep-{metric}", f"{metric} against each parameter: thin lines = one combination of the "
                                      f"other parameters (error bars: seed min..max), thick = their mean",
                   fig, pfig)
        headers, rows, shown, total = _extremes(df, metric, params)
        if shown < total:
            rep.text(f"The {shown // 2} points with the highest mean `{metric}` and the {shown - shown // 2} with the "
                     f"lowest, of {total} points (all of them: the dataset).", muted=True)
        rep.table(headers, rows)
    rep.heading("Querying the dataset")
    rep.text(f"One row per (point, seed) in `{out_dir}/rows/*.parquet`, every parameter (`param.*`) and "
             f"figure as a column. With DuckDB: `SELECT \"param.{params[0].removeprefix('param.')}\", "
             f"avg(\"{chosen[0] if chosen else 'engine.events'}\") FROM read_parquet('{out_dir}/rows/*.parquet', "
             f"union_by_name = true) GROUP BY 1 ORDER BY 1`; with pandas: "
             f"`schedlab.sweep.read_results('{out_dir}')`.")
    rep.write()
    return rep


def _extremes(df, metric: str, params: list[str], n: int = 5):
    per = df.groupby(params, dropna=False)[metric].agg(["mean", "min", "max"]).reset_index()
    per = per[per["mean"].notna()].sort_values("mean", ascending=False)
    pick = list(per.head(n).itertuples(index=False))
    rest = per.iloc[n:]
    pick += list(rest.tail(n).itertuples(index=False))
    headers = [p.removeprefix("param.") for p in params] + [f"{metric} mean", "seed min", "seed max"]
    rows = []
    for k, r in enumerate(pick):
        vals = list(r)
        if k == n and len(per) > 2 * n:
            rows.append(["…"] * len(headers))  # the rows left out between the top and the bottom
        rows.append([_label(v) for v in vals[: len(params)]] + [fmt(vals[-3]), fmt(vals[-2], vals[-3]),
                                                                fmt(vals[-1], vals[-3])])
    return headers, rows, len(pick), len(per)

