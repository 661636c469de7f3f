//! schedlab-core: a deterministic discrete-event simulator of the Linux kernel's
//! per-CPU scheduling machinery on modeled multicore machines.
//!
//! The module list is the architecture:
//!
//! | module | kernel counterpart |
//! |---|---|
//! | [`engine`] | the passage of time: one event queue, ticks, timers, the run loop |
//! | [`topology`] | arch topology, sched domains (kernel/sched/topology.c) |
//! | [`cost`] | hardware latencies the mechanisms pay |
//! | [`task`], [`rq`] | task_struct, struct rq |
//! | [`fair`] | kernel/sched/fair.c: CFS/EEVDF, placement, load balance, shared runqueue |
//! | [`bandwidth`] | fair.c CFS bandwidth control |
//! | [`cpuidle`] | drivers/cpuidle: idle states, the menu and teo governors |
//! | [`eas`] | fair.c's energy-aware half: util_est, uclamp, schedutil, find_energy_efficient_cpu() |
//! | [`energy_model`] | kernel/power/energy_model.c: power per operating point |
//! | [`timers`] | kernel/time: timer wheel, hrtimers, timer migration (push vs pull) |
//! | [`mm`] | rseq mm_cid (kernel/sched/core.c, sched.h), TLB shootdown on reclaim (mm/rmap.c) |
//! | [`provenance`] | (none: where each hardware figure comes from, its kind and band) |
//! | [`features`] | kernel/sched/features.h |
//! | [`kernel`] | version profiles and sysctl/debugfs tunables |
//! | [`workload`] | task programs and benchmark generators |
//! | [`ipc`] | pipes, futex words, mutexes and barriers of task programs (fs/pipe.c, kernel/futex) |
//! | [`metrics`], [`trace`] | schedstat/cpu.stat counters, sched tracepoints |
//! | [`scenario`] | the run description (TOML/JSON) |
//! | [`interchange`] | rt-app JSON in and out, ftrace / perf script traces in and replayed |

#![warn(missing_docs)]

pub mod api;
pub mod bench;
pub mod bandwidth;
pub mod cost;
pub mod cpumask;
pub mod cpuidle;
pub mod eas;
pub mod energy_model;
pub mod engine;
pub mod error;
pub mod fair;
pub mod features;
pub mod interchange;
pub mod kernel;
pub mod lock;
pub mod metrics;
pub mod mm;
pub mod provenance;
pub mod rng;
mod sched;
pub mod state;
pub mod scenario;
pub mod time;
pub mod timers;
pub mod topology;
pub mod trace;
pub mod workload;

pub use error::{ScenarioError, SimError};
pub use metrics::RunResult;
pub use scenario::Scenario;
