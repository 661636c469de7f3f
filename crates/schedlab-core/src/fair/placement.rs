//! Choosing a CPU for a waking or new task.
//!
//! Mirrors: kernel/sched/fair.c: select_task_rq_fair(), wake_wide(), wake_affine()
//! (WA_IDLE, WA_WEIGHT, WA_BIAS), select_idle_sibling(), select_idle_core(),
//! select_idle_cpu() with SIS_UTIL / SIS_PROP, the reverted SIS_NODE
//! (select_idle_node), and find_idlest_cpu() for fork balancing.
//! Model: loads are the PELT load averages of cpu_load() and task_h_load() (queued
//! weights with the feature PELT off); asymmetric-capacity wakeups are in `asym.rs`.
//! Every runqueue an idle check or scan reads costs the CPU running
//! select_task_rq_fair() (the waker's, `this_cpu`) its lines at their distance from
//! it, once per wakeup (a CPU checked twice hits the second time), whatever CPU the
//! scan is centred on (the target, another CCX's first CPU under SIS_NODE); the time is
//! charged to that CPU's current task (or to the interrupt an idle CPU wakes from).
//! Fork placement (find_idlest_cpu()) reads every CPU of its widest domain the same way.
//! The idle-core scan is the merged one of 5.12+ (9fe1f127b913) for every profile: each
//! core read sibling by sibling, a busy core's siblings dropped from the scan, the
//! first idle CPU seen kept as the fallback. It runs while sd_llc_shared's
//! has_idle_cores hint is set, which, as in the kernel, a CPU sets when it goes idle
//! beside idle siblings (update_idle_core()) and a scan clears when it finds no idle
//! core: the hint can be stale either way.

use crate::cpumask::{CpuId, CpuMask};
use crate::features::Feature;
use crate::state::task::TaskId;
use crate::state::Simulator;
use crate::topology::SdFlags;

/// derived: available_idle_cpu() -> idle_rq() reads rq->curr (with rq->idle) and
/// rq->nr_running / rq->ttwu_pending, two lines of struct rq before 7.0 (one from 7.0,
/// 89951fc1f820 "sched: Reorder some fields in struct rq"); a busy CPU adds
/// sched_idle_cpu()'s cfs_rq line. Band 1-3.
pub(crate) const SIS_LINES_PER_CPU: f64 = 2.0;

/// The runqueue reads of one pass (a scan, the checks before it): every line at its
/// latency, and the farthest line's, for CostTable::read_pass_ns (independent loads
/// overlap, only the first miss is exposed).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct ReadPass {
    pub total: f64,
    pub longest: f64,
}

impl ReadPass {
    /// Adds `n` CPUs' runqueue reads at `line_ns` a line.
    #[inline]
    pub(crate) fn add(&mut self, n: f64, line_ns: f64) {
        if n > 0.0 {
            self.total += n * SIS_LINES_PER_CPU * line_ns;
            self.longest = self.longest.max(line_ns);
        }
    }
}

/// The runqueues one select_task_rq_fair() pass has read outside its scans (target,
/// prev, recent_used_cpu, prev's SMT siblings): a scan that reaches them again hits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ReadSet {
    cpus: [u32; 8],
    n: usize,
}

impl ReadSet {
    /// Records `c` as read; returns false if it was already.
    #[inline]
    fn insert(&mut self, c: CpuId) -> bool {
        if self.cpus[..self.n].contains(&(c as u32)) {
            return false;
        }
        if self.n < self.cpus.len() {
            self.cpus[self.n] = c as u32;
            self.n += 1;
        }
        true
    }

    /// The read CPUs of word `i` of a mask.
    #[inline]
    fn word(&self, i: usize) -> u64 {
        self.cpus[..self.n].iter().filter(|&&c| c as usize / 64 == i).fold(0, |w, &c| w | 1 << (c % 64))
    }

    #[inline]
    fn contains(&self, c: CpuId) -> bool {
        self.cpus[..self.n].contains(&(c as u32))
    }
}

/// How a wakeup scan's walk of a mask ended.
enum ScanEnd {
    /// At an available idle CPU.
    Found(CpuId),
    /// At the SIS scan limit.
    Limit,
    /// With every CPU of the mask passed.
    Exhausted,
}

impl Simulator {
    /// Returns the CPU a waking (or, with `fork`, new) task should be queued on.
    pub(crate) fn select_task_rq_fair(&mut self, p: TaskId, prev: CpuId, this_cpu: CpuId, waker: Option<TaskId>, sync: bool, fork: bool) -> CpuId {
        // Read in place: cloning the shared mask costs two atomic operations a wakeup.
        let first_allowed = |s: &Self| s.tasks[p].cpus_allowed.first().expect("non-empty affinity");
        if self.tasks[p].nr_cpus_allowed == 1 {
            return first_allowed(self);
        }
        if fork {
            return self.find_idlest_cpu(p, this_cpu, waker.is_some());
        }
        // A wakeup (WF_TTWU) with EAS on and the root domain not overutilized.
        if let Some(cpu) = self.find_energy_efficient_cpu(p, prev) {
            return cpu;
        }
        let want_affine = waker.is_some_and(|w| !self.wake_wide(w, p)) && self.tasks[p].cpus_allowed.test(this_cpu);
        let mut new_cpu = prev;
        if want_affine {
            let affine_sd =
                self.m.domains[this_cpu].iter().find(|sd| sd.flags.has(SdFlags::WAKE_AFFINE) && sd.span.test(prev)).map(|sd| sd.imbalance_pct);
            if let Some(pct) = affine_sd {
                new_cpu = if this_cpu == prev { prev } else { self.wake_affine(p, this_cpu, prev, sync, pct) };
            }
        }
        let target = self.select_idle_sibling(p, prev, new_cpu, this_cpu);
        if self.tasks[p].cpus_allowed.test(target) {
            target
        } else {
            first_allowed(self)
        }
    }

    /// wake_wide(): both waker and wakee switch partners often → spread, don't pull.
    fn wake_wide(&self, waker: TaskId, p: TaskId) -> bool {
        let factor = self.m.llc_mask(self.tasks[waker].cpu).weight() as u32;
        let (mut master, mut slave) = (self.tasks[waker].wakee_flips, self.tasks[p].wakee_flips);
        if master < slave {
            std::mem::swap(&mut master, &mut slave);
        }
        !(slave < factor || master < slave * factor)
    }

    fn cpu_load(&self, cpu: CpuId) -> u64 {
        self.cpu_load_avg(cpu)
    }

    /// wake_affine(): run near the waker (this_cpu) or stay at prev.
    fn wake_affine(&mut self, p: TaskId, this_cpu: CpuId, prev: CpuId, sync: bool, imbalance_pct: u32) -> CpuId {
        let mut target = None;
        if self.feat.has(Feature::WA_IDLE) {
            // wake_affine_idle()
            if self.rqs[this_cpu].is_idle() && self.m.share_llc(this_cpu, prev) {
                target = Some(if self.rqs[prev].is_idle() { prev } else { this_cpu });
            } else if sync && self.rqs[this_cpu].nr_running == 1 {
                target = Some(this_cpu);
            } else if self.rqs[prev].is_idle() {
                target = Some(prev);
            }
        }
        if target.is_none() && self.feat.has(Feature::WA_WEIGHT) {
            // wake_affine_weight()
            let w = self.task_h_load(p) as i128;
            let mut this_eff = self.cpu_load(this_cpu) as i128;
            if sync {
                let current = self.rqs[this_cpu].curr.map_or(0, |c| self.task_h_load(c) as i128);
                if current > this_eff {
                    return this_cpu;
                }
                this_eff -= current;
            }
            this_eff += w;
            let mut prev_eff = (self.cpu_load(prev) as i128 - w).max(0);
            if self.feat.has(Feature::WA_BIAS) {
                this_eff *= 100;
                prev_eff *= 100 + (imbalance_pct as i128 - 100) / 2;
            }
            this_eff *= self.capacity(prev) as i128;
            prev_eff *= self.capacity(this_cpu) as i128;
            if sync {
                prev_eff += 1;
            }
            if this_eff < prev_eff {
                target = Some(this_cpu);
            }
        }
        target.unwrap_or(prev)
    }

    /// Charges `reader`, the CPU running select_task_rq_fair(), for `n` CPUs its scan
    /// examined, whose runqueue reads were `pass`.
    pub(crate) fn charge_waker(&mut self, reader: CpuId, n: u64, pass: ReadPass) {
        self.stats.counters.sis_scanned += n;
        self.charge_reads(reader, pass);
    }

    /// Charges `reader` for one pass of runqueue reads.
    pub(crate) fn charge_reads(&mut self, reader: CpuId, pass: ReadPass) {
        let ns = self.read_pass_ns(pass.longest, pass.total);
        self.charge_kernel(reader, ns as u64);
    }

    /// Adds `reader`'s check of runqueue `c` to `pass` (nothing if read).
    #[inline]
    fn sis_read(&self, read: &mut ReadSet, reader: CpuId, c: CpuId, pass: &mut ReadPass) {
        if read.insert(c) {
            pass.add(1.0, self.line_latency(reader, c));
        }
    }

    /// select_idle_sibling(): prev, target, recent_used_cpu, then an LLC scan; `reader`
    /// (the waker's CPU) reads every runqueue it checks.
    fn select_idle_sibling(&mut self, p: TaskId, prev: CpuId, target: CpuId, reader: CpuId) -> CpuId {
        if self.asym_wakeup() {
            return self.select_idle_sibling_asym(p, prev, target, reader);
        }
        // A CPU running only SCHED_IDLE tasks counts as idle (sched_idle_cpu(), 5.4+).
        let idle = |s: &Self, c: CpuId| (s.available_idle_cpu(c) || s.sched_idle_cpu(c)) && s.tasks[p].cpus_allowed.test(c);
        let mut read = ReadSet::default();
        let mut checks = ReadPass::default();
        self.sis_read(&mut read, reader, target, &mut checks);
        if idle(self, target) {
            self.charge_reads(reader, checks);
            return target;
        }
        // 6.7+ on cluster machines: prev/recent in another cluster are kept as fallbacks
        // after a scan of the target's cluster (22165f61d0c4).
        let cluster = self.sis_cluster(target).copied();
        let (mut prev_aff, mut recent_aff) = (None, None);
        if prev != target && self.m.share_llc(prev, target) {
            self.sis_read(&mut read, reader, prev, &mut checks);
            if idle(self, prev) {
                if cluster.is_none_or(|cl| cl.test(prev)) {
                    self.charge_reads(reader, checks);
                    return prev;
                }
                prev_aff = Some(prev);
            }
        }
        let recent = self.tasks[p].recent_used_cpu;
        self.tasks[p].recent_used_cpu = prev;
        if recent != prev && recent != target && self.m.share_llc(recent, target) {
            self.sis_read(&mut read, reader, recent, &mut checks);
            if idle(self, recent) {
                if cluster.is_none_or(|cl| cl.test(recent)) {
                    self.charge_reads(reader, checks);
                    return recent;
                }
                recent_aff = Some(recent);
            }
        }
        self.charge_reads(reader, checks);
        let llc = *self.m.llc_mask(target);
        let has_smt = self.has_smt;
        let has_idle_core = has_smt && self.load_sums.test_idle_cores(self.m.cpus[target].llc);
        if has_smt && !has_idle_core && self.m.share_llc(prev, target) {
            // select_idle_smt(): prev's siblings, until an idle one.
            let (mut n, mut ns, mut sib) = (0, ReadPass::default(), None);
            for &c in self.m.smt_siblings(prev) {
                if c == prev {
                    continue;
                }
                n += 1;
                self.sis_read(&mut read, reader, c, &mut ns);
                if idle(self, c) {
                    sib = Some(c);
                    break;
                }
            }
            self.charge_waker(reader, n, ns);
            if let Some(c) = sib {
                return c;
            }
        }
        if let Some(c) = self.select_idle_cpu(p, &llc, has_idle_core, target, reader, &read) {
            return c;
        }
        if let Some(c) = prev_aff.or(recent_aff) {
            return c;
        }
        if self.feat.has(Feature::SIS_NODE) {
            if let Some(c) = self.select_idle_node(p, target, reader) {
                return c;
            }
        }
        target
    }

    /// select_idle_cpu(): scan `span` (an LLC) from target+1, wrapping, up to the SIS
    /// limit; `reader` pays each runqueue read not in `read` at its distance.
    fn select_idle_cpu(&mut self, p: TaskId, span: &CpuMask, has_idle_core: bool, target: CpuId, reader: CpuId, read: &ReadSet) -> Option<CpuId> {
        let cpus = span.and(&self.tasks[p].cpus_allowed);
        let mut nr = usize::MAX;
        if self.feat.has(Feature::SIS_UTIL) {
            nr = self.balance.llc_nr_idle_scan[self.m.cpus[target].llc] + 1;
            if nr == 1 {
                return None;
            }
        } else if self.feat.has(Feature::SIS_PROP) {
            // SIS_PROP: nr = span_weight × (avg_idle / 512) / avg_scan_cost, at least 4; the
            // kernel's 1/512 scales avg_idle down, and a whole-LLC scan cost is taken as
            // span_weight same-LLC line reads, so span_weight cancels.
            let avg_idle = self.rqs[target].avg_idle as f64;
            let per_cpu = cost!(self, cacheline.same_llc_ns).max(1.0);
            nr = ((avg_idle / per_cpu) as usize / 512).max(4);
        }
        let mut cost = ReadPass::default();
        let mut examined = 0;
        let mut found = None;
        // select_idle_core()'s fallback: the first idle CPU seen in a core that was not.
        let mut idle_cpu = None;
        // Cores found busy: select_idle_core() takes their siblings out of the scan.
        let mut scanned = CpuMask::new();
        // SIS_CLUSTER (6.7+, 8881e1639f1f): the target's cluster first, then the rest.
        // (Without a cluster the scan is one walk of `cpus`: no empty first pass.)
        let first = self.sis_cluster(target).map(|cl| cl.and(&cpus));
        let rest_of_llc;
        let rest = match &first {
            Some(f) => {
                rest_of_llc = cpus.andnot(f);
                &rest_of_llc
            }
            None => &cpus,
        };
        if has_idle_core {
            let wrapped = first.iter().flat_map(|f| f.iter_wrap(target + 1)).chain(rest.iter_wrap(target + 1));
            for c in wrapped {
                if scanned.test(c) {
                    continue;
                }
                if self.select_idle_core(c, &cpus, reader, read, &mut idle_cpu, &mut examined, &mut cost) {
                    found = Some(c);
                    break;
                }
                for &s in self.m.smt_siblings(c) {
                    scanned.set(s);
                }
            }
        } else {
            for part in first.iter().chain(std::iter::once(rest)) {
                match self.scan_for_idle_cpu(part, target, reader, read, &mut nr, &mut examined, &mut cost) {
                    ScanEnd::Found(c) => found = Some(c),
                    ScanEnd::Limit => {}
                    ScanEnd::Exhausted => continue,
                }
                break;
            }
        }
        if has_idle_core && found.is_none() {
            // The scan found no idle core: clear the hint until a core goes idle again.
            self.load_sums.set_idle_cores(self.m.cpus[target].llc, false);
            found = idle_cpu;
        }
        self.charge_waker(reader, examined, cost);
        found
    }

    /// select_idle_cpu()'s walk of `cpus` (no idle-core search) from target+1, wrapping:
    /// each CPU passed counts toward the SIS limit `nr` and costs `reader` its runqueue
    /// lines at their distance (nothing for one already in `read`), and the first
    /// available idle one ends it. The walk goes a word of 64 CPUs at a time (idleness
    /// from the running and queued masks' words) wherever every CPU of the word is at
    /// one distance from the reader (a whole LLC seen from another CCX, or from inside
    /// it away from the reader's own core), adding the same costs in the same order as
    /// a CPU-by-CPU loop: one CPU at a time, or, where the costs are whole nanoseconds
    /// (so every sum is exact), all the word's CPUs up to the stop in one addition.
    #[allow(clippy::too_many_arguments)]
    fn scan_for_idle_cpu(
        &self,
        cpus: &CpuMask,
        target: CpuId,
        reader: CpuId,
        read: &ReadSet,
        nr: &mut usize,
        examined: &mut u64,
        pass: &mut ReadPass,
    ) -> ScanEnd {
        debug_assert!(*nr > 0, "a scan starts with a limit left");
        // The distance most of `cpus` is at from the reader, and the CPUs at another.
        let first = cpus.first().unwrap_or(target);
        let (far, near) = if self.m.share_llc(reader, first) {
            (crate::cost::Distance::SameLlc, *self.m.smt_mask(reader))
        } else {
            (self.m.distance(reader, first), CpuMask::new())
        };
        let far_line = self.line_at(far);
        let uniform = SIS_LINES_PER_CPU * far_line;
        // With whole-ns line costs, the sums are exact integers: adding k lines at once is
        // bit for bit the k additions one CPU at a time.
        let exact = |cost: f64| uniform.fract() == 0.0 && (0.0..=1e6).contains(&uniform) && cost.fract() == 0.0 && cost.abs() < 1e15;
        let line = |c: CpuId| self.line_latency(reader, c);
        let cost = &mut pass.total;
        let longest = &mut pass.longest;
        for (i, mut bits) in cpus.wrap_words(target + 1) {
            // sched_idle_cpu(): a CPU running only SCHED_IDLE tasks is taken as idle.
            let sidle = if self.rtc.idle_policy { self.rtc.sched_idle_cpus.word(i) } else { 0 };
            let busy = (self.running.word(i) | self.queue_index.nonempty.word(i)) & !sidle;
            let other_distance = near.word(i) | read.word(i);
            if other_distance & bits == 0 && exact(*cost) {
                // The whole word at one cost: walk to its first available idle CPU (or
                // its end) and charge the CPUs passed in one step.
                let mut idle = bits & !busy;
                while idle != 0 && sidle >> idle.trailing_zeros() & 1 == 0 && self.rqs[i * 64 + idle.trailing_zeros() as usize].resched_pending {
                    idle &= idle - 1;
                }
                let stop = (idle != 0).then(|| idle.trailing_zeros());
                let through = stop.map_or(bits, |b| bits & (u64::MAX >> (63 - b)));
                let walk = through.count_ones() as usize;
                if walk >= *nr {
                    // The limit runs out on the nr-th CPU, before it is read.
                    let passed = *nr - 1;
                    *nr = 0;
                    *examined += passed as u64;
                    *cost += passed as f64 * uniform;
                    if passed > 0 {
                        *longest = longest.max(far_line);
                    }
                    return ScanEnd::Limit;
                }
                *nr -= walk;
                *examined += walk as u64;
                *cost += walk as f64 * uniform;
                if walk > 0 {
                    *longest = longest.max(far_line);
                }
                if let Some(b) = stop {
                    return ScanEnd::Found(i * 64 + b as usize);
                }
                continue;
            }
            while bits != 0 {
                let b = bits.trailing_zeros();
                bits &= bits - 1;
                *nr -= 1;
                if *nr == 0 {
                    return ScanEnd::Limit;
                }
                let c = i * 64 + b as usize;
                *examined += 1;
                if other_distance >> b & 1 == 0 {
                    *cost += uniform;
                    *longest = longest.max(far_line);
                } else if !read.contains(c) {
                    *cost += SIS_LINES_PER_CPU * line(c);
                    *longest = longest.max(line(c));
                } else {
                    *cost += 0.0;
                }
                if busy >> b & 1 == 0 && (!self.rqs[c].resched_pending || sidle >> b & 1 == 1) {
                    return ScanEnd::Found(c);
                }
            }
        }
        ScanEnd::Exhausted
    }

    /// select_idle_core(): whether `core`'s SMT siblings are all idle, reading each one
    /// until one is busy (and, while no idle CPU of `cpus` has been seen, the rest of the
    /// core too, to remember the first as the scan's fallback). Each read costs `reader`
    /// the runqueue's lines at their distance (nothing if already read).
    #[allow(clippy::too_many_arguments)]
    fn select_idle_core(
        &self,
        core: CpuId,
        cpus: &CpuMask,
        reader: CpuId,
        read: &ReadSet,
        idle_cpu: &mut Option<CpuId>,
        examined: &mut u64,
        pass: &mut ReadPass,
    ) -> bool {
        let mut idle = true;
        for &s in self.m.smt_siblings(core) {
            *examined += 1;
            if !read.contains(s) {
                pass.add(1.0, self.line_latency(reader, s));
            }
            if !self.available_idle_cpu(s) {
                idle = false;
                if idle_cpu.is_some() {
                    break;
                }
                // The first CPU running only SCHED_IDLE tasks ends the core's walk.
                if self.sched_idle_cpu(s) && cpus.test(s) {
                    *idle_cpu = Some(s);
                    break;
                }
            } else if idle_cpu.is_none() && cpus.test(s) {
                *idle_cpu = Some(s);
            }
        }
        idle
    }

    /// update_idle_core() when `cpu` switches to idle: if its SMT siblings are idle
    /// too, set its LLC's has_idle_cores hint.
    pub(crate) fn update_idle_core(&mut self, cpu: CpuId) {
        let llc = self.m.cpus[cpu].llc;
        if !self.has_smt || self.load_sums.test_idle_cores(llc) {
            return;
        }
        let siblings_idle = self.m.smt_siblings(cpu).iter().all(|&s| s == cpu || self.available_idle_cpu(s));
        if siblings_idle {
            self.load_sums.set_idle_cores(llc, true);
        }
    }

    /// The target's cluster when wakeups scan it first (SIS_CLUSTER on a machine with
    /// clusters: sched_cluster_active).
    fn sis_cluster(&self, target: CpuId) -> Option<&CpuMask> {
        let cl = &self.m.cluster_span[target];
        (self.feat.has(Feature::SIS_CLUSTER) && cl != self.m.smt_mask(target)).then_some(cl)
    }

    /// SIS_NODE: after the local LLC, scan the node's other LLCs (never across nodes),
    /// each from its first CPU; `reader` pays every line at its real distance.
    fn select_idle_node(&mut self, p: TaskId, target: CpuId, reader: CpuId) -> Option<CpuId> {
        let node = self.m.cpus[target].node;
        let local_llc = self.m.cpus[target].llc;
        let llcs: Vec<usize> = (0..self.m.llc_span.len())
            .filter(|&l| l != local_llc && self.m.llc_span[l].iter().next().is_some_and(|c| self.m.cpus[c].node == node))
            .collect();
        for l in llcs {
            let span = self.m.llc_span[l];
            let first = span.first()?;
            let idle_core = self.has_smt && self.load_sums.test_idle_cores(l);
            if let Some(c) = self.select_idle_cpu(p, &span, idle_core, first, reader, &ReadSet::default()) {
                return Some(c);
            }
        }
        None
    }

    /// find_idlest_cpu(): fork balancing, walking down from the widest BALANCE_FORK domain.
    /// `this_cpu` reads every runqueue of that domain (find_idlest_group()'s statistics):
    /// the lower levels' reads hit. A task of the scenario's start has no parent to pay.
    fn find_idlest_cpu(&mut self, p: TaskId, this_cpu: CpuId, by_parent: bool) -> CpuId {
        let allowed = self.tasks[p].cpus_allowed.clone();
        let mut cpu = if allowed.test(this_cpu) { this_cpu } else { allowed.first().expect("non-empty") };
        let levels = self.m.domains[cpu].len();
        if let Some(top) = (0..levels).rev().find(|&l| by_parent && self.m.domains[cpu][l].flags.has(SdFlags::BALANCE_FORK)) {
            self.note_scan_reads();
            let ns = self.load_sums.scan_cost(cpu, top, None);
            self.charge_kernel(this_cpu, ns);
        }
        for level in (0..levels).rev() {
            let sd = &self.m.domains[cpu][level];
            if !sd.flags.has(SdFlags::BALANCE_FORK) {
                continue;
            }
            let pct = sd.imbalance_pct as u64;
            let gids = self.load_sums.sd_groups(cpu, level);
            // A task allowed the whole span may use every group (no per-group mask test).
            let whole_span = sd.span.is_subset(&allowed);
            // Fewer runnable tasks per CPU first, then more idle CPUs. A group the task
            // may wholly use is scored from the sums kept for load balance (the kernel
            // adds up its CPUs: the same figures).
            let score = |s: &Self, i: usize| -> (u64, u64) {
                let g = &sd.groups[i];
                let (n, idle, running) = if whole_span || g.is_subset(&allowed) {
                    let sums = s.load_sums.group(gids[i]);
                    (sums.weight as u64, sums.idle_cpus as u64, sums.nr_running as u64)
                } else {
                    let cpus = g.and(&allowed);
                    let idle = cpus.iter().filter(|&c| s.rqs[c].is_idle()).count() as u64;
                    let running: u64 = cpus.iter().map(|c| s.rqs[c].nr_running as u64).sum();
                    (cpus.weight() as u64, idle, running)
                };
                let n = n.max(1);
                (running * 1024 / n, n - idle)
            };
            let local_score = score(self, sd.local_group);
            let mut best = (sd.local_group, local_score);
            for (i, g) in sd.groups.iter().enumerate() {
                if !whole_span && !g.intersects(&allowed) {
                    continue;
                }
                let s = score(self, i);
                if s < best.1 {
                    best = (i, s);
                }
            }
            // Stay local unless the idlest group is clearly (imbalance_pct) less loaded.
            if best.0 != sd.local_group && local_score.0 * 100 <= best.1 .0 * pct && local_score.0 != 0 {
                best.0 = sd.local_group;
            }
            // The idlest CPU of the group (the key is unique, so any order finds it), from
            // the balance sums' dense per-CPU figures (equal to the runqueues': checked
            // with the invariants).
            let pelt = self.pelt_on();
            let idlest = |c: CpuId| {
                let (nr, load, load_avg) = self.load_sums.cpu_figures(c);
                (nr, if pelt { load_avg } else { load }, c)
            };
            cpu = if whole_span || sd.groups[best.0].is_subset(&allowed) {
                self.load_sums.group(gids[best.0]).cpus.iter().copied().min_by_key(|&c| idlest(c))
            } else {
                sd.groups[best.0].and(&allowed).iter().min_by_key(|&c| idlest(c))
            }
            .unwrap_or(cpu);
        }
        cpu
    }
}

#[cfg(test)]
mod tests {
    use crate::cpumask::CpuMask;
    use crate::scenario::Scenario;
    use crate::state::Simulator;

    /// One LLC of three SMT-2 cores, numbered as x86 numbers them (siblings 0-3, 1-4,
    /// 2-5), with a task pinned to CPU 0 and one to CPU 1: cores {0,3} and {1,4} are
    /// busy, core {2,5} is idle. Task "w" is yet to start.
    fn two_busy_cores() -> (Simulator, usize) {
        let toml = "[machine]\ntopo = { sockets = 1, llcs = 1, cores = 3, smt = 2 }\n[kernel]\nprofile = \"6.6\"\n\
                    [[tasks]]\nname = \"a\"\naffinity = \"0\"\nprogram = [{ run = \"1s\" }]\n\
                    [[tasks]]\nname = \"b\"\naffinity = \"1\"\nprogram = [{ run = \"1s\" }]\n\
                    [[tasks]]\nname = \"w\"\nstart = \"1s\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1.0\n";
        let s = Scenario::from_toml_str(toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
        let s = Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((s.m.smt_siblings(0), s.m.smt_siblings(1), s.m.smt_siblings(2)), (&[0, 3][..], &[1, 4][..], &[2, 5][..]));
        let idle: Vec<bool> = (0..6).map(|c| s.available_idle_cpu(c)).collect();
        assert_eq!(idle, [false, false, true, true, true, true]);
        let w = s.tasks.iter().position(|t| t.stats.name == "w").unwrap();
        (s, w)
    }

    #[test]
    fn an_idle_core_scan_skips_the_siblings_of_busy_cores() {
        let (mut s, w) = two_busy_cores();
        let llc = *s.m.llc_mask(0);
        let before = s.stats.counters.sis_scanned;
        // From CPU 1: core {1,4} (1 busy, 4 idle: every sibling read while no idle CPU
        // is known), then core {2,5}, idle. CPUs 3 and 4 are not visited on their own.
        assert_eq!(s.select_idle_cpu(w, &llc, true, 0, 0, &super::ReadSet::default()), Some(2));
        assert_eq!(s.stats.counters.sis_scanned - before, 4, "1, 4, 2, 5");
        assert!(s.load_sums.test_idle_cores(0), "an idle core was found: the hint stays");
    }

    #[test]
    fn a_failed_idle_core_scan_clears_the_hint_and_falls_back_to_an_idle_cpu() {
        let (mut s, w) = two_busy_cores();
        // Only the two busy cores allowed: no idle core, but CPUs 3 and 4 are idle.
        let mut allowed = CpuMask::new();
        [0, 1, 3, 4].into_iter().for_each(|c| allowed.set(c));
        s.tasks[w].cpus_allowed = std::sync::Arc::new(allowed);
        let llc = *s.m.llc_mask(0);
        assert!(s.load_sums.test_idle_cores(0), "set at boot");
        let before = s.stats.counters.sis_scanned;
        // Core {1,4}: 4 is the first idle CPU seen; core {0,3}: 0 busy, stop.
        assert_eq!(s.select_idle_cpu(w, &llc, true, 0, 0, &super::ReadSet::default()), Some(4));
        assert_eq!(s.stats.counters.sis_scanned - before, 3, "1, 4, 0");
        assert!(!s.load_sums.test_idle_cores(0), "cleared by the failed scan");
        // A CPU going idle beside a busy sibling does not set it again; one whose
        // sibling is idle does.
        s.update_idle_core(3);
        assert!(!s.load_sums.test_idle_cores(0));
        s.update_idle_core(5);
        assert!(s.load_sums.test_idle_cores(0));
    }

    /// The word-at-a-time scan against the CPU-by-CPU loop it replaced, on two LLCs of 40
    /// SMT-2 cores (each LLC spans two words): random busy CPUs, pending wakeups, SIS
    /// limits, targets and allowed masks; the same CPU, CPUs examined and cost bits.
    #[test]
    fn the_word_scan_walks_as_a_cpu_by_cpu_scan() {
        let toml = "[machine]\ntopo = { sockets = 1, llcs = 2, cores = 40, smt = 2 }\n[kernel]\nprofile = \"6.6\"\n\
                    [[tasks]]\nname = \"w\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 0.01\n";
        let s = Scenario::from_toml_str(toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
        let mut s = Simulator::new(&s, 1, false).unwrap_or_else(|e| panic!("{e}"));
        let mut rng = crate::rng::Stream::new(5, "scan-test");
        let n = s.m.nr_cpus();
        for trial in 0..400 {
            let busy_share = rng.below(101);
            for c in 0..n {
                let (busy, queued) = (rng.below(100) < busy_share, rng.below(100) < busy_share / 4);
                if busy {
                    s.running.set(c)
                } else {
                    s.running.clear(c)
                }
                if queued {
                    s.queue_index.nonempty.set(c)
                } else {
                    s.queue_index.nonempty.clear(c)
                }
                s.rqs[c].resched_pending = rng.below(10) == 0;
            }
            let target = rng.below(n as u64) as usize;
            // The reader: the target's LLC or the other one; a few CPUs read already.
            let reader = rng.below(n as u64) as usize;
            let mut read = super::ReadSet::default();
            for _ in 0..rng.below(4) {
                read.insert(rng.below(n as u64) as usize);
            }
            let mut cpus = *s.m.llc_mask(target);
            if trial % 3 == 0 {
                (0..n).filter(|_| rng.below(4) == 0).for_each(|c| cpus.clear(c));
            }
            let nr0 = if trial % 5 == 0 { usize::MAX } else { 1 + rng.below(90) as usize };
            // Whole-ns line costs (the exact word step) and fractional ones (per CPU), from
            // a whole or a fractional cost so far.
            s.m.cost.cacheline.same_llc_ns = if trial % 4 == 1 { 15.7 } else { 23.0 };
            let cost0 = if trial % 7 == 3 { 0.3 } else { 46.0 };
            let (mut nr, mut examined, mut cost) = (nr0, 0, super::ReadPass { total: cost0, longest: 0.0 });
            let got = match s.scan_for_idle_cpu(&cpus, target, reader, &read, &mut nr, &mut examined, &mut cost) {
                super::ScanEnd::Found(c) => Some(c),
                _ => None,
            };
            let (mut want_nr, mut want_examined, mut want_cost, mut want) = (nr0, 0, cost0, None);
            let mut want_longest: f64 = 0.0;
            for c in cpus.iter_wrap(target + 1) {
                want_nr -= 1;
                if want_nr == 0 {
                    break;
                }
                want_examined += 1;
                if !read.contains(c) {
                    want_cost += super::SIS_LINES_PER_CPU * s.m.cost.cacheline.at(s.m.distance(reader, c));
                    want_longest = want_longest.max(s.m.cost.cacheline.at(s.m.distance(reader, c)));
                }
                if s.available_idle_cpu(c) {
                    want = Some(c);
                    break;
                }
            }
            assert_eq!(
                (got, examined, cost.total.to_bits(), cost.longest.to_bits(), nr),
                (want, want_examined, f64::to_bits(want_cost), want_longest.to_bits(), want_nr),
                "trial {trial}"
            );
        }
    }

    /// Two LLCs of four CPUs (no SMT), each CPU running a task pinned to it: every scan
    /// walks its whole span. Returns the simulator, "w" and the task on each CPU.
    fn two_busy_llcs() -> (Simulator, usize, Vec<usize>) {
        let mut toml =
            String::from("[machine]\ntopo = { sockets = 1, llcs = 2, cores = 4 }\n[kernel]\nprofile = \"6.6\"\nfeatures = { SIS_UTIL = false }\n");
        for c in 0..8 {
            toml += &format!("[[tasks]]\nname = \"c{c}\"\naffinity = \"{c}\"\nprogram = [{{ run = \"1s\" }}]\n");
        }
        toml += "[[tasks]]\nname = \"w\"\nstart = \"1s\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 1.0\n";
        let sc = Scenario::from_toml_str(&toml, "<test>").unwrap_or_else(|e| panic!("{e}"));
        let mut s = Simulator::new(&sc, 1, false).unwrap_or_else(|e| panic!("{e}"));
        let on: Vec<usize> = (0..8).map(|c| s.tasks.iter().position(|t| t.stats.name == format!("c{c}")).unwrap()).collect();
        while !(0..8).all(|c| s.rqs[c].curr == Some(on[c])) {
            assert!(s.step() && s.now < 1_000_000, "the pinned tasks start");
        }
        assert!((0..8).all(|c| s.rqs[c].curr == Some(on[c])), "every CPU runs its task");
        assert!(!s.m.share_llc(0, 4));
        let w = s.tasks.iter().position(|t| t.stats.name == "w").unwrap();
        (s, w, on)
    }

    #[test]
    fn a_scan_of_another_ccx_costs_more_per_cpu_and_lands_on_the_readers_cpu() {
        let (mut s, w, on) = two_busy_llcs();
        let overhead = |s: &Simulator| -> Vec<u64> { on.iter().map(|&t| s.tasks[t].overhead_ns).collect() };
        // CPU 0 scans its own LLC centred on CPU 2 (the wake_affine target, say).
        let (b, n0) = (overhead(&s), s.stats.counters.sis_scanned);
        let own_llc = *s.m.llc_mask(0);
        assert_eq!(s.select_idle_cpu(w, &own_llc, false, 2, 0, &super::ReadSet::default()), None);
        let (a, own_n) = (overhead(&s), s.stats.counters.sis_scanned - n0);
        let own = a[0] - b[0];
        assert!((1..8).all(|c| a[c] == b[c]), "only the reader pays: {b:?} -> {a:?}");
        // CPU 0 scans the other LLC from its first CPU, as select_idle_node() does.
        let (b, n0) = (overhead(&s), s.stats.counters.sis_scanned);
        let other_llc = *s.m.llc_mask(4);
        assert_eq!(s.select_idle_cpu(w, &other_llc, false, 4, 0, &super::ReadSet::default()), None);
        let (a, other_n) = (overhead(&s), s.stats.counters.sis_scanned - n0);
        let other = a[0] - b[0];
        assert!((1..8).all(|c| a[c] == b[c]), "not the target's task, not anyone's but the reader's: {b:?} -> {a:?}");
        assert_eq!((own_n, other_n), (4, 4), "every CPU of each span examined");
        // Own LLC: three CPUs at the LLC's distance and its own runqueue (a local hit);
        // the other LLC: four at the cross-CCX distance. One pass each: the farthest
        // line's latency exposed, the other lines overlapped miss_parallelism at a time.
        let cl = &s.m.cost.cacheline;
        let (local, same, far) = (cl.at(crate::cost::Distance::SameCpu), cl.at(crate::cost::Distance::SameLlc), cl.at(s.m.distance(0, 4)));
        assert!(far > same && same > local);
        let mp = s.m.cost.miss_parallelism;
        assert!(mp > 1.0);
        let lines = super::SIS_LINES_PER_CPU;
        assert_eq!(own, (same + (lines * (3.0 * same + local) - same) / mp) as u64);
        assert_eq!(other, (far + (4.0 * lines * far - far) / mp) as u64);
        assert!(own < (lines * (3.0 * same + local)) as u64, "the reads overlap: less than their sum");
        assert!(other > own, "{other} vs {own} for 4 CPUs each");
    }
}
