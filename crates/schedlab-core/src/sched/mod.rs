//! The scheduler: core.c (`core.rs`) over the class table (`class.rs`), the RT and
//! deadline classes (`rt.rs`, `deadline.rs`, `dl_balance.rs`, `pi.rs`), and the engine's
//! side of every mechanism (time accounting, idle, timers, bandwidth, mm, locks, the
//! programs tasks run). The fair class is `crate::fair`.

mod account;
mod bandwidth;
pub(crate) mod class;
mod core;
mod cpufreq;
pub(crate) mod deadline;
mod dl_balance;
pub(crate) mod ext;
mod fair_policy;
pub(crate) use fair_policy::WEIGHT_IDLEPRIO;
mod idle;
mod ipc;
mod locks;
pub(crate) mod mm;
mod pi;
mod pricing;
pub(crate) mod program;
pub(crate) mod rt;
mod timer;
