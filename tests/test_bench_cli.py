"""`schedlab bench`: the speed suite's cases (one per experiment family, issue 49 item 4)
and `--quick`, the CI form that stops each case at its short simulated time."""

from __future__ import annotations

import json

import pytest

# The experiment families issue 49 asks the suite to keep a case for.
FAMILIES = ["flat-128", "flat-384", "2s-384", "flat-2048", "64x100k", "1024x100k", "pixel6-eas", "rt",
            "shared-runq"]


def test_bench_list_names_a_case_per_family_with_its_quick_time(cli):
    r = cli("bench", "--list")
    assert r.exit_code == 0, r.output
    lines = {ln.split()[0]: ln for ln in r.output.splitlines() if ln.strip()}
    for name in FAMILIES:
        assert name in lines, name
    assert "(--quick: " in lines["pixel6-eas"] and " ms)" in lines["pixel6-eas"]


@pytest.mark.parametrize("case,full_s", [("rt", 2.0), ("pixel6-eas", 5.0)])
def test_bench_quick_stops_the_case_at_its_quick_time(cli, case, full_s):
    from schedlab import _core

    quick_s = next(c["quick_ms"] for c in json.loads(_core.bench_cases()) if c["name"] == case) / 1000
    assert 0 < quick_s < full_s
    r = cli("bench", case, "--quick", "--json")
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)["rows"][0]
    assert row["error"] is None
    assert row["sim_s"] == pytest.approx(quick_s)
    assert row["events"] > 0 and row["heap_multiple"] > 0


def test_bench_quick_table_names_the_mode(cli):
    r = cli("bench", "shared-runq", "--quick")
    assert r.exit_code == 0, r.output
    assert "schedlab bench --quick" in r.stdout and "shared-runq" in r.stdout


def test_bench_unknown_case_is_one_line_and_exit_2(cli):
    r = cli("bench", "no-such-case", "--quick")
    assert r.exit_code == 2
    assert "unknown bench case 'no-such-case': expected one of" in r.output and "pixel6-eas" in r.output
    assert "Traceback" not in r.output
