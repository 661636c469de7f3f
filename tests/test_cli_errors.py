"""Bad scenario files: one line `error: FILE[:LINE:COL]: FIELD: MESSAGE` on stderr, exit 2,
no traceback. Loading fails before anything runs, or (affinity, waits) building the run
does, and the error still names the file and the field's line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import BAD, rel

# file -> (field, expected location or None for "no position", words the message must contain)
CASES = {
    "unknown_field.toml": ("run.duraton_s", ":10:1", ["unknown field", "duration_s"]),
    "negative_duration.toml": ("run.duration_s", ":10:14", ["positive", "-1"]),
    "negative_step.toml": ("tasks[0].program[0].run", ":7:20", ["-5ms"]),
    "unknown_preset.toml": ("machine.preset", ":3:10", ["unknown preset", "no-such-machine"]),
    "unknown_feature.toml": ("kernel.features.NO_SUCH_FEATURE", ":7:", ["unknown feature"]),
    "malformed.toml": ("", ":2:", ["expected"]),
    "missing_unit.toml": ("tasks[0].program[0].sleep", ":7:", ["no unit"]),
    "no_workload.toml": ("workload", None, ["no workload"]),
    "unknown_generator.toml": ("workload.kind", ":6:8", ["unknown generator", "make"]),
    "bad_generator_param.toml": ("workload.params.jobz", ":7:", ["unknown field", "jobs"]),
    "old_profile.toml": ("kernel.profile", ":6:", ["3.x to 7.x"]),
    "affinity_no_cpu.toml": ("tasks[0].affinity", ":7:12", ["no CPU of '7'"]),
    "wait_never_signalled.toml": ("tasks[0].program (ping)", ":7:11", ["'pnig'", "no signal step or timer"]),
}

# Valid as a file; the machine or the programs as a whole make them impossible (found
# once the run is built; the line and column are those of the field).
FOUND_BUILDING_THE_RUN = {"affinity_no_cpu.toml", "wait_never_signalled.toml"}


def test_every_bad_file_has_a_case():
    assert sorted(p.name for p in BAD.glob("*.toml")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_file_one_line_exit_2(cli, name):
    field, location, words = CASES[name]
    path = rel(BAD / name)
    r = cli("run", path)
    assert r.exit_code == 2, r.output
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    line = lines[0]
    assert "Traceback" not in r.stderr
    assert line.startswith(f"error: {path}")
    if location is None:
        assert line.startswith(f"error: {path}: ")
    else:
        assert line.startswith(f"error: {path}{location}")
    if field:
        assert f": {field}: " in line
    for w in words:
        assert w in line


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_file_raises_scenario_error_with_attributes(name):
    import schedlab

    field, location, _ = CASES[name]
    path = rel(BAD / name)
    with pytest.raises(schedlab.ScenarioError) as info:
        if name in FOUND_BUILDING_THE_RUN:
            schedlab.run(path)
        else:
            schedlab.load_scenario(path)
    e = info.value
    assert isinstance(e, schedlab.SchedlabError)
    assert e.origin == path
    assert e.field == field
    if location is None:
        assert e.location == ""
    else:
        assert e.location.startswith(location)
    assert str(e) == f"{e.origin}{e.location}: {field}: {e.message}" if field else f"{e.origin}{e.location}: {e.message}"
    assert "\n" not in str(e)


def test_missing_file(cli):
    r = cli("run", "examples/does-not-exist.toml")
    assert r.exit_code == 2
    assert r.stderr == "error: examples/does-not-exist.toml: no such file\n"


def test_bad_json_file_has_position(cli, tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"machine": {"topo": {"cores": 2}}, "tasks": [], "run": {"duration_s": 1, "bogus": 1}},
                            indent=1))
    r = cli("run", str(p))
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert line.startswith(f"error: {p}:")
    assert "run.bogus" in line and "unknown field" in line


def test_dict_errors_have_no_position():
    import schedlab

    with pytest.raises(schedlab.ScenarioError) as info:
        schedlab.load_scenario({"machine": {"topo": {"cores": 2}}, "tasks": [{"name": "x", "program": [{"run": "1ms"}]}],
                                "run": {"duration_s": 1, "nope": 2}})
    assert info.value.origin == "<dict>"
    assert info.value.location == ""
    assert info.value.field == "run.nope"


def test_console_script_prints_no_traceback():
    """The installed entry point (python -m schedlab), not only the in-process runner."""
    r = subprocess.run([sys.executable, "-m", "schedlab", "run", rel(BAD / "unknown_feature.toml")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: examples/bad/unknown_feature.toml:7:")


@pytest.mark.parametrize("seed", ["-1", str(2**64)])
def test_seed_out_of_range_is_a_usage_error(cli, seed):
    r = cli("run", rel(BAD / "old_profile.toml"), "--seed", seed)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "OverflowError" not in r.output
    assert "seed" in r.output.lower()
