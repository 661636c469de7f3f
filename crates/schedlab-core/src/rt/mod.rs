//! The real-time and deadline classes' own state and rules, as pure mechanisms (no
//! engine): the RT class's per-CPU priority queues (`prio_array`), the root domain's map
//! of CPU priorities that RT push and pull search (`cpupri`), and the deadline class's
//! parameters, admission control, constant bandwidth server and GRUB reclaiming
//! (`deadline`).
//!
//! Mirrors: kernel/sched/rt.c, cpupri.c, deadline.c (issue 35). The engine's side (the
//! class order in the pick, preemption across classes, push/pull, RT throttling and the
//! fair deadline server) is sched/class.rs, sched/rt.rs and sched/deadline.rs over
//! state/rt_rq.rs.

pub mod cpudl;
pub mod cpupri;
pub mod deadline;
pub mod prio_array;

/// MAX_RT_PRIO: RT priorities are 0..99 (kernel `prio`, 0 the highest); 100..139 are the
/// fair class's nice levels.
pub const MAX_RT_PRIO: usize = 100;

/// The kernel `prio` of an RT task with sched_priority `rt_priority` (1..99):
/// `MAX_RT_PRIO - 1 - rt_priority` (normal_prio() for RT policies).
pub fn rt_prio(rt_priority: u32) -> usize {
    MAX_RT_PRIO - 1 - rt_priority.clamp(1, 99) as usize
}

/// SCHED_RR's time slice: sched_rr_timeslice_ms, RR_TIMESLICE = 100 ms (include/linux/sched/rt.h).
pub const RR_TIMESLICE_NS: u64 = 100_000_000;

/// RT throttling's defaults: sched_rt_runtime_us 950,000 of sched_rt_period_us 1,000,000
/// (kernel/sched/core.c, sysctl_sched_rt_runtime / sysctl_sched_rt_period).
pub const DEF_RT_RUNTIME_NS: u64 = 950_000_000;
/// See [`DEF_RT_RUNTIME_NS`].
pub const DEF_RT_PERIOD_NS: u64 = 1_000_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rt_priority_maps_to_kernel_prio() {
        assert_eq!(rt_prio(99), 0);
        assert_eq!(rt_prio(1), 98);
        assert_eq!(rt_prio(50), 49);
    }
}
