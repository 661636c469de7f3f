//! The shared wakequeue: idle CPUs pull woken tasks that wait elsewhere in their LLC.

use crate::common;

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

/// hackbench (small) on `topo` with `features`, every invariant checked after every event.
fn hackbench_checked(topo: &str, features: &str, seed: u64) -> schedlab_core::RunResult {
    let toml = format!(
        "[machine]\ntopo = {{ {topo} }}\n[kernel]\nprofile = \"6.5\"\nfeatures = {{ {features} }}\n\
         [workload]\nkind = \"hackbench\"\nparams = {{ groups = 2, fds = 6, loops = 20 }}\n[run]\nuntil = \"workload_done\"\n"
    );
    let s = common::scenario(&toml);
    let opts = schedlab_core::api::RunOptions { check_invariants: true, ..Default::default() };
    schedlab_core::api::run(&s, seed, &opts).unwrap_or_else(|e| panic!("{features}: {e}")).result
}

#[test]
fn every_version_keeps_tasks_out_of_shards_while_running_and_on_one_shard_only() {
    // check_invariants: a task in a shard is runnable (never running), appears once, in
    // the shard it is marked in; tasks stay within their affinity.
    let topo = "sockets = 1, llcs = 2, cores = 6, smt = 2";
    for features in [
        "SHARED_RUNQ = true",
        "SHARED_RUNQ = true, SHARED_RUNQ_STEAL = true",
        "SHARED_RUNQ_V2 = true",
        "SHARED_RUNQ_V2 = true, SHARED_RUNQ_ALL = true",
        "SHARED_RUNQ_V2 = true, SHARED_RUNQ_ALL = true, SHARED_RUNQ_SHARDS = true",
        "SHARED_RUNQ_V3 = true, SHARED_RUNQ_V3_LLC_SKIP = true",
        "SHARED_RUNQ_V4 = true, SHARED_RUNQ_SHARDS = true",
        "NI_RANDOM = true",
    ] {
        let r = hackbench_checked(topo, features, 3);
        assert_eq!(r.engine.stopped_by, "workload_done", "{features}");
        assert!(r.workload["time_s"] > 0.0, "{features}");
        if features.starts_with("SHARED") {
            assert!(r.summary["shared_runq_enqueues"] > 0.0, "{features}: nothing was enqueued");
            assert!(!r.shared_runq_locks.is_empty());
        }
    }
}

#[test]
fn v3s_llc_skip_still_balances_llc_domains_while_v4_skips_them() {
    let topo = "sockets = 1, llcs = 2, cores = 6, smt = 2";
    let v3 = hackbench_checked(topo, "SHARED_RUNQ_V3 = true, SHARED_RUNQ_V3_LLC_SKIP = true", 1);
    let v4 = hackbench_checked(topo, "SHARED_RUNQ_V4 = true", 1);
    assert!(v3.summary["newidle_lb_llc"] > 0.0, "v3 with the skip still balances SMT/MC domains");
    assert_eq!(v3.summary["newidle_domain_skips"], 0.0);
    assert_eq!(v4.summary["newidle_lb_llc"], 0.0, "v4 never balances <= LLC domains in newidle");
    assert!(v4.summary["newidle_domain_skips"] > 0.0);
}

/// Ping-pong pairs on one LLC of `cores` CPUs: wakeups on every CPU, every task entering
/// the tree goes through the shard lock (SHARED_RUNQ_ALL).
fn lock_wait_ms(cores: usize, shards: bool) -> f64 {
    let r = run_toml(
        &format!(
            "[machine]\ntopo = {{ sockets = 1, llcs = 1, cores = {cores} }}\n[kernel]\nprofile = \"6.5\"\n\
             features = {{ SHARED_RUNQ_V2 = true, SHARED_RUNQ_ALL = true, SHARED_RUNQ_SHARDS = {shards} }}\n\
             [workload]\nkind = \"pingpong\"\nparams = {{ pairs = {}, rounds = 100000, work = \"1us\" }}\n[run]\nduration_s = 0.02\n",
            cores
        ),
        1,
    );
    r.summary["shared_runq_lock_wait_seconds"] * 1e3
}

#[test]
fn lock_wait_grows_with_llc_size_without_sharding_and_falls_with_it() {
    let (small, large) = (lock_wait_ms(6, false), lock_wait_ms(48, false));
    assert!(large > 4.0 * small, "unsharded wait: {small} ms on 6 CPUs, {large} ms on 48");
    let sharded = lock_wait_ms(48, true);
    assert!(sharded < large / 2.0, "48 CPUs: {large} ms unsharded, {sharded} ms with 8 shards");
}
