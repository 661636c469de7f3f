//! The exact elision of events (issue 36: an event pushed earlier than every pending one
//! is popped from a slot of its own, without the lists and the tree) changes nothing but
//! the engine's bookkeeping: each case run with it off and on gives the same result, bit
//! for bit, while the elision did serve events.

use schedlab_core::api::{run, RunOptions};
use schedlab_core::bench::CASES;
use schedlab_core::scenario::Scenario;

/// The bench cases compared, each cut to a simulated duration short enough for a test
/// (None: the case's own end, `workload_done`).
const COMPARED: &[(&str, Option<f64>)] = &[
    ("flat-128", Some(0.2)),
    ("2s-384", Some(0.05)),
    ("bergamo-make", None),
    ("64x100k", Some(0.1)),
    ("fibtest", Some(0.5)),
    ("mm_cid", Some(0.02)),
];

/// The result as JSON, less what is the engine's own (wall time, the elision's count),
/// and that count.
fn result(s: &Scenario, seed: u64, no_elision: bool) -> (serde_json::Value, u64) {
    let opts = RunOptions { no_elision, ..Default::default() };
    let mut r = run(s, seed, &opts).unwrap_or_else(|e| panic!("{}: {e}", s.name)).result;
    r.engine.wall_ns = 0;
    let inline = r.engine.events_by_kind.remove("inline").unwrap_or(0);
    (serde_json::to_value(&r).expect("a result serializes"), inline)
}

#[test]
fn elision_on_and_off_give_the_same_result() {
    for &(name, secs) in COMPARED {
        let case = CASES.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no bench case {name}"));
        let mut s = Scenario::from_toml_str(case.toml, case.name).unwrap_or_else(|e| panic!("{name}: {e}"));
        if secs.is_some() {
            s.run.duration_s = secs;
        }
        for seed in [1, 7] {
            let (off, none) = result(&s, seed, true);
            let (on, inline) = result(&s, seed, false);
            assert_eq!(none, 0, "{name} seed {seed}: no event elided with the elision off");
            assert!(inline > 0, "{name} seed {seed}: the elision served no event");
            assert_eq!(off["engine"]["events"], on["engine"]["events"], "{name} seed {seed}: events");
            if off != on {
                let diff: Vec<&String> = off.as_object().unwrap().keys().filter(|k| off[k.as_str()] != on[k.as_str()]).collect();
                panic!("{name} seed {seed}: results differ with the elision on (in {diff:?})");
            }
        }
    }
}
