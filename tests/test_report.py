"""Reports: Markdown, self-contained HTML, PNGs (sizes checked), the per-run views, and
the HTML page opened in headless Chromium (a screenshot that is not blank, no console
message). The browser tests are marked ``browser`` and skipped, saying why, where
Debian's ``chromium`` is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import copy
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

import schedlab
from conftest import fake_result
from schedlab.report import reproduction_report, run_report, sweep_report
from schedlab.report.run import idle_residency, latency_cdf, timeline_window, trace_slices, usage_per_period
from schedlab.reproduce.compare import Row
from schedlab.reproduce.registry import get
from schedlab.sweep import load_spec, run_sweep
from test_sweep import SMALL, write_spec

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from the PNG header."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def check_pngs(paths, min_w=500, min_h=150) -> None:
    assert paths
    for p in paths:
        w, h = png_size(p)
        assert min_w <= w <= 4000 and min_h <= h <= 6000, (p.name, w, h)
        assert p.stat().st_size > 8_000, p.name  # a drawn figure, not an empty canvas


def check_html(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert "plotly.js v" in text  # inlined, once
    assert text.count("plotly.js v") == 1
    # Nothing is fetched: no script, image or stylesheet by URL (plotly.js itself only
    # names a CDN for geographic maps, which reports never draw).
    assert not re.search(r"<(script|img|link)[^>]+(src|href)=[\"']?(https?:)?//", text)
    return text


# ------------------------------------------------------------------------- sweeps
@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sweep")
    spec = load_spec(write_spec(tmp, SMALL + '\n[report]\nmetrics = ["group.svc.throttled_share", '
                                                '"latency.wakeup_latency.p99_us", "no.such.metric"]\n'))
    run_sweep(spec, executor="serial", progress=False)
    return spec


def test_sweep_report(small_sweep, tmp_path):
    rep = sweep_report(small_sweep.out, tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    assert "`group.svc.throttled_share` against each parameter" in md and "no.such.metric" in md
    assert "read_parquet(" in md  # how to query it
    assert [p.name for p in rep.pngs] == ["sweep-group.svc.throttled_share.png", "sweep-latency.wakeup_latency.p99_us.png"]
    check_pngs(rep.pngs)
    check_html(tmp_path / "r" / "report.html")


def test_report_command(small_sweep, cli, tmp_path):
    r = cli("report", small_sweep.out, "--out", tmp_path / "cmd", "-m", "summary.migrations")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "cmd" / "png" / "sweep-summary.migrations.png").is_file()
    r = cli("report", tmp_path / "nowhere")
    assert r.exit_code == 2 and "no such directory" in r.stderr


# ---------------------------------------------------------------- reproductions
def test_reproduction_report_from_rows(tmp_path):
    exp = get("fibtest")
    rows = [Row("fibtest", "xeon-80", c, "fast_work_ms", "ms", None, 10.0 * (i + 1), 1.0, 3, False, None, None)
            for i, c in enumerate(exp.configs)]
    rows.append(Row("fibtest", "xeon-80", "no-expiry-5.4 vs expiring-4.18-5.3", "fast_work_ms", "ratio", 30.0,
                    2.0, 0.1, 3, False, 2.0 / 30.0, None))
    rep = reproduction_report(tmp_path, [exp], rows, "test")
    assert [p.name for p in rep.pngs] == ["fibtest-xeon-80-values.png", "fibtest-xeon-80-changes.png"]
    check_pngs(rep.pngs, min_h=100)
    md = (tmp_path / "report.md").read_text()
    assert "| no-expiry-5.4 vs expiring-4.18-5.3 | fast_work_ms | 30.000 |" in md
    check_html(tmp_path / "report.html")


# ------------------------------------------------------------------ per-run views
def test_usage_per_period_clips_at_period_edges():
    # One run from 90 to 130 ms over 100 ms periods: 10 ms in period 0, 30 ms in period 1.
    slices = [(0, 90_000_000, 130_000_000, "w", 7), (1, 0, 5_000_000, "other", 8)]
    assert usage_per_period(slices, {7}, 100_000_000, 200_000_000) == [10_000_000, 30_000_000]


def test_latency_cdf_and_idle_states_shape():
    xs, ys = latency_cdf({"buckets": [[1000, 2], [2000, 2], [4000, 1]]})
    assert xs == [0.5, 1.0, 2.0, 4.0] and ys == [0.0, 0.4, 0.8, 1.0]
    raw = fake_result()
    assert idle_residency(raw) is None  # no idle_states: nothing to plot
    raw["cpus"][0]["idle_states"] = [{"name": "POLL", "usage": 3, "time_ns": 10}, {"name": "C6", "usage": 1, "time_ns": 2_000_000_000}]
    raw["cpus"][1]["idle_states"] = [{"name": "C6", "usage": 5, "time_ns": 1_000_000_000}]
    names, cpus, secs, usage = idle_residency(raw)
    assert names == ["POLL", "C6"] and cpus == [0, 1] and secs["C6"] == [2.0, 1.0] and usage == {"POLL": 3, "C6": 6}


@pytest.fixture(scope="module")
def bw_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("run")
    s = schedlab.load_scenario("examples/bandwidth_whatif.toml").with_changes({"run.warmup_s": 0.0, "run.duration_s": 1.0})
    trace = tmp / "t.perfetto.json"
    res = schedlab.run(s, seed=1, trace=trace)
    return res.raw, trace


def test_run_views(bw_run, tmp_path):
    raw, trace = bw_run
    slices = trace_slices(trace)
    start, end = timeline_window(slices, raw["engine"]["sim_ns"])
    assert 0 < start < end <= raw["engine"]["sim_ns"] + 1_000_000_000
    # The trace's task runs of the group add up to its cpu.stat usage (to within the runs cut at the end).
    pids = {t["pid"] for t in raw["tasks"] if t["group"] == "svc"}
    per = usage_per_period(slices, pids, 100_000_000, raw["engine"]["sim_ns"])
    svc = next(g for g in raw["groups"] if g["name"] == "svc")
    assert sum(per) == pytest.approx(svc["usage_ns"], rel=0.02)
    assert max(per) <= svc["quota_ns"] * 1.05  # the quota holds per period (plus slack of one slice)
    rep = run_report(tmp_path, [raw], trace)
    assert [p.name for p in rep.pngs] == ["timeline.png", "latency-cdf.png", "throttling-per-period.png", "idle-residency.png"]
    check_pngs(rep.pngs)
    # Without idle states in the result, the residency view is skipped with a note.
    bare = copy.deepcopy(raw)
    for c in bare["cpus"]:
        del c["idle_states"]
    run_report(tmp_path / "bare", [bare], trace)
    assert "no `cpus[].idle_states`" in (tmp_path / "bare" / "report.md").read_text()
    # Other idle states in the result: the residency view follows them.
    with_idle = copy.deepcopy(raw)
    for c in with_idle["cpus"]:
        c["idle_states"] = [{"name": "C1", "usage": 10, "time_ns": c["idle_ns"] // 3},
                            {"name": "C6", "usage": 2, "time_ns": c["idle_ns"] - c["idle_ns"] // 3}]
    rep = run_report(tmp_path / "idle", [with_idle], trace)
    assert "idle-residency.png" in [p.name for p in rep.pngs]
    check_pngs(rep.pngs)


def test_run_plot_command(cli, tmp_path):
    r = cli("run", "examples/pipe_pingpong.toml", "--seed", "1", "--seed", "2", "--plot", tmp_path)
    assert r.exit_code == 0, r.output
    assert "latency.wakeup_latency.p50_us" in r.stdout and "latency.wakeup_latency.p99_us" in r.stdout
    # The plots alone: the timeline's trace was read from a temporary file (issue 50).
    assert not list(tmp_path.glob("*.json")) and "trace:" not in r.stdout
    assert "timeline.png" in [p.name for p in (tmp_path / "png").glob("*.png")]
    check_pngs(sorted((tmp_path / "png").glob("*.png")))
    check_html(tmp_path / "report.html")


def test_run_plot_keeps_the_trace_asked_for(cli, tmp_path):
    trace = tmp_path / "t.json"
    r = cli("run", "examples/pipe_pingpong.toml", "--seed", "1", "--plot", tmp_path / "plots", "--trace", trace)
    assert r.exit_code == 0, r.output
    assert trace.is_file() and f"trace: {trace}" in r.stdout
    assert "timeline.png" in [p.name for p in (tmp_path / "plots" / "png").glob("*.png")]


# ------------------------------------------------------------------------ browser
def open_in_chromium(page: Path, shot: Path) -> list[str]:
    """Opens ``page`` in headless Chromium, saves a screenshot; returns the console
    messages the page logged."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--hide-scrollbars",
               "--window-size=1280,1600", "--virtual-time-budget=5000", f"--screenshot={shot}", page.as_uri()]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    return [line for line in res.stderr.splitlines() if ":CONSOLE" in line]


def check_screenshot(shot: Path) -> None:
    import numpy as np
    from matplotlib.image import imread

    w, h = png_size(shot)
    assert (w, h) == (1280, 1600)
    img = imread(shot)[..., :3]
    ink = (img.min(axis=2) < 0.9).mean()  # share of pixels that are not (near) white
    assert ink > 0.02, f"the page looks blank ({ink:.3%} non-white pixels)"
    assert len(np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0)) > 20  # plots, not a flat page


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium; .ci/run does)")
def test_sweep_report_in_chromium(small_sweep, tmp_path):
    sweep_report(small_sweep.out, tmp_path)
    shot = tmp_path / "shot.png"
    console = open_in_chromium(tmp_path / "report.html", shot)
    assert console == [], console
    check_screenshot(shot)


@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium; .ci/run does)")
def test_run_report_in_chromium(bw_run, tmp_path):
    raw, trace = bw_run
    run_report(tmp_path, [raw], trace)
    shot = tmp_path / "shot.png"
    console = open_in_chromium(tmp_path / "report.html", shot)
    assert console == [], console
    check_screenshot(shot)


def test_browser_catches_console_errors(tmp_path):
    """The console check can fail: a page with a script error is caught."""
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does)")
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><h1>x</h1><script>no_such_function();</script></body></html>")
    console = open_in_chromium(bad, tmp_path / "bad.png")
    assert any("no_such_function" in line for line in console)

