//! The shared wakequeue: idle CPUs pull woken tasks that wait elsewhere in their LLC.

mod common;

use common::run_toml;

fn overcommitted(features: &str) -> schedlab_core::RunResult {
    run_toml(
        &format!(
            "[machine]\npreset = \"ryzen-7950x\"\n[kernel]\nprofile = \"6.4\"\nfeatures = {{ {features} }}\n\
             [[tasks]]\nname = \"w\"\ncount = 48\nprogram = [{{ loop = {{ body = [{{ run_exp = \"300us\" }}, {{ sleep_exp = \"200us\" }}] }} }}]\n\
             [run]\nduration_s = 0.3\n"
        ),
        1,
    )
}

#[test]
fn shared_runq_cuts_idle_time_while_tasks_wait_in_the_llc() {
    let before = overcommitted("");
    let after = overcommitted("SHARED_RUNQ = true");
    let pulls: u64 = after.cpus.iter().map(|c| c.shared_runq_pulls).sum();
    assert!(pulls > 100, "{pulls} pulls");
    assert_eq!(before.cpus.iter().map(|c| c.shared_runq_pulls).sum::<u64>(), 0);
    let (b, a) = (before.summary["idle_while_waiting_llc_seconds"], after.summary["idle_while_waiting_llc_seconds"]);
    assert!(a < b, "idle while waiting: {b} before, {a} after");
    assert!(after.summary["utilization"] > before.summary["utilization"]);
}
