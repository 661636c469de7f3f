"""The CLI's commands that need no engine: --version, machines, features, reproduce --list."""

from __future__ import annotations

import json
import re

import pytest


def test_version(cli):
    import schedlab

    r = cli("--version")
    assert r.exit_code == 0
    assert r.stdout.strip() == f"schedlab {schedlab.__version__}"


def test_no_args_shows_help(cli):
    r = cli()
    assert "run" in r.output and "reproduce" in r.output


def test_machines_list(cli):
    r = cli("machines")
    assert r.exit_code == 0, r.output
    r = cli("machines", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert isinstance(doc, list)
    for m in doc:
        assert set(m) >= {"name", "description", "summary", "nr_cpus", "arch"}
        assert m["nr_cpus"] >= 1 and m["arch"] in ("x86_64", "arm64")


def test_machines_presets_describe(cli):
    doc = json.loads(cli("machines", "--json").stdout)
    for m in doc:
        r = cli("machines", m["name"], "--json")
        assert r.exit_code == 0
        full = json.loads(r.stdout)
        assert full["name"] == m["name"] and len(full["cpus"]) == m["nr_cpus"]


def test_machines_topo(cli):
    r = cli("machines", "topo(1,2,4,2)", "--json")
    assert r.exit_code == 0, r.output
    m = json.loads(r.stdout)
    assert m["nr_cpus"] == 16
    assert m["llcs"] == ["0-3,8-11", "4-7,12-15"]
    assert [d["level"] for d in m["domains_cpu0"]] == ["Smt", "Mc", "Pkg"]
    assert "SD_SHARE_LLC" in m["domains_cpu0"][1]["flags"]
    assert "context_switch_ns" in m["cost"]
    r = cli("machines", "topo(1,2,4,2)")
    assert r.exit_code == 0 and "sched domains of CPU 0" in r.stdout


def test_an_arm64_topo_is_built_as_arm64():
    """A synthetic arm64 machine has arm64's idle states (WFI first), not the x86 machine's
    acpi_idle table with its arch renamed (as it had before); the cost table is the one
    generic table both architectures share."""
    from schedlab import _core

    def machine(arch):
        return json.loads(_core.machine(json.dumps({"topo": {"sockets": 1, "llcs": 1, "cores": 4, "smt": 1,
                                                              "arch": arch}})))

    arm, x86 = machine("arm64"), machine("x86_64")
    assert arm["arch"] == "arm64" and x86["arch"] == "x86_64"
    assert [s["name"] for s in arm["idle_drivers"][0]["states"]][0] == "WFI"
    assert "WFI" not in [s["name"] for s in x86["idle_drivers"][0]["states"]]
    assert arm["cost"] == x86["cost"]


def test_domain_flags_are_named_by_the_core_including_sd_cluster(cli):
    r = cli("machines", "kunpeng-920-2s", "--json")
    assert r.exit_code == 0, r.output
    cls = json.loads(r.stdout)["domains_cpu0"][0]
    assert cls["level"] == "Cls" and {"SD_CLUSTER", "SD_SHARE_LLC"} <= set(cls["flags"])


def test_machines_unknown(cli):
    r = cli("machines", "no-such-box")
    assert r.exit_code == 2
    assert r.stderr.startswith("error: unknown preset 'no-such-box'") and r.stderr.count("\n") == 1


def features(cli, *args) -> dict:
    r = cli("features", "--json", *args)
    assert r.exit_code == 0, r.output
    return {f["name"]: f["default"] for f in json.loads(r.stdout)}


def test_features_follow_profile(cli):
    cfs = features(cli, "--profile", "6.5")
    eevdf = features(cli, "--profile", "6.6")
    assert cfs["GENTLE_FAIR_SLEEPERS"] and not cfs["PLACE_LAG"]
    assert eevdf["PLACE_LAG"] and not eevdf["GENTLE_FAIR_SLEEPERS"]
    assert not features(cli, "--profile", "6.4", "--arch", "arm64")["TLB_BATCH"]
    assert features(cli, "--profile", "6.4", "--arch", "x86_64")["TLB_BATCH"]
    r = cli("features")
    assert r.exit_code == 0 and "SIS_NODE" in r.stdout and "EEVDF" in r.stdout


@pytest.mark.parametrize("args", [("--profile", "banana"), ("--arch", "riscv")])
def test_features_bad_args(cli, args):
    r = cli("features", *args)
    assert r.exit_code == 2
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1


def test_reproduce_list(cli):
    r = cli("reproduce", "--list")
    assert r.exit_code == 0
    assert "make-core" in r.stdout and '"[RFC PATCH 0/3] sched: Implement shared wakequeue in CFS"' in r.stdout
    doc = json.loads(cli("reproduce", "--list", "--json").stdout)
    mc = next(e for e in doc if e["name"] == "make-core")
    assert mc["machines"] == ["ryzen-7950x"] and mc["baseline"] == "cfs-6.5"
    assert mc["metrics"] == ["makespan_s", "cpu_pct"]


def test_reproduce_unknown_experiment(cli):
    r = cli("reproduce", "no-such-experiment")
    assert r.exit_code == 2
    assert r.stderr == "error: unknown experiment 'no-such-experiment': expected one of " + \
        ", ".join(sorted(e["name"] for e in json.loads(cli("reproduce", "--list", "--json").stdout))) + "\n"


def test_workloads(cli):
    r = cli("workloads", "--json")
    assert r.exit_code == 0, r.output
    names = [g["name"] for g in json.loads(r.stdout)]
    assert "make" in names and len(names) == len(set(names))
    r = cli("workloads")
    assert r.exit_code == 0 and "make" in r.stdout


def test_workloads_name_shows_parameters_with_defaults(cli):
    r = cli("workloads", "fibtest")
    assert r.exit_code == 0, r.output
    assert "quota_us" in r.stdout and "10000" in r.stdout and "slow_sleep" in r.stdout
    doc = json.loads(cli("workloads", "make", "--json").stdout)
    assert {p["name"]: p["default"] for p in doc["params"]}["units"] == "2000"
    for g in json.loads(cli("workloads", "--json").stdout):
        assert g["params"], g["name"]
    r = cli("workloads", "no-such")
    assert r.exit_code == 2 and r.stderr.startswith("error: unknown workload generator 'no-such'")


def test_help_texts_escape_their_brackets():
    """Help is rendered as rich markup, where "[run]" is a style tag and vanishes:
    every bracket a help text means literally must be escaped."""
    import re

    import typer.main

    from schedlab.cli import app

    def commands(cmd, path):
        yield path, cmd
        for name, sub in getattr(cmd, "commands", {}).items():
            yield from commands(sub, f"{path} {name}")

    eaten = []
    for path, cmd in commands(typer.main.get_command(app), "schedlab"):
        for text in [cmd.help or ""] + [getattr(p, "help", None) or "" for p in cmd.params]:
            eaten += [f"{path}: {m.group(0)}" for m in re.finditer(r"(?<!\\)\[[A-Za-z][^\]\s]*\]", text)]
    assert not eaten, eaten


def test_command_list_shows_each_summary_unbroken():
    """`schedlab --help` lists every command with its summary (the docstring's first
    paragraph) on one line when the terminal is wide enough."""
    import inspect

    from typer.testing import CliRunner

    from schedlab.cli import app

    r = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "400"}, terminal_width=400)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    for info in app.registered_commands:
        summary = " ".join(inspect.cleandoc(info.callback.__doc__ or "").split("\n\n")[0].split())
        name = info.name or info.callback.__name__.replace("_", "-")
        # The row whose first cell is the command (another's summary may name it).
        row = [line for line in lines if line.lstrip("│ ").startswith(f"{name} ")]
        assert row and summary.replace("\\[", "[") in row[0], (name, summary, row)


# The project's own bookkeeping: issue numbers, seed thread files ("000_<hash>.txt"),
# "seed 001" for the mail a figure came from.
BOOKKEEPING = re.compile(r"issue[ -]?\d+|\b\d{3}_[0-9a-f]{16}(\.txt)?\b|\b[Ss]eed \d{3}\b|\bthe seed's\b")


@pytest.mark.parametrize("args", [("reproduce", "--list"), ("reproduce", "--list", "--json"), ("machines",),
                                  ("features",), ("tunables",), ("workloads",), ("workloads", "--json")])
def test_listings_name_patches_not_project_bookkeeping(cli, args):
    """A user's output names patches, commits, subjects and dates (issue 50)."""
    r = cli(*args)
    assert r.exit_code == 0, r.output
    assert not BOOKKEEPING.search(r.output), BOOKKEEPING.search(r.output).group(0)


def test_experiment_texts_name_patches_not_project_bookkeeping():
    """What the reports print of each experiment (title, description, source, notes)."""
    from schedlab.reproduce.registry import all_experiments

    for e in all_experiments():
        texts = [e.title, e.description or "", str(e.source), e.source.citation(), e.source.note]
        texts += [o.help for o in e.options] + [p.note for p in e.published or []]
        for t in texts:
            m = BOOKKEEPING.search(t or "")
            assert not m, f"{e.name}: {m.group(0)!r} in {t!r}"
    eas = next(e for e in all_experiments() if e.name == "eas")
    assert eas.source.citation().startswith("none: mainline's energy-aware scheduling")


def test_notes_of_experiments_without_a_patch_read_as_a_sentence():
    """eas and rt have no patch: the note names what they simulate, not "from none: ..."."""
    from schedlab.reproduce.registry import all_experiments
    from schedlab.reproduce.report import notes

    exps = {e.name: e for e in all_experiments()}
    for name in ("eas", "rt"):
        e = exps[name]
        row = type("R", (), {"experiment": name, "calibrated": False})()
        [line] = notes([row], [e])
        assert line.startswith(f"{name}: published figures: mainline's "), line
        assert "from none" not in line and "none:" not in line and "table \"no published figure" not in line, line
    timers = exps["timers"]
    row = type("R", (), {"experiment": "timers", "calibrated": False})()
    assert notes([row], [timers])[0].startswith("timers: published figures from \"[PATCH")
