//! Per-mm (process) machinery: rseq concurrency IDs and the caches their data lives in.
//!
//! Mirrors: kernel/sched/core.c and kernel/sched/sched.h (mm_cid), include/linux/mm_types.h.
//! Model: pure state machines driven by the engine; each method takes the simulated time.

pub mod cid;
pub mod cid_cache;
