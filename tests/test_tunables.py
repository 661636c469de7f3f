"""The tunables table (crates/schedlab-core/src/kernel.rs): defaults follow the profile
and the machine's CPU count as the kernel's do, and every tunable a scenario may write
is listed with its unit and doc."""

import json

from schedlab import _core


def table(profile: str, nr_cpus: int) -> dict:
    return {t["name"]: t for t in json.loads(_core.tunables(profile, nr_cpus))}


def test_defaults_follow_version_and_cpu_count():
    small, big = table("6.6", 1), table("6.6", 64)
    # SCHED_TUNABLESCALING_LOG: x1 on one CPU, x4 from 8 CPUs on.
    assert small["sched_base_slice_ns"]["default"] == 750_000
    assert big["sched_base_slice_ns"]["default"] == 3_000_000
    assert table("6.15", 64)["sched_base_slice_ns"]["default"] == 2_800_000
    assert table("5.4", 8)["busy_factor"]["default"] == 32
    assert big["busy_factor"]["default"] == 16
    assert big["sched_migration_cost_ns"]["alias"] == "migration_cost_ns"
    assert big["cpuidle_max_state"]["default"] is None


def test_every_listed_name_and_alias_sets_the_effective_value():
    """Each tunable written under its listed name (and alias) reaches the run's effective
    tunables: a table entry whose override were ignored or misrouted would fail here."""
    import schedlab

    written = {"hz": 250, "tick_phase_ns": 1234, "cpuidle_governor": "teo", "cpuidle_max_state": 1,
               "cpuidle_latency_req_ns": 5000, "timer_migration": 0, "nohz_full": "1-3", "kpti": 1,
               "arm64_repeat_tlbi": 0, "tlb_batch_min_cpus": 4,
               # a period must hold its runtime (the sysctl's and debugfs's own checks)
               "sched_rt_period_us": 2_000_000, "fair_server_period_ns": 2_000_000_000}
    expected = {"cpuidle_governor": "teo", "timer_migration": False, "kpti": True, "arm64_repeat_tlbi": False}
    listed = table("6.6", 8)
    assert all(t["doc"] for t in listed.values())
    for name, t in listed.items():
        value = written.get(name, 7 if isinstance(t["default"], int) and t["default"] != 7 else 9)
        for key in filter(None, (name, t["alias"])):
            s = schedlab.load_scenario("examples/pipe_pingpong.toml").with_changes(
                {f"kernel.tunables.{key}": value, "run.duration_s": 0.001})
            got = schedlab.run(s, seed=1).raw["kernel"]["tunables"][name]
            assert got == expected.get(name, value), (key, got)


def test_cli_lists_the_tunables_with_their_defaults(cli):
    r = cli("tunables", "--profile", "5.4", "--cpus", "64", "--json")
    assert r.exit_code == 0, r.output
    doc = {t["name"]: t["default"] for t in json.loads(r.stdout)}
    assert doc["sched_latency_ns"] == 24_000_000 and doc["busy_factor"] == 32
    r = cli("tunables")
    assert r.exit_code == 0 and "sched_base_slice_ns (base_slice_ns)" in r.stdout and "3000000" in r.stdout
    bad = cli("tunables", "--profile", "banana")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: ") and bad.stderr.count("\n") == 1
