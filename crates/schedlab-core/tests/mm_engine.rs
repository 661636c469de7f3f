//! The per-mm mechanisms driven by the engine: rseq_burst and swap_bench end to end.

mod common;

use common::run_toml;

fn rseq(profile: &str, index: &str, cpus: &str) -> f64 {
    let r = run_toml(
        &format!(
            "[machine]\npreset = \"epyc-9654-2s\"\n[kernel]\nprofile = \"{profile}\"\n\
             [workload]\nkind = \"rseq_burst\"\nparams = {{ cpus = \"{cpus}\", delay = \"200ms\", index = \"{index}\", warmup = 200 }}\n\
             [run]\nuntil = \"workload_done\"\n"
        ),
        1,
    );
    assert_eq!(r.engine.stopped_by, "workload_done");
    assert_eq!(r.workload["passes"] as usize, 5 * r.tasks.len());
    r.workload["ns_per_pass"]
}

#[test]
fn cache_local_cids_are_no_slower_than_the_old_allocator() {
    for cpus in ["0-7", "0,8,16,24,32,40,48,56"] {
        let legacy = rseq("6.12", "mm_cid", cpus);
        let local = rseq("6.13", "mm_cid", cpus);
        let per_cpu = rseq("6.13", "cpu_id", cpus);
        assert!(local <= legacy, "{cpus}: cache-local {local} vs 6.12 {legacy}");
        assert!((local - per_cpu).abs() / per_cpu < 0.05, "{cpus}: cache-local {local} vs cpu_id {per_cpu}");
        assert_eq!(per_cpu, rseq("6.12", "cpu_id", cpus), "cpu_id indexing does not depend on the allocator");
    }
}

fn swap(preset: &str, profile: &str, extra: &str) -> schedlab_core::RunResult {
    run_toml(
        &format!(
            "[machine]\npreset = \"{preset}\"\n[kernel]\nprofile = \"{profile}\"\n\
             [workload]\nkind = \"swap_bench\"\nparams = {{ iterations = 200{extra} }}\n[run]\nuntil = \"workload_done\"\n"
        ),
        1,
    )
}

#[test]
fn batched_flush_waits_once_per_batch_and_saves_time_on_arm64() {
    let before = swap("snapdragon-888", "6.4", "");
    let after = swap("snapdragon-888", "6.5", "");
    for r in [&before, &after] {
        assert_eq!(r.summary["pages_left_mapped"], 0.0, "no page stays mapped after page-out");
        assert_eq!(r.summary["pages_out"], 200.0 * 256.0);
    }
    let (wb, wa) = (before.summary["tlb_completion_waits"], after.summary["tlb_completion_waits"]);
    assert_eq!(wb, 200.0 * 256.0, "synchronous: one DSB wait per page");
    assert!(wa < wb / 100.0, "batched: {wa} waits");
    assert!(after.workload["elapsed_s"] < before.workload["elapsed_s"]);
    assert_eq!(after.workload["ptep_clear_flush_pct"], 0.0);
}

#[test]
fn a_single_cpu_process_on_x86_sends_no_ipi() {
    for profile in ["4.2", "6.5"] {
        let r = swap("xeon-80", profile, ", cpu = 3");
        assert_eq!(r.summary["tlb_ipis"], 0.0, "{profile}");
        assert_eq!(r.summary["ipis"], 0.0, "{profile}");
    }
}
