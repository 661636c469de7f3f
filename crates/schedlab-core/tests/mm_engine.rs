//! The per-mm mechanisms driven by the engine: rseq_burst and swap_bench end to end.

use crate::common;

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
    // One thread per CPU, plus librseq's main thread (it creates and joins them).
    assert!(r.tasks.iter().any(|t| t.name == "rseq-main"));
    assert_eq!(r.workload["passes"] as usize, 5 * (r.tasks.len() - 1));
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

fn swap_with(preset: &str, profile: &str, tunables: &str, extra: &str) -> schedlab_core::RunResult {
    run_toml(
        &format!(
            "[machine]\npreset = \"{preset}\"\n[kernel]\nprofile = \"{profile}\"\ntunables = {{ {tunables} }}\n\
             [workload]\nkind = \"swap_bench\"\nparams = {{ iterations = 200{extra} }}\n[run]\nuntil = \"workload_done\"\n"
        ),
        1,
    )
}

fn swap(preset: &str, profile: &str, extra: &str) -> schedlab_core::RunResult {
    // The seed's phone kernel predates the Cortex-A55 #2441007 workaround.
    let tunables = if preset == "snapdragon-888" { "arm64_repeat_tlbi = false" } else { "" };
    swap_with(preset, profile, tunables, extra)
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
fn the_a55_erratum_workaround_doubles_the_wait_and_stops_batching_on_6_5() {
    // Snapdragon 888 has Cortex-A55 cores: from 6.1 the kernel repeats every TLBI after a
    // DSB (#2441007), and 6.5's arch_tlbbatch_should_defer() then refuses to defer.
    let seed = swap("snapdragon-888", "6.4", "");
    let before = swap_with("snapdragon-888", "6.4", "", "");
    let after = swap_with("snapdragon-888", "6.5", "", "");
    assert_eq!(before.summary["tlb_completion_waits"], 2.0 * 200.0 * 256.0);
    assert_eq!(after.summary["tlb_completion_waits"], before.summary["tlb_completion_waits"]);
    assert!(after.workload["ptep_clear_flush_pct"] > 0.0);
    assert!(before.workload["ptep_clear_flush_s"] > 1.8 * seed.workload["ptep_clear_flush_s"]);
    // KPTI adds a TLBI per page; the waits stay one per page.
    let kpti = swap_with("snapdragon-888", "6.4", "arm64_repeat_tlbi = false, kpti = true", "");
    assert_eq!(kpti.summary["tlb_completion_waits"], seed.summary["tlb_completion_waits"]);
    assert!(kpti.workload["ptep_clear_flush_s"] > seed.workload["ptep_clear_flush_s"]);
}

#[test]
fn a_single_cpu_process_on_x86_sends_no_ipi() {
    for profile in ["4.2", "6.5"] {
        let r = swap("xeon-80", profile, ", cpu = 3");
        assert_eq!(r.summary["tlb_ipis"], 0.0, "{profile}");
        assert_eq!(r.summary["ipis"], 0.0, "{profile}");
    }
}

#[test]
fn running_mappers_take_shootdown_ipis_on_x86_and_batching_cuts_them() {
    let run = |batch: bool, sleep: &str| {
        run_toml(
            &format!(
                "[machine]\ntopo = {{ cores = 8 }}\n[kernel]\nprofile = \"6.5\"\nfeatures = {{ TLB_BATCH = {batch} }}\n\
                 [workload]\nkind = \"swap_bench\"\nparams = {{ iterations = 50, extra_mappers = 3, memory_reclaim = true, mapper_sleep = \"{sleep}\" }}\n\
                 [run]\nuntil = \"workload_done\"\n"
            ),
            1,
        )
    };
    let (sync, batched) = (run(false, "0ms"), run(true, "0ms"));
    for r in [&sync, &batched] {
        // memory.reclaim unmaps pages every process maps: none left mapped, none skipped.
        assert_eq!(r.summary["pages_left_mapped"], 0.0);
        assert!(r.summary["pages_out"] > 0.0);
        assert!(r.tasks.iter().filter(|t| t.name.starts_with("mapper")).all(|t| t.exit_ns.is_some()));
    }
    // The mappers run on their CPUs: their TLBs must be shot down with IPIs, one round per
    // page synchronously, one per batch of SWAP_CLUSTER_MAX when batched.
    assert!(sync.summary["tlb_ipis"] > 0.0, "{:?}", sync.summary);
    assert!(
        batched.summary["tlb_ipi_rounds"] * 8.0 < sync.summary["tlb_ipi_rounds"],
        "{} vs {}",
        batched.summary["tlb_ipi_rounds"],
        sync.summary["tlb_ipi_rounds"]
    );
    assert!(batched.workload["elapsed_s"] < sync.workload["elapsed_s"]);
    // Mappers that sleep most of the time leave their CPUs lazy: fewer IPIs.
    let sleepy = run(false, "50ms");
    assert!(sleepy.summary["tlb_ipis"] < sync.summary["tlb_ipis"], "{} vs {}", sleepy.summary["tlb_ipis"], sync.summary["tlb_ipis"]);
}
