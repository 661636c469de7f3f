//! Properties over random small scenarios: no task is lost or on two CPUs at once
//! (checked after every event by the engine in debug builds, and at the end here),
//! CPU time is conserved, and runs are deterministic.

use proptest::prelude::*;
use schedlab_core::api::{run, RunOptions};
use schedlab_core::Scenario;

fn step() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u32..3000).prop_map(|us| format!("{{ run = \"{us}us\" }}")),
        (1u32..3000).prop_map(|us| format!("{{ run_exp = \"{us}us\" }}")),
        (1u32..5000).prop_map(|us| format!("{{ sleep = \"{us}us\" }}")),
        (0u32..3).prop_map(|c| format!("{{ signal = \"ch{c}\" }}")),
        (0u32..3).prop_map(|c| format!("{{ wait = \"ch{c}\" }}")),
        Just("{ lock = \"m\" }, { run = \"50us\" }, { unlock = \"m\" }".to_string()),
        Just("{ fork = { template = \"child\" } }".to_string()),
    ]
}

fn scenario() -> impl Strategy<Value = String> {
    let tasks = prop::collection::vec((prop::collection::vec(step(), 1..5), 1usize..4, any::<bool>(), -5i32..6), 1..5);
    (1usize..3, 1usize..3, 1usize..4, 1usize..3, prop::bool::ANY, tasks, prop::bool::ANY).prop_map(
        |(sockets, llcs, cores, smt, eevdf, tasks, quota)| {
            let mut s = format!(
                "[machine]\ntopo = {{ sockets = {sockets}, llcs = {llcs}, cores = {cores}, smt = {smt} }}\n\
                 [kernel]\nprofile = \"{}\"\n",
                if eevdf { "6.6" } else { "5.15" }
            );
            if quota {
                s += "[[groups]]\nname = \"g\"\ncfs_quota_us = 5000\ncfs_period_us = 20000\n";
            }
            for (i, (steps, count, pinned, nice)) in tasks.iter().enumerate() {
                s += &format!(
                    "[[tasks]]\nname = \"t{i}\"\ncount = {count}\nnice = {nice}\n{}{}program = [{{ loop = {{ body = [{}, {{ run = \"10us\" }}] }} }}]\n",
                    if *pinned { "affinity = \"0\"\n" } else { "" },
                    if quota && i % 2 == 0 { "group = \"g\"\n" } else { "" },
                    steps.join(", ")
                );
            }
            s += "[[templates]]\nname = \"child\"\nprogram = [{ run_exp = \"200us\" }, { signal = \"ch0\" }]\n";
            s += "[run]\nduration_s = 0.05\n";
            s
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn random_scenarios_keep_every_task_and_conserve_time(text in scenario()) {
        let s = Scenario::from_toml_str(&text, "<prop>").unwrap();
        let checked = RunOptions { check_invariants: true, ..Default::default() };
        let a = run(&s, 5, &checked).unwrap().result;
        let end = a.engine.sim_ns;
        for c in &a.cpus {
            prop_assert_eq!(c.busy_ns + c.idle_ns, end, "CPU {} time is conserved", c.cpu);
        }
        let ran: u64 = a.tasks.iter().map(|t| t.run_ns).sum();
        let busy: u64 = a.cpus.iter().map(|c| c.busy_ns).sum();
        prop_assert_eq!(ran, busy, "every busy ns belongs to one task");
        let b = run(&s, 5, &RunOptions::default()).unwrap().result;
        prop_assert_eq!(serde_json::to_value(&a.tasks).unwrap(), serde_json::to_value(&b.tasks).unwrap());
        prop_assert_eq!(a.engine.events, b.engine.events);
    }
}
