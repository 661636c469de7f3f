//! The engine's side of the per-mm mechanisms: rseq mm_cid and reclaim with TLB shootdown.
//!
//! Mirrors: kernel/sched/core.c switch_mm_cid() at context switch, sched_mm_cid_migrate_to()
//! from set_task_cpu(), task_tick_mm_cid() and task_mm_cid_work(); mm/madvise.c
//! MADV_PAGEOUT → reclaim_pages(); the swap-in fault path.
//! Model: the state machines live in `crate::mm`; this module calls them at the points
//! the kernel does and turns their costs into CPU time (system time of the task).
//! mm_cpumask is the set of CPUs each process has run on (x86 never shrinks it here).

use crate::cpumask::CpuMask;
use crate::features::Feature;
use crate::mm::cid::{CidPolicy, MmCidState};
use crate::mm::cid_cache::{CacheParams, CidCache};
use crate::mm::reclaim::{DeferPolicy, Mapper, ReclaimModel, ReclaimPath, ZramPayload};
use crate::mm::tlb::IdleCpus;
use crate::state::mm::{blocked_load_lifetime, Region, PELT_HALF_LIFE_NS};
use crate::state::task::TaskId;
use crate::state::Simulator;
use crate::time::Ns;
impl Simulator {
    /// Registers a new thread of a named process with the mm_cid allocator.
    pub(crate) fn mm_register_thread(&mut self, p: TaskId) {
        let policy = CidPolicy::from_features(&self.feat);
        let Some(policy) = policy else { return };
        let (nr, hz, now) = (self.m.nr_cpus(), self.k.tunables.hz, self.now);
        let cid = self.mm.cid.get_or_insert_with(|| MmCidState::new(nr, policy, hz));
        let mm = self.tasks[p].mm;
        let id = *self.mm.cid_mm.entry(mm).or_insert_with(|| cid.add_mm());
        cid.add_thread(id, p, &self.tasks[p].cpus_allowed, now);
        self.tasks[p].rseq = true;
    }

    /// update_rq_clock() on `cpu` (its schedule() or tick).
    pub(crate) fn mm_rq_clock(&mut self, cpu: usize) {
        if self.mm.rq_clock.len() <= cpu {
            self.mm.rq_clock.resize(self.m.nr_cpus(), 0);
        }
        self.mm.rq_clock[cpu] = self.now;
    }

    /// The part of NOHZ blocked-load tracking that moves idle CPUs' rq->clock (which the
    /// mm_cid scan reads): a CPU going idle keeps blocked load for a while
    /// ([`blocked_load_lifetime`]); a CPU entering idle with nohz.has_blocked set and
    /// nohz.next_blocked passed updates every idle CPU that still has some
    /// (nohz_newidle_balance → _nohz_idle_balance(NOHZ_STATS_KICK) →
    /// update_nohz_stats → update_rq_clock).
    fn nohz_blocked_load(&mut self, cpu: usize, was_busy: bool, busy: bool) {
        let nr = self.m.nr_cpus();
        let now = self.now;
        let mm = &mut self.mm;
        if mm.busy_since.len() < nr {
            mm.busy_since.resize(nr, 0);
            mm.blocked_until.resize(nr, 0);
        }
        if !was_busy && busy {
            mm.busy_since[cpu] = now;
        } else if was_busy && !busy {
            let run = now.saturating_sub(mm.busy_since[cpu]);
            mm.blocked_until[cpu] = mm.blocked_until[cpu].max(now + blocked_load_lifetime(run));
            if now >= mm.next_blocked {
                mm.next_blocked = now + PELT_HALF_LIFE_NS;
                for c in 0..nr {
                    if c != cpu && self.rqs[c].curr.is_none() && mm.blocked_until[c] > now {
                        mm.rq_clock[c] = now;
                    }
                }
            }
        }
    }

    /// switch_mm_cid() and mm_cpumask bookkeeping at a context switch on `cpu`.
    pub(crate) fn mm_switch(&mut self, cpu: usize, prev: Option<TaskId>, next: Option<TaskId>) {
        self.mm_rq_clock(cpu);
        if self.mm.cid.is_some() {
            self.nohz_blocked_load(cpu, prev.is_some(), next.is_some());
        }
        if let Some(cid) = &mut self.mm.cid {
            let p = prev.filter(|&t| self.tasks[t].rseq);
            let n = next.filter(|&t| self.tasks[t].rseq);
            if p.is_some() || n.is_some() {
                cid.switch_mm_cid(cpu, p, n, self.now);
                if let (Some(n), Some(tr)) = (n, self.trace.as_mut()) {
                    let now_cid = cid.cid_of(n);
                    if tr.cid_changed(n + 1, now_cid) {
                        tr.record(crate::trace::TraceRecord {
                            ts: self.now,
                            cpu,
                            event: crate::trace::TraceEvent::MmCid { pid: n + 1, cid: now_cid },
                        });
                    }
                }
            }
        }
        if let Some(n) = next.filter(|&n| self.tasks[n].rseq || !self.mm.regions.is_empty()) {
            self.mm.mm_cpumask.entry(self.tasks[n].mm).or_default().set(cpu);
        }
    }

    /// sched_mm_cid_migrate_to() when a registered thread changes CPU.
    pub(crate) fn mm_migrate(&mut self, p: TaskId, src: usize, dst: usize) {
        if self.tasks[p].rseq {
            if let Some(cid) = &mut self.mm.cid {
                cid.migrate(p, src, dst, self.now);
            }
        }
    }

    /// task_tick_mm_cid(): queue the compaction scan, run at return to user space.
    pub(crate) fn mm_tick(&mut self, cpu: usize, c: TaskId) {
        if !self.tasks[c].rseq {
            return;
        }
        let Some(cid) = &mut self.mm.cid else { return };
        if cid.tick(cpu, c, self.now) {
            let (now, nr) = (self.now, self.m.nr_cpus());
            let clocks = &self.mm.rq_clock;
            // Each remote rq->clock as that CPU last updated it.
            let report = cid.run_scan_work(c, now, &|cpu| clocks.get(cpu).copied().filter(|_| cpu < nr).unwrap_or(now));
            if report.ran {
                *self.mm.counts.entry("cid_scans").or_default() += 1;
                // The scan reads every possible CPU's per-mm slot: one remote line each.
                let per_cpu = cost!(self, cacheline.same_package_ns) / cost!(self, miss_parallelism).max(1.0);
                self.tasks[c].overhead_ns += (report.cpus_scanned as f64 * per_cpu) as Ns;
            }
        }
    }

    /// Releases an exiting thread's cid.
    pub(crate) fn mm_exit(&mut self, c: TaskId, cpu: usize) {
        if self.tasks[c].rseq {
            if let Some(cid) = &mut self.mm.cid {
                cid.exit_thread(c, cpu, self.now);
            }
        }
    }

    /// Increments every byte of the area the task indexes now; its pass time (and the
    /// copy-on-write faults of pages written for the first time) become the task's time.
    pub(crate) fn touch_area(&mut self, c: TaskId, cpu: usize, bytes: u64, by_cid: bool, record: bool) {
        let cid = if by_cid { self.mm.cid.as_ref().and_then(|s| s.cid_of(c)) } else { None };
        let index = cid.unwrap_or(cpu as u32);
        // Separate pools for cpu_id- and cid-indexed areas of one process.
        let key = (self.tasks[c].mm * 2 + cid.is_some() as usize, index);
        let m = &self.m;
        let params = CacheParams::for_machine(m);
        let reads = &self.stats.cost_reads;
        let cache = self.mm.cache.get_or_insert_with(|| {
            // The cid cache model prices from the machine's cache sizes, line latencies
            // and miss parallelism (mm/cid_cache.rs): all of them count as read.
            for prefix in ["cache.", "cacheline.", "miss_parallelism", "rfo_parallelism"] {
                reads.note_prefix(prefix);
            }
            CidCache::new(m, params)
        });
        let cost = cache.touch(key, cpu, bytes, self.now);
        let cow = self.cow_faults(c, cpu, cost.cow_faults);
        self.tasks[c].overhead_ns += cost.ns + cow;
        self.tasks[c].stats.sys_ns += cow;
        if record {
            self.mm.touch_area.record(cost.ns + cow);
            *self.mm.counts.entry("touch_area_instr_ns").or_default() += cost.instr_ns;
            *self.mm.counts.entry("touch_area_miss_ns").or_default() += cost.miss_ns + cow;
            *self.mm.counts.entry("touch_area_cow_faults").or_default() += cost.cow_faults as u64;
            const LINES: [&str; 6] = [
                "touch_area_lines_own_core",
                "touch_area_lines_smt_sibling",
                "touch_area_lines_same_llc",
                "touch_area_lines_other_llc",
                "touch_area_lines_other_socket",
                "touch_area_lines_dram",
            ];
            for (name, n) in LINES.iter().zip(cost.lines_by_distance) {
                *self.mm.counts.entry(name).or_default() += n;
            }
        }
    }

    /// `n` copy-on-write faults of task `c` on `cpu` (do_wp_page → wp_page_copy): fault
    /// entry and dispatch, a new folio (allocation, memcg charge, rmap), the 4 KiB copy,
    /// the PTE set, and the flush of the old read-only PTE (ptep_clear_flush: x86 INVLPG
    /// and an IPI round to the mm's other non-lazy CPUs; arm64 TLBI + DSB). The
    /// instruction costs are the reclaim model's estimates for the same kernel paths.
    fn cow_faults(&mut self, c: TaskId, cpu: usize, n: u32) -> Ns {
        if n == 0 {
            return 0;
        }
        let mask = self.mm.mm_cpumask.get(&self.tasks[c].mm).copied().unwrap_or(CpuMask::single(cpu));
        let idle = self.idle_cpus(cpu);
        let model = self.reclaim_model();
        let k = &model.costs;
        let path = model.work_ns(cpu, k.fault_cycles + k.swapin_cycles + k.map_cycles + 4096.0 / k.fill_bytes_per_cycle);
        let tlb = model.tlb.clone();
        let (flush, stolen) = match tlb.arch {
            crate::topology::Arch::Arm64 => (tlb.arm64_flush_page_ns(cpu, &idle), Vec::new()),
            crate::topology::Arch::X86_64 => {
                let local = tlb.pte_xchg_ns(cpu) + tlb.invlpg_ns(cpu);
                let targets = tlb.ipi_targets(cpu, &mask, &idle);
                if targets.is_empty() {
                    (local, Vec::new())
                } else {
                    let round = tlb.ipi_round(cpu, &targets, false, local);
                    (round.initiator_ns, round.stolen)
                }
            }
        };
        for _ in 0..n {
            for (target, ns) in &stolen {
                self.send_ipi(cpu, *target);
                if let Some(victim) = self.rqs[*target].curr {
                    self.tasks[victim].overhead_ns += ns;
                }
            }
        }
        *self.mm.counts.entry("cow_faults").or_default() += n as u64;
        n as Ns * (path.round() as Ns + flush)
    }

    /// The `cache.llc_flush_after_idle_us` what-if: once every core of `cpu`'s LLC is
    /// powered down (the last at `at`), the LLC loses its contents after that long unless
    /// one of them touches data first. Off (0) on every preset: the hardware's own rule
    /// is the package state's (`IdleHardware`).
    pub(crate) fn llc_idle_flush_what_if(&mut self, cpu: usize, at: Ns, all_cores_down: bool) {
        let flush_us = cost!(self, cache.llc_flush_after_idle_us);
        if flush_us <= 0.0 || !all_cores_down {
            return;
        }
        if let Some(cache) = &mut self.mm.cache {
            cache.llc_power_down(cpu, at, (flush_us * 1000.0).round() as Ns);
        }
    }

    fn reclaim_model(&mut self) -> &ReclaimModel {
        let batch = self.feat.has(Feature::TLB_BATCH);
        let policy = match self.k.tunables.tlb_batch_min_cpus {
            Some(n) => DeferPolicy::CpuThreshold(n),
            None => DeferPolicy::Always,
        };
        let m = &self.m;
        let kpti = self.k.tunables.kpti.unwrap_or(false);
        let repeat = self.k.tunables.arm64_repeat_tlbi.unwrap_or_else(|| crate::mm::tlb::repeat_tlbi_needed(m, self.k.version));
        // The regions hold memset-filled pages: zram stores them as same-filled.
        let reads = &self.stats.cost_reads;
        self.mm.reclaim.get_or_insert_with(|| {
            // The reclaim model prices TLB maintenance (mm/tlb.rs) and page refills from
            // these parts of the table (mm/reclaim.rs): all of them count as read.
            for prefix in ["tlb.", "cacheline.", "ipi_send_ns", "ipi_receive_ns", "miss_parallelism"] {
                reads.note_prefix(prefix);
            }
            ReclaimModel::new(m, batch, policy).with_kernel(kpti, repeat).with_payload(ZramPayload::SameFilled)
        })
    }

    /// Touches `pages` of a region: pages not in the page cache are swapped in (a fault
    /// each), pages resident but not mapped by this process are mapped by a minor fault;
    /// then the loop runs.
    pub(crate) fn touch_pages(&mut self, c: TaskId, cpu: usize, region: usize, pages: u64, write: bool) {
        if self.mm.regions.len() <= region {
            self.mm.regions.resize(region + 1, Region::default());
        }
        let mm = self.tasks[c].mm;
        let r = &self.mm.regions[region];
        let absent = pages.saturating_sub(r.resident);
        let mapped = r.maps.get(&mm).map_or(0, |m| m.0);
        let minor = pages.saturating_sub(mapped).saturating_sub(absent);
        let model = self.reclaim_model();
        let sys = model.swap_in(cpu, absent) + model.map_resident(cpu, minor);
        let k = &model.costs;
        let faulted = absent + minor;
        let user = if write {
            model.work_ns(cpu, (pages * 4096) as f64 / k.fill_bytes_per_cycle)
        } else {
            pages as f64 * model.work_ns(cpu, k.user_touch_cycles) + faulted as f64 * k.user_walk_ns
        } as Ns;
        let r = &mut self.mm.regions[region];
        r.resident = r.resident.max(pages);
        let e = r.maps.entry(mm).or_insert((0, false));
        e.0 = e.0.max(pages);
        e.1 |= write;
        self.mm.mm_cpumask.entry(mm).or_default().set(cpu);
        let t = &mut self.tasks[c];
        t.overhead_ns += sys + user;
        t.stats.sys_ns += sys;
    }

    /// MADV_PAGEOUT (or LRU reclaim through memory.reclaim, `lru`) of a region's pages.
    /// Every process mapping them is a mapper (its mm_cpumask the CPUs it ran on);
    /// `extra_mappers` adds processes that mapped the pages on other CPUs and never ran
    /// since (idle: lazy TLB on x86).
    pub(crate) fn page_out(&mut self, c: TaskId, cpu: usize, region: usize, extra_mappers: u32, lru: bool) {
        if self.mm.regions.len() <= region {
            self.mm.regions.resize(region + 1, Region::default());
        }
        let me = self.tasks[c].mm;
        let r = &self.mm.regions[region];
        let pages = r.resident;
        let nr = self.m.nr_cpus();
        // The caller first (its mm is loaded here), then the other processes that map pages.
        let mut order: Vec<usize> = r.maps.iter().filter(|(_, m)| m.0 > 0).map(|(&mm, _)| mm).collect();
        order.sort_by_key(|&mm| mm != me);
        let mut mappers: Vec<Mapper> = order
            .iter()
            .map(|mm| Mapper { mm_cpumask: self.mm.mm_cpumask.get(mm).copied().unwrap_or(CpuMask::single(cpu)), pte_dirty: r.maps[mm].1 })
            .collect();
        if !lru && order.first() != Some(&me) {
            // MADV_PAGEOUT walks the caller's page tables: pages it does not map are not
            // found (only the call itself costs).
            mappers.clear();
        }
        mappers.extend((0..extra_mappers as usize).map(|i| Mapper::reader(CpuMask::single((cpu + 1 + i) % nr))));
        let idle = self.idle_cpus(cpu);
        let model = self.reclaim_model();
        let r = if lru {
            // memory.reclaim: LRU batches of SWAP_CLUSTER_MAX, every mapping unmapped.
            model.clone().with_path(ReclaimPath::MemcgReclaim).page_out(cpu, pages, &mappers, &idle)
        } else {
            model.page_out(cpu, pages, &mappers, &idle)
        };
        let t = &mut self.tasks[c];
        t.overhead_ns += r.cpu_ns;
        t.stats.sys_ns += r.cpu_ns;
        for (target, ns) in &r.remote_ns {
            self.send_ipi(cpu, *target);
            if let Some(victim) = self.rqs[*target].curr {
                self.tasks[victim].overhead_ns += ns; // the flush IPI interrupts whatever runs there
            }
        }
        self.trace_event(cpu, crate::trace::TraceEvent::TlbFlush { pages: r.pages_unmapped, ipis: r.ipis, waits: r.completion_waits });
        *self.mm.kernel_ns.entry("ptep_clear_flush").or_default() += r.flush_ns;
        *self.mm.kernel_ns.entry("try_to_unmap_flush").or_default() += r.batch_flush_ns + r.defer_ns;
        *self.mm.counts.entry("tlb_completion_waits").or_default() += r.completion_waits;
        *self.mm.counts.entry("tlb_ipi_rounds").or_default() += r.ipi_rounds;
        *self.mm.counts.entry("tlb_ipis").or_default() += r.ipis;
        *self.mm.counts.entry("pages_out").or_default() += r.pages_unmapped;
        *self.mm.counts.entry("pages_left_mapped").or_default() += r.still_mapped + r.skipped;
        let reg = &mut self.mm.regions[region];
        if r.skipped == 0 {
            reg.resident = r.still_mapped;
            for m in reg.maps.values_mut() {
                *m = (m.0.min(r.still_mapped), false);
            }
        }
    }

    /// Which CPUs are idle now, and whether their idle state took them out of the
    /// coherency (DVM) domain.
    fn idle_cpus(&self, busy: usize) -> IdleCpus {
        let mut idle = IdleCpus::none();
        for (cpu, rq) in self.rqs.iter().enumerate() {
            if cpu == busy || rq.curr.is_some() {
                continue;
            }
            if self.core_out_of_coherency(cpu, self.now) {
                idle.off.set(cpu);
            } else {
                idle.shallow.set(cpu);
            }
        }
        idle
    }
}
