//! Bad scenarios get typed errors naming the field and what was expected.

use schedlab_core::Scenario;

fn err(toml: &str) -> schedlab_core::ScenarioError {
    match Scenario::from_toml_str(toml, "bad.toml") {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e,
    }
}

const OK_TAIL: &str = "[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1.0\n";

#[test]
fn unknown_fields_are_named() {
    let e = err(&format!("[machine]\npreset = \"bergamo\"\ncolour = \"red\"\n{OK_TAIL}"));
    assert_eq!(e.field, "machine.colour");
    assert!(e.message.contains("unknown field"), "{e}");
    assert_eq!(e.origin, "bad.toml");
    assert!(e.location.starts_with(":3:"), "line of the bad key: {}", e.location);
}

#[test]
fn wrong_units_are_rejected() {
    let e = err("[machine]\ntopo = { cores = 2 }\n[[tasks]]\nname = \"t\"\nprogram = [{ run = \"10 parsecs\" }]\n[run]\nduration_s = 1.0\n");
    assert_eq!(e.field, "tasks[0].program[0].run");
    assert!(e.message.contains("unit"), "{e}");
    let e = err("[machine]\ntopo = { cores = 2 }\n[[tasks]]\nname = \"t\"\nprogram = [{ sleep = 5 }]\n[run]\nduration_s = 1.0\n");
    assert_eq!(e.field, "tasks[0].program[0].sleep");
    assert!(e.message.contains("duration string"), "{e}");
}

#[test]
fn impossible_topologies_are_rejected() {
    let e = err(&format!("[machine]\ntopo = {{ cores = 0 }}\n{OK_TAIL}"));
    assert_eq!(e.field, "machine.topo");
    let e = err(&format!("[machine]\ntopo = {{ sockets = 16, llcs = 16, cores = 8, smt = 2 }}\n{OK_TAIL}"));
    assert!(e.message.contains("more than"), "{e}");
    let e = err(&format!("[machine]\npreset = \"bergamo\"\ntopo = {{ cores = 2 }}\n{OK_TAIL}"));
    assert_eq!(e.field, "machine");
}

#[test]
fn empty_workloads_and_bad_runs_are_rejected() {
    let e = err("[machine]\ntopo = { cores = 2 }\n[run]\nduration_s = 1.0\n");
    assert_eq!(e.field, "workload");
    let e = err("[machine]\ntopo = { cores = 2 }\n[[tasks]]\nname = \"t\"\nprogram = []\n[run]\nduration_s = 1.0\n");
    assert_eq!(e.field, "tasks[0].program");
    let e = err("[machine]\ntopo = { cores = 2 }\n[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = -1.0\n");
    assert_eq!(e.field, "run.duration_s");
}

#[test]
fn kernel_names_are_checked() {
    let e = err(&format!("[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nfeatures = {{ NO_SUCH = true }}\n{OK_TAIL}"));
    assert_eq!(e.field, "kernel.features.NO_SUCH");
    let e = err(&format!("[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"banana\"\n{OK_TAIL}"));
    assert_eq!(e.field, "kernel.profile");
    let e = err(&format!("[machine]\ntopo = {{ cores = 2 }}\n[kernel]\ntunables = {{ sched_latency = 5 }}\n{OK_TAIL}"));
    assert_eq!(e.field, "kernel.tunables.sched_latency");
    // The seed's HHVM settings are expressible with debugfs names.
    Scenario::from_toml_str(
        &format!("[machine]\ntopo = {{ cores = 2 }}\n[kernel]\nprofile = \"6.5\"\ntunables = {{ migration_cost_ns = 0, latency_ns = 20000000, min_granularity_ns = 10000000, wakeup_granularity_ns = 12000000 }}\n{OK_TAIL}"),
        "hhvm.toml",
    )
    .unwrap();
}

#[test]
fn run_time_errors_name_the_field() {
    let s = Scenario::from_toml_str(&format!("[machine]\npreset = \"no-such-box\"\n{OK_TAIL}"), "x.toml").unwrap();
    match schedlab_core::api::run(&s, 1, &Default::default()) {
        Err(schedlab_core::SimError::Scenario(e)) => {
            assert_eq!(e.field, "machine.preset");
            assert!(e.message.contains("bergamo"), "lists the presets: {e}");
        }
        other => panic!("{other:?}"),
    }
    let s = Scenario::from_toml_str(
        "[machine]\ntopo = { cores = 2 }\n[workload]\nkind = \"make\"\nparams = { jobz = 3 }\n[run]\nuntil = \"workload_done\"\n",
        "x.toml",
    )
    .unwrap();
    match schedlab_core::api::run(&s, 1, &Default::default()) {
        Err(schedlab_core::SimError::Scenario(e)) => assert!(e.field.starts_with("workload.params"), "{e}"),
        other => panic!("{other:?}"),
    }
}

/// The machine is built when a run starts; its overrides are checked there.
fn machine_err(toml: &str) -> schedlab_core::ScenarioError {
    let s = Scenario::from_toml_str(&format!("{toml}{OK_TAIL}"), "bad.toml").expect("parses");
    match schedlab_core::api::build_machine(&s.machine) {
        Ok(_) => panic!("accepted:\n{toml}"),
        Err(e) => e,
    }
}

#[test]
fn cost_and_idle_state_overrides_name_what_is_wrong() {
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { warp_drive_ns = 1 }\n");
    assert_eq!(e.field, "machine.cost");
    assert!(e.message.contains("unknown cost 'warp_drive_ns'"), "{e}");
    // Idle states by name: the machine's states are listed when the name is wrong.
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { \"cpuidle.C6.wake_us\" = 40 }\n");
    assert_eq!(e.field, "machine.cost");
    assert!(e.message.contains("no idle state 'C6'") && e.message.contains("POLL, C1, C2"), "{e}");
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { \"cpuidle.C2.exit_us\" = 40 }\n");
    assert!(e.message.contains("unknown field 'exit_us'") && e.message.contains("wake_us"), "{e}");
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { \"cpuidle.wake_us\" = 40 }\n");
    assert!(e.message.contains("expected cpuidle.STATE.FIELD"), "{e}");
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { \"cpuidle.C2.wake_us\" = -1 }\n");
    assert!(e.message.contains("non-negative"), "{e}");
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { smt_slowdown = 0.5 }\n");
    assert!(e.field == "machine.cost" && e.message.contains("smt_slowdown must be at least 1"), "{e}");
    let m = schedlab_core::api::build_machine(
        &Scenario::from_toml_str(&format!("[machine]\npreset = \"bergamo\"\ncost = {{ \"cpuidle.C2.exit_latency_us\" = 100, \"cpuidle.C2.target_residency_us\" = 250.5 }}\n{OK_TAIL}"), "ok.toml").unwrap().machine,
    )
    .unwrap();
    // The declared figures change; the wake stays the measured one (10 us), and the
    // declared figure's provenance says the scenario set it.
    let c2 = &m.idle_drivers[0].states[2];
    assert_eq!((c2.name.as_str(), c2.exit_latency_ns, c2.target_residency_ns, c2.wake_latency_ns()), ("C2", 100_000, 250_500, 10_000));
    assert_eq!(c2.declared.kind, schedlab_core::provenance::Kind::Override);
}

/// No silent clamps: a value the simulator would clamp (parallelism below 1), saturate
/// (1e30 into an integer field, 1e30 us into nanoseconds) or echo in 300 digits is
/// refused with a short message naming it.
#[test]
fn cost_overrides_are_never_clamped_in_silence() {
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { miss_parallelism = 0 }\n");
    assert!(e.field == "machine.cost" && e.message.contains("miss_parallelism' must be at least 1"), "{e}");
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { rfo_parallelism = 0.5 }\n");
    assert!(e.message.contains("rfo_parallelism' must be at least 1"), "{e}");
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { \"cache.llc_kib\" = 1e30 }\n");
    assert!(e.message.contains("cache.llc_kib' must be a whole number") && e.message.contains("1e30"), "{e}");
    assert!(!e.message.contains("18446744073709551615"), "{e}");
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { \"cache.llc_kib\" = 1.5 }\n");
    assert!(e.message.contains("whole number"), "{e}");
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { smt_slowdown = -1e300 }\n");
    assert!(e.message.contains("-1e300") && e.message.len() < 200, "{e}");
    let e = machine_err("[machine]\npreset = \"bergamo\"\ncost = { \"cpuidle.C2.wake_us\" = 1e30 }\n");
    assert!(e.message.contains("up to 1e9") && e.message.contains("1e30"), "{e}");
}

#[test]
fn a_cputime_poll_below_100ns_is_refused() {
    let e = err(
        "[machine]\ntopo = { cores = 1 }\n[[tasks]]\nname = \"t\"\ncputime_poll = \"10ns\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1.0\n",
    );
    assert_eq!(e.field, "tasks[0].cputime_poll");
    assert!(e.message.contains("at least 100ns"), "{e}");
}
