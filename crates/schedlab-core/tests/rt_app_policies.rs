//! rt-app's own example files that set a policy (SCHED_FIFO, SCHED_DEADLINE) import
//! with their policies kept and run as those classes (issue 35); a deadline set above
//! the admissible bandwidth can run with the refused task left SCHED_OTHER.

use crate::common;

use schedlab_core::api::{run, RunOptions};
use schedlab_core::interchange::rt_app::{import, RtAppOptions};
use schedlab_core::scenario::MachineSpec;
use schedlab_core::RunResult;

fn examples_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/rt-app/policies")
}

fn machine() -> RtAppOptions {
    let m: MachineSpec = serde_json::from_str(r#"{"topo": {"cores": 4}}"#).unwrap();
    RtAppOptions { machine: Some(m) }
}

/// Each file: the policy every thread is imported with, and what the run shows of it.
#[test]
fn rt_apps_policy_examples_run_with_their_policies() {
    let cases = [
        ("calibration.json", vec![("thread", "SCHED_FIFO")]),
        ("dvfs.json", vec![("thread", "SCHED_FIFO")]),
        ("custom-slice.json", vec![("thread0", "SCHED_OTHER"), ("thread1", "SCHED_DEADLINE")]),
    ];
    for (file, want) in cases {
        let path = examples_dir().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut imp = import(&text, file, &machine()).unwrap_or_else(|e| panic!("{file}: {e}"));
        for (thread, policy) in &want {
            let t = imp.scenario.tasks.iter().find(|t| t.name == *thread).unwrap_or_else(|| panic!("{file}: no {thread}"));
            let got = t.sched_attr.as_ref().and_then(|a| a.policy.clone()).unwrap_or_else(|| "SCHED_OTHER".into());
            assert_eq!(&got, policy, "{file}: {thread}");
        }
        imp.scenario.run.duration_s = Some(0.5);
        let out = run(&imp.scenario, 1, &RunOptions { check_invariants: true, ..Default::default() }).unwrap_or_else(|e| panic!("{file}: {e}"));
        let r = out.result;
        assert!(r.engine.sim_ns > 0, "{file}");
        // The class shows: RT and deadline runs carry the classes' summary.
        assert!(r.summary.contains_key("rt_pushes"), "{file}: {:?}", r.summary.keys().collect::<Vec<_>>());
        if file == "custom-slice.json" {
            // rt-app's defaults: period = deadline = runtime (200 us): a bandwidth of
            // 1, admitted on 4 CPUs; it runs beside the nice -19 fair hog at all.
            assert!(common::run_ns(&r, "thread1") > 0 && r.summary["dl_misses"] == 0.0, "{:?}", r.summary);
        }
    }
}

/// Three deadline tasks on one CPU at `pct` % of the admissible 0.95: the run's result.
fn dl_set(pct: u64) -> Result<RunResult, String> {
    // Each task reserves a third of pct % of 950 ms every 1 s, and works 90 % of it.
    let runtime_us = 950_000 * pct / 100 / 3;
    let work_us = runtime_us * 9 / 10;
    let mut text = String::from("[machine]\ntopo = { cores = 1 }\n[kernel]\nprofile = \"6.12\"\n");
    for i in 0..3 {
        text += &format!(
            "[[tasks]]\nname = \"dl{i}\"\nsched_attr = {{ policy = \"SCHED_DEADLINE\", runtime = \"{runtime_us}us\", period = \"1s\", ebusy_stays_fair = true }}\n\
             program = [{{ loop = {{ body = [{{ run = \"{work_us}us\" }}, {{ periodic = {{ period = \"1s\" }} }}] }} }}]\n"
        );
    }
    text += "[run]\nduration_s = 10\n";
    let s = common::scenario(&text);
    run(&s, 1, &RunOptions { check_invariants: true, ..Default::default() }).map(|o| o.result).map_err(|e| e.to_string())
}

/// 90 %: all three admitted, no job misses. 110 %: the third is refused (EBUSY) and
/// runs SCHED_OTHER in the background; the admitted two never miss.
#[test]
fn a_set_above_the_limit_runs_with_the_refused_task_left_fair() {
    let r = dl_set(90).unwrap();
    assert_eq!((r.summary["dl_refused"], r.summary["dl_misses"]), (0.0, 0.0), "{:?}", r.summary);
    let r = dl_set(110).unwrap();
    assert_eq!((r.summary["dl_refused"], r.summary["dl_misses"]), (1.0, 0.0), "{:?}", r.summary);
    assert!(!r.summary.contains_key("dl_misses:dl2"), "dl2 is SCHED_OTHER: {:?}", r.summary);
    assert!(common::run_ns(&r, "dl2") > 0);
}
