//! Every integration test of schedlab-core in one binary: each file beside this one is a
//! module of it (Cargo.toml: `autotests = false`, one `[[test]]`). One binary links the
//! core and its dependencies once, where a binary per file linked them 44 times.
//! A new test file is a `mod` line here; `every_test_file_is_a_module` fails until it
//! has one (cargo no longer finds `tests/*.rs` by itself).

mod common;

mod asym;
mod background;
mod balance;
mod bandwidth;
mod bandwidth_engine;
mod bench_suite;
mod constants_read;
mod core;
mod cputime_poll;
mod eas_asym_wakeup;
mod eas_check;
mod eas_misfit;
mod eas_overutilized;
mod eas_placement;
mod eas_ramp;
mod eas_schedutil;
mod eas_sd888;
mod eas_uclamp_group;
mod eevdf;
mod elision;
mod fuzz_regressions;
mod group_sched;
mod idle_hardware;
mod interchange;
mod limits;
mod mm_cid;
mod mm_engine;
mod pelt;
mod program_steps;
mod properties;
mod rt_app_policies;
mod rt_class;
mod rt_deadline;
mod rt_fair_policy;
mod rt_global_edf;
mod rt_grub_inactive;
mod rt_nr_running;
mod rt_pi_chain;
mod rt_push_ipi;
mod scenario_errors;
mod sched_ext;
mod shared_runq;
mod stepping;
mod timers;
mod tlb;
mod topology;
mod warmup;

/// A file in tests/ that no `mod` line names would never compile nor run.
#[test]
fn every_test_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let this = std::fs::read_to_string(dir.join("integration.rs")).unwrap();
    let declared: std::collections::BTreeSet<String> =
        this.lines().filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_string)).collect();
    let mut missing = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else { continue };
        let is_module =
            if path.is_dir() { path.join("mod.rs").is_file() || path.join("main.rs").is_file() } else { path.extension().is_some_and(|x| x == "rs") };
        if is_module && stem != "integration" && !declared.contains(stem) {
            missing.push(path.display().to_string());
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "not in tests/integration.rs (add `mod NAME;`): {missing:?}");
}
