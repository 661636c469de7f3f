"""Errors on the flag path (issue 50, item 1), as strong as on the file path: each names
the flag and the command (`error: Invalid value for '--flag': ... (see 'schedlab CMD
-h')`), says what was expected in words (no Rust type names), suggests the name meant,
and exits 2 in one line. Plus what the issue found beside them: nonexistent kernel
profiles, trace suffixes no format has, YAML, `-` for stdin, a repeated --seed, compare
-m of no figure, and `schedlab report` of a sweep whose seeds agree (item 5)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from conftest import ROOT

PINGPONG = str(ROOT / "examples" / "pipe_pingpong.toml")
# Two CPUs, 10 ms: runs in well under a second.
SMALL = ('[machine]\ntopo = { cores = 2 }\n[[tasks]]\nname = "t"\nprogram = [{ loop = { count = 20, body = '
         '[{ run = "100us" }, { sleep = "200us" }] } }]\n[run]\nduration_s = 0.01\n')


def schedlab(*args: str, stdin: str | None = None, monkeypatch=None) -> tuple[int, str, str]:
    """`schedlab ARGS` as the entry point runs it (usage errors as one line): (status,
    stdout, stderr)."""
    from schedlab.cli import main

    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def one_line_error(args, *words, absent=(), **kw) -> str:
    code, out, err = schedlab(*args, **kw)
    assert code == 2, (code, out, err)
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for w in words:
        assert w in err, (w, err)
    for w in absent:
        assert w not in err, (w, err)
    return err


@pytest.fixture
def small(tmp_path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


# --------------------------------------------------------------------- names and did you mean
def test_run_machine_flag_is_blamed_not_the_files_preset_line():
    one_line_error(["run", PINGPONG, "--machine", "ryzen-7960x"], "'--machine'", "unknown preset 'ryzen-7960x'",
                   "(did you mean ryzen-7950x?)", "(see 'schedlab run -h')", absent=("machine.preset", ":11:"))


@pytest.mark.parametrize("tool", ["hackbench", "schbench", "cyclictest", "netperf"])
def test_tool_machine_flag_names_the_flag_and_the_tool(tool):
    one_line_error([tool, "--machine", "ryzen-7960x"], "'--machine'", "did you mean ryzen-7950x?",
                   f"(see 'schedlab {tool} -h')", absent=("<dict>",))


def test_misspelt_feature_and_tunable_get_did_you_mean(small):
    one_line_error(["run", small, "--feature", "SIS_NOD"], "'--feature'", "unknown feature 'SIS_NOD'",
                   "did you mean SIS_NODE", "schedlab features")
    one_line_error(["hackbench", "--feature", "sis_node"], "'--feature'", "did you mean SIS_NODE?",
                   "(see 'schedlab hackbench -h')", absent=("<dict>",))
    one_line_error(["run", small, "--tunable", "sched_migraton_cost_ns=0"], "'--tunable'",
                   "unknown tunable 'sched_migraton_cost_ns'", "did you mean sched_migration_cost_ns",
                   absent=("expected one of `hz`",))
    one_line_error(["schbench", "--tunable", "hzz=250"], "'--tunable'", "did you mean hz?")


def test_hackbench_counts_name_their_flag():
    one_line_error(["hackbench", "-g", "0"], "'-g' / '--groups'", "(see 'schedlab hackbench -h')",
                   absent=("<dict>", "workload.params"))
    one_line_error(["hackbench", "-l", "-1"], "'-l' / '--loops'", absent=("u64", "<dict>"))


def test_a_field_a_tool_flag_filled_is_blamed_on_the_flag():
    # The core finds these (the run length, a parameter's type): the line names the flag.
    one_line_error(["schbench", "-r", "0"], "'-r' / '--runtime'", "expected a positive number of seconds",
                   absent=("<dict>",))
    one_line_error(["schbench", "-n", "-1"], "'-n' / '--operations'", "expected a whole number ≥ 0",
                   absent=("u64", "usize", "<dict>"))
    one_line_error(["cyclictest", "-D", "1e300"], "'-D' / '--duration'", "up to 1,000,000",
                   absent=("e+303", "<dict>"))


# ------------------------------------------------------------------------- words, not types
def test_rust_type_names_are_said_in_words(small):
    one_line_error(["run", PINGPONG, "--set", "tasks.ping.count=-1"], "expected a whole number ≥ 0",
                   absent=("usize",))
    one_line_error(["run", small, "--tunable", "hz=fast"], "expected a whole number from 0 to 4294967295",
                   absent=("u32",))
    from schedlab.errors import plain_types

    assert plain_types("invalid type: floating point `1.5`, expected u64") == \
        "invalid type: number `1.5`, expected a whole number ≥ 0"
    assert plain_types("invalid type: integer `3`, expected struct MachineSpec") == \
        "invalid type: integer `3`, expected a table"
    assert plain_types("expected one of `u64s`") == "expected one of `u64s`"


def test_a_huge_run_length_is_said_as_a_number_not_301_digits(small):
    err = one_line_error(["run", small, "--set", "run.duration_s=1e300"],
                         "1e300 s is longer than the 1000000 s a run may be")
    assert len(err) < 200, err
    one_line_error(["schbench", "-r", "1e300"], "'-r' / '--runtime'", "1e300 s is longer")


# ------------------------------------------------------------------------ kernel profiles
@pytest.mark.parametrize("profile,words", [
    ("6.66", ["'6.66' is not a kernel release: the 6.x series ended at 6.19", "the newest profile is 7.0"]),
    ("7.9", ["'7.9' is newer than the newest kernel profile schedlab knows, 7.0"]),
    ("4.21", ["the 4.x series ended at 4.20"]),
])
def test_a_kernel_that_does_not_exist_is_refused(small, profile, words):
    one_line_error(["run", small, "--profile", profile], "'--profile'", "(see 'schedlab run -h')", *words)
    one_line_error(["hackbench", "--profile", profile], "'--profile'", *words)
    one_line_error(["features", "--profile", profile], "'--profile' / '-p'", *words)
    # In a file too, at its line.
    bad = small.with_name("bad.toml")
    bad.write_text(SMALL.replace("[run]", f'[kernel]\nprofile = "{profile}"\n[run]'))
    one_line_error(["run", bad], f"{bad}:7:11: kernel.profile: ", *words)


def test_real_releases_and_stable_sublevels_still_run(small):
    for profile in ("6.18.35", "6.19", "7.0", "4.20", "3.10"):
        code, out, err = schedlab("features", "--profile", profile)
        assert code == 0, (profile, err)


# ------------------------------------------------------------------------------ files
def test_trace_suffix_no_format_has_is_refused(small, tmp_path):
    pdf = tmp_path / "x.pdf"
    one_line_error(["run", small, "--trace", pdf], "'--trace'", "unknown trace file suffix '.pdf'",
                   ".pftrace", ".json (json)", ".perf.txt", "--trace-format")
    assert not pdf.exists()
    # Naming the format says what to write, whatever the name.
    code, out, err = schedlab("run", small, "--trace", pdf, "--trace-format", "ftrace")
    assert code == 0, err
    assert "sched_switch" in pdf.read_text()


def test_yaml_is_refused_as_yaml(tmp_path):
    y = tmp_path / "s.yaml"
    y.write_text("name: small\nmachine:\n  preset: ryzen-7950x\n")
    one_line_error(["run", y], f"{y}: a YAML file: schedlab reads TOML or JSON scenarios")
    t = tmp_path / "s.toml"
    t.write_text("# a scenario\nname: small\nmachine:\n  preset: ryzen-7950x\n")
    one_line_error(["run", t], f"{t}: YAML, not TOML (line 2 reads as YAML's `key: value`)",
                   absent=("key with no value",))
    # A TOML error that is not YAML keeps TOML's own line and column.
    t.write_text('name = "x"\n[machine\n')
    one_line_error(["run", t], f"{t}:2:", absent=("YAML",))


def test_dash_reads_the_scenario_from_stdin(monkeypatch):
    code, out, err = schedlab("run", "-", "--json", stdin=SMALL, monkeypatch=monkeypatch)
    assert code == 0, err
    assert json.loads(out)["nr_cpus"] == 2
    doc = {"machine": {"topo": {"cores": 3}}, "tasks": [{"name": "t", "program": [{"run": "1ms"}]}],
           "run": {"duration_s": 0.01}}
    code, out, err = schedlab("run", "-", "--json", stdin=json.dumps(doc), monkeypatch=monkeypatch)
    assert code == 0, err
    assert json.loads(out)["nr_cpus"] == 3
    one_line_error(["run", "-"], "<stdin>:", "machine", stdin="machine = 3\n", monkeypatch=monkeypatch)
    one_line_error(["run", "-"], "<stdin>: empty", stdin="", monkeypatch=monkeypatch)


# ------------------------------------------------------------------------ seeds, compare
def test_a_repeated_seed_is_refused(small):
    one_line_error(["run", small, "--seed", "1", "--seed", "2", "--seed", "1"], "'--seed' / '-s'",
                   "seed 1 is given twice", "(see 'schedlab run -h')")
    one_line_error(["compare", small, "--set", "kernel.profile=6.5", "--set", "kernel.profile=6.6", "-s", "3",
                    "-s", "3"], "seed 3 is given twice", "(see 'schedlab compare -h')")


def test_compare_metric_that_no_figure_has_is_refused(small):
    args = ["compare", small, "--set", "kernel.profile=6.5", "--set", "kernel.profile=6.6", "-n", "1"]
    one_line_error(args + ["-m", "nosuchmetric"], "'--metric' / '-m'", "no figure starts with 'nosuchmetric'",
                   "figures start with", absent=("No figure differs",))
    one_line_error(args + ["-m", "sumary"], "did you mean summary")
    code, out, err = schedlab(*args, "-m", "summary")
    assert code == 0, err


# ------------------------------------------------------------------------------ report
def test_report_error_bars_where_the_seeds_agree():
    """Three seeds with the same float: pandas' mean of [0.7] * 3 is an ulp below 0.7, so
    mean - min was -1.1e-16 and matplotlib's errorbar refused it (report exit 70)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from schedlab.report.sweep import _draw_mpl, _panel_data

    rows = [{"point": p, "param.kernel.profile": prof, "param.kernel.features.SHARED_RUNQ_V3": v, "seed": s,
             "summary.utilization": 0.7}
            for p, (prof, v) in enumerate([("6.5", False), ("6.5", True), ("6.6", False), ("6.6", True)])
            for s in (1, 2, 3)]
    df = pd.DataFrame(rows)
    params = ["param.kernel.profile", "param.kernel.features.SHARED_RUNQ_V3"]
    assert df.groupby("point")["summary.utilization"].mean().iloc[0] < 0.7  # the float the crash needs
    fig, ax = plt.subplots()
    try:
        for param in params:
            _draw_mpl(ax, *_panel_data(df, "summary.utilization", param, params, {}), "summary.utilization", param)
    finally:
        plt.close(fig)


def test_misspelt_names_in_a_file_get_did_you_mean_too(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SMALL.replace("topo = { cores = 2 }", 'preset = "ryzen-7960x"'))
    one_line_error(["run", bad], "machine.preset: unknown preset 'ryzen-7960x' (did you mean ryzen-7950x?)")
    bad.write_text(SMALL.replace("[run]", "[kernel]\nfeatures = { SIS_NOD = true }\ntunables = { hz = 250 }\n[run]"))
    one_line_error(["run", bad], "kernel.features.SIS_NOD: unknown feature (did you mean SIS_NODE?)")
    bad.write_text(SMALL.replace("[run]", "[kernel]\ntunables = { sched_migraton_cost_ns = 0 }\n[run]"))
    one_line_error(["run", bad], "unknown field `sched_migraton_cost_ns` (did you mean `sched_migration_cost_ns`?)")
