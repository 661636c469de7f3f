//! Load balancing: periodic per domain level, nohz idle balance, newidle balance.
//!
//! Mirrors: kernel/sched/fair.c: sched_balance_trigger (trigger_load_balance),
//! sched_balance_domains (rebalance_domains), sched_balance_rq (load_balance),
//! should_we_balance(), update_sd_lb_stats()/group classification,
//! calculate_imbalance(), find_busiest_queue(), detach_tasks()/can_migrate_task()/
//! task_hot(), active balance, sched_balance_newidle (newidle_balance) with its
//! avg_idle gates (≤5.16: sysctl_sched_migration_cost; 5.16+: sd->max_newidle_lb_cost),
//! update_newidle_cost(), nohz_balancer_kick(), update_idle_cpu_scan() (SIS_UTIL).
//! Model: with PELT (feature PELT) group load, util and runnable are the sums of the
//! CPUs' root cfs_rq averages and groups are classified by group_is_overloaded() /
//! group_has_capacity() as the kernel does; without it, by queued weights and task
//! counts. Group types are has_spare / fully_busy / misfit (asymmetric capacity, see
//! `asym.rs`) / overloaded; asym packing is not modeled. detach_tasks() relaxes its load bound with nr_balance_failed as
//! its version did (5.10+: shr_bound(load, nr_balance_failed), 2cfb7a1b031b; before:
//! load/2 until cache_nice_tries failures).
//! A balance pass costs the balancing CPU the runqueue lines find_busiest_group() reads
//! from every CPU of the span, at their distance from it, once per pass (a level's
//! lines read at a lower level of the same pass hit), and each task it moves the
//! source's lock and lines (`sched/locks.rs`); that work is charged to the balancing
//! CPU and is what max_newidle_lb_cost measures.

use crate::cpumask::{CpuId, CpuMask};
use crate::features::Feature;
use crate::state::load_sums::{GroupSums, TreePick};
use crate::state::task::{TaskId, TaskState};
use crate::state::Simulator;
use crate::time::{Ns, NSEC_PER_MSEC, NSEC_PER_SEC};
use crate::topology::SdFlags;

/// Why a balance pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdleType {
    /// The CPU is busy (periodic balance at busy_factor × interval).
    NotIdle,
    /// The CPU is idle (periodic or nohz idle balance).
    Idle,
    /// The CPU is about to go idle.
    NewlyIdle,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    /// A CPU runs a task too big for it (group_misfit_task, asymmetric capacity).
    Misfit,
    Overloaded,
}

#[derive(Clone, Copy, Debug, Default)]
/// A group's figures for one balance pass (struct sg_lb_stats).
struct SgLbStats {
    nr_running: usize,
    load: u64,
    capacity: u64,
    weight: usize,
    idle_cpus: usize,
    kind: GroupType,
    /// Largest misfit load of its CPUs (group_misfit_task_load).
    misfit_load: u64,
    /// Largest capacity of its CPUs (sgc->max_capacity).
    max_capacity: u64,
}

impl SgLbStats {
    fn avg_load(&self) -> u64 {
        self.load * 1024 / self.capacity.max(1)
    }
}

/// What a balance pass decided to move.
struct Plan {
    src: CpuId,
    imbalance: u64,
    by_tasks: bool,
    /// migrate_misfit: move the misfit task of `src` (by active balance if it runs).
    misfit: bool,
}

/// group_classify() short of misfit: group_is_overloaded() / group_has_capacity() with
/// PELT, else by task counts. Every pass classifies a few groups per domain and their
/// types are a coin toss for a branch predictor: the tests are evaluated in full (`&`,
/// `|`) and the type picked by conditional moves.
fn classify(g: &GroupSums, imbalance_pct: u64, pelt: bool) -> GroupType {
    use std::hint::select_unpredictable as pick;
    if pelt {
        let (cap, nr, w) = (g.capacity, g.nr_running, g.weight);
        let overloaded = (nr > w) & ((cap * 100 < g.util_avg * imbalance_pct) | (cap * imbalance_pct < g.runnable_avg * 100));
        let has_capacity = (nr < w) | ((cap * imbalance_pct >= g.runnable_avg * 100) & (cap * 100 > g.util_avg * imbalance_pct));
        pick(overloaded, GroupType::Overloaded, pick(has_capacity, GroupType::HasSpare, GroupType::FullyBusy))
    } else {
        let (nr, w) = (g.nr_running, g.weight);
        pick(nr > w, GroupType::Overloaded, pick(nr == w, GroupType::FullyBusy, GroupType::HasSpare))
    }
}

/// A group's load as the balancer reads it: PELT's load_avg, else the queued weights.
fn group_load(g: &GroupSums, pelt: bool) -> u64 {
    if pelt {
        g.load_avg
    } else {
        g.load
    }
}

impl Simulator {
    fn group_stats(&self, gid: u32, imbalance_pct: u64, asym: bool) -> SgLbStats {
        let g = self.load_sums.group(gid);
        let (misfit_load, max_capacity) = if asym { self.group_misfit(&g.cpus) } else { (0, 0) };
        let kind = classify(g, imbalance_pct, self.pelt_on());
        // group_classify(): a misfit ranks below overloaded only.
        let kind = if kind != GroupType::Overloaded && misfit_load > 0 { GroupType::Misfit } else { kind };
        SgLbStats {
            misfit_load,
            max_capacity,
            nr_running: g.nr_running,
            load: group_load(g, self.pelt_on()),
            capacity: g.capacity,
            weight: g.weight,
            idle_cpus: g.idle_cpus,
            kind,
        }
    }

    /// The busiest-group pick of a domain of many groups, from its tree (None: scan).
    /// Without misfit groups (asymmetric capacity), a group's rank depends on its own
    /// sums alone, which is what lets a tree keep it.
    fn busiest_from_tree(&mut self, cpu: CpuId, level: usize) -> Option<TreePick> {
        let sd = &self.m.domains[cpu][level];
        if sd.flags.has(SdFlags::ASYM_CPUCAPACITY) && self.misfit_active() {
            return None;
        }
        let (pct, local, pelt) = (sd.imbalance_pct as u64, sd.local_group, self.pelt_on());
        self.load_sums.tree_pick(cpu, level, local, |g| {
            (g.nr_running > 0).then(|| (classify(g, pct, pelt) as u8, group_load(g, pelt) * 1024 / g.capacity.max(1)))
        })
    }

    fn group_cpus(&self, gid: u32) -> impl Iterator<Item = CpuId> + '_ {
        self.load_sums.group(gid).cpus.iter().copied()
    }

    /// should_we_balance(): periodic balance is done by the first idle CPU of the local
    /// group, or its first CPU if none is idle; newidle always proceeds.
    fn should_we_balance(&self, cpu: CpuId, level: usize, idle: IdleType) -> bool {
        if idle == IdleType::NewlyIdle {
            return true;
        }
        let sd = &self.m.domains[cpu][level];
        let local = self.load_sums.sd_groups(cpu, level)[sd.local_group];
        let first = self.group_cpus(local).find(|&c| self.cpu_is_idle(c)).or_else(|| self.group_cpus(local).next());
        first == Some(cpu)
    }

    /// find_busiest_group() + calculate_imbalance() + find_busiest_queue(); `tree`: the
    /// domain's pick from its busiest-group tree, if it has one.
    fn find_busiest(&self, cpu: CpuId, level: usize, tree: Option<TreePick>, idle: IdleType) -> Option<Plan> {
        let sd = &self.m.domains[cpu][level];
        let (pct, prefer_sibling) = (sd.imbalance_pct as u64, sd.flags.has(SdFlags::PREFER_SIBLING));
        let gids = &self.load_sums.sd_groups(cpu, level);
        let asym = sd.flags.has(SdFlags::ASYM_CPUCAPACITY) && self.misfit_active();
        let local = self.group_stats(gids[sd.local_group], pct, asym);
        let (total_load, total_cap, best) = match tree {
            Some(t) => {
                let load = if self.pelt_on() { t.load_avg } else { t.load };
                (load, t.capacity, t.busiest.map(|gid| (gid, self.group_stats(gid, pct, asym))))
            }
            None => self.scan_busiest(cpu, gids, sd.local_group, &local, pct, asym),
        };
        let (bgid, busiest) = best?;
        if busiest.kind == GroupType::Misfit {
            // migrate_misfit, imbalance 1; find_busiest_queue(): the largest misfit load.
            let src = self
                .group_cpus(bgid)
                .filter(|&c| c != cpu && super::asym::capacity_greater(self.capacity(cpu), self.capacity(c)))
                .max_by_key(|&c| self.rqs[c].misfit_task_load)
                .filter(|&c| self.rqs[c].misfit_task_load > 0)?;
            return Some(Plan { src, imbalance: 1, by_tasks: true, misfit: true });
        }
        // calculate_imbalance(), reduced to the cases modeled (no asym packing).
        let (by_tasks, imbalance) = if local.kind == GroupType::HasSpare {
            // 5.5+ (0b0695f2b34a): an overloaded busiest group beyond the LLC fills the
            // local group's spare capacity (migrate_util, modeled as one task); else
            // tasks are spread, by count with prefer_sibling or single-CPU groups
            // (sibling_imbalance(), 6.6+), else by idle CPUs; the number to move is
            // half the difference.
            if busiest.kind > GroupType::FullyBusy && !sd.flags.has(SdFlags::SHARE_LLC) {
                (true, 1)
            } else if prefer_sibling || busiest.weight == 1 {
                (true, self.sibling_imbalance(&busiest, &local, idle) >> 1)
            } else {
                (true, (local.idle_cpus.saturating_sub(busiest.idle_cpus) / 2) as u64)
            }
        } else if busiest.kind == GroupType::Overloaded {
            let sd_avg = total_load * 1024 / total_cap.max(1);
            let (b, l) = (busiest.avg_load(), local.avg_load());
            if l >= b || b <= sd_avg || 100 * b <= pct * l {
                (false, 0)
            } else {
                (false, ((b - sd_avg) * busiest.capacity).min(sd_avg.saturating_sub(l) * local.capacity) / 1024)
            }
        } else {
            (true, 0)
        };
        if imbalance == 0 {
            return None;
        }
        // migrate_task: any rq with tasks (its running one may need active balance);
        // migrate_load: one with a queued task to detach (walk only those, from the mask
        // kept with the queues).
        let group = &self.load_sums.group(bgid).mask;
        let src = if by_tasks {
            // The most runnable tasks, the last CPU among equals: one with two or more
            // if there is one, else the group's last CPU with a task.
            let mut others = group.and(&self.balance.has_tasks);
            others.clear(cpu);
            let over = others.and(&self.rd.overloaded_cpus);
            if over.is_empty() {
                others.last()
            } else {
                over.iter().max_by_key(|&c| self.rqs[c].nr_running)
            }
        } else {
            group.and(&self.queue_index.nonempty).iter().filter(|&c| c != cpu).max_by_key(|&c| self.cpu_load_avg(c) * 1024 / self.capacity(c))
        }?;
        Some(Plan { src, imbalance, by_tasks, misfit: false })
    }

    /// The running-task difference calculate_imbalance() spreads between groups
    /// (sibling_imbalance(), 6.6, 7ff1693236f5; before it busiest - local): groups of
    /// equal size even their task counts, unequal ones their tasks per CPU (the kernel
    /// counts cores; the model's groups' CPUs stand for them), and an empty local group
    /// takes two from a busiest one with two or more. From 6.6 a busy CPU balancing
    /// (CPU_NOT_IDLE) asks for none: a 2-vs-1 split of three hogs on two CPUs is left
    /// to the load comparison (migrate_load) once the single one's CPU is fully busy,
    /// which moves the least recently run of the two, so the odd one rotates.
    fn sibling_imbalance(&self, busiest: &SgLbStats, local: &SgLbStats, idle: IdleType) -> u64 {
        let (b, l) = (busiest.nr_running as u64, local.nr_running as u64);
        if self.k.version < crate::kernel::KernelVersion::new(6, 6) {
            return b.saturating_sub(l);
        }
        if idle == IdleType::NotIdle || b == 0 {
            return 0;
        }
        let (nb, nl) = (busiest.weight as u64, local.weight as u64);
        if nb == nl {
            return b - l.min(b);
        }
        let imbalance = (nl * b).saturating_sub(nb * l);
        let imbalance = (2 * imbalance + nl + nb) / (nl + nb);
        if imbalance <= 1 && l == 0 && b > 1 {
            2
        } else {
            imbalance
        }
    }

    /// update_sd_lb_stats()'s walk over every group of the domain: the busiest group
    /// other than the local one (update_sd_pick_busiest(): the highest type, then
    /// avg_load or a misfit's load, the first of equals), with the domain's load and
    /// capacity sums.
    fn scan_busiest(
        &self,
        cpu: CpuId,
        gids: &[u32],
        local_group: usize,
        local: &SgLbStats,
        pct: u64,
        asym: bool,
    ) -> (u64, u64, Option<(u32, SgLbStats)>) {
        let (mut total_load, mut total_cap) = (local.load, local.capacity);
        // The busiest so far, with its rank (kept: the rank divides).
        let mut best: Option<(u32, SgLbStats, (GroupType, u64))> = None;
        for (i, &gid) in gids.iter().enumerate() {
            if i == local_group {
                continue;
            }
            let s = self.group_stats(gid, pct, asym);
            total_load += s.load;
            total_cap += s.capacity;
            if s.nr_running == 0 {
                continue;
            }
            // update_sd_pick_busiest(): a misfit group only for a bigger CPU with room.
            if s.kind == GroupType::Misfit
                && (!super::asym::capacity_greater(self.capacity(cpu), s.max_capacity) || local.kind != GroupType::HasSpare)
            {
                continue;
            }
            // Misfit groups rank by their misfit load, others by average load.
            let rank = |g: &SgLbStats| (g.kind, if g.kind == GroupType::Misfit { g.misfit_load } else { g.avg_load() });
            let r = rank(&s);
            if best.is_none_or(|(_, _, br)| r > br) {
                best = Some((gid, s, r));
            }
        }
        (total_load, total_cap, best.map(|(gid, s, _)| (gid, s)))
    }

    /// One load_balance() pass at domain `level` of `cpu`, in a pass that has read the
    /// runqueues of level `read_below` already; returns tasks moved and its cost.
    fn load_balance(&mut self, cpu: CpuId, level: usize, idle: IdleType, read_below: Option<usize>) -> (usize, Ns) {
        if !self.should_we_balance(cpu, level, idle) {
            return (0, 0);
        }
        // update_sd_lb_stats() at the root domain (no parent) rewrites rd->overloaded
        // from the runqueues it reads: a CPU with two tasks or more (or, on asymmetric
        // capacity, a misfit).
        if level + 1 == self.m.domains[cpu].len() {
            self.rd.overloaded = self.rd.nr_overloaded > 0 || self.balance.nr_misfit > 0;
        }
        // find_busiest_group reads every CPU of the span: its lines at their distance.
        self.note_scan_reads();
        let cost = self.load_sums.scan_cost(cpu, level, read_below);
        self.lock_clock_advance(cpu, cost);
        let cache_nice_tries = self.m.domains[cpu][level].cache_nice_tries;
        // A newly idle pass moves only queued tasks (misfit pushes aside) and keeps no
        // state when it moves none: with no CPU of the span running two, whatever
        // find_busiest() planned would move nothing, so skip the search.
        if idle == IdleType::NewlyIdle
            && !self.misfit_active()
            && !self.rd.overloaded_cpus.test(cpu)
            && !self.m.domains[cpu][level].span.intersects(&self.rd.overloaded_cpus)
        {
            return (0, cost);
        }
        // find_busiest_group(): while EAS places tasks it stands aside, after (6.3+) or
        // before a misfit group is forced.
        let aside = self.eas_balance_stands_aside(cpu, level);
        let misfit_first = aside && self.misfit_active() && self.feat.has(Feature::MISFIT_BEFORE_EAS_EXIT);
        if aside && !misfit_first {
            self.balanced(cpu, level, idle);
            return (0, cost);
        }
        let tree = self.busiest_from_tree(cpu, level);
        let Some(plan) = self.find_busiest(cpu, level, tree, idle).filter(|p| !aside || p.misfit) else {
            self.balanced(cpu, level, idle);
            return (0, cost);
        };
        if plan.misfit {
            // need_active_balance(): a misfit task is pushed by the stopper at once.
            let moved = self.active_balance(plan.src, cpu) as usize;
            if moved > 0 {
                self.stats.counters.lb_moved += 1;
            }
            return (moved, cost);
        }
        let failed = self.rqs[cpu].sd[level].nr_balance_failed;
        let (moved, spent) = self.detach_and_attach(plan.src, cpu, plan.imbalance, plan.by_tasks, failed, cache_nice_tries);
        let cost = cost + spent;
        let st = &mut self.rqs[cpu].sd[level];
        if moved > 0 {
            st.nr_balance_failed = 0;
            st.balance_interval_ms = self.m.domains[cpu][level].min_interval_ms;
            self.stats.counters.lb_moved += moved as u64;
        } else if idle != IdleType::NewlyIdle {
            st.nr_balance_failed += 1;
            if st.nr_balance_failed > cache_nice_tries + 2 {
                st.nr_balance_failed = 0;
                if self.active_balance(plan.src, cpu) {
                    return (1, cost);
                }
            }
        }
        (moved, cost)
    }

    fn balanced(&mut self, cpu: CpuId, level: usize, idle: IdleType) {
        if idle == IdleType::NewlyIdle {
            return;
        }
        let max = self.m.domains[cpu][level].max_interval_ms;
        let st = &mut self.rqs[cpu].sd[level];
        st.nr_balance_failed = 0;
        st.balance_interval_ms = (st.balance_interval_ms * 2).min(max);
    }

    /// task_hot(): did the task run within sched_migration_cost on its CPU?
    fn task_hot(&self, p: TaskId, dst: CpuId) -> bool {
        let cost = self.k.tunables.sched_migration_cost_ns;
        // A SCHED_IDLE task is never cache hot.
        if cost == 0 || self.has_idle_policy(p) || self.m.smt_mask(dst).test(self.tasks[p].cpu) {
            return false; // SMT siblings share caches: never hot
        }
        let last_ran = self.tasks[p].se.exec_start;
        self.now.saturating_sub(last_ran) < cost
    }

    /// detach_tasks() + attach_tasks(): moves queued tasks from `src` to `dst`; returns
    /// how many and what moving them cost `dst` (locks and lines).
    fn detach_and_attach(&mut self, src: CpuId, dst: CpuId, imbalance: u64, by_tasks: bool, failed: u32, cache_nice_tries: u32) -> (usize, Ns) {
        let mut spent = 0;
        let allow_hot = failed > cache_nice_tries;
        let shr_bound = self.k.version >= crate::kernel::KernelVersion::new(5, 10);
        let mut left = imbalance as i64;
        let mut moved = 0;
        let limit = self.k.tunables.sched_nr_migrate as usize;
        // The kernel walks cfs_tasks from the tail: the least recently enqueued first.
        // Detaching swaps the list's last task into the hole, so walking from the tail
        // by index sees each task that was queued once.
        let nr = self.rqs[src].queue.len();
        for i in 0..nr.min(limit) {
            let p = self.rqs[src].queue.tasks[nr - 1 - i];
            if left <= 0 || self.rqs[src].nr_running <= 1 {
                break;
            }
            if !self.tasks[p].cpus_allowed.test(dst) || self.tasks[p].state != TaskState::Runnable {
                continue;
            }
            if !self.lb_may_migrate_throttled(p, src, dst) {
                continue;
            }
            if !allow_hot && self.task_hot(p, dst) {
                continue;
            }
            let w = self.task_h_load(p).max(1) as i64;
            let too_big = if shr_bound { w >> failed.min(63) > left } else { w / 2 > left && !allow_hot };
            if !by_tasks && too_big {
                continue;
            }
            spent += self.move_task_cost(dst, src, dst);
            self.detach_task(src, p);
            self.attach_task(dst, p);
            moved += 1;
            left -= if by_tasks { 1 } else { w };
        }
        (moved, spent)
    }

    /// Active balance: the stopper pushes `src`'s running task to an idle `dst`.
    fn active_balance(&mut self, src: CpuId, dst: CpuId) -> bool {
        let Some(p) = self.rqs[src].curr else { return false };
        if self.class_of(p) != crate::state::task::SchedClass::Fair {
            return false; // the stopper moves fair tasks only (RT has push/pull)
        }
        if !self.rqs[dst].is_idle() || !self.tasks[p].cpus_allowed.test(dst) || self.rqs[src].nr_running != 1 {
            return false;
        }
        // A task on its way to sleep or exit reaches schedule() itself.
        if self.tasks[p].state != TaskState::Running || self.tasks[p].blocking.is_some() {
            return false;
        }
        // The stopper preempts p; p is then queued and moved as a queued task. The switch
        // to the stopper (a kernel thread) is a context switch for mm_cid too.
        self.update_curr(src);
        self.put_prev_task_fair(src, p);
        self.mm_switch(src, Some(p), None);
        self.set_curr(src, None);
        self.cancel_segment(src);
        self.rqs[src].seg_gen = self.rqs[src].seg_gen.wrapping_add(1);
        // When the stopper is done, `src` schedules: a newidle pass, then the idle loop.
        self.resched_curr(src, src);
        if self.tasks[p].state != TaskState::Runnable {
            // put_prev found p's group out of runtime and throttled it on `src`: the
            // stopper finds nothing it may push (can_migrate_task() refuses a throttled
            // pair).
            return false;
        }
        if !self.lb_may_migrate_throttled(p, src, dst) {
            return false; // can_migrate_task() in the stopper refuses a throttled dst
        }
        // The stopper on `src` moves it: what runs next there waits for that.
        let spent = self.move_task_cost(src, src, dst);
        self.charge_sched(src, spent);
        self.detach_task(src, p);
        self.send_ipi(dst, src);
        self.attach_task(dst, p);
        self.stats.counters.active_balances += 1;
        true
    }

    /// Balance interval of a domain level in ns, busy or idle (get_sd_balance_interval).
    fn balance_interval(&self, cpu: CpuId, level: usize, busy: bool) -> Ns {
        let ms = self.rqs[cpu].sd[level].balance_interval_ms;
        let mut interval = ms * NSEC_PER_MSEC;
        if busy {
            // 5.10+: busy interval shortened by one jiffy; clamp to [1 jiffy, HZ·cpus/10].
            interval = (interval * self.k.tunables.busy_factor as u64).saturating_sub(self.tick.period_ns);
        }
        let max = NSEC_PER_SEC * self.m.nr_cpus() as u64 / 10;
        interval.clamp(self.tick.period_ns, max.max(self.tick.period_ns))
    }

    /// rebalance_domains(): periodic balance at every level whose interval passed, run
    /// by `by` (`cpu` itself, or the nohz idle balancer), which pays for it.
    fn rebalance_domains(&mut self, cpu: CpuId, idle: IdleType, by: CpuId) {
        self.update_blocked_averages(cpu);
        let mut next = Ns::MAX;
        let busy = idle == IdleType::NotIdle;
        let mut read_below = None;
        for level in 0..self.m.domains[cpu].len() {
            let interval = self.balance_interval(cpu, level, busy);
            let due = self.rqs[cpu].sd[level].last_balance + interval;
            if self.now >= due {
                let (moved, cost) = self.load_balance(cpu, level, idle, read_below);
                self.charge_kernel(by, cost);
                read_below = Some(level);
                if moved > 0 {
                    self.rqs[cpu].stats.periodic_pulls += 1;
                }
                self.rqs[cpu].sd[level].last_balance = self.now;
                // update_idle_cpu_scan() acts on the LLC domain only (span = sd_llc_size).
                if self.m.domains[cpu][level].flags.has(SdFlags::SHARE_LLC)
                    && !self.m.domains[cpu][level].flags.has(SdFlags::SHARE_CPUCAPACITY)
                    && !self.m.domains[cpu][level].flags.has(SdFlags::CLUSTER)
                {
                    self.update_idle_cpu_scan(cpu, level);
                }
            }
            next = next.min(self.rqs[cpu].sd[level].last_balance + self.balance_interval(cpu, level, busy));
        }
        self.rqs[cpu].next_balance = next;
    }

    /// update_idle_cpu_scan() (SIS_UTIL): scan depth shrinks quadratically with LLC utilization.
    fn update_idle_cpu_scan(&mut self, cpu: CpuId, level: usize) {
        let span = self.m.domains[cpu][level].span;
        let pct = self.m.domains[cpu][level].imbalance_pct as u64;
        let weight = span.weight() as u64;
        let sum_util: u64 = span.iter().map(|c| self.cpu_util(c)).sum();
        let x = sum_util / weight.max(1);
        let y = 1024i64 - (x * x * pct * pct / (10000 * 1024)) as i64;
        let y = y.clamp(0, 1024) as u64;
        self.balance.llc_nr_idle_scan[self.m.cpus[cpu].llc] = (weight * y / 1024) as usize;
    }

    /// The periodic balance of an idle CPU whose tick still runs (SCHED_SOFTIRQ from
    /// its own tick, run_rebalance_domains() with CPU_IDLE).
    pub(crate) fn idle_tick_balance(&mut self, cpu: CpuId) {
        self.rebalance_domains(cpu, IdleType::Idle, cpu);
    }

    /// sched_balance_trigger(): periodic balance from the tick, and the nohz kick.
    pub(crate) fn trigger_load_balance(&mut self, cpu: CpuId) {
        if self.now >= self.rqs[cpu].next_balance {
            self.rebalance_domains(cpu, IdleType::NotIdle, cpu);
        }
        self.nohz_balancer_kick(cpu);
    }

    /// rq is idle: nothing running, nothing queued (Rq::is_idle, from the two masks kept
    /// with them: a wakeup's scan reads bits, not each CPU's runqueue).
    #[inline]
    pub(crate) fn cpu_is_idle(&self, c: CpuId) -> bool {
        !self.running.test(c) && !self.queue_index.nonempty.test(c)
    }

    /// available_idle_cpu(): idle, and no wakeup already on its way there.
    #[inline]
    pub(crate) fn available_idle_cpu(&self, c: CpuId) -> bool {
        self.cpu_is_idle(c) && !self.rqs[c].resched_pending
    }

    /// The first CPU from `from` on that is idle (nothing running or queued) and has no
    /// reschedule on its way: a candidate idle load balancer.
    fn next_nohz_idle_cpu(&self, mut from: CpuId) -> Option<CpuId> {
        let nr = self.m.nr_cpus();
        while let Some(c) = CpuMask::next_in_neither(&self.running, &self.queue_index.nonempty, from, nr) {
            if !self.rqs[c].resched_pending {
                return Some(c);
            }
            from = c + 1;
        }
        None
    }

    /// nohz_balancer_kick(): a busy CPU wakes an idle CPU to balance on behalf of all
    /// tickless idle CPUs when it has waiting tasks, a misfit a bigger CPU could take
    /// (asymmetric machines stop there), or more than one busy CPU in its LLC
    /// (sd_llc_shared->nr_busy_cpus: load to spread within or across LLCs). The next
    /// kick waits for the earliest balance due among the idle CPUs (nohz.next_balance).
    /// The kick also carries NOHZ_STATS_KICK when the idle CPUs' blocked load is due an
    /// update (fair/energy.rs, on the runs that keep it).
    fn nohz_balancer_kick(&mut self, cpu: CpuId) {
        let stats_only = |s: &mut Self| {
            if !s.eas.nohz_blocked {
                return; // no blocked-load update on this run (fair/energy.rs)
            }
            if let Some(ilb) = s.next_nohz_idle_cpu(0) {
                s.nohz_stats_kick(cpu, ilb);
            }
        };
        if self.now < self.balance.nohz_next_balance {
            stats_only(self);
            return;
        }
        let kick = self.rqs[cpu].nr_running >= 2
            || if self.balance.asym_capacity { self.check_misfit_status(cpu) } else { self.load_sums.llc_busy_cpus(self.m.cpus[cpu].llc) > 1 };
        if !kick {
            stats_only(self);
            return;
        }
        let Some(ilb) = self.next_nohz_idle_cpu(0) else {
            return;
        };
        self.stats.counters.nohz_kicks += 1;
        self.send_ipi(cpu, ilb);
        self.nohz_stats_with_balance(ilb);
        // The ILB CPU balances every idle CPU whose interval is due, itself included;
        // each CPU's state is read when the walk reaches it (balancing changes it).
        let mut next = Ns::MAX;
        let mut from = 0;
        while let Some(c) = self.next_nohz_idle_cpu(from) {
            if self.now >= self.rqs[c].next_balance {
                self.rebalance_domains(c, IdleType::Idle, ilb);
            }
            next = next.min(self.rqs[c].next_balance);
            from = c + 1;
        }
        self.balance.nohz_next_balance = next.max(self.now + self.tick.period_ns);
    }

    /// sched_balance_newidle(): a CPU about to idle tries to pull work; true if it did.
    pub(crate) fn sched_balance_newidle(&mut self, cpu: CpuId) -> bool {
        self.rqs[cpu].stats.newidle_attempts += 1;
        // shared_runq v2/v3 pull first, before idle_stamp and every gate.
        if self.srq_newidle_top(cpu) {
            return true;
        }
        self.mark_idle_stamp(cpu);
        self.update_blocked_averages(cpu);
        let domains = self.m.domains[cpu].len();
        if domains == 0 {
            return false;
        }
        let avg_idle = self.rqs[cpu].avg_idle;
        // next_balance: this CPU's periodic balance comes forward to each domain it looks
        // at here, at the idle interval (update_next_balance()), so that the nohz idle
        // balancer balances it once due: a CPU that was busy kept its busy interval.
        let mut next_balance = self.now + NSEC_PER_SEC;
        // rd->overloaded: the sticky flag (RD_OVERLOADED, 3.16+; none before). A misfit
        // opens the gate too, as schedlab had it (the kernel sets the flag for one in
        // update_sd_lb_stats() only).
        let overloaded = self.rd.overloaded || self.balance.nr_misfit > 0;
        if self.feat.has(Feature::RD_OVERLOADED) && !overloaded {
            self.rqs[cpu].stats.newidle_skips += 1;
            self.newidle_next_balance(cpu, 0, &mut next_balance);
            return false;
        }
        // shared_runq v4 pulls once rd->overload is set, ignoring avg_idle.
        if self.srq_newidle_overloaded(cpu) {
            self.rqs[cpu].idle_stamp = 0;
            return true;
        }
        let gate = if self.feat.has(Feature::NEWIDLE_SD_COST_GATE) {
            self.srq_gate_level(cpu).map_or(0, |l| self.rqs[cpu].sd[l].max_newidle_lb_cost)
        } else {
            self.k.tunables.sched_migration_cost_ns
        };
        if avg_idle < gate {
            self.rqs[cpu].stats.newidle_skips += 1;
            self.newidle_next_balance(cpu, 0, &mut next_balance);
            return false;
        }
        // raw_spin_rq_unlock(this_rq): the balancing runs without it (relocked below).
        self.rq_unlock_early(cpu);
        let mut curr_cost: Ns = 0;
        let mut pulled = 0;
        let mut read_below = None;
        for level in 0..domains {
            self.next_balance_candidate(cpu, level, &mut next_balance);
            if self.srq_skips_level(cpu, level) {
                self.stats.counters.newidle_domain_skips += 1;
                continue;
            }
            self.decay_newidle_cost(cpu, level);
            if avg_idle < curr_cost + self.rqs[cpu].sd[level].max_newidle_lb_cost {
                break;
            }
            if !self.m.domains[cpu][level].flags.has(SdFlags::BALANCE_NEWIDLE) {
                continue;
            }
            let Some(weight) = self.ni_random_gate(cpu, level) else { continue };
            let (moved, cost) = self.load_balance(cpu, level, IdleType::NewlyIdle, read_below);
            read_below = Some(level);
            if self.m.domains[cpu][level].flags.has(SdFlags::SHARE_LLC) {
                self.stats.counters.newidle_lb_llc += 1;
            } else {
                self.stats.counters.newidle_lb_above_llc += 1;
            }
            if cost > 0 && self.feat.has(Feature::NI_RANDOM) {
                self.update_newidle_stats(cpu, level, weight * (moved > 0) as u32);
            }
            // 6.18.0-6.18.34: a failed pass records 3/2 of the domain's max cost, and
            // update_newidle_cost() caps what it records (6.18.2's fair.c).
            let bump = self.feat.has(Feature::NEWIDLE_FAIL_BUMP);
            let migration_cost = self.k.tunables.sched_migration_cost_ns;
            let st = &mut self.rqs[cpu].sd[level];
            let recorded = if bump && moved == 0 { 3 * st.max_newidle_lb_cost / 2 } else { cost };
            if recorded > st.max_newidle_lb_cost {
                st.max_newidle_lb_cost = if bump { recorded.min(migration_cost + 200) } else { recorded };
                st.last_decay_max_lb_cost = self.now;
            }
            curr_cost += cost;
            pulled += moved;
            if pulled > 0 {
                break;
            }
        }
        // raw_spin_rq_lock(this_rq): a CPU that took it meanwhile hands the line back.
        let relock = self.rq_lock(cpu, cpu, self.path_ns(cpu, cost!(self, context_switch_ns)));
        let rq = &mut self.rqs[cpu];
        rq.max_idle_balance_cost = rq.max_idle_balance_cost.max(curr_cost);
        rq.next_balance = rq.next_balance.min(next_balance);
        if pulled > 0 {
            rq.stats.newidle_pulls += 1;
            rq.idle_stamp = 0;
        }
        // The balance is CPU time: what runs next here (the pulled task, or the idle
        // loop) starts after it.
        self.rqs[cpu].irq_until = self.rqs[cpu].irq_until.max(self.now) + curr_cost + relock;
        pulled > 0
    }

    /// update_next_balance(): `next` comes forward to domain `level`'s next periodic
    /// balance at the idle interval.
    fn next_balance_candidate(&self, cpu: CpuId, level: usize, next: &mut Ns) {
        let due = self.rqs[cpu].sd[level].last_balance + self.balance_interval(cpu, level, false);
        *next = (*next).min(due);
    }

    /// sched_balance_newidle()'s early exit: the lowest domain's next balance (at the
    /// idle interval) becomes this CPU's if sooner.
    fn newidle_next_balance(&mut self, cpu: CpuId, level: usize, next: &mut Ns) {
        self.next_balance_candidate(cpu, level, next);
        self.rqs[cpu].next_balance = self.rqs[cpu].next_balance.min(*next);
    }

    /// NI_RANDOM: throw a 1024-sided die and balance this domain only below 1 + its
    /// success ratio; returns the success weight (1024 / (1 + ratio), rounded), or None
    /// when the domain is skipped (recorded as a failure). Without NI_RANDOM: weight 1.
    fn ni_random_gate(&mut self, cpu: CpuId, level: usize) -> Option<u32> {
        if !self.feat.has(Feature::NI_RANDOM) {
            return Some(1);
        }
        let seed = self.seed;
        let rng = self.rqs[cpu].sched_rng.get_or_insert_with(|| crate::rng::Stream::new(seed, &format!("sched_rng:{cpu}")));
        let d1k = rng.below(1024) as u32;
        let weight = 1 + self.rqs[cpu].sd[level].newidle_ratio;
        if d1k > weight {
            self.update_newidle_stats(cpu, level, 0);
            self.stats.counters.newidle_random_skips += 1;
            return None;
        }
        Some((1024 + weight / 2) / weight)
    }

    /// update_newidle_stats(): the success ratio over the last ~1024 attempts.
    fn update_newidle_stats(&mut self, cpu: CpuId, level: usize, success: u32) {
        let st = &mut self.rqs[cpu].sd[level];
        st.newidle_call += 1;
        st.newidle_success += success;
        if st.newidle_call >= 1024 {
            st.newidle_ratio = st.newidle_success;
            st.newidle_call /= 2;
            st.newidle_success /= 2;
        }
    }

    /// update_newidle_cost()'s decay: max_newidle_lb_cost loses 1% per second.
    fn decay_newidle_cost(&mut self, cpu: CpuId, level: usize) {
        let now = self.now;
        let st = &mut self.rqs[cpu].sd[level];
        if now > st.last_decay_max_lb_cost + NSEC_PER_SEC {
            st.max_newidle_lb_cost = st.max_newidle_lb_cost * 253 / 256;
            st.last_decay_max_lb_cost = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::api::RunOptions;
    use crate::scenario::Scenario;
    use crate::state::Simulator;

    /// A run's figures as JSON, its wall time left out.
    fn figures(toml: &str, seed: u64, tree_min_groups: usize) -> (serde_json::Value, u64) {
        let s = Scenario::from_toml_str(toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
        let mut sim = Simulator::new(&s, seed, false).unwrap_or_else(|e| panic!("{e}"));
        sim.load_sums.tree_min_groups = tree_min_groups;
        let mut out = sim.run(&RunOptions::default()).unwrap_or_else(|e| panic!("{e}")).result;
        out.engine.wall_ns = 0;
        let lb = out.summary.get("lb_moved").copied().unwrap_or(0.0) as u64;
        (serde_json::to_value(&out).expect("a result serializes"), lb)
    }

    /// Busiest-group trees on every domain of two groups or more give the figures of
    /// the scan, on shapes with SMT, several LLCs and sockets, with and without PELT,
    /// and on a big.LITTLE phone (where misfit groups keep the scan).
    #[test]
    fn busiest_trees_pick_as_the_scan() {
        let run_sleep = |topo: &str, profile: &str, tasks: usize| {
            format!(
                "[machine]\ntopo = {topo}\n[kernel]\nprofile = \"{profile}\"\n\
                 [[tasks]]\nname = \"w\"\ncount = {tasks}\nprogram = [{{ loop = {{ body = [{{ run_exp = \"300us\" }}, {{ sleep_exp = \"200us\" }}] }} }}]\n\
                 [[tasks]]\nname = \"hog\"\ncount = 3\nprogram = [{{ run = \"1s\" }}]\n[run]\nduration_s = 0.2\n"
            )
        };
        let cases = [
            run_sleep("{ sockets = 2, llcs = 2, cores = 4, smt = 2 }", "6.6", 40),
            run_sleep("{ sockets = 1, llcs = 1, cores = 48, smt = 1 }", "6.6", 80),
            run_sleep("{ sockets = 2, llcs = 3, cores = 2, smt = 2 }", "3.4", 30),
            "[machine]\npreset = \"pixel6\"\n[kernel]\nprofile = \"6.6\"\n[workload]\nkind = \"make\"\n\
             params = { jobs = 8, units = 60, unit_mean = \"5ms\" }\n[run]\nuntil = \"workload_done\"\n"
                .to_string(),
        ];
        let mut moved = 0;
        for toml in &cases {
            for seed in [1, 2] {
                let (scan, lb) = figures(toml, seed, usize::MAX);
                let (tree, _) = figures(toml, seed, 2);
                assert_eq!(scan, tree, "seed {seed}:\n{toml}");
                moved += lb;
            }
        }
        // The balancer moved tasks, so the picks mattered.
        assert!(moved > 0);
    }

    /// RD_OVERLOADED: the flag set when CPU 1 reached two tasks outlives the second
    /// task's departure, so CPU 0's newidle balance still runs a pass; that pass (at the
    /// root domain) finds no CPU with two tasks and clears the flag, so the next newidle
    /// balance is skipped at the gate. Before 3.16 there is no gate at all.
    #[test]
    fn rd_overloaded_is_sticky_until_a_root_domain_pass() {
        for (profile, gated) in [("6.18", true), ("3.14", false)] {
            let toml = format!(
                "[machine]\ntopo = {{ sockets = 1, llcs = 1, cores = 2 }}\n[kernel]\nprofile = \"{profile}\"\n\
                 [[tasks]]\nname = \"t\"\ncount = 2\ncpu = 1\nprogram = [{{ run = \"1s\" }}]\n[run]\nduration_s = 1.0\n"
            );
            let s = Scenario::from_toml_str(&toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
            let mut sim = Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(sim.rqs[1].nr_running, 2);
            assert!(sim.rd.overloaded, "{profile}: reaching two tasks sets the flag");
            // The second task leaves CPU 1 (not a sleep: no delayed dequeue).
            let p = sim.rqs[1].queue.tasks[0];
            sim.dequeue_task(1, p, crate::sched::class::DequeueFlags::NONE);
            assert_eq!(sim.rd.nr_overloaded, 0);
            assert!(sim.rd.overloaded, "{profile}: leaving does not clear it");
            sim.sched_balance_newidle(0);
            assert_eq!(sim.rqs[0].stats.newidle_skips, 0, "{profile}: the stale flag lets newidle balance run");
            assert_eq!(sim.stats.counters.newidle_lb_llc, 1, "{profile}: one pass at the root domain");
            assert!(!sim.rd.overloaded, "{profile}: the root-domain pass clears it");
            sim.sched_balance_newidle(0);
            let skipped = sim.rqs[0].stats.newidle_skips == 1;
            assert_eq!(skipped, gated, "{profile}: the cleared flag stops the next one (3.16+ only)");
        }
    }

    /// NEWIDLE_FAIL_BUMP (6.18.0-6.18.34): a newidle pass that pulls nothing raises the
    /// domain's max_newidle_lb_cost by half, up to sched_migration_cost + 200 ns; 6.18.35
    /// records the pass's own cost only.
    #[test]
    fn failed_newidle_balance_bumps_the_domain_cost_in_6_18_only() {
        for (profile, bumps) in [("6.18", true), ("6.18.35", false)] {
            let toml = format!(
                "[machine]\ntopo = {{ sockets = 1, llcs = 1, cores = 2 }}\n[kernel]\nprofile = \"{profile}\"\n\
                 features = {{ NI_RANDOM = false }}\n\
                 [[tasks]]\nname = \"t\"\ncount = 2\ncpu = 1\naffinity = \"1\"\nprogram = [{{ run = \"1s\" }}]\n[run]\nduration_s = 1.0\n"
            );
            let s = Scenario::from_toml_str(&toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
            let mut sim = Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"));
            for (before, after) in [(10_000, 15_000), (499_000, 500_200)] {
                sim.rqs[0].sd[0].max_newidle_lb_cost = before;
                sim.rqs[0].sd[0].last_decay_max_lb_cost = sim.now;
                sim.rqs[0].avg_idle = 1_000_000;
                let passes = sim.stats.counters.newidle_lb_llc;
                assert!(!sim.sched_balance_newidle(0), "{profile}: both tasks are pinned to CPU 1");
                assert_eq!(sim.stats.counters.newidle_lb_llc, passes + 1, "{profile}: the pass ran");
                let got = sim.rqs[0].sd[0].max_newidle_lb_cost;
                if bumps {
                    assert_eq!(got, after, "{profile}: 3/2 of {before}, capped at 500.2 us");
                } else {
                    assert_eq!(got, before, "{profile}: a pass cheaper than the max leaves it");
                }
            }
        }
    }
}
