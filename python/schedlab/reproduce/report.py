"""Reproduction tables: rich (terminal), Markdown (``--out DIR``) and JSON rows."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

from .compare import ROW_FIELDS, Row
from .registry import Experiment

__all__ = ["fmt", "cal_mark", "verdict_summary", "rich_tables", "markdown", "write_markdown", "rows_json", "notes",
           "verdict_rich", "verdict_markdown", "verdict_sections", "summary_rows", "verdict_bar", "verdict_factors"]

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
            out.append(f"{name}: published figures{' from' if e.source.subject else ':'} {e.source}" + (f" ({e.source.note})" if e.source.note else ""))
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
def _figure_name(r: Row, machine: bool = True) -> str:
    """``zen3-2s pull vs push: ns_per_iteration (ratio)``; without the machine and the
    "(ratio)" a change's "vs" already says, where the table's heading names the machine."""
    unit = (" (ratio)" if machine else "") if r.unit == "ratio" else (f" [{r.unit}]" if r.unit else "")
    return f"{r.machine} {r.config}: {r.metric}{unit}" if machine else f"{r.config}: {r.metric}{unit}"


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


def _range(r: Row) -> str:
    """``[p5, p95]`` over seeds, or "—" (one seed, or a ratio of means)."""
    if r.simulated_p5 is None or r.n_seeds <= 1:
        return "—"
    return f"[{fmt(r.simulated_p5, r.simulated_median)}, {fmt(r.simulated_p95, r.simulated_median)}]"


def verdict_cells(j, how: dict[str, str]) -> list[str]:
    """The cells of one verdict row (Markdown and HTML): experiment, figure (machine,
    configuration, metric), published, simulated mean ± std, [p5, p95] over seeds, where
    the published figure falls among the seeds, calibration factor, verdict, why."""
    r = j.row
    sim = simulated(r) if r.n_seeds > 1 else fmt(r.simulated_mean)
    return [r.experiment, _figure_name(r), fmt(r.published), sim, _range(r), published_place(r), cal_mark(r),
            str(j.verdict), j.why]


VERDICT_HEADER = ["experiment", "published figure", "published", "simulated", "[p5, p95]", "pub. among seeds",
                  "factor", "verdict", "why"]

SUMMARY_HEADER = ["experiment", "reproduced", "direction only", "not reproduced", "fitted", "total", "run with"]


def verdict_summary(judged) -> str:
    """``Verdict: 83 of 126 published figures reproduced, 7 in direction only, ...``"""
    from .verdict import summary_counts

    c = summary_counts(judged)
    judged_n = len(judged) - c["fitted"] - c["no result"]
    return (f"Verdict: {c['reproduced']} of {judged_n} published figures reproduced, {c['direction only']} in "
            f"direction only, {c['not reproduced']} not" + (f", {c['fitted']} fitted by calibration" if c["fitted"]
                                                            else "")
            + (f", {c['no result']} without a result" if c["no result"] else ""))


def verdict_bar() -> str:
    """The bar in one paragraph (docs/experiments.md has it in full)."""
    from .verdict import EFFECT_TOLERANCE, LEVEL_TOLERANCE, NO_EFFECT

    pct = lambda x: f"{x * 100:g} %"  # noqa: E731
    return (f"Bar (docs/experiments.md): a level is reproduced within {pct(LEVEL_TOLERANCE)} of the published "
            f"figure or with it inside the simulated p5-p95 over seeds; an effect (ratio - 1) within "
            f"±{pct(EFFECT_TOLERANCE)} of the published effect, or, where the seeds spread wider than that, with "
            f"the published ratio inside their p5-p95; a published effect under {pct(NO_EFFECT)} is no effect (the "
            f"simulated one must be under {pct(NO_EFFECT)} too). Direction only: the same sign, neither of those. "
            f"Fitted: the calibration factor was fitted on it.")


def verdict_title(judged, experiments: Sequence[Experiment] = ()) -> str:
    return verdict_summary(judged) + ". " + verdict_bar()


def summary_rows(judged, how: dict[str, str]) -> list[list[str]]:
    """A row per experiment (counts per class, total, how it ran), then one for all."""
    from .verdict import per_experiment, summary_counts

    def cells(name: str, c: dict, run: str) -> list[str]:
        return [name, str(c["reproduced"]), str(c["direction only"]), str(c["not reproduced"] + c["no result"]),
                str(c["fitted"]), str(sum(c.values())), run]

    out = [cells(name, c, how.get(name, "")) for name, c in per_experiment(judged)]
    return out + [cells("all", summary_counts(judged), "")]


def verdict_sections(judged) -> list[tuple[str, list]]:
    """The verdict's rows in the order every table shows them: what is not reproduced
    first (with what has no result), then direction only, reproduced and fitted; each
    in the rows' order. Empty sections are left out."""
    from .verdict import DIRECTION, FITTED, YES, display_order

    bad, rest = display_order(judged)
    out = [("not reproduced", bad)] + [(str(v), [j for j in rest if j.verdict == v]) for v in (DIRECTION, YES, FITTED)]
    return [(t, js) for t, js in out if js]


# The terminal table: a heading row per (experiment, machine, metric), then a row per
# configuration with the published figure, the simulated mean and why, so that a row
# fits 120 columns. The std, the [p5, p95] range, the seeds' rank and the factor are in
# verdict.md and report.html (a calibrated mean carries the mark; the factors are
# listed under the tables; "in p5-p95" in why says where the range decided).
TERMINAL_HEADER = ["published figure", "published", "simulated", "why"]


def _config_cell(r: Row) -> str:
    return r.config if r.unit == "ratio" or not r.unit else f"{r.config} [{r.unit}]"


def verdict_rich(judged, experiments: Sequence[Experiment], how: dict[str, str]) -> list:
    """The verdict for a terminal: the summary per experiment, then a table per class (not
    reproduced first), each with a heading row per (experiment, machine, metric); every
    row on one line of 120 columns."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    style = {"reproduced": "green", "direction only": "yellow", "not reproduced": "red", "fitted": "dim"}
    summary = Table(title="Per experiment", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                    pad_edge=False)
    for h in SUMMARY_HEADER:
        summary.add_column(escape(h), justify="left" if h in ("experiment", "run with") else "right", no_wrap=True)
    rows = summary_rows(judged, how)
    for i, cells in enumerate(rows):
        if i == len(rows) - 1:
            summary.add_section()
        summary.add_row(*(escape(c) for c in cells))
    out: list = [Text(verdict_summary(judged)), summary]
    for title, js in verdict_sections(judged):
        t = Table(title=f"[{style.get(title, 'default')}]{escape(title.capitalize())}[/] ({len(js)})",
                  title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        for h in TERMINAL_HEADER:
            t.add_column(escape(h), justify="left" if h in ("published figure", "why") else "right", no_wrap=True)
        last = None
        for j in js:
            r = j.row
            if (r.experiment, r.machine, r.metric) != last:
                t.add_row(f"[bold]{escape(r.experiment)}[/] on {escape(r.machine)}: {escape(r.metric)}")
                last = (r.experiment, r.machine, r.metric)
            mark = CAL_MARK if r.calibrated else ""
            t.add_row(escape("  " + _config_cell(r)), fmt(r.published), fmt(r.simulated_mean) + mark, escape(j.why))
        out.append(t)
    return out


def verdict_factors(judged) -> list[str]:
    """``† timers / zen3-2s / ns_per_iteration: x1.288``, one per calibrated metric judged."""
    seen: dict = {}
    for j in judged:
        r = j.row
        if r.calibrated and r.scale is not None:
            seen.setdefault((r.experiment, r.machine, r.metric), r.scale)
    return [f"{CAL_MARK} {e} / {m} / {metric}: simulated values scaled by {f:.4g}" for (e, m, metric), f in seen.items()]


def verdict_markdown(judged, experiments: Sequence[Experiment], how: dict[str, str], version: str = "") -> str:
    """The verdict as Markdown (``--out DIR``: verdict.md), in the terminal's order."""
    lines = ["# schedlab reproduce: the verdict", "", verdict_summary(judged) + ".", "", verdict_bar(), "",
             "| " + " | ".join(SUMMARY_HEADER) + " |", "|---|" + "---:|" * 5 + "---|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in summary_rows(judged, how)]
    for title, js in verdict_sections(judged):
        lines += ["", f"## {title.capitalize()} ({len(js)})", "",
                  "| " + " | ".join(VERDICT_HEADER) + " |", "|" + "---|" * len(VERDICT_HEADER)]
        for j in js:
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in verdict_cells(j, how)) + " |")
    lines += ["", "Sources:", ""]
    for e in experiments:
        lines.append(f"- {e.name}: {e.source}")
    if version:
        lines += ["", f"Generated by schedlab {version}."]
    return "\n".join(lines) + "\n"
