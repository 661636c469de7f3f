//! mm_cid allocators and the per-cid data cache model: invariants, the properties the
//! seed (003, rseq cache-local concurrency IDs) relies on, and its benchmark pattern
//! replayed at the state-machine level.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use proptest::prelude::*;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::mm::cid::{CidPolicy, MmCidState, PcpuCid};
use schedlab_core::mm::cid_cache::{CacheParams, CidCache, PLACES};
use schedlab_core::time::{Ns, NSEC_PER_MSEC, NSEC_PER_USEC};
use schedlab_core::topology::presets::topo;
use schedlab_core::topology::{Distance, Machine};

const MS: Ns = NSEC_PER_MSEC;
const AREA: u64 = 16 * 1024;

// ---------------------------------------------------------------------------------
// Random schedules

fn held(slot: PcpuCid) -> Option<u32> {
    match slot {
        PcpuCid::Valid(x) | PcpuCid::LazyPut(x) => Some(x),
        PcpuCid::Unset => None,
    }
}

#[derive(Clone, Debug)]
enum Op {
    Run { cpu: usize, pick: usize },
    Idle { cpu: usize },
    Tick { cpu: usize },
    ReturnToUser { cpu: usize },
    Advance { ns: u64 },
    Migrate { pick: usize, cpu: usize },
    Exit { cpu: usize },
    Widen { pick: usize, cpu: usize },
}

fn op() -> impl Strategy<Value = Op> {
    let c = 0usize..16;
    prop_oneof![
        6 => (c.clone(), 0usize..64).prop_map(|(cpu, pick)| Op::Run { cpu, pick }),
        3 => c.clone().prop_map(|cpu| Op::Idle { cpu }),
        3 => c.clone().prop_map(|cpu| Op::Tick { cpu }),
        2 => c.clone().prop_map(|cpu| Op::ReturnToUser { cpu }),
        4 => prop_oneof![0u64..2 * MS, 0u64..250 * MS].prop_map(|ns| Op::Advance { ns }),
        2 => (0usize..64, c.clone()).prop_map(|(pick, cpu)| Op::Migrate { pick, cpu }),
        1 => c.clone().prop_map(|cpu| Op::Exit { cpu }),
        1 => (0usize..64, c).prop_map(|(pick, cpu)| Op::Widen { pick, cpu }),
    ]
}

/// A schedule: CPUs, threads (mm, affinity bits) and operations; `churn` allows exits
/// and affinity changes.
fn schedule(churn: bool) -> impl Strategy<Value = (usize, Vec<(usize, u16)>, Vec<Op>)> {
    (1usize..=10).prop_flat_map(move |nr_cpus| {
        let threads = prop::collection::vec((0usize..2, any::<u16>()), 1..=8);
        let ops = prop::collection::vec(op(), 1..160)
            .prop_map(move |ops| ops.into_iter().filter(|o| churn || !matches!(o, Op::Exit { .. } | Op::Widen { .. })).collect());
        (Just(nr_cpus), threads, ops)
    })
}

/// Plays a schedule the way an engine would, checking after every step.
fn play(policy: CidPolicy, nr_cpus: usize, threads: &[(usize, u16)], ops: &[Op], check_bound: bool) {
    let mut st = MmCidState::new(nr_cpus, policy, 250);
    let mms = [st.add_mm(), st.add_mm()];
    let mut mask: Vec<CpuMask> = Vec::new();
    for (tid, &(mm, bits)) in threads.iter().enumerate() {
        let mut m = CpuMask::new();
        (0..nr_cpus).filter(|c| bits & (1 << c) != 0).for_each(|c| m.set(c));
        if m.is_empty() {
            m.set(tid % nr_cpus);
        }
        st.add_thread(mms[mm], tid, &m, 0);
        mask.push(m);
    }
    let n = threads.len();
    let mut task_cpu: Vec<CpuId> = mask.iter().map(|m| m.first().unwrap()).collect();
    let mut running: Vec<Option<usize>> = vec![None; nr_cpus];
    let mut exited = vec![false; n];
    let mut pending = vec![false; n];
    let mut now: Ns = 0;
    let idle = |t: usize, running: &[Option<usize>], exited: &[bool]| !exited[t] && !running.contains(&Some(t));
    for op in ops {
        match *op {
            Op::Run { cpu, pick } => {
                let cpu = cpu % nr_cpus;
                let cands: Vec<usize> = (0..n).filter(|&t| idle(t, &running, &exited) && mask[t].test(cpu)).collect();
                if let Some(&t) = cands.get(pick % cands.len().max(1)) {
                    if task_cpu[t] != cpu {
                        st.migrate(t, task_cpu[t], cpu, now);
                        task_cpu[t] = cpu;
                    }
                    let cid = st.switch_mm_cid(cpu, running[cpu], Some(t), now);
                    assert!(cid.is_some(), "an active thread runs without a cid");
                    running[cpu] = Some(t);
                }
            }
            Op::Idle { cpu } => {
                let cpu = cpu % nr_cpus;
                st.switch_mm_cid(cpu, running[cpu].take(), None, now);
            }
            Op::Tick { cpu } => {
                if let Some(t) = running[cpu % nr_cpus] {
                    pending[t] |= st.tick(cpu % nr_cpus, t, now);
                }
            }
            Op::ReturnToUser { cpu } => {
                if let Some(t) = running[cpu % nr_cpus].filter(|&t| pending[t]) {
                    pending[t] = false;
                    st.run_scan_work(t, now, &|_| now);
                }
            }
            Op::Advance { ns } => now += ns,
            Op::Migrate { pick, cpu } => {
                let cpu = cpu % nr_cpus;
                let cands: Vec<usize> = (0..n).filter(|&t| idle(t, &running, &exited) && mask[t].test(cpu) && task_cpu[t] != cpu).collect();
                if let Some(&t) = cands.get(pick % cands.len().max(1)) {
                    st.migrate(t, task_cpu[t], cpu, now);
                    task_cpu[t] = cpu;
                }
            }
            Op::Exit { cpu } => {
                let cpu = cpu % nr_cpus;
                if let Some(t) = running[cpu].take() {
                    st.exit_thread(t, cpu, now);
                    exited[t] = true;
                    st.switch_mm_cid(cpu, Some(t), None, now);
                }
            }
            Op::Widen { pick, cpu } => {
                let t = pick % n;
                mask[t].set(cpu % nr_cpus);
                st.set_cpus_allowed(t, &mask[t]);
            }
        }
        st.check_invariants().unwrap();
        for &mm in &mms {
            let mut cids: Vec<u32> =
                running.iter().flatten().filter(|&&t| threads[t].0 == mm).map(|&t| st.cid_of(t).expect("running thread has a cid")).collect();
            let len = cids.len();
            cids.sort_unstable();
            cids.dedup();
            assert_eq!(cids.len(), len, "two running threads of mm {mm} share a cid ({policy:?}, after {op:?})");
            if check_bound {
                // Both the number of cids and their values: user space sizes arrays by it.
                let bound = st.nr_cpus_allowed(mm).min(st.mm_users(mm));
                assert!(st.cids_in_use(mm) <= bound, "mm {mm}: {} cids > {bound} after {op:?}", st.cids_in_use(mm));
                let top = (0..nr_cpus).filter_map(|c| held(st.pcpu_cid(mm, c))).max();
                assert!(top.is_none_or(|c| (c as usize) < bound), "mm {mm}: cid {top:?} >= {bound} after {op:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn running_threads_of_one_mm_never_share_a_cid((nr_cpus, threads, ops) in schedule(true)) {
        play(CidPolicy::Legacy, nr_cpus, &threads, &ops, false);
        play(CidPolicy::CacheLocal, nr_cpus, &threads, &ops, false);
    }

    #[test]
    fn cache_local_cids_stay_below_min_of_allowed_cpus_and_users((nr_cpus, threads, ops) in schedule(false)) {
        play(CidPolicy::CacheLocal, nr_cpus, &threads, &ops, true);
    }

    #[test]
    fn cache_local_gives_a_lone_thread_its_cid_back(
        n in 1usize..=8,
        steps in prop::collection::vec((0usize..8, 0u64..3_000 * MS, any::<bool>()), 1..60),
    ) {
        let mut st = MmCidState::new(8, CidPolicy::CacheLocal, 250);
        let mm = st.add_mm();
        for t in 0..n {
            st.add_thread(mm, t, &CpuMask::single(t), 0);
        }
        let mut first: Vec<Option<u32>> = vec![None; n];
        let mut now = 0;
        for (pick, delay, scan) in steps {
            let t = pick % n;
            now += delay;
            let cid = st.switch_mm_cid(t, None, Some(t), now).unwrap();
            prop_assert_eq!(cid, *first[t].get_or_insert(cid), "thread {} after {} ns", t, delay);
            if scan && st.tick(t, t, now + 1) {
                st.run_scan_work(t, now + 2, &|_| now + 2);
            }
            st.switch_mm_cid(t, Some(t), None, now + 3);
        }
    }
}

// ---------------------------------------------------------------------------------
// Deterministic cases

/// Lowest cid held by no slot of `mm`.
fn lowest_free(st: &MmCidState, mm: usize, nr_cpus: usize) -> u32 {
    let held: Vec<u32> = (0..nr_cpus).filter_map(|c| held(st.pcpu_cid(mm, c))).collect();
    (0..).find(|c| !held.contains(c)).unwrap()
}

#[test]
fn lazy_put_keeps_the_cpu_cid_until_the_scan_reclaims_it() {
    let mut st = MmCidState::new(4, CidPolicy::Legacy, 1000);
    let mm = st.add_mm();
    for t in 0..2 {
        st.add_thread(mm, t, &CpuMask::single(t), 0);
    }
    assert_eq!(st.switch_mm_cid(1, None, Some(1), 0), Some(0));
    st.switch_mm_cid(1, Some(1), None, 1_000);
    assert_eq!(st.pcpu_cid(mm, 1), PcpuCid::Valid(0), "lazy put keeps the slot");
    assert_eq!(st.switch_mm_cid(1, None, Some(1), 50 * MS), Some(0));
    st.switch_mm_cid(1, Some(1), None, 51 * MS);
    // Thread 0 runs 200 ms later; its tick queues the scan, which frees CPU 1's old slot.
    let t = 200 * MS;
    assert_eq!(st.switch_mm_cid(0, None, Some(0), t), Some(1));
    assert!(st.tick(0, 0, t + 1));
    let r = st.run_scan_work(0, t + 2, &|_| t + 2);
    assert!(r.ran && r.cids_released == 1);
    assert_eq!(st.pcpu_cid(mm, 1), PcpuCid::Unset);
    // Weight is now 1 and thread 0 holds cid 1: flagged lazy, freed at its switch-out.
    assert_eq!(st.pcpu_cid(mm, 0), PcpuCid::LazyPut(1));
    assert_eq!(st.cid_of(0), Some(1));
    st.switch_mm_cid(0, Some(0), None, t + 3);
    assert_eq!(st.cids_in_use(mm), 0);
    // A second scan within 100 ms does not run.
    assert_eq!(st.switch_mm_cid(0, None, Some(0), t + 4), Some(0));
    assert!(!st.tick(0, 0, t + 5));
    st.check_invariants().unwrap();
}

#[test]
fn migration_moves_the_cid_with_a_lone_thread() {
    for policy in [CidPolicy::Legacy, CidPolicy::CacheLocal] {
        let mut st = MmCidState::new(8, policy, 250);
        let mm = st.add_mm();
        st.add_thread(mm, 0, &CpuMask::first_n(8), 0);
        st.add_thread(mm, 1, &CpuMask::first_n(8), 0);
        assert_eq!(st.switch_mm_cid(3, None, Some(0), 10), Some(0));
        st.switch_mm_cid(3, Some(0), None, 20);
        st.migrate(0, 3, 5, 30);
        assert_eq!(st.pcpu_cid(mm, 3), PcpuCid::Unset, "{policy:?}");
        assert_eq!(st.pcpu_cid(mm, 5), PcpuCid::Valid(0), "{policy:?}");
        assert_eq!(st.switch_mm_cid(5, None, Some(0), 40), Some(0));
        st.check_invariants().unwrap();
    }
}

#[test]
fn legacy_reassigns_lowest_first_after_the_expiry_and_cache_local_does_not() {
    let order = [[3usize, 1, 0, 2], [0, 2, 3, 1], [2, 3, 1, 0]];
    for policy in [CidPolicy::Legacy, CidPolicy::CacheLocal] {
        let mut st = MmCidState::new(4, policy, 250);
        let mm = st.add_mm();
        for t in 0..4 {
            st.add_thread(mm, t, &CpuMask::single(t), 0);
        }
        // All threads start together (registration): cids 0..3 = CPU number.
        for t in 0..4 {
            assert_eq!(st.switch_mm_cid(t, None, Some(t), 10), Some(t as u32));
        }
        for t in 0..4 {
            st.switch_mm_cid(t, Some(t), None, 20);
        }
        // Then one at a time, 200 ms apart (> SCHED_MM_CID_PERIOD_NS), each burst ticked.
        let mut now = 0;
        let mut changed = 0;
        for round in order {
            for t in round {
                now += 200 * MS;
                let expected = lowest_free(&st, mm, 4);
                let was_unset = st.pcpu_cid(mm, t) == PcpuCid::Unset;
                let cid = st.switch_mm_cid(t, None, Some(t), now).unwrap();
                changed += (cid != t as u32) as usize;
                match policy {
                    CidPolicy::Legacy if now >= 400 * MS => {
                        assert!(was_unset, "the scan reclaimed CPU {t}'s cid");
                        assert_eq!(cid, expected, "lowest free cid");
                        assert!(cid <= 1);
                    }
                    CidPolicy::Legacy => {}
                    CidPolicy::CacheLocal => assert_eq!(cid, t as u32, "recent cid reused"),
                }
                assert!(st.tick(t, t, now + 4 * MS));
                assert!(st.run_scan_work(t, now + 4 * MS, &|_| now + 4 * MS).ran);
                st.switch_mm_cid(t, Some(t), None, now + 5 * MS);
            }
        }
        assert_eq!(changed > 0, policy == CidPolicy::Legacy);
    }
}

#[test]
fn cache_local_6_13_can_exceed_the_bound_after_exits_until_the_scan() {
    // Two CPUs, three threads: a slot left behind by the "many threads" rule outlives
    // the exits, and recent_cid is reused without the ~6.15 `< max_nr_cid` check.
    let mut st = MmCidState::new(2, CidPolicy::CacheLocal, 250);
    let mm = st.add_mm();
    let both = CpuMask::first_n(2);
    for t in 0..3 {
        st.add_thread(mm, t, &both, 0);
    }
    st.switch_mm_cid(0, None, Some(0), 0);
    st.switch_mm_cid(1, None, Some(1), 0);
    st.switch_mm_cid(0, Some(0), None, 10);
    st.switch_mm_cid(1, Some(1), None, 10);
    st.migrate(0, 0, 1, 20); // dst has a cid and mm_users >= nr_cpus_allowed: slot 0 stays
    assert_eq!(st.switch_mm_cid(1, None, Some(0), 30), Some(1));
    st.exit_thread(0, 1, 40);
    st.switch_mm_cid(1, Some(0), None, 40);
    assert_eq!(st.switch_mm_cid(1, None, Some(1), 50), Some(1));
    st.exit_thread(1, 1, 60);
    st.switch_mm_cid(1, Some(1), None, 60);
    assert_eq!(st.switch_mm_cid(1, None, Some(2), 70), Some(1));
    assert_eq!((st.cids_in_use(mm), st.mm_users(mm)), (2, 1));
    assert!(st.tick(1, 2, 200 * MS));
    st.run_scan_work(2, 200 * MS, &|_| 200 * MS);
    st.switch_mm_cid(1, Some(2), None, 200 * MS + 1);
    assert_eq!(st.switch_mm_cid(1, None, Some(2), 200 * MS + 2), Some(1));
    assert_eq!(st.cids_in_use(mm), 1, "the scan reclaimed the stale slot");
}

#[test]
fn cache_local_6_13_can_exceed_the_bound_after_affinity_grows() {
    // Two threads on CPUs {1, 3}: a migration skipped by the "many threads" rule
    // (mm_users >= nr_cpus_allowed) leaves CPU 1's slot behind; once the mask grows the
    // bound is min(3, 2) = 2 but three cids are held until the scan.
    let mut st = MmCidState::new(6, CidPolicy::CacheLocal, 250);
    let mm = st.add_mm();
    st.add_thread(mm, 0, &CpuMask::single(3), 0);
    st.add_thread(mm, 1, &CpuMask::parse_list("1,3").unwrap(), 0);
    assert_eq!(st.switch_mm_cid(3, None, Some(0), 0), Some(0));
    assert_eq!(st.switch_mm_cid(1, None, Some(1), 0), Some(1));
    st.switch_mm_cid(1, Some(1), None, 10);
    st.migrate(1, 1, 3, 20);
    assert_eq!(st.switch_mm_cid(3, Some(0), Some(1), 30), Some(0));
    assert_eq!(st.pcpu_cid(mm, 1), PcpuCid::Valid(1), "left behind");
    st.set_cpus_allowed(1, &CpuMask::parse_list("1,3,4").unwrap());
    st.switch_mm_cid(3, Some(1), Some(0), 40);
    st.migrate(1, 3, 4, 50); // thread 0 is current on CPU 3: no steal
    assert_eq!(st.switch_mm_cid(4, None, Some(1), 60), Some(2));
    assert_eq!((st.cids_in_use(mm), st.nr_cpus_allowed(mm).min(st.mm_users(mm))), (3, 2));
}

#[test]
fn touch_cost_grows_with_the_distance_the_data_comes_from() {
    let m = topo(2, 2, 2, 2); // CPU i and i + 8 are SMT siblings; LLC = core / 2
    let p = CacheParams::for_machine(&m);
    let cost_from = |writer: Option<CpuId>| {
        let mut c = CidCache::new(&m, p.clone());
        if let Some(w) = writer {
            c.touch((0, 0), w, AREA, 0);
        }
        c.touch((0, 0), 0, AREA, 1_000).ns
    };
    let places: Vec<(CpuId, Distance)> =
        vec![(0, Distance::SameCpu), (8, Distance::SmtSibling), (1, Distance::SameLlc), (2, Distance::SamePackage), (4, Distance::OtherPackage)];
    let costs: Vec<Ns> = places
        .iter()
        .map(|&(w, d)| {
            assert_eq!(m.distance(w, 0), d);
            cost_from(Some(w))
        })
        .collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
    assert!(costs[0] < costs[2] && costs[2] < costs[3] && costs[3] < costs[4], "{costs:?}");
    // Never-written data: a copy-on-write fault per page (priced by the engine), after
    // which the page's lines are this core's.
    let mut fresh = CidCache::new(&m, p.clone());
    let first = fresh.touch((0, 0), 0, AREA, 0);
    assert_eq!((first.cow_faults, first.lines_by_distance[0], first.miss_ns), (4, 256, 0));
    // A second touch on the same core is cheaper than one after the other socket wrote.
    let mut c = CidCache::new(&m, p.clone());
    c.touch((0, 0), 0, AREA, 0);
    let again = c.touch((0, 0), 0, AREA, 1_000);
    c.touch((0, 0), 4, AREA, 2_000);
    let after_remote = c.touch((0, 0), 0, AREA, 3_000);
    assert!(again.ns < after_remote.ns);
    assert_eq!(after_remote.lines_by_distance[4], 256);
}

#[test]
fn the_first_write_to_each_pool_page_is_a_copy_on_write_fault() {
    let m = topo(1, 1, 4, 1);
    let mut c = CidCache::new(&m, CacheParams::for_machine(&m));
    // 16 KiB = 4 pages: each faults once, whoever writes it first.
    assert_eq!(c.touch((0, 0), 0, AREA, 0).cow_faults, 4);
    assert_eq!(c.touch((0, 0), 0, AREA, 1_000).cow_faults, 0);
    assert_eq!(c.touch((0, 0), 1, AREA, 2_000).cow_faults, 0);
    // Another slot of the pool (another cid or CPU) has pages of its own.
    assert_eq!(c.touch((0, 1), 1, AREA, 3_000).cow_faults, 4);
    // A half-size area touches (and faults) only its own pages.
    assert_eq!(c.touch((0, 2), 2, AREA / 2, 4_000).cow_faults, 2);
    assert_eq!(c.touch((0, 2), 2, AREA, 5_000).cow_faults, 2);
}

#[test]
fn lines_another_l3_holds_cost_an_ownership_transfer_each() {
    // A pass over lines last written on another L3 pays, per line, the cost table's
    // cross-LLC transfer latency (one transfer in flight at a time, the default
    // rfo_parallelism = 1); lines still in the own L2 cost nothing beyond the loop.
    let m = topo(1, 2, 4, 1); // LLC 0: CPUs 0-3, LLC 1: CPUs 4-7
    let p = CacheParams::for_machine(&m);
    let mut c = CidCache::new(&m, p.clone());
    c.touch((0, 0), 0, AREA, 0);
    let own = c.touch((0, 0), 0, AREA, 1_000);
    assert_eq!((own.lines_by_distance[0], own.miss_ns), (256, 0));
    c.touch((0, 0), 4, AREA, 2_000);
    let remote = c.touch((0, 0), 0, AREA, 3_000);
    assert_eq!(remote.lines_by_distance[3], 256);
    let want = 256.0 * m.cost.cacheline.same_package_ns / p.rfo_parallelism;
    assert!((remote.miss_ns as f64 - want).abs() <= 1.0, "{} vs {want}", remote.miss_ns);
    assert_eq!(remote.instr_ns, own.instr_ns);
    // More transfers in flight overlap them.
    let mut p4 = p.clone();
    p4.rfo_parallelism = 4.0;
    let mut c4 = CidCache::new(&m, p4);
    c4.touch((0, 0), 4, AREA, 0);
    assert!(c4.touch((0, 0), 0, AREA, 1_000).miss_ns * 3 < remote.miss_ns);
    // Written back to the own L3 (the writer's core powered down): an L3 stream, far
    // cheaper than taking the lines from another L3.
    let mut c = CidCache::new(&m, p.clone());
    c.touch((0, 0), 1, AREA, 0);
    c.core_power_down(1, 10);
    let l3 = c.touch((0, 0), 0, AREA, 1_000);
    assert_eq!(l3.lines_by_distance[2], 256);
    assert!(l3.miss_ns > 0 && l3.miss_ns * 4 < remote.miss_ns, "{} vs {}", l3.miss_ns, remote.miss_ns);
}

// ---------------------------------------------------------------------------------
// The seed's benchmark pattern (librseq "intermittent workloads"), state machine only

#[derive(Clone, Copy, Debug, PartialEq)]
enum Indexing {
    CpuId,
    Cid(CidPolicy),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Start(usize),
    Tick(usize, u32),
    End(usize, u32),
}

const WARMUP_PASSES: u64 = 20_000;
const TIMED_PASSES: u32 = 5;
const FORK_NS: Ns = 30 * NSEC_PER_USEC; // pthread_create, per thread
const KERNEL_NS: Ns = 3 * NSEC_PER_USEC; // wakeup, switch, nanosleep entry around a burst
const SLACK_NS: u64 = 50 * NSEC_PER_USEC; // default timer_slack_ns of a nanosleep

struct Outcome {
    mean_ns: f64,
    lines: [u64; 6],
    timed_scans: usize,
}

/// Replays the benchmark: worker i pinned to `cpus[i]`, the main thread (allowed on all
/// of them) creates the workers; all register, meet at a barrier, sleep rank × delay,
/// warm up, then do 5 timed passes separated by delay × T of sleep.
fn intermittent(m: &Machine, cpus: &[CpuId], ix: Indexing, delay: Ns, hz: u32, params: &CacheParams, seed: u64) -> Outcome {
    let t_n = cpus.len();
    let tick_ns = 1_000_000_000 / hz as Ns;
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut rank: Vec<usize> = (0..t_n).collect();
    rank.shuffle(&mut rng);
    let mut st = MmCidState::new(m.nr_cpus(), if let Indexing::Cid(p) = ix { p } else { CidPolicy::Legacy }, hz);
    let mut cache = CidCache::new(m, params.clone());
    let mm = st.add_mm();
    let main = t_n;
    let all = cpus.iter().fold(CpuMask::new(), |mut a, &c| {
        a.set(c);
        a
    });
    st.add_thread(mm, main, &all, 0);
    st.switch_mm_cid(cpus[0], None, Some(main), 0);
    let mut q = BinaryHeap::new();
    for (i, &c) in cpus.iter().enumerate() {
        st.add_thread(mm, i, &CpuMask::single(c), i as Ns * FORK_NS);
        q.push(Reverse((if i == 0 { t_n as Ns * FORK_NS + 1 } else { (i as Ns + 1) * FORK_NS }, Ev::Start(i))));
    }
    st.switch_mm_cid(cpus[0], Some(main), None, t_n as Ns * FORK_NS);
    // Per worker: phase (0 register, 1 barrier, 2 warm-up, 3.. timed), burst id.
    let mut phase = vec![0u32; t_n];
    let mut burst = vec![0u32; t_n];
    let mut registered = 0;
    let (mut total, mut lines, mut timed_scans) = (0u64, [0u64; 6], 0);
    while let Some(Reverse((now, ev))) = q.pop() {
        match ev {
            Ev::Start(w) => {
                let cpu = cpus[w];
                let cid = st.switch_mm_cid(cpu, None, Some(w), now);
                let idx = match ix {
                    Indexing::CpuId => cpu as u32,
                    Indexing::Cid(_) => cid.unwrap(),
                };
                let busy = match phase[w] {
                    0 | 1 => 2 * NSEC_PER_USEC,
                    2 => {
                        let first = cache.touch((0, idx), cpu, AREA, now).ns;
                        let hot = cache.base_pass_ns(cpu, AREA).round() as Ns;
                        let end = now + first + (WARMUP_PASSES - 1) * hot;
                        cache.note_other_work(cpu, 0, end); // the core stays busy
                        let p = cache.touch((0, idx), cpu, AREA, end); // timed pass 0
                        total += p.ns;
                        end - now + p.ns + KERNEL_NS
                    }
                    _ => {
                        let p = cache.touch((0, idx), cpu, AREA, now + KERNEL_NS);
                        total += p.ns;
                        (0..6).for_each(|d| lines[d] += p.lines_by_distance[d]);
                        p.ns + 2 * KERNEL_NS
                    }
                };
                burst[w] += 1;
                let mut t = (now / tick_ns + 1) * tick_ns;
                while t < now + busy {
                    q.push(Reverse((t, Ev::Tick(w, burst[w]))));
                    t += tick_ns;
                }
                q.push(Reverse((now + busy, Ev::End(w, burst[w]))));
            }
            Ev::Tick(w, b) if b == burst[w] && st.tick(cpus[w], w, now) => {
                let r = st.run_scan_work(w, now, &|_| now);
                timed_scans += (r.ran && phase[w] >= 3) as usize;
            }
            Ev::Tick(..) => {}
            Ev::End(w, _) => {
                st.switch_mm_cid(cpus[w], Some(w), None, now);
                phase[w] += 1;
                let wake = |at: Ns, rng: &mut Pcg64| at + rng.random_range(0..SLACK_NS);
                match phase[w] {
                    1 => {
                        registered += 1;
                        if registered == t_n {
                            (0..t_n).for_each(|v| q.push(Reverse((now + 1_000 + v as Ns * 100, Ev::Start(v)))));
                        }
                    }
                    2 => q.push(Reverse((wake(now + rank[w] as Ns * delay, &mut rng), Ev::Start(w)))),
                    p if p < 2 + TIMED_PASSES => q.push(Reverse((wake(now + delay * t_n as Ns, &mut rng), Ev::Start(w)))),
                    _ => {}
                }
            }
        }
    }
    Outcome { mean_ns: total as f64 / (t_n as u32 * TIMED_PASSES) as f64, lines, timed_scans }
}

#[test]
fn intermittent_burst_pattern_cache_local_keeps_data_near() {
    // The seed's machine shape (2 × EPYC 9654: 2 sockets × 12 CCX × 8 cores × SMT2),
    // generic costs until the real preset exists. CPU i and i + 192 are siblings.
    let m = topo(2, 12, 8, 2);
    let configs: [(&str, Vec<CpuId>); 4] = [
        ("8-core/1-L3", (0..8).collect()),
        ("24-core/24-L3", (0..24).map(|l| l * 8).collect()),
        ("192-core/24-L3", (0..192).collect()),
        ("384-thread/24-L3", (0..384).collect()),
    ];
    let deep = CacheParams::for_machine(&m);
    let shallow = CacheParams { private_flush_idle_ns: None, ..deep.clone() };
    for (label, params, delay) in
        [("deep C-state (default)", &deep, 200 * MS), ("deep C-state (default)", &deep, 10 * MS), ("shallow C-states", &shallow, 200 * MS)]
    {
        eprintln!("\n{} ms delay, HZ=250, {label}: mean ns per 16 KiB pass", delay / MS);
        eprintln!(
            "{:<18}{:>9}{:>12}{:>13}{:>8}  legacy lines by place / scans in timed passes",
            "config", "cpu_id", "mm_cid", "cache-local", "ratio"
        );
        for (name, cpus) in &configs {
            let run = |ix| intermittent(&m, cpus, ix, delay, 250, params, 1);
            let (pc, lg, cl) = (run(Indexing::CpuId), run(Indexing::Cid(CidPolicy::Legacy)), run(Indexing::Cid(CidPolicy::CacheLocal)));
            let places: Vec<String> = PLACES.iter().zip(lg.lines).filter(|p| p.1 > 0).map(|(p, n)| format!("{p}={n}")).collect();
            eprintln!(
                "{name:<18}{:>9.0}{:>12.0}{:>13.0}{:>7.2}x  {} / {}",
                pc.mean_ns,
                lg.mean_ns,
                cl.mean_ns,
                lg.mean_ns / cl.mean_ns,
                places.join(" "),
                lg.timed_scans
            );
            assert!(cl.mean_ns <= lg.mean_ns * 1.0001, "{name}: cache-local slower than legacy");
            assert!((cl.mean_ns - pc.mean_ns).abs() <= 0.1 * pc.mean_ns, "{name}: cache-local far from cpu_id");
        }
    }
}
