//! A run advanced in public (`Simulation::step`, `step_until`) is the run `api::run`
//! makes: the same events, the same result, bit for bit.

use schedlab_core::api::{self, RunOptions, Simulation};
use schedlab_core::scenario::Scenario;

const PINGPONG: &str = r#"
name = "pingpong"
[machine]
topo = { sockets = 1, llcs = 2, cores = 2, smt = 2 }
[kernel]
profile = "6.6"
[run]
duration_s = 0.05
[[tasks]]
name = "ping"
program = [{ loop = { body = [{ run = "20us" }, { signal = "ping" }, { wait = "pong" }] } }]
[[tasks]]
name = "pong"
program = [{ loop = { body = [{ wait = "ping" }, { run = "30us" }, { signal = "pong" }] } }]
[[tasks]]
name = "hog"
program = [{ run = "1s" }]
"#;

fn figures(out: api::RunOutput) -> serde_json::Value {
    let mut r = out.result;
    r.engine.wall_ns = 0;
    serde_json::to_value(&r).expect("a result serializes")
}

#[test]
fn stepping_to_the_end_gives_the_result_of_a_run() {
    let s = Scenario::from_toml_str(PINGPONG, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let whole = figures(api::run(&s, 3, &RunOptions::default()).unwrap());

    let mut sim = Simulation::new(&s, 3, None, None).unwrap();
    let mut t = 0;
    let why = loop {
        t += 1_234_567;
        if let Some(why) = sim.step_until(t).unwrap() {
            break why;
        }
        assert!(sim.now() <= t, "step_until({t}) went to {}", sim.now());
    };
    assert_eq!(why, "duration");
    assert_eq!(sim.ended(), Some("duration"));
    assert_eq!(sim.step().unwrap(), Some("duration"), "an ended run stays ended");
    let events = sim.events();
    let stepped = figures(sim.finish("duration", 0));
    assert_eq!(stepped, whole);

    let mut one_by_one = Simulation::new(&s, 3, None, None).unwrap();
    let mut n = 0;
    while one_by_one.step().unwrap().is_none() {
        n += 1;
    }
    assert_eq!(n + 1, events, "every event is one step (the end event included)");
}

/// A scenario as loaded (validated by `Scenario::from_*_str`) is built without being
/// validated again (`api::run_loaded`, the bindings' run), to the same result; the
/// public entry points for a scenario made in Rust still validate it.
#[test]
fn a_loaded_scenario_is_not_validated_again() {
    let s = Scenario::from_toml_str(PINGPONG, "t.toml").unwrap_or_else(|e| panic!("{e}"));
    let loaded = figures(api::run_loaded(&s, 3, &RunOptions::default(), None).unwrap());
    assert_eq!(loaded, figures(api::run(&s, 3, &RunOptions::default()).unwrap()));
    // No seed at all fails validation only: the build itself has no use for the list.
    let mut unchecked = Scenario::from_toml_str(PINGPONG, "t.toml").unwrap();
    unchecked.run.seeds.clear();
    let e = api::run(&unchecked, 3, &RunOptions::default()).expect_err("api::run validates");
    assert!(e.to_string().contains("run.seeds"), "{e}");
    assert!(Simulation::new(&unchecked, 3, None, None).is_err(), "Simulation::new validates");
    assert!(Simulation::new_checked(&unchecked, 3, None, None).is_ok());
    assert_eq!(figures(api::run_loaded(&unchecked, 3, &RunOptions::default(), None).unwrap()), loaded);
}
