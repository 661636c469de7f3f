"""The swqueue experiment (seed 000): registration, scenarios validated by the core,
published figures, and a real quick run whose rows match the schema."""

from __future__ import annotations

import jsonschema

import schedlab
from schedlab import schemas
from schedlab.reproduce import get
from schedlab.reproduce.report import rows_json
from schedlab.reproduce.runner import run_experiments


def test_registered_with_the_seed_table():
    e = get("swqueue")
    assert e.machines == ("ryzen-7950x", "milan-72")
    assert e.baseline == "NO_SWQUEUE+NO_SIS_NODE"
    assert e.published_value("ryzen-7950x", "NO_SWQUEUE+NO_SIS_NODE", "makespan_s") == 590.52
    assert e.published_value("milan-72", "SWQUEUE+NO_SIS_NODE", "cpu_pct") == 6504


def test_scenarios_switch_the_features_and_validate():
    e = get("swqueue")
    for config in e.configs:
        doc = e.build("milan-72", config, True)
        features = doc["kernel"]["features"]
        assert features["SHARED_RUNQ"] == config.startswith("SWQUEUE")
        assert features["SIS_NODE"] == config.endswith("+SIS_NODE")
        assert doc["workload"]["params"]["jobs"] == 72
        assert doc["workload"]["params"]["pipe_chunks"] > 0
        schedlab.load_scenario(doc)


def test_quick_run_rows_follow_the_schema_and_calibrate_only_the_build_time():
    rows = rows_json(run_experiments([get("swqueue")], quick=True, seeds=1, workers=1, machine="ryzen-7950x"))
    jsonschema.validate(rows, schemas.load("reproduce-rows"))
    base = [r for r in rows if r["config"] == "NO_SWQUEUE+NO_SIS_NODE" and r["metric"] == "makespan_s"]
    assert len(base) == 1 and base[0]["calibrated"] and abs(base[0]["simulated_mean"] - 590.52) < 1e-6
    assert not any(r["calibrated"] for r in rows if r["metric"] == "cpu_pct" or r["unit"] == "ratio")
