//! `engine.constants_read`: a constant the run did not read cannot move its result.
//!
//! For a few runs that exercise different mechanisms (SMT and balance, an asymmetric phone
//! with deep idle states, mm_cid's cache model, the TLB on reclaim, bandwidth and the
//! timer pull model), every cost-table leaf and every idle state's wake that the run does
//! not list is changed, one at a time, and the result must stay byte-identical. A read
//! that a pricing path forgot to record fails here.

use crate::common;

use std::collections::BTreeSet;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::cost::COST_KEYS;
use schedlab_core::Scenario;

/// The result without the engine's own bookkeeping (events, wall time, the read set).
fn figures(s: &Scenario) -> (serde_json::Value, Vec<String>) {
    let r = run(s, 1, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}")).result;
    let read = r.engine.constants_read.clone();
    let mut v = serde_json::to_value(&r).unwrap();
    let engine = v["engine"].as_object_mut().unwrap();
    for own in ["wall_ns", "events", "events_by_kind", "constants_read"] {
        engine.remove(own);
    }
    (v, read)
}

/// The cost table's leaves of the scenario's machine, by dotted name.
fn leaves(s: &Scenario) -> Vec<(String, f64)> {
    let m = s.machine.build().unwrap();
    let doc = serde_json::to_value(&m.cost).unwrap();
    COST_KEYS
        .iter()
        .filter_map(|k| {
            let v = k.split('.').fold(&doc, |v, part| &v[part]);
            v.as_f64().map(|x| (k.to_string(), x))
        })
        .collect()
}

/// Every idle state's name and wake, µs, over the machine's drivers.
fn idle_states(s: &Scenario) -> BTreeSet<(String, u64)> {
    let m = s.machine.build().unwrap();
    m.idle_drivers.iter().flat_map(|d| d.states.iter().map(|st| (st.name.clone(), st.wake_ns / 1000))).collect()
}

fn check(name: &str, toml: &str, must_read: &[&str]) {
    let s = common::scenario(toml);
    let (nominal, read) = figures(&s);
    for k in must_read {
        assert!(read.iter().any(|r| r == k), "{name}: {k} not in the read set {read:?}");
    }
    let read: BTreeSet<String> = read.into_iter().collect();
    let mut varied = 0;
    for (key, value) in leaves(&s) {
        if read.contains(&key) {
            continue;
        }
        let mut t = s.clone();
        // Twice the value plus one: a whole number stays whole, a parallelism stays >= 1.
        t.machine.cost.insert(key.clone(), value * 2.0 + 1.0);
        let (got, _) = figures(&t);
        assert!(got == nominal, "{name}: {key} is not in the read set, yet changing it moved the result");
        varied += 1;
    }
    for (state, wake_us) in idle_states(&s) {
        let key = format!("cpuidle.{state}.wake_us");
        if read.contains(&key) {
            continue;
        }
        let mut t = s.clone();
        t.machine.cost.insert(key.clone(), (wake_us * 2 + 1) as f64);
        let (got, _) = figures(&t);
        assert!(got == nominal, "{name}: {key} is not in the read set, yet changing it moved the result");
        varied += 1;
    }
    // Some constants are unread in each of these runs (else the test checks nothing).
    assert!(varied > 0, "{name}: the run read every constant");
}

#[test]
fn smt_balance_and_wakeups() {
    check(
        "smt",
        "[machine]\ntopo = { cores = 4, smt = 2 }\ncost = { smt_slowdown = 1.3 }\n[kernel]\nprofile = \"6.6\"\n\
         [[tasks]]\nname = \"w\"\ncount = 6\nprogram = [{ loop = { body = [{ run = \"300us\" }, { sleep = \"200us\" }] } }]\n\
         [[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n[run]\nduration_s = 0.05\n",
        &["kernel.schedule_ns", "context_switch_ns", "smt_slowdown", "cacheline.same_core_ns"],
    );
}

#[test]
fn phone_with_deep_idle_states() {
    check(
        "pixel6",
        "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.1\"\n\
         [[tasks]]\nname = \"w\"\ncount = 3\nprogram = [{ loop = { body = [{ run = \"200us\" }, { sleep = \"4ms\" }] } }]\n\
         [run]\nduration_s = 0.05\n",
        &["kernel.idle_entry_ns", "kernel.syscall_entry_ns"],
    );
}

#[test]
fn mm_cid_cache_model() {
    check(
        "rseq",
        "[machine]\npreset = \"milan-72\"\n[kernel]\nprofile = \"6.13\"\n\
         [workload]\nkind = \"rseq_burst\"\nparams = { cpus = \"0-3\", delay = \"1ms\", index = \"mm_cid\", warmup = 2 }\n\
         [run]\nuntil = \"workload_done\"\n",
        &["cache.l2_kib", "rfo_parallelism"],
    );
}

#[test]
fn tlb_on_reclaim() {
    check(
        "swap",
        "[machine]\npreset = \"snapdragon-888\"\n[kernel]\nprofile = \"6.6\"\n\
         [workload]\nkind = \"swap_bench\"\nparams = { iterations = 3 }\n[run]\nuntil = \"workload_done\"\n",
        &["tlb.dsb_ishst_cycles"],
    );
}

#[test]
fn bandwidth_and_timer_pull() {
    check(
        "bandwidth",
        "[machine]\ntopo = { cores = 4 }\n[kernel]\nprofile = \"6.12\"\n\
         [[groups]]\nname = \"g\"\ncfs_quota_us = 5000\ncfs_period_us = 20000\n\
         [[tasks]]\nname = \"w\"\ncount = 3\ngroup = \"g\"\nprogram = [{ loop = { body = [{ run = \"1ms\" }, { sleep = \"3ms\" }] } }]\n\
         [[timers]]\nname = \"k\"\nperiod = \"4ms\"\n\
         [run]\nduration_s = 0.1\n",
        &["kernel.timer_expire_ns"],
    );
}
