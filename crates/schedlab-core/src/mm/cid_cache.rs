//! Where per-ID user data lives, and what touching it costs.
//!
//! Mirrors: nothing in the kernel; this is the hardware effect that makes the choice of
//! index (cpu_id, mm_cid, cache-local mm_cid) matter for user-space per-"CPU" data
//! (librseq `rseq_mempool` per-cpu areas, 16 KiB each in the seed's benchmark).
//!
//! Model: an *area* (key = (process, index), whole-area granularity) is written by the
//! CPU that touches it and then lives in that CPU's core:
//!
//! ```text
//!   written ──► private L1/L2 of the writer's core
//!                 │ displaced by later data on that core (LRU, L2-sized), or
//!                 │ the core idles into a deep C-state (AMD CC6 / Intel core C6):
//!                 ▼ its L1/L2 are written back into the LLC
//!               LLC (L3 / CCX) of the writer
//!                 │ displaced by later data in that LLC (LRU, LLC-sized), or
//!                 ▼ (optional) the whole LLC idles long enough to be flushed
//!               DRAM
//! ```
//!
//! A pass increments every byte: a load and a store per 16-byte vector, so each line must
//! end up *owned* (Modified) by `c`'s core. What that costs depends on where the line is:
//!
//! ```text
//!  place of the line                  what the RMW needs           overlap
//!  own core (L1/L2), SMT sibling      nothing                      -
//!  own LLC, no core holding it        L3 hit, exclusive            stream prefetch
//!  DRAM (the page's NUMA node)        memory read, exclusive       stream prefetch
//!  another core's L1/L2 (same LLC),   ownership transfer from the  the store queue's
//!  another LLC, the other socket      holder (a core-to-core       ownership requests
//!                                     "bounce", the cost table)    in flight
//! ```
//!
//! Stream prefetchers run ahead on reads of lines nobody else owns, but stop at 4 KiB
//! page boundaries: the first lines of each page are demand misses, the rest overlap up
//! to the machine's `miss_parallelism`. Lines another cache holds dirty must change
//! owner before the store to them can commit; stores commit in order from a 64-entry
//! store queue (Zen 4: Chips and Cheese, "AMD's Zen 4, Part 2: Memory Subsystem"), so
//! the transfers overlap at most `rfo_parallelism` deep: estimate 1 (no published store
//! prefetch for Zen; the issue's own reading of the seed's table: about one unoverlapped
//! remote latency per line), a knob (the cost table's `rfo_parallelism`).
//!
//! Areas come from a librseq `rseq_mempool` with default attributes: COW_INIT, each
//! per-CPU slot a private copy-on-write mapping of a memfd that holds the initial values.
//! The first write to each 4 KiB page of a slot takes a copy-on-write fault (the engine
//! prices it: fault path, page copy, and the flush of the read-only PTE), and the copy
//! lands on the writer's NUMA node: later misses to DRAM read it there (local or remote).
//!
//! Sources for the residency rules:
//! - Deep core C-states flush the core's private caches: AMD, "Processor Programming
//!   Reference (PPR) for AMD Family 19h" (CC6: core state saved, caches flushed, core
//!   power-gated); Intel Xeon Scalable processor datasheets, vol. 1 (core C6: L1/L2
//!   written back before the core is power-gated). Linux enters such a state as soon as
//!   an idle CPU's next timer is far (menu/teo pick the deepest state whose target
//!   residency fits).
//! - The flushed lines land in the LLC: on Zen the L3 is a victim cache filled by L2
//!   evictions (AMD Software Optimization Guide for Family 19h, pub. 56665, "L3 cache");
//!   Intel server LLCs since Skylake-SP likewise receive L2 victims.
//! - Capacities (L2 per core, LLC per domain) come from the machine's cost table.
//!
//! Prefetch and transfer latencies:
//! - Stream prefetchers do not cross 4 KiB pages: Intel 64 and IA-32 Optimization
//!   Reference Manual ("the streamer ... within a 4K page"); AMD's Family 19h Software
//!   Optimization Guide describes its stream prefetchers on physical addresses, which
//!   pages bound. `prefetch_restart_lines` (2, estimate) demand misses per page.
//! - Ownership transfers: the cost table's core-to-core latencies by distance (its
//!   sources in `topology/preset_costs.rs`), which include the directory (probe filter)
//!   lookup on the way; an L3 hit is priced as the same-LLC transfer (an estimate from
//!   above: Zen 4's L3 load-to-use is about 50 cycles, below the 23 ns bounce).
//! - DRAM on another node: the local `dram_ns` plus the socket crossing
//!   (`other_package_ns` - `same_package_ns`), an estimate.
//!
//! What is not modeled: partial residency inside an area, the hardware's exact MOESI
//! states (a line read Shared then upgraded pays two transfers on some parts; priced as
//! one), and background OS activity on an otherwise idle machine (report it with
//! [`CidCache::note_other_work`] if the engine models it).

use std::collections::BTreeMap;

use crate::cost::CachelineCosts;
use crate::cpumask::CpuId;
use crate::time::Ns;
use crate::topology::{Distance, Machine};

/// An area of user data: (process or mm, index used by user space).
pub type AreaKey = (usize, u32);

/// Bytes per cache line.
pub const LINE_BYTES: u64 = 64;

/// Names of the six places a line can come from, in the order of
/// [`PassCost::lines_by_distance`].
pub const PLACES: [&str; 6] = ["own_core", "smt_sibling", "same_llc", "other_llc", "other_socket", "dram"];

/// Parameters of the cache model; [`CacheParams::for_machine`] gives the defaults.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct CacheParams {
    /// Idle time of a core after which its L1/L2 have been written back into its LLC.
    /// `None` (what runs use): only the idle states the governor picks write caches
    /// back, through [`CidCache::core_power_down`].
    pub private_flush_idle_ns: Option<Ns>,
    /// Idle time of a whole LLC after which its contents are lost to DRAM. `None`:
    /// the LLC keeps data until other data displaces it.
    pub llc_flush_idle_ns: Option<Ns>,
    /// Private cache capacity per core (L2), bytes.
    pub private_bytes: u64,
    /// Capacity of one LLC, bytes.
    pub llc_bytes: u64,
    /// Bytes one vector instruction of the pass loop processes.
    pub vector_bytes: u32,
    /// Core cycles per vector load + add + store with the data in L1.
    pub cycles_per_vector: f64,
    /// Fixed cost of one pass outside the loop (reading the clock twice), ns.
    pub pass_overhead_ns: f64,
    /// Cache misses a core keeps in flight for a prefetched stream.
    pub miss_parallelism: f64,
    /// Ownership transfers of lines held by other caches in flight at once.
    pub rfo_parallelism: f64,
    /// Lines at the start of each 4 KiB page fetched before the prefetcher runs ahead.
    pub prefetch_restart_lines: u64,
    /// Page size, bytes (copy-on-write and prefetch granularity).
    pub page_bytes: u64,
}

impl CacheParams {
    /// Returns the defaults for a machine.
    ///
    /// - `private_flush_idle_ns` = none: the engine marks a core's caches lost when the
    ///   idle state the governor picked powers the core down (one idle model serves
    ///   every mechanism).
    /// - `llc_flush_idle_ns` = none: no source says a Zen 4 or Xeon L3 drops its
    ///   contents while the socket is up.
    /// - Capacities: the cost table's L2 and LLC sizes.
    /// - Base pass: 16-byte vectors (x86-64 baseline SSE2 / arm64 NEON; GCC >= 12
    ///   vectorises a byte-increment loop at -O2 with a trip count that is a multiple of
    ///   16), one vector per cycle (load + add + store + amortised loop overhead ≈ 4
    ///   µops against a 6-wide core sustaining one to two stores per cycle), clock from
    ///   the CPU's `freq_mhz`; 40 ns for two vDSO clock_gettime() calls (rdtsc-based).
    pub fn for_machine(machine: &Machine) -> Self {
        let cache = &machine.cost.cache;
        CacheParams {
            private_flush_idle_ns: None,
            llc_flush_idle_ns: None,
            private_bytes: cache.l2_kib as u64 * 1024,
            llc_bytes: cache.llc_kib as u64 * 1024,
            vector_bytes: 16,
            cycles_per_vector: 1.0,
            pass_overhead_ns: 40.0,
            miss_parallelism: machine.cost.miss_parallelism,
            rfo_parallelism: machine.cost.rfo_parallelism,
            // estimate, see the module header.
            prefetch_restart_lines: 2,
            page_bytes: 4096,
        }
    }
}

/// Cost of one touch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PassCost {
    /// Time of the pass without copy-on-write faults, ns (`instr_ns` + `miss_ns`).
    pub ns: Ns,
    /// The instructions' part: the loop with every line in L1, and the clock reads.
    pub instr_ns: Ns,
    /// The memory part: lines fetched or transferred from elsewhere.
    pub miss_ns: Ns,
    /// Lines fetched from each place, indexed as [`PLACES`].
    pub lines_by_distance: [u64; 6],
    /// Pages written for the first time (a copy-on-write fault each, priced by the caller).
    pub cow_faults: u32,
}

/// Where an area is at some moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Residency {
    /// In the private caches of the core of this CPU (the last writer).
    Private(CpuId),
    /// In this LLC only.
    Llc(usize),
    /// Only in memory (or never written).
    Memory,
}

#[derive(Clone, Debug, Default)]
struct Lru {
    cap: u64,
    total: u64,
    next: u64,
    /// seq → (area, or None for foreign data; bytes)
    entries: BTreeMap<u64, (Option<AreaKey>, u64)>,
    last_active: Ns,
    /// Last time the cache lost its contents to a power-down state (core C6 for a
    /// core's L1/L2, package C6 for an LLC).
    power_down: Option<Ns>,
    /// A power-down due at this time unless the core (package) wakes first: the AMD
    /// cache-flush-on-halt timer, or the last core of a package reaching CC6.
    pending_down: Option<Ns>,
    /// LLC only: (every core powered down since, contents lost at), unless used between
    /// (the `llc_flush_after_idle_us` what-if).
    llc_down: Option<(Ns, Ns)>,
}

impl Lru {
    /// Inserts at the MRU end; returns the sequence number and the areas evicted.
    fn insert(&mut self, key: Option<AreaKey>, bytes: u64, evicted: &mut Vec<AreaKey>) -> u64 {
        let seq = self.next;
        self.next += 1;
        self.entries.insert(seq, (key, bytes));
        self.total += bytes;
        while self.total > self.cap && self.entries.len() > 1 {
            let (_, (k, b)) = self.entries.pop_first().expect("non-empty");
            self.total -= b;
            evicted.extend(k);
        }
        seq
    }

    /// A power-down due at `at` unless [`Lru::woken`] comes first.
    fn schedule_down(&mut self, at: Ns) {
        if let Some(t) = self.pending_down.replace(at) {
            // A mark left pending by a wake that came after it: it happened.
            self.power_down = Some(self.power_down.map_or(t, |d| d.max(t)));
        }
    }

    /// The core (package) woke at `at`: a pending power-down due by then happened, a
    /// later one never will.
    fn woken(&mut self, at: Ns) {
        if let Some(t) = self.pending_down.take() {
            if t <= at {
                self.power_down = Some(self.power_down.map_or(t, |d| d.max(t)));
            }
        }
    }

    fn remove(&mut self, seq: u64) {
        if let Some((_, b)) = self.entries.remove(&seq) {
            self.total -= b;
        }
    }

    fn drain(&mut self, out: &mut Vec<AreaKey>) {
        out.extend(self.entries.values().filter_map(|e| e.0));
        self.entries.clear();
        self.total = 0;
    }

    /// Whether the cache was written back since it was last used: a power-down
    /// mark newer than the last activity (a pending one once its time has come), or
    /// (without marks) an idle period longer than the threshold.
    fn flushed_by(&self, idle: Option<Ns>, now: Ns) -> bool {
        let down = |mark: Option<Ns>| mark.is_some_and(|t| t > self.last_active && t <= now);
        down(self.power_down)
            || down(self.pending_down)
            || self.llc_down.is_some_and(|(from, at)| self.last_active <= from && at <= now)
            || idle.is_some_and(|f| now >= self.last_active.saturating_add(f))
    }
}

#[derive(Clone, Debug)]
struct Area {
    writer: CpuId,
    private_seq: Option<u64>,
    llc_seq: Option<u64>,
    /// NUMA node of each page once written (copy-on-write), None before.
    page_node: Vec<Option<usize>>,
}

#[derive(Clone, Copy, Debug)]
struct CpuInfo {
    core: usize,
    llc: usize,
    socket: usize,
    node: usize,
    freq_mhz: u32,
}

/// The cache model for per-ID areas on one machine.
#[derive(Clone, Debug)]
pub struct CidCache {
    params: CacheParams,
    cpus: Vec<CpuInfo>,
    llc_socket: Vec<usize>,
    node_socket: Vec<usize>,
    lat: CachelineCosts,
    cores: Vec<Lru>,
    llcs: Vec<Lru>,
    areas: BTreeMap<AreaKey, Area>,
}

impl CidCache {
    /// Builds the model for `machine`.
    pub fn new(machine: &Machine, params: CacheParams) -> Self {
        let cpus: Vec<CpuInfo> =
            machine.cpus.iter().map(|c| CpuInfo { core: c.core, llc: c.llc, socket: c.socket, node: c.node, freq_mhz: c.freq_mhz.max(1) }).collect();
        let nr_cores = cpus.iter().map(|c| c.core + 1).max().unwrap_or(0);
        let nr_llcs = cpus.iter().map(|c| c.llc + 1).max().unwrap_or(0);
        let mut llc_socket = vec![0; nr_llcs];
        let mut node_socket = vec![0; cpus.iter().map(|c| c.node + 1).max().unwrap_or(0)];
        for c in &cpus {
            llc_socket[c.llc] = c.socket;
            node_socket[c.node] = c.socket;
        }
        let lru = |cap| Lru { cap, ..Lru::default() };
        CidCache {
            cores: vec![lru(params.private_bytes); nr_cores],
            llcs: vec![lru(params.llc_bytes); nr_llcs],
            params,
            cpus,
            llc_socket,
            node_socket,
            lat: machine.cost.cacheline.clone(),
            areas: BTreeMap::new(),
        }
    }

    /// Returns the parameters in force.
    pub fn params(&self) -> &CacheParams {
        &self.params
    }

    /// Returns the time of a pass over `bytes` already in `cpu`'s L1/L2, ns.
    pub fn base_pass_ns(&self, cpu: CpuId, bytes: u64) -> f64 {
        let p = &self.params;
        let vectors = bytes.div_ceil(p.vector_bytes.max(1) as u64) as f64;
        vectors * p.cycles_per_vector * 1000.0 / self.cpus[cpu].freq_mhz as f64 + p.pass_overhead_ns
    }

    /// Returns where `key` is at `now` (without changing anything).
    pub fn residency(&self, key: AreaKey, now: Ns) -> Residency {
        let Some(a) = self.areas.get(&key) else { return Residency::Memory };
        let w = self.cpus[a.writer];
        if a.private_seq.is_some() && !self.cores[w.core].flushed_by(self.params.private_flush_idle_ns, now) {
            return Residency::Private(a.writer);
        }
        if a.llc_seq.is_some() && !self.llcs[w.llc].flushed_by(self.params.llc_flush_idle_ns, now) {
            return Residency::Llc(w.llc);
        }
        Residency::Memory
    }

    /// Index into [`PLACES`] of an area at `r` as seen from `cpu`.
    fn place_index(&self, r: Residency, cpu: CpuId) -> usize {
        let me = self.cpus[cpu];
        match r {
            Residency::Private(w) => self.distance(w, cpu) as usize,
            Residency::Llc(l) if l == me.llc => 2,
            Residency::Llc(l) if self.llc_socket[l] == me.socket => 3,
            Residency::Llc(_) => 4,
            Residency::Memory => 5,
        }
    }

    /// Sharing distance, as [`Machine::distance`].
    fn distance(&self, a: CpuId, b: CpuId) -> Distance {
        let (x, y) = (self.cpus[a], self.cpus[b]);
        Distance::classify(a == b, x.core == y.core, x.llc == y.llc, x.socket == y.socket)
    }

    fn latency(&self, place: usize) -> f64 {
        match place {
            0 => self.lat.same_core_ns,
            1 => self.lat.smt_sibling_ns,
            2 => self.lat.same_llc_ns,
            3 => self.lat.same_package_ns,
            4 => self.lat.other_package_ns,
            _ => self.lat.dram_ns,
        }
    }

    /// Applies the idle flushes due by `now` to a core and its LLC.
    fn settle(&mut self, cpu: CpuId, now: Ns) {
        let CpuInfo { core, llc, .. } = self.cpus[cpu];
        let mut gone = Vec::new();
        if self.cores[core].flushed_by(self.params.private_flush_idle_ns, now) {
            self.cores[core].drain(&mut gone);
            for k in gone.drain(..) {
                if let Some(a) = self.areas.get_mut(&k) {
                    a.private_seq = None;
                }
            }
        }
        if self.llcs[llc].flushed_by(self.params.llc_flush_idle_ns, now) {
            self.llcs[llc].drain(&mut gone);
            for k in gone.drain(..) {
                if let Some(a) = self.areas.get_mut(&k) {
                    a.llc_seq = None;
                }
            }
        }
    }

    /// Inserts into `cpu`'s core and LLC, applying capacity evictions.
    fn install(&mut self, key: Option<AreaKey>, cpu: CpuId, bytes: u64, busy_until: Ns) -> (u64, u64) {
        let CpuInfo { core, llc, .. } = self.cpus[cpu];
        let mut out_private = Vec::new();
        let mut out_llc = Vec::new();
        let ps = self.cores[core].insert(key, bytes, &mut out_private);
        let ls = self.llcs[llc].insert(key, bytes, &mut out_llc);
        for k in out_private {
            if let Some(a) = self.areas.get_mut(&k) {
                a.private_seq = None;
            }
        }
        for k in out_llc {
            if let Some(a) = self.areas.get_mut(&k) {
                a.llc_seq = None;
            }
        }
        let c = &mut self.cores[core];
        c.last_active = c.last_active.max(busy_until);
        let l = &mut self.llcs[llc];
        l.last_active = l.last_active.max(busy_until);
        (ps, ls)
    }

    /// The core of `cpu` powers down at `at` (every thread in a power-down state, and
    /// any flush delay run out), unless [`CidCache::core_woken`] comes first: its L1/L2
    /// contents are then written back to the LLC.
    pub fn core_power_down(&mut self, cpu: CpuId, at: Ns) {
        let core = self.cpus[cpu].core;
        self.cores[core].schedule_down(at);
    }

    /// A thread of `cpu`'s core left its idle state at `at`.
    pub fn core_woken(&mut self, cpu: CpuId, at: Ns) {
        let core = self.cpus[cpu].core;
        self.cores[core].woken(at);
    }

    /// The package holding LLC `llc` enters a package state that flushes its LLCs at
    /// `at`, unless [`CidCache::llc_woken`] comes first.
    pub fn llc_flush(&mut self, llc: usize, at: Ns) {
        self.llcs[llc].schedule_down(at);
    }

    /// A core of the package holding LLC `llc` woke at `at`.
    pub fn llc_woken(&mut self, llc: usize, at: Ns) {
        self.llcs[llc].woken(at);
    }

    /// Every core of `cpu`'s LLC is powered down from `at`: unless one of them touches
    /// data again within `delay`, the LLC loses its contents at `at + delay`.
    pub fn llc_power_down(&mut self, cpu: CpuId, at: Ns, delay: Ns) {
        let llc = self.cpus[cpu].llc;
        self.llcs[llc].llc_down = Some((at, at + delay));
    }

    /// Memory time of `lines` lines at place `place` (index into [`PLACES`]) for `cpu`;
    /// `owned` when another cache holds them dirty (an ownership transfer each), `node`
    /// the NUMA node of their page (DRAM only). See the module header.
    fn lines_ns(&self, cpu: CpuId, place: usize, owned: bool, lines: u64, node: Option<usize>) -> f64 {
        let p = &self.params;
        if place <= 1 {
            return 0.0;
        }
        if owned {
            return lines as f64 * self.latency(place) / p.rfo_parallelism.max(1.0);
        }
        // Exclusive to us: an L3 hit or a DRAM read, streamed by the prefetcher after its
        // restart at the page boundary.
        let lat = if place == 5 { self.dram_ns(cpu, node) } else { self.latency(place) };
        let first = lines.min(p.prefetch_restart_lines);
        first as f64 * lat + (lines - first) as f64 * lat / p.miss_parallelism.max(1.0)
    }

    /// DRAM latency from `cpu` to memory on `node` (local, or across the socket link).
    fn dram_ns(&self, cpu: CpuId, node: Option<usize>) -> f64 {
        let me = self.cpus[cpu];
        match node {
            Some(n) if self.node_socket.get(n).is_some_and(|&s| s != me.socket) => {
                self.lat.dram_ns + (self.lat.other_package_ns - self.lat.same_package_ns).max(0.0)
            }
            _ => self.lat.dram_ns,
        }
    }

    /// `cpu` reads and writes every byte of area `key` (`bytes` long) at `now`.
    /// Returns the pass's cost; afterwards the area lives in `cpu`'s core.
    pub fn touch(&mut self, key: AreaKey, cpu: CpuId, bytes: u64, now: Ns) -> PassCost {
        let lines = bytes.div_ceil(LINE_BYTES);
        let page_lines = (self.params.page_bytes / LINE_BYTES).max(1);
        let nr_pages = lines.div_ceil(page_lines) as usize;
        if let Some(a) = self.areas.get(&key) {
            let w = a.writer;
            self.settle(w, now);
        }
        self.settle(cpu, now);
        let residency = self.residency(key, now);
        let place = self.place_index(residency, cpu);
        // Held dirty by another core's private cache or another LLC: the RMW must take
        // ownership; in our own LLC (no core holding it) or in memory it is ours alone.
        let owned = match residency {
            Residency::Private(_) => place >= 2,
            Residency::Llc(l) => l != self.cpus[cpu].llc,
            Residency::Memory => false,
        };
        let me = self.cpus[cpu];
        let mut page_node = self.areas.get(&key).map(|a| a.page_node.clone()).unwrap_or_default();
        page_node.resize(nr_pages, None);
        let mut lines_by_distance = [0u64; 6];
        let mut miss = 0.0;
        let mut cow_faults = 0;
        for (i, node) in page_node.iter_mut().enumerate() {
            let n = (lines - i as u64 * page_lines).min(page_lines);
            match *node {
                None => {
                    // First write: the copy-on-write fault copies the page into this
                    // core's caches, on this CPU's node.
                    cow_faults += 1;
                    *node = Some(me.node);
                    lines_by_distance[0] += n;
                }
                Some(home) => {
                    lines_by_distance[place] += n;
                    miss += self.lines_ns(cpu, place, owned, n, Some(home));
                }
            }
        }
        let instr = self.base_pass_ns(cpu, bytes).round() as Ns;
        let miss_ns = miss.round() as Ns;
        let ns = instr + miss_ns;
        // The write invalidates every other copy: leave the old core and LLC.
        if let Some(a) = self.areas.get(&key) {
            let old = self.cpus[a.writer];
            let (ps, ls) = (a.private_seq, a.llc_seq);
            if let Some(s) = ps {
                self.cores[old.core].remove(s);
            }
            if let Some(s) = ls {
                self.llcs[old.llc].remove(s);
            }
        }
        self.areas.insert(key, Area { writer: cpu, private_seq: None, llc_seq: None, page_node });
        let (ps, ls) = self.install(Some(key), cpu, bytes, now + ns);
        let a = self.areas.get_mut(&key).expect("just inserted");
        a.private_seq = Some(ps);
        a.llc_seq = Some(ls);
        PassCost { ns, instr_ns: instr, miss_ns, lines_by_distance, cow_faults }
    }

    /// Another task ran on `cpu` until `now` and brought `bytes` of its own data into
    /// the core's caches: that data displaces areas (LRU), and the core was not idle.
    pub fn note_other_work(&mut self, cpu: CpuId, bytes: u64, now: Ns) {
        self.settle(cpu, now);
        if bytes > 0 {
            self.install(None, cpu, bytes, now);
        } else {
            let CpuInfo { core, llc, .. } = self.cpus[cpu];
            self.cores[core].last_active = self.cores[core].last_active.max(now);
            self.llcs[llc].last_active = self.llcs[llc].last_active.max(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::NSEC_PER_MSEC;
    use crate::topology::presets::topo;

    const AREA: u64 = 16 * 1024;

    #[test]
    fn idle_core_flushes_to_its_llc_and_displacement_follows_lru() {
        let m = topo(1, 2, 4, 1);
        let mut c = CidCache::new(&m, CacheParams::for_machine(&m));
        c.touch((0, 0), 1, AREA, 0);
        assert_eq!(c.residency((0, 0), 100_000), Residency::Private(1));
        // The core powers down at 500 us: from then on its data is in the LLC only.
        c.core_power_down(1, 500_000);
        assert_eq!(c.residency((0, 0), 400_000), Residency::Private(1));
        assert_eq!(c.residency((0, 0), NSEC_PER_MSEC), Residency::Llc(0));
        // Same CPU after the flush: lines come from its own L3.
        let p = c.touch((0, 0), 1, AREA, NSEC_PER_MSEC);
        assert_eq!(p.lines_by_distance, [0, 0, 256, 0, 0, 0]);
        // Filling the core with more than its L2 displaces the area (no idle in between).
        let mut params = CacheParams::for_machine(&m);
        params.private_flush_idle_ns = None;
        let mut c = CidCache::new(&m, params);
        c.touch((0, 0), 1, AREA, 0);
        c.note_other_work(1, 2 * 1024 * 1024, 10);
        assert_eq!(c.residency((0, 0), 20), Residency::Llc(0));
        c.note_other_work(4, 64 * 1024 * 1024, 30); // CPU 4 is in LLC 1: no effect on LLC 0
        assert_eq!(c.residency((0, 0), 40), Residency::Llc(0));
        c.note_other_work(2, 64 * 1024 * 1024, 50);
        assert_eq!(c.residency((0, 0), 60), Residency::Memory);
    }

    /// A power-down the core wakes before never happens; one it wakes after did. The
    /// same for a package flush of the LLC.
    #[test]
    fn a_wake_before_the_flush_timer_keeps_the_caches() {
        let m = topo(1, 2, 4, 1);
        let mut c = CidCache::new(&m, CacheParams::for_machine(&m));
        c.touch((0, 0), 1, AREA, 0);
        c.core_power_down(1, 500_000);
        c.core_woken(1, 300_000);
        assert_eq!(c.residency((0, 0), NSEC_PER_MSEC), Residency::Private(1));
        c.core_power_down(1, 2 * NSEC_PER_MSEC);
        c.core_woken(1, 3 * NSEC_PER_MSEC);
        assert_eq!(c.residency((0, 0), 4 * NSEC_PER_MSEC), Residency::Llc(0));
        c.llc_flush(0, 5 * NSEC_PER_MSEC);
        c.llc_woken(0, 4 * NSEC_PER_MSEC + 1);
        assert_eq!(c.residency((0, 0), 6 * NSEC_PER_MSEC), Residency::Llc(0));
        c.llc_flush(0, 7 * NSEC_PER_MSEC);
        assert_eq!(c.residency((0, 0), 6 * NSEC_PER_MSEC), Residency::Llc(0));
        assert_eq!(c.residency((0, 0), 8 * NSEC_PER_MSEC), Residency::Memory);
    }

    #[test]
    fn base_pass_follows_the_clock() {
        let m = topo(1, 1, 2, 1);
        let c = CidCache::new(&m, CacheParams::for_machine(&m));
        // 1024 vectors at one per cycle at 3 GHz, plus the clock reads.
        let b = c.base_pass_ns(0, AREA);
        assert!((b - (1024.0 / 3.0 + 40.0)).abs() < 1e-9, "{b}");
    }
}
