//! Per-entity load tracking (PELT): load, runnable and utilization averages of every
//! scheduling entity and cfs_rq.
//!
//! Mirrors: kernel/sched/pelt.c (___update_load_sum(), accumulate_sum(),
//! __accumulate_pelt_segments(), ___update_load_avg(), get_pelt_divider()) and the fair.c
//! users: update_load_avg() (called, as there, before every enqueue, dequeue, pick, put
//! and tick of an entity), attach/detach_entity_load_avg() for migrations and new tasks
//! (init_entity_runnable_average(), post_init_entity_util_avg()), update_blocked_averages(),
//! cpu_load() / cpu_util_cfs() / cpu_runnable(), the root sums load balance reads.
//! Model: sums advance in 1024 ns units over 1024-unit periods with the kernel's decay
//! table (y^32 = 1/2), exactly as accumulate_sum() does. Utilization is made
//! capacity-invariant by weighting running time with the CPU's capacity (the kernel
//! slows rq_clock_pelt instead; the steady state is the same, the decay of a small CPU's
//! signals while busy is not), and frequency-invariant the same way, by cur/max of its
//! cluster under schedutil (`pelt_capacity`, sched/cpufreq.rs; at the top OPP otherwise). Attach/detach propagate to the group entities and cfs_rqs above at once (the
//! kernel defers that to the next update, add_tg_cfs_propagate()): util and runnable by
//! the same amount, load as the group entity's weight times the change in the fraction
//! of time its cfs_rq had tasks (update_tg_cfs_load()). util_est is sched/cpufreq.rs's.

use crate::features::Feature;
use crate::state::cfs_rq::is_group;
use crate::state::pelt::{SchedAvg, CAP_SHIFT};
use crate::state::task::TaskId;
use crate::state::timeline::{EntityId, GROUP_SE};
use crate::state::Simulator;
impl Simulator {
    /// Whether PELT averages drive load balance, wake_affine and group shares (feature
    /// PELT); off, the instantaneous queued weights do (pre-3.8).
    #[inline]
    pub(crate) fn pelt_on(&self) -> bool {
        self.feat.has(Feature::PELT)
    }

    /// __update_load_avg_cfs_rq() for cfs_rq `c` (on `cpu`), with the root's sums passed
    /// on to the load-balance group sums.
    fn update_cfs_rq_avg(&mut self, c: usize, cpu: usize) {
        let cap = self.pelt_capacity(cpu);
        let q = &mut self.fg.cfs[c];
        let before = q.avg;
        if q.avg.update_sum(self.now, q.load, q.h_nr_running as u64, q.curr.is_some(), cap) {
            q.avg.update_avg(1);
        }
        self.avg_changed(c, before);
    }

    /// A cfs_rq's averages moved: a root's feed the balance sums; a group's its tg load.
    fn avg_changed(&mut self, c: usize, before: SchedAvg) {
        let after = self.fg.cfs[c].avg;
        if c < self.m.nr_cpus() {
            let d = |a: u64, b: u64| a as i64 - b as i64;
            self.load_sums.pelt_changed(
                c,
                d(after.load_avg, before.load_avg),
                d(after.util_avg, before.util_avg),
                d(after.runnable_avg, before.runnable_avg),
            );
        } else if after.load_avg != before.load_avg {
            self.update_tg_load_avg(c);
        }
    }

    /// __update_load_avg_se() for entity `e` on cfs_rq `c`.
    fn update_se_avg(&mut self, c: usize, e: EntityId, cpu: usize) {
        let cap = self.pelt_capacity(cpu);
        let on_rq = self.on_rq(e);
        let runnable = if is_group(e) { self.fg.cfs[e & !GROUP_SE].h_nr_running as u64 } else { (on_rq && !self.tasks[e].sched_delayed) as u64 };
        let running = self.fg.cfs[c].curr == Some(e);
        let now = self.now;
        let se = self.se_mut(e);
        if se.avg.last_update_time == 0 {
            return; // not attached yet (a new or migrated task): attached at enqueue
        }
        if se.avg.update_sum(now, on_rq as u64, runnable, running, cap) {
            let w = se.weight;
            se.avg.update_avg(w);
        }
    }

    /// update_load_avg(): cfs_rq `c` and its entity `e` brought up to now, before any
    /// change of their state. A task not attached (new, or moved from another CPU) is
    /// attached here (DO_ATTACH).
    pub(crate) fn update_load_avg(&mut self, c: usize, e: EntityId, cpu: usize) {
        if !self.pelt_on() {
            return;
        }
        self.update_cfs_rq_avg(c, cpu);
        self.update_se_avg(c, e, cpu);
        if !is_group(e) && self.tasks[e].se.avg.last_update_time == 0 {
            self.attach_entity_load_avg(c, e, cpu);
        }
    }

    /// attach_entity_load_avg(): task `p`'s averages join cfs_rq `c` and, propagated,
    /// every level above.
    fn attach_entity_load_avg(&mut self, c: usize, p: TaskId, cpu: usize) {
        let q = self.fg.cfs[c].avg;
        let se = &mut self.tasks[p].se;
        se.avg.last_update_time = q.last_update_time.max(1);
        se.avg.period_contrib = q.period_contrib;
        let div = se.avg.divider();
        se.avg.util_sum = se.avg.util_avg * div;
        se.avg.runnable_sum = se.avg.runnable_avg * div;
        let w = se.weight.max(1);
        se.avg.load_sum = (se.avg.load_avg * div / w).max(1);
        let a = se.avg;
        self.shift_cfs_avg(c, p, cpu, a.load_avg as i64, a.load_sum as i64 * w as i64, a.util_avg as i64, a.runnable_avg as i64, 1);
    }

    /// detach_entity_load_avg() / remove_entity_load_avg(): task `p`'s averages leave
    /// cfs_rq `c` (and every level above); it is re-attached where it is next enqueued.
    pub(crate) fn detach_entity_load_avg(&mut self, p: TaskId, cpu: usize) {
        if !self.pelt_on() || self.tasks[p].se.avg.last_update_time == 0 {
            return;
        }
        let c = self.cfs_of(p, cpu);
        self.update_cfs_rq_avg(c, cpu);
        self.update_se_avg(c, p, cpu);
        let a = self.tasks[p].se.avg;
        let w = self.tasks[p].se.weight as i64;
        self.shift_cfs_avg(c, p, cpu, -(a.load_avg as i64), -(a.load_sum as i64 * w), -(a.util_avg as i64), -(a.runnable_avg as i64), -1);
        self.tasks[p].se.avg.last_update_time = 0;
    }

    /// Adds (or, negative, removes) a task's averages to cfs_rq `c` and propagates the
    /// change to the group entities and cfs_rqs above (add_tg_cfs_propagate()).
    #[allow(clippy::too_many_arguments)]
    fn shift_cfs_avg(&mut self, mut c: usize, p: TaskId, cpu: usize, mut load: i64, mut load_sum: i64, util: i64, runnable: i64, sign: i64) {
        let _ = p;
        loop {
            let before = self.fg.cfs[c].avg;
            let q = &mut self.fg.cfs[c].avg;
            let div = q.divider() as i64;
            let add = |v: u64, d: i64| (v as i64 + d).max(0) as u64;
            q.load_avg = add(q.load_avg, load);
            q.load_sum = add(q.load_sum, load_sum);
            q.util_avg = add(q.util_avg, util);
            q.util_sum = add(q.util_sum, util * div);
            q.runnable_avg = add(q.runnable_avg, runnable);
            q.runnable_sum = add(q.runnable_sum, runnable * div);
            self.avg_changed(c, before);
            if self.fg.group_of_cfs(c) == 0 {
                break;
            }
            // The group entity above: util and runnable follow its cfs_rq; its load is
            // its weight times the fraction of time its cfs_rq had tasks.
            let ge = GROUP_SE | c;
            let gq = self.fg.cfs[c].avg;
            let gdiv = gq.divider();
            let se = self.se_mut(ge);
            let w = se.weight;
            se.avg.util_avg = add(se.avg.util_avg, util);
            se.avg.util_sum = se.avg.util_avg * gdiv;
            se.avg.runnable_avg = add(se.avg.runnable_avg, runnable);
            se.avg.runnable_sum = se.avg.runnable_avg * gdiv;
            let old_load = se.avg.load_avg;
            // Runnable fraction of the group's cfs_rq, bounded by 1.
            let frac_sum = (gq.runnable_sum >> CAP_SHIFT).min(gdiv);
            se.avg.load_sum = frac_sum;
            se.avg.load_avg = w * frac_sum / gdiv;
            if sign > 0 && se.avg.last_update_time == 0 {
                se.avg.last_update_time = gq.last_update_time.max(1);
            }
            load = se.avg.load_avg as i64 - old_load as i64;
            load_sum = load * gdiv as i64;
            c = self.cfs_of(ge, cpu);
        }
    }

    /// init_entity_runnable_average() + post_init_entity_util_avg() for a new task about
    /// to be enqueued on cfs_rq `c`: full load; util a share of the cfs_rq's by weight,
    /// at most half the CPU's spare capacity.
    pub(crate) fn init_entity_avg(&mut self, p: TaskId, cpu: usize) {
        if !self.pelt_on() {
            return;
        }
        let c = self.cfs_of(p, cpu);
        let cap = self.capacity(cpu);
        let q = self.fg.cfs[c].avg;
        let se = &mut self.tasks[p].se;
        se.avg = SchedAvg { load_avg: se.weight, ..SchedAvg::default() };
        let spare = cap.saturating_sub(q.util_avg) / 2;
        let util = if q.util_avg > 0 { (q.util_avg * se.weight / (q.load_avg + 1)).min(spare) } else { spare };
        se.avg.util_avg = util;
        se.avg.runnable_avg = util;
    }

    /// update_blocked_averages(): every cfs_rq of `cpu` decayed to now (the kernel's
    /// periodic update of idle and blocked load, before a balance pass).
    pub(crate) fn update_blocked_averages(&mut self, cpu: usize) {
        if !self.pelt_on() {
            return;
        }
        let nr = self.m.nr_cpus();
        for g in (0..self.fg.parent.len()).rev() {
            let c = g * nr + cpu;
            if g > 0 && self.fg.cfs[c].avg.load_sum == 0 && self.fg.cfs[c].avg.util_sum == 0 && self.fg.cfs[c].load == 0 {
                continue;
            }
            self.update_cfs_rq_avg(c, cpu);
            if g > 0 && !self.fg.gse_on_rq[c] {
                let pc = self.cfs_of(GROUP_SE | c, cpu);
                self.update_se_avg(pc, GROUP_SE | c, cpu);
            }
        }
    }

    /// cpu_load(): the root cfs_rq's load average (its queued weight without PELT).
    pub(crate) fn cpu_load_avg(&self, cpu: usize) -> u64 {
        if self.pelt_on() {
            self.fg.cfs[self.root_cfs(cpu)].avg.load_avg
        } else {
            self.rqs[cpu].load
        }
    }

    /// cpu_util_cfs(): the root cfs_rq's utilization, at most the CPU's capacity.
    pub(crate) fn cpu_util_cfs(&self, cpu: usize) -> u64 {
        self.fg.cfs[self.root_cfs(cpu)].avg.util_avg.min(self.capacity(cpu))
    }
}
