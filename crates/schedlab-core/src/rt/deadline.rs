//! SCHED_DEADLINE's rules: its parameters, admission control, the constant bandwidth
//! server (CBS) that keeps a task within its reservation, and GRUB reclaiming.
//!
//! Mirrors: kernel/sched/deadline.c and syscalls.c as of 6.x: `__checkparam_dl()`,
//! `to_ratio()` (core.c), `__dl_overflow()` (admission against the root domain's
//! capacity x sched_rt_runtime_us / sched_rt_period_us), `setup_new_dl_entity()`,
//! `replenish_dl_entity()`, `dl_entity_overflow()`, `update_dl_entity()` with the revised
//! wakeup rule for constrained deadlines (`update_dl_revised_wakeup()`), and
//! `grub_reclaim()` in its form after the SMP reclaim fix ("sched/deadline: Fix reclaim
//! inaccuracy with SMP", 2023: the reclaimable share is bounded by max_bw, not 1).
//! Model: times in ns, bandwidths in 2^-20 units (BW_SHIFT) as the kernel keeps them.

/// BW_SHIFT: bandwidths are fractions in 2^-20 units.
pub const BW_SHIFT: u32 = 20;
/// BW_UNIT: a bandwidth of 1.
pub const BW_UNIT: u64 = 1 << BW_SHIFT;
/// RATIO_SHIFT: rq->dl.bw_ratio (1 / Umax) in 2^-8 units.
pub const RATIO_SHIFT: u32 = 8;
/// DL_SCALE: the CBS overflow test drops the low 10 bits of its operands.
const DL_SCALE: u32 = 10;
/// sysctl_sched_dl_period_min, 100 us (kernel/sched/syscalls.c).
pub const DL_PERIOD_MIN_NS: u64 = 100_000;
/// sysctl_sched_dl_period_max, 2^22 us (about 4.2 s).
pub const DL_PERIOD_MAX_NS: u64 = (1 << 22) * 1000;

/// `to_ratio()`: runtime / period in 2^-20 units (0 for a zero period).
pub fn to_ratio(period: u64, runtime: u64) -> u64 {
    if period == 0 {
        return 0;
    }
    ((runtime as u128) << BW_SHIFT).checked_div(period as u128).unwrap_or(0) as u64
}

/// A task's sched_setattr() parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlParams {
    /// sched_runtime, ns.
    pub runtime: u64,
    /// sched_deadline (relative), ns.
    pub deadline: u64,
    /// sched_period, ns (0: the deadline).
    pub period: u64,
}

impl DlParams {
    /// `__checkparam_dl()`: runtime at least 2^DL_SCALE ns, deadline non-zero,
    /// runtime <= deadline <= period, period inside the sysctl limits. The message is
    /// why sched_setattr() would return EINVAL.
    pub fn check(&self) -> Result<DlParams, String> {
        if self.deadline == 0 {
            return Err("dl-deadline must be positive".into());
        }
        if self.runtime < 1 << DL_SCALE {
            return Err(format!("dl-runtime {} ns: expected at least {} ns", self.runtime, 1u64 << DL_SCALE));
        }
        if self.deadline & (1 << 63) != 0 || self.period & (1 << 63) != 0 {
            return Err("dl-deadline and dl-period must be below 2^63 ns".into());
        }
        let period = if self.period == 0 { self.deadline } else { self.period };
        if !(self.runtime <= self.deadline && self.deadline <= period) {
            return Err(format!("expected dl-runtime <= dl-deadline <= dl-period, got {} / {} / {} ns", self.runtime, self.deadline, period));
        }
        if !(DL_PERIOD_MIN_NS..=DL_PERIOD_MAX_NS).contains(&period) {
            return Err(format!("dl-period {period} ns: expected {DL_PERIOD_MIN_NS}..{DL_PERIOD_MAX_NS} ns"));
        }
        Ok(DlParams { period, ..*self })
    }

    /// dl_bw: runtime / period.
    pub fn bw(&self) -> u64 {
        to_ratio(self.period, self.runtime)
    }

    /// dl_density: runtime / deadline.
    pub fn density(&self) -> u64 {
        to_ratio(self.deadline, self.runtime)
    }
}

/// A root domain's deadline bandwidth (`struct dl_bw`) against its limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DlBw {
    /// Admitted bandwidth, summed over the domain's tasks.
    pub total_bw: u64,
}

impl DlBw {
    /// `__dl_overflow()`: would admitting `new_bw` in place of `old_bw` exceed the
    /// domain's capacity (`cap`, 1024 per full CPU) times rt_runtime / rt_period? With
    /// `rt_runtime` None (-1, RUNTIME_INF) nothing is refused.
    pub fn overflows(&self, cap: u64, rt_runtime: Option<u64>, rt_period: u64, old_bw: u64, new_bw: u64) -> bool {
        let Some(runtime) = rt_runtime else { return false };
        let limit = (to_ratio(rt_period, runtime) as u128 * cap as u128) >> 10;
        limit < (self.total_bw - old_bw + new_bw) as u128
    }

    /// Admits a task of bandwidth `bw` (sched_dl_overflow() passed), or says why not:
    /// sched_setattr() fails with EBUSY.
    pub fn admit(&mut self, cap: u64, rt_runtime: Option<u64>, rt_period: u64, bw: u64) -> Result<(), String> {
        if self.overflows(cap, rt_runtime, rt_period, 0, bw) {
            return Err("EBUSY: the deadline bandwidth would exceed the root domain's limit".into());
        }
        self.total_bw += bw;
        Ok(())
    }

    /// Releases an admitted task's bandwidth (its exit, or a change of policy).
    pub fn release(&mut self, bw: u64) {
        self.total_bw = self.total_bw.saturating_sub(bw);
    }
}

/// A deadline entity's current reservation: the CBS's state (`struct sched_dl_entity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DlEntity {
    /// The task's parameters (checked).
    pub params: DlParams,
    /// Runtime left in the current reservation, ns (may be negative after an overrun).
    pub runtime: i64,
    /// Absolute deadline of the current reservation, ns.
    pub deadline: u64,
    /// Out of runtime, waiting for its replenishment (dl_throttled).
    pub throttled: bool,
}

impl DlEntity {
    /// `setup_new_dl_entity()`: the first reservation starts now.
    pub fn new(params: DlParams, now: u64) -> DlEntity {
        DlEntity { params, runtime: params.runtime as i64, deadline: now + params.deadline, throttled: false }
    }

    /// `replenish_dl_entity()`: at the replenishment timer, the deadline moves one
    /// period and the runtime grows by one budget until the runtime is positive; a
    /// reservation already in the past starts afresh ("replenish lagged too much").
    pub fn replenish(&mut self, now: u64) {
        while self.runtime <= 0 {
            self.deadline += self.params.period;
            self.runtime += self.params.runtime as i64;
        }
        if self.deadline < now {
            self.deadline = now + self.params.deadline;
            self.runtime = self.params.runtime as i64;
        }
        self.throttled = false;
    }

    /// `dl_entity_overflow()`: would using the runtime left by the deadline exceed the
    /// reserved density (runtime / (deadline - t) > dl_runtime / dl_deadline)?
    pub fn overflow(&self, t: u64) -> bool {
        let left = (self.params.deadline >> DL_SCALE) as u128 * ((self.runtime.max(0) as u64) >> DL_SCALE) as u128;
        let right = ((self.deadline.saturating_sub(t)) >> DL_SCALE) as u128 * (self.params.runtime >> DL_SCALE) as u128;
        right < left
    }

    /// `update_dl_entity()` at a wakeup: a reservation whose deadline passed, or whose
    /// remaining runtime would overflow its density, is renewed from now; a constrained
    /// task (deadline < period) with its deadline still ahead keeps it with the runtime
    /// cut to the density (the revised wakeup rule).
    pub fn wakeup(&mut self, now: u64) {
        if self.deadline < now || self.overflow(now) {
            let implicit = self.params.deadline == self.params.period;
            if !implicit && self.deadline >= now {
                self.runtime = ((self.params.density() as u128 * (self.deadline - now) as u128) >> BW_SHIFT) as i64;
                return;
            }
            self.deadline = now + self.params.deadline;
            self.runtime = self.params.runtime as i64;
        }
    }

    /// Charges `delta` ns of runtime (`update_curr_dl_se()`); returns true when the
    /// reservation is exhausted and the entity throttles (dl_runtime_exceeded()).
    pub fn charge(&mut self, delta: u64) -> bool {
        self.runtime -= delta as i64;
        if self.runtime <= 0 {
            self.throttled = true;
        }
        self.throttled
    }
}

/// One CPU's deadline bandwidths as GRUB reads them (`struct dl_rq`), 2^-20 units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GrubRq {
    /// this_bw: bandwidth of the tasks assigned to this CPU (active or not).
    pub this_bw: u64,
    /// running_bw: bandwidth of the active ones.
    pub running_bw: u64,
    /// extra_bw: bandwidth no task reserved, spread over the root domain's CPUs.
    pub extra_bw: u64,
    /// max_bw: Umax, rt_runtime / rt_period.
    pub max_bw: u64,
}

impl GrubRq {
    /// rq->dl.bw_ratio: 1 / Umax in 2^-8 units.
    pub fn bw_ratio(&self) -> u64 {
        if self.max_bw == 0 {
            return 1 << RATIO_SHIFT;
        }
        (BW_UNIT << RATIO_SHIFT) / self.max_bw
    }

    /// `grub_reclaim()`: the runtime `delta` ns of execution consumes for a task of
    /// bandwidth `dl_bw` with SCHED_FLAG_RECLAIM: delta x max(u, Umax - Uinact - Uextra)
    /// / Umax, so bandwidth nobody uses is reclaimed, up to Umax.
    pub fn reclaim(&self, delta: u64, dl_bw: u64) -> u64 {
        let u_inact = self.this_bw.saturating_sub(self.running_bw);
        let u_act = if u_inact + self.extra_bw > self.max_bw.saturating_sub(dl_bw) { dl_bw } else { self.max_bw - u_inact - self.extra_bw };
        let u_act = (u_act as u128 * self.bw_ratio() as u128) >> RATIO_SHIFT;
        ((delta as u128 * u_act) >> BW_SHIFT) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn params(runtime_ms: u64, deadline_ms: u64, period_ms: u64) -> DlParams {
        DlParams { runtime: runtime_ms * MS, deadline: deadline_ms * MS, period: period_ms * MS }.check().unwrap()
    }

    #[test]
    fn parameters_are_checked_as_sched_setattr_does() {
        assert!(DlParams { runtime: 10 * MS, deadline: 5 * MS, period: 20 * MS }.check().is_err(), "runtime > deadline");
        assert!(DlParams { runtime: MS, deadline: 30 * MS, period: 20 * MS }.check().is_err(), "deadline > period");
        assert!(DlParams { runtime: 500, deadline: MS, period: MS }.check().is_err(), "runtime below 1024 ns");
        assert!(DlParams { runtime: 10_000, deadline: 50_000, period: 0 }.check().is_err(), "period below 100 us");
        let p = DlParams { runtime: MS, deadline: 10 * MS, period: 0 }.check().unwrap();
        assert_eq!(p.period, 10 * MS, "a zero period is the deadline");
    }

    #[test]
    fn admission_refuses_what_the_root_domain_cannot_hold() {
        // 4 CPUs at 95 %: 3.8 CPUs of deadline bandwidth.
        let (cap, rt) = (4 * 1024, (Some(950 * MS), 1000 * MS));
        let mut b = DlBw::default();
        let bw = params(90, 100, 100).bw();
        for _ in 0..4 {
            b.admit(cap, rt.0, rt.1, bw).unwrap();
        }
        let e = b.admit(cap, rt.0, rt.1, bw).unwrap_err();
        assert!(e.starts_with("EBUSY"), "{e}");
        // A small one still fits under 3.8; with RUNTIME_INF everything does.
        b.admit(cap, rt.0, rt.1, params(10, 100, 100).bw()).unwrap();
        b.admit(cap, None, rt.1, bw).unwrap();
        b.release(bw);
        assert!(!b.overflows(cap, rt.0, rt.1, 0, 0));
    }

    #[test]
    fn an_overrun_postpones_the_deadline_by_whole_periods() {
        let mut e = DlEntity::new(params(10, 100, 100), 0);
        assert!(!e.charge(9 * MS));
        assert!(e.charge(25 * MS), "overran by 24 ms");
        e.replenish(100 * MS);
        // -24 ms + 10 + 10 + 10 = 6 ms, three periods later.
        assert_eq!((e.runtime, e.deadline, e.throttled), (6 * MS as i64, 400 * MS, false));
        // A replenishment far behind the clock starts a fresh reservation.
        let mut late = DlEntity::new(params(10, 100, 100), 0);
        late.charge(11 * MS);
        late.replenish(1000 * MS);
        assert_eq!((late.runtime, late.deadline), (10 * MS as i64, 1100 * MS));
    }

    #[test]
    fn a_wakeup_renews_a_reservation_that_would_overflow_its_density() {
        // 10 ms every 100 ms; 8 ms left with 20 ms to the deadline is 0.4 > 0.1: renewed.
        let mut e = DlEntity::new(params(10, 100, 100), 0);
        e.charge(2 * MS);
        e.wakeup(80 * MS);
        assert_eq!((e.runtime, e.deadline), (10 * MS as i64, 180 * MS));
        // 8 ms left with 90 ms to go (0.089 < 0.1): kept.
        let mut k = DlEntity::new(params(10, 100, 100), 0);
        k.charge(2 * MS);
        k.wakeup(10 * MS);
        assert_eq!((k.runtime, k.deadline), (8 * MS as i64, 100 * MS));
    }

    #[test]
    fn a_constrained_task_keeps_its_deadline_with_runtime_cut_to_its_density() {
        // 10 ms within 20 ms every 100 ms: density 0.5. Woken 14 ms before its deadline
        // with 9 ms left (9/14 > 0.5): runtime = 0.5 x 14 ms, deadline kept.
        let mut e = DlEntity::new(params(10, 20, 100), 0);
        e.charge(MS);
        e.wakeup(6 * MS);
        assert_eq!(e.deadline, 20 * MS);
        assert!((e.runtime - 7 * MS as i64).abs() <= 1, "{}", e.runtime);
    }

    #[test]
    fn grub_lets_a_lone_task_use_idle_bandwidth_up_to_umax() {
        // One task of 25 ms / 100 ms alone on a CPU of Umax 0.95: extra_bw = 0.95 - 0.25.
        let bw = params(25, 100, 100).bw();
        let max_bw = to_ratio(1000 * MS, 950 * MS);
        let rq = GrubRq { this_bw: bw, running_bw: bw, extra_bw: max_bw - bw, max_bw };
        // 25 ms of runtime last 25 / (0.25 / 0.95) = 95 ms of execution: 95 % of the CPU.
        let consumed = rq.reclaim(95 * MS, bw);
        assert!((consumed as i64 - 25 * MS as i64).abs() < 50_000, "{consumed}");
        // With the CPU's bandwidth all reserved and active, nothing is left to reclaim:
        // runtime goes at the clock's rate (Umax / Umax, up to bw_ratio's rounding).
        let full = GrubRq { this_bw: max_bw, running_bw: max_bw, extra_bw: 0, max_bw };
        let c = full.reclaim(100 * MS, bw);
        assert!((c as f64 / (100 * MS) as f64 - 1.0).abs() < 5e-3, "{c}");
        // The others reserved but asleep (inactive): their share is reclaimed too, down
        // to the task's own u / Umax.
        let asleep = GrubRq { this_bw: max_bw, running_bw: bw, extra_bw: 0, max_bw };
        let a = asleep.reclaim(95 * MS, bw);
        assert!((a as i64 - 25 * MS as i64).abs() < 50_000, "{a}");
    }
}
