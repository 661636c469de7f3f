"""The report of ``schedlab reproduce --out DIR``: published against simulated, per
experiment and machine.

For each metric, a horizontal bar per configuration: the simulated mean with its spread
(± one sample standard deviation over seeds) and, beside it, the published figure where
there is one. Change rows ("A vs B", ratios) get panels of their own, with a line at 1.
With ``bands`` (a sensitivity study's rows, schedlab.sensitivity), a row that has one
draws its band instead: the seed spread p5..p95 widened by the constant band.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from .page import PALETTE, Report, mpl, plotly_go, subplots

__all__ = ["reproduction_report"]

SIM, PUB = PALETTE[0], "#8c8c8c"


def _panel_rows(rows, metric: str, change: bool):
    return [r for r in rows if r.metric == metric and (r.unit == "ratio") == change and
            (" vs " in r.config) == change]


Band = tuple[float, float]  # (low, high) of the seed spread widened by the constant band


def _errors(rs, bands: dict | None) -> list[list[float]]:
    """Asymmetric error bars: the row's band where it has one, else ± std."""
    lo, hi = [], []
    for r in rs:
        b = (bands or {}).get((r.experiment, r.machine, r.config, r.metric))
        m = r.simulated_mean
        if b is not None and m is not None:
            lo.append(max(m - b[0], 0.0))
            hi.append(max(b[1] - m, 0.0))
        else:
            lo.append(r.simulated_std or 0.0)
            hi.append(r.simulated_std or 0.0)
    return [lo, hi]


def _draw(rep: Report, name: str, caption: str, panels: list[tuple[str, list]], ratio: bool,
          bands: dict | None = None) -> None:
    plt = mpl()
    go = plotly_go()
    n = len(panels)
    height = max(len(rs) for _, rs in panels)
    ncols = min(2, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(11, nrows * (0.9 + 0.3 * height) + 0.5), squeeze=False)
    pfig = subplots(nrows, ncols, [t for t, _ in panels], horizontal_spacing=0.3 if ncols > 1 else 0.1,
                    vertical_spacing=min(0.3, 0.6 / nrows) if nrows > 1 else 0.1)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for i, (title, rs) in enumerate(panels):
        ax = axes.flat[i]
        prow, pcol = i // ncols + 1, i % ncols + 1
        labels = [r.config for r in rs]
        y = list(range(len(rs)))
        sim = [r.simulated_mean if r.simulated_mean is not None else float("nan") for r in rs]
        err = _errors(rs, bands)
        what = "seeds p5-p95 + constant band" if bands else "mean ± std over seeds"
        pub = [r.published for r in rs]
        has_pub = any(p is not None for p in pub)
        h = 0.38 if has_pub else 0.7
        ax.barh([v - (h / 2 if has_pub else 0) for v in y], sim, height=h, xerr=err, color=SIM, capsize=2,
                error_kw={"elinewidth": 0.8}, label=f"simulated ({what})")
        if has_pub:
            ax.barh([v + h / 2 for v in y], [p if p is not None else 0 for p in pub], height=h, color=PUB,
                    label="published")
        if ratio:
            ax.axvline(1.0, color="black", lw=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_title(title, fontsize=9)
        pfig.add_trace(go.Bar(y=labels, x=sim, orientation="h", name=f"simulated ({what})", marker_color=SIM,
                              error_x={"type": "data", "array": err[1], "arrayminus": err[0]}, legendgroup="sim", showlegend=(i == 0),
                              hovertemplate="%{y}: %{x:.4g}<extra>simulated</extra>"), row=prow, col=pcol)
        if has_pub:
            pfig.add_trace(go.Bar(y=labels, x=pub, orientation="h", name="published", marker_color=PUB,
                                  legendgroup="pub", showlegend=(i == 0),
                                  hovertemplate="%{y}: %{x:.4g}<extra>published</extra>"), row=prow, col=pcol)
        pfig.update_yaxes(autorange="reversed", row=prow, col=pcol)
        if ratio:
            pfig.add_vline(x=1.0, line_width=1, line_color="black", row=prow, col=pcol)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.35 / fig.get_size_inches()[1]))
    pfig.update_layout(barmode="group", height=int(nrows * (110 + 22 * height) + 60), template="plotly_white",
                       margin={"t": 50, "l": 10, "r": 10, "b": 40}, legend={"orientation": "h", "y": -0.08})
    rep.figure(name, caption, fig, pfig)


def reproduction_report(out_dir: Path, experiments: Sequence, rows: Sequence, version: str = "",
                        title: str | None = None, judged: Sequence = (), how: dict | None = None,
                        bands: dict[tuple[str, str, str, str], Band] | None = None) -> Report:
    """Writes ``report.md``, ``report.html`` and ``png/`` into ``out_dir``; ``judged``
    (:func:`schedlab.reproduce.verdict.verdict_rows`) puts the verdict table first."""
    from ..reproduce.report import (
        SUMMARY_HEADER,
        VERDICT_HEADER,
        cal_mark,
        fmt,
        notes,
        simulated,
        summary_rows,
        verdict_bar,
        verdict_cells,
        verdict_sections,
        verdict_summary,
    )

    rep = Report(title or "schedlab reproductions: published vs simulated", Path(out_dir))
    if bands:
        rep.text("Error bars: the seed spread (p5..p95) widened by the constant band (min..max over a Morris design "
                 "over the constants' bands, `schedlab sensitivity`) where the row has one; ± std elsewhere.")
    if judged:
        # As the terminal has it: the summary per experiment, what is not reproduced, the rest.
        rep.heading("Verdict")
        rep.text(verdict_summary(judged) + ". " + verdict_bar())
        rep.table(SUMMARY_HEADER, summary_rows(judged, how or {}))
        for title, js in verdict_sections(judged):
            rep.heading(f"{title.capitalize()} ({len(js)})", level=3)
            rep.table(VERDICT_HEADER, [verdict_cells(j, how or {}) for j in js])
    rep.text("Each panel compares the simulated mean (bar, ± one standard deviation over seeds) with the "
             "published figure (grey) where one was published. Change rows (\"A vs B\") are per-seed ratios, "
             "never calibrated. " + (f"schedlab {version}." if version else ""))
    exps = {e.name: e for e in experiments}
    for exp_name, machine in dict.fromkeys((r.experiment, r.machine) for r in rows):
        mine = [r for r in rows if r.experiment == exp_name and r.machine == machine]
        exp = exps.get(exp_name)
        rep.heading(f"{exp_name} on {machine}")
        if exp is not None:
            rep.text(f"{exp.title}. Published figures: {exp.source}.")
        metrics = list(dict.fromkeys(r.metric for r in mine))
        values = [(f"{m} [{r0.unit}]" if (r0 := _panel_rows(mine, m, False)[0]).unit else m, _panel_rows(mine, m, False))
                  for m in metrics if _panel_rows(mine, m, False)]
        changes = [(f"{m} (ratio)", _panel_rows(mine, m, True)) for m in metrics if _panel_rows(mine, m, True)]
        if values:
            _draw(rep, f"{exp_name}-{machine}-values", f"{exp_name} on {machine}: simulated (mean ± std) "
                                                        f"vs published", values, ratio=False, bands=bands)
        if changes:
            _draw(rep, f"{exp_name}-{machine}-changes", f"{exp_name} on {machine}: changes (per-seed ratios, "
                                                         f"mean ± std) vs published", changes, ratio=True, bands=bands)
        rep.table(["config", "metric", "published", "simulated (mean ± std)", "seeds", "sim/pub", "calibrated"],
                  [[r.config, r.metric, fmt(r.published), simulated(r), r.n_seeds, fmt(r.ratio), cal_mark(r)]
                   for r in mine])
    foot = notes(rows, experiments)
    if foot:
        rep.heading("Notes")
        for n in foot:
            rep.text(n, muted=True)
    rep.write()
    return rep
