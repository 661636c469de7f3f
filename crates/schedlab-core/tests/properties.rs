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
        (1u32..20).prop_map(|ms| format!("{{ sleep_timeout = \"{ms}ms\" }}")),
        (1u32..50, any::<bool>(), any::<bool>()).prop_map(|(ms, pinned, def)| format!(
            "{{ mod_timer = {{ timer = \"w\", delay = \"{ms}ms\", pinned = {pinned}, deferrable = {def}, signal = \"ch1\" }} }}"
        )),
        Just("{ del_timer = \"w\" }".to_string()),
    ]
}

fn scenario() -> impl Strategy<Value = String> {
    let tasks = prop::collection::vec((prop::collection::vec(step(), 1..5), 1usize..4, any::<bool>(), -5i32..6), 1..5);
    let kernel = (0usize..4, any::<bool>(), any::<bool>(), 0usize..4);
    (1usize..3, 1usize..3, 1usize..4, 1usize..3, kernel, tasks, prop::bool::ANY).prop_map(
        |(sockets, llcs, cores, smt, (profile, teo, migration, timers), tasks, quota)| {
            // 5.15: CFS and the push model; 6.6: EEVDF, push; 6.9: the pull model; 6.18:
            // the task-based bandwidth throttle.
            let mut s = format!(
                "[machine]\ntopo = {{ sockets = {sockets}, llcs = {llcs}, cores = {cores}, smt = {smt} }}\n\
                 [kernel]\nprofile = \"{}\"\ntunables = {{ cpuidle_governor = \"{}\", timer_migration = {} }}\n",
                ["5.15", "6.6", "6.9", "6.18"][profile],
                if teo { "teo" } else { "menu" },
                migration as u8
            );
            for t in 0..timers {
                s += &format!(
                    "[[timers]]\nname = \"k{t}\"\nperiod = \"{}ms\"\nper_cpu = {}\ndeferrable = {}\nwork = \"3us\"\n",
                    [3, 7, 20, 1][t],
                    t % 2 == 1,
                    t == 2
                );
            }
            if quota {
                // A limited group, and a weighted group nested in it.
                s += "[[groups]]\nname = \"g\"\ncfs_quota_us = 5000\ncfs_period_us = 20000\n";
                s += "[[groups]]\nname = \"h\"\nparent = \"g\"\ncpu_weight = 300\n";
            }
            for (i, (steps, count, pinned, nice)) in tasks.iter().enumerate() {
                s += &format!(
                    "[[tasks]]\nname = \"t{i}\"\ncount = {count}\nnice = {nice}\n{}{}program = [{{ loop = {{ body = [{}, {{ run = \"10us\" }}] }} }}]\n",
                    if *pinned { "affinity = \"0\"\n" } else { "" },
                    if quota && i % 2 == 0 { ["group = \"g\"\n", "group = \"h\"\n"][i % 4 / 2] } else { "" },
                    steps.join(", ")
                );
            }
            s += "[[templates]]\nname = \"child\"\nprogram = [{ run_exp = \"200us\" }, { signal = \"ch0\" }]\n";
            // Every channel has a signaller: a wait nothing signals is a scenario error.
            s += "[[tasks]]\nname = \"signaller\"\nprogram = [{ loop = { body = [{ sleep = \"1ms\" }, { signal = \"ch1\" }, { signal = \"ch2\" }] } }]\n";
            s += "[run]\nduration_s = 0.05\n";
            s
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

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
