//! Per-mm (process) machinery: rseq concurrency IDs, the caches their data lives in,
//! and TLB shootdown on page reclaim.
//!
//! Mirrors: kernel/sched/core.c and kernel/sched/sched.h (mm_cid), include/linux/mm_types.h,
//! mm/rmap.c and mm/vmscan.c (try_to_unmap, tlbbatch), arch TLB flush code.
//! Model: pure state machines and cost models driven by the engine; each method takes
//! the simulated time.

pub mod cid;
pub mod cid_cache;
pub mod reclaim;
pub mod tlb;
