//! The speed suite (`schedlab_core::bench`, issue 49 item 4): a case per experiment
//! family, each running the mechanism it is named after, and `--quick` stopping every
//! case at its short simulated time.

use schedlab_core::api::{run, RunOptions};
use schedlab_core::bench::{run_case, BenchCase, CASES};
use schedlab_core::scenario::Scenario;

#[test]
fn quick_stops_a_case_at_its_quick_ms() {
    let case = BenchCase {
        name: "tiny",
        what: "",
        toml: "name = \"tiny\"\n[machine]\ntopo = { sockets = 1, llcs = 1, cores = 2, smt = 1 }\n\
               [[tasks]]\nname = \"w\"\ncount = 4\n\
               program = [{ loop = { body = [{ run = \"500us\" }, { sleep = \"500us\" }] } }]\n\
               [run]\nduration_s = 0.1\n",
        quick_ms: 10,
    };
    let full = run_case(&case, 1.0, &RunOptions::default(), false);
    let quick = run_case(&case, 1.0, &RunOptions::default(), true);
    assert!(full.error.is_none() && quick.error.is_none(), "{:?} {:?}", full.error, quick.error);
    assert!((full.sim_s - 0.1).abs() < 1e-9, "full run: {} s", full.sim_s);
    assert!((quick.sim_s - 0.01).abs() < 1e-9, "quick run: {} s", quick.sim_s);
    assert!(quick.events > 0 && quick.events < full.events);
}

#[test]
fn the_suite_keeps_a_case_per_experiment_family() {
    // The peer case, flat-384, 2S-384, flat-2048, 100k tasks, an EAS phone run, an RT
    // run, a shared-runqueue run.
    for n in ["flat-128", "flat-384", "2s-384", "flat-2048", "64x100k", "1024x100k", "pixel6-eas", "rt", "shared-runq"] {
        let c = CASES.iter().find(|c| c.name == n).unwrap_or_else(|| panic!("no bench case {n}"));
        assert!(c.quick_ms > 0, "{n}: no quick time");
    }
}

/// A family case whose feature silently did nothing would time the wrong code.
#[test]
fn family_cases_exercise_their_mechanism() {
    for (name, counter) in [
        ("pixel6-eas", "eas_feec_placements"),
        ("rt", "rt_pushes"),
        ("rt", "rt_push_ipis"),
        ("shared-runq", "shared_runq_pulls"),
        ("scx-128", "scx_dispatch"),
    ] {
        let c = CASES.iter().find(|c| c.name == name).unwrap();
        let sc = Scenario::from_toml_str(c.toml, c.name).unwrap();
        let mut opts = RunOptions::default();
        opts.limits.max_sim_ns = Some(100_000_000);
        let r = run(&sc, 1, &opts).unwrap().result;
        let v = r.summary.get(counter).copied().unwrap_or(0.0);
        assert!(v > 0.0, "{name}: summary.{counter} = {v}");
    }
}
