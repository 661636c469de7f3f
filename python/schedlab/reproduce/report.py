"""Reproduction tables: rich (terminal), Markdown (``--out DIR``) and JSON rows."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from .compare import ROW_FIELDS, Row
from .registry import Experiment

__all__ = ["fmt", "cal_mark", "verdict_summary", "rich_tables", "markdown", "write_markdown", "rows_json", "notes"]

CAL_MARK = "†"


def fmt(x: float | None, like: float | None = None) -> str:
    """Formats a figure with about 4 significant digits; ``like`` picks the decimals (a
    spread is shown with its mean's)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    ref = abs(like if like is not None else x)
    if ref >= 1000:
        return f"{x:,.0f}"
    if ref >= 100:
        d = 1
    elif ref >= 1:
        d = 3
    elif ref == 0:
        d = 0 if x == 0 else 3
    else:
        d = 3 - int(math.floor(math.log10(ref)))
    return f"{x:.{d}f}"


def cal_mark(r: Row) -> str:
    """``†x697.6`` for a calibrated row (the factor its simulated values were scaled by)."""
    if not r.calibrated:
        return ""
    return f"{CAL_MARK}x{r.scale:.4g}" if r.scale is not None else CAL_MARK


def simulated(r: Row) -> str:
    if r.simulated_mean is None:
        return "—"
    if r.simulated_std is None:
        return fmt(r.simulated_mean)
    return f"{fmt(r.simulated_mean)} ± {fmt(r.simulated_std, r.simulated_mean)}"


def spread(r: Row) -> str:
    """``median [p5, p95]`` of a row, or "—" (ratio-of-means rows have none)."""
    if r.simulated_median is None:
        return "—"
    like = r.simulated_median
    return f"{fmt(r.simulated_median)} [{fmt(r.simulated_p5, like)}, {fmt(r.simulated_p95, like)}]"


# Seeds from which the table shows each row's median and 5-95 % range.
SPREAD_MIN_SEEDS = 10


def notes(rows: Sequence[Row], experiments: Iterable[Experiment]) -> list[str]:
    """Footnotes: sources and every calibration factor (docs/architecture.md, Calibration: they are stated)."""
    out = []
    exps = {e.name: e for e in experiments}
    for name in dict.fromkeys(r.experiment for r in rows):
        e = exps.get(name)
        if e is not None:
            out.append(f"{name}: published figures from {e.source}" + (f" ({e.source.note})" if e.source.note else ""))
    seen = set()
    for r in rows:
        if r.calibrated and (r.experiment, r.machine, r.metric) not in seen:
            seen.add((r.experiment, r.machine, r.metric))
            base = exps[r.experiment].baseline if r.experiment in exps else "baseline"
            out.append(f"{CAL_MARK} {r.experiment} / {r.machine} / {r.metric}: simulated values scaled by "
                       f"{r.scale:.4g}, calibrated on the published {base} level; the change ratios are not calibrated")
    return out


def rich_tables(rows: Sequence[Row], experiments: Iterable[Experiment]) -> list:
    """One rich table per (experiment, machine), titled with both; a row per
    (configuration, metric): published, simulated mean ± std, sim/pub and the calibration mark."""
    from rich.table import Table

    exps = {e.name: e for e in experiments}
    tables = []
    for exp_name, machine in dict.fromkeys((r.experiment, r.machine) for r in rows):
        mine = [r for r in rows if r.experiment == exp_name and r.machine == machine]
        seeds = max((r.n_seeds for r in mine), default=0)
        short = any(r.n_seeds < seeds for r in mine)
        show_spread = seeds >= SPREAD_MIN_SEEDS
        title = exps[exp_name].title if exp_name in exps else ""
        t = Table(title=f"[bold]{exp_name}[/] on [bold]{machine}[/]: {title}\n"
                        f"simulated = mean ± std over the {seeds} seeds run"
                        + ("; n = seeds with a value where fewer (the metric is missing from a run, "
                           "or a ratio's baseline is 0 in that seed)" if short else "")
                        + ("; median \\[p5, p95] over seeds" if show_spread else "")
                        + f"; sim/pub = simulated mean / published; {CAL_MARK}xF = calibrated, scaled by F",
                  title_justify="left")
        t.add_column("config")
        t.add_column("metric", no_wrap=True)
        t.add_column("published", justify="right", no_wrap=True)
        t.add_column("simulated", justify="right", no_wrap=True)
        if show_spread:
            t.add_column("median \\[p5, p95]", justify="right", no_wrap=True)
        if short:
            t.add_column("n", justify="right", no_wrap=True)
        t.add_column("sim/pub", justify="right", no_wrap=True)
        t.add_column("calibrated", justify="left", no_wrap=True)
        for r in mine:
            metric = f"{r.metric} (ratio)" if r.unit == "ratio" else (f"{r.metric} [{r.unit}]" if r.unit else r.metric)
            n = [str(r.n_seeds) if r.n_seeds < seeds else ""] if short else []
            sp = [spread(r)] if show_spread else []
            t.add_row(r.config.replace("[", "\\["), metric.replace("[", "\\["), fmt(r.published), simulated(r), *sp,
                      *n, fmt(r.ratio), cal_mark(r))
        tables.append(t)
    return tables


def markdown(exp: Experiment, rows: Sequence[Row], version: str = "") -> str:
    """One experiment's table as Markdown."""
    lines = [f"# {exp.name}: {exp.title}", ""]
    if exp.description:
        lines += [exp.description.strip(), ""]
    note = f" ({exp.source.note})" if exp.source.note else ""
    lines += [f"Published figures: {exp.source}{note}.", ""]
    lines += ["| machine | config | metric | unit | published | simulated (mean ± std) | median [p5, p95] | n seeds | "
              "sim/pub | calibrated |",
              "|---|---|---|---|---:|---:|---:|---:|---:|:---:|"]
    for r in rows:
        lines.append(f"| {r.machine} | {r.config} | {r.metric} | {r.unit} | {fmt(r.published)} | {simulated(r)} | "
                     f"{spread(r)} | {r.n_seeds} | {fmt(r.ratio)} | {cal_mark(r)} |")
    extra = [n for n in notes(rows, [exp]) if n.startswith(CAL_MARK)]
    if extra:
        lines += [""] + [f"{n}" for n in extra]
    lines += ["", "Change rows (\"A vs B\") are the mean over seeds of the per-seed ratio A/B; "
              "they are never calibrated.", ""]
    if version:
        lines += [f"Generated by schedlab {version}.", ""]
    return "\n".join(lines)


def write_markdown(out_dir: Path, experiments: Sequence[Experiment], rows: Sequence[Row], version: str = "") -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for exp in experiments:
        mine = [r for r in rows if r.experiment == exp.name]
        path = out_dir / f"{exp.name}.md"
        path.write_text(markdown(exp, mine, version), encoding="utf-8")
        written.append(path)
    return written


def rows_json(rows: Sequence[Row]) -> list[dict]:
    return [{k: r.to_dict()[k] for k in ROW_FIELDS} for r in rows]


# ----------------------------------------------------------------------- the verdict
def _figure_name(r: Row) -> str:
    unit = " (ratio)" if r.unit == "ratio" else (f" [{r.unit}]" if r.unit else "")
    return f"{r.machine} {r.config}: {r.metric}{unit}"


def published_place(r: Row) -> str:
    """Where the published figure falls among the seeds: ``p62`` (62 % of the seeds give
    less), ``< all 40`` / ``> all 40`` outside them, "—" where the seeds do not vary."""
    if r.published_rank is None:
        return "—"
    if r.published_rank == 0:
        return f"< all {r.n_seeds}"
    if r.published_rank == 100:
        return f"> all {r.n_seeds}"
    return f"p{r.published_rank:.0f}"


def verdict_cells(j, how: dict[str, str]) -> list[str]:
    """The cells of one verdict row: experiment, figure (machine, configuration,
    metric), published, simulated mean ± std, [p5, p95] over seeds, where the published
    figure falls among the seeds, calibration factor, verdict, why."""
    r = j.row
    sp = f"[{fmt(r.simulated_p5, r.simulated_median)}, {fmt(r.simulated_p95, r.simulated_median)}]" \
        if r.simulated_p5 is not None and r.n_seeds > 1 else "—"
    sim = simulated(r) if r.n_seeds > 1 else fmt(r.simulated_mean)
    return [r.experiment, _figure_name(r), fmt(r.published), sim, sp, published_place(r), cal_mark(r), j.verdict,
            j.why]


VERDICT_HEADER = ["experiment", "published figure", "published", "simulated", "[p5, p95]", "pub. among seeds",
                  "factor", "reproduced", "why"]


def verdict_summary(judged) -> str:
    """``Verdict: 83 of 126 published figures reproduced, 7 in direction only, ...``"""
    from .verdict import summary_counts

    c = summary_counts(judged)
    judged_n = len(judged) - c["fitted"] - c["no result"]
    return (f"Verdict: {c['yes']} of {judged_n} published figures reproduced, {c['direction only']} in direction "
            f"only, {c['no']} not" + (f", {c['fitted']} fitted by calibration" if c["fitted"] else "")
            + (f", {c['no result']} without a result" if c["no result"] else ""))


def verdict_title(judged, experiments: Sequence[Experiment]) -> str:
    from .verdict import EFFECT_FACTOR, LEVEL_TOLERANCE, NO_EFFECT

    return (verdict_summary(judged)
            + f". Bar (docs/experiments.md): a level within {LEVEL_TOLERANCE:.0%} of the published figure or "
              f"inside the simulated 5-95 % range over seeds; a change in the same direction and within x"
              f"{EFFECT_FACTOR:g} of the published effect (ln ratio); a published change under {NO_EFFECT:.0%} "
              f"counts as no effect. simulated = mean ± std over seeds; pub. among seeds = the share of seeds "
              f"below the published figure (one published run is one sample of what the model says varies).")


def verdict_rich(judged, experiments: Sequence[Experiment], how: dict[str, str]):
    """The verdict as one rich table: a heading row per experiment (how it ran), then a
    row per published figure."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=escape(verdict_title(judged, experiments)), title_justify="left", show_lines=False)
    for h in VERDICT_HEADER[1:]:
        right = h in ("published", "simulated", "[p5, p95]")
        t.add_column(escape(h), justify="right" if right else "left", overflow="fold",
                     no_wrap=h in ("published", "simulated", "[p5, p95]", "pub. among seeds", "factor", "reproduced"))
    style = {"yes": "green", "direction only": "yellow", "no": "red", "fitted": "dim", "no result": "red"}
    last = None
    for j in judged:
        if j.row.experiment != last:
            if last is not None:
                t.add_section()
            t.add_row(f"[bold]{escape(j.row.experiment)}[/] ({escape(how.get(j.row.experiment, ''))})")
            last = j.row.experiment
        cells = [escape(c) for c in verdict_cells(j, how)][1:]
        cells[0] = "  " + cells[0]
        cells[6] = f"[{style[j.verdict]}]{cells[6]}[/]"
        t.add_row(*cells)
    return t


def verdict_markdown(judged, experiments: Sequence[Experiment], how: dict[str, str], version: str = "") -> str:
    """The verdict as Markdown (``--out DIR``: verdict.md)."""
    lines = ["# schedlab reproduce: the verdict", "", verdict_title(judged, experiments), "",
             "| " + " | ".join(VERDICT_HEADER) + " |", "|" + "---|" * len(VERDICT_HEADER)]
    for j in judged:
        cells = verdict_cells(j, how)
        cells[0] = f"{cells[0]} ({how.get(j.row.experiment, '')})"
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    lines += ["", "Sources:", ""]
    for e in experiments:
        lines.append(f"- {e.name}: {e.source}")
    if version:
        lines += ["", f"Generated by schedlab {version}."]
    return "\n".join(lines) + "\n"
