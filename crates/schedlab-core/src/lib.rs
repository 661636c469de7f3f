//! schedlab-core: a deterministic discrete-event simulator of the Linux kernel's
//! per-CPU scheduling machinery on modeled multicore machines.
//!
//! The module list is the architecture, from the top floor down (a module imports only
//! those below it; `docs/architecture.md` has the picture):
//!
//! | module | kernel counterpart |
//! |---|---|
//! | [`api`], [`bench`] | (the entry points: load, check, run; the speed suite) |
//! | [`engine`] | the passage of time: the event loop, building a run, its result |
//! | `sched` (private), [`fair`] | kernel/sched/core.c over the class table (struct sched_class), rt.c, deadline.c, idle.c; fair.c: CFS/EEVDF, placement, load balance, shared runqueue |
//! | [`state`] | sched.h: the run's data (task_struct, struct rq, cfs_rq, sched_avg, the event queue, pipes/futexes/mutexes) |
//! | [`interchange`] | rt-app JSON in and out, ftrace / perf script traces in and replayed |
//! | [`workload`] | task programs and benchmark generators |
//! | [`bandwidth`], [`mm`] | fair.c CFS bandwidth control; rseq mm_cid, TLB shootdown on reclaim (mm/rmap.c) |
//! | [`scenario`] | the run description (TOML/JSON) |
//! | [`metrics`], [`features`] | schedstat/cpu.stat counters; kernel/sched/features.h |
//! | [`topology`], [`kernel`] | arch topology, sched domains (topology.c); version profiles and tunables |
//! | [`timers`], [`cpuidle`], [`lock`], [`trace`] | kernel/time; drivers/cpuidle; spinlocks as cache lines; sched tracepoints |
//! | [`eas`], [`rt`] | fair.c's energy-aware half (called by sched/cpufreq.rs and fair/energy.rs under schedutil), rt.c/cpupri.c/deadline.c (not yet called by the engine): pure rules |
//! | [`cost`], [`time`], [`cpumask`], [`rng`], [`energy_model`], [`provenance`], [`error`] | hardware latencies; time; CPU masks; seeded streams; power per OPP; where each figure comes from; errors |

#![warn(missing_docs)]

/// Reads a leaf of the run's cost table (`cost!(self, kernel.schedule_ns)`) and records
/// the read in the run's read set (`engine.constants_read`, what a sensitivity study
/// varies). The leaf's name is checked against `cost::COST_KEYS` at compile time.
macro_rules! cost {
    ($sim:expr, $($leaf:ident).+) => {{
        $sim.stats.cost_reads.note(const { $crate::cost::key_index(stringify!($($leaf).+)) });
        $sim.m.cost.$($leaf).+
    }};
}

pub mod api;
pub mod bandwidth;
pub mod bench;
pub mod cost;
pub mod cpuidle;
pub mod cpumask;
pub mod eas;
pub mod energy_model;
pub mod engine;
pub mod error;
pub mod ext;
pub mod fair;
pub mod features;
pub mod interchange;
pub mod kernel;
pub mod lock;
pub mod metrics;
pub mod mm;
pub mod provenance;
pub mod rng;
pub mod rt;
pub mod scenario;
mod sched;
pub mod state;
pub mod time;
pub mod timers;
pub mod topology;
pub mod trace;
pub mod workload;

pub use error::{ScenarioError, SimError};
pub use metrics::RunResult;
pub use scenario::Scenario;
