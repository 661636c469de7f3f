//! TLB shootdown on reclaim: synchronous vs batched flushes on arm64 and x86.
//!
//! Test machines are built here (the real presets live elsewhere); their cost figures are
//! rough public-knowledge latencies for the class of machine, not fitted to any result.

use schedlab_core::cpumask::{CpuId, CpuMask};
use schedlab_core::mm::reclaim::swap_bench::{swap_bench, SwapBench, SwapBenchReport};
use schedlab_core::mm::reclaim::{DeferPolicy, Mapper, PageOutReport, ReclaimModel, ReclaimPath, FREE_BATCH};
use schedlab_core::mm::tlb::IdleCpus;
use schedlab_core::topology::presets::{generic_x86_costs, homogeneous_cpus, topo, Shape};
use schedlab_core::topology::{Arch, CpuTopo, Machine};

/// Snapdragon 888-like phone: 4×A55 1.8 GHz, 3×A78 2.42 GHz, 1×X1 2.84 GHz, one DSU.
fn phone() -> Machine {
    let kinds = [("cortex-a55", 1800, 256), ("cortex-a78", 2420, 870), ("cortex-x1", 2840, 1024)];
    let cpus = (0..8)
        .map(|id| {
            let (core_type, freq_mhz, capacity) = kinds[if id < 4 {
                0
            } else if id < 7 {
                1
            } else {
                2
            }];
            CpuTopo { id, core: id, llc: 0, node: 0, socket: 0, capacity, freq_mhz, core_type: core_type.into() }
        })
        .collect();
    let mut cost = generic_x86_costs();
    // One DSU cluster: core-to-core transfers ~45 ns, LPDDR5 ~115 ns (estimates).
    cost.table.cacheline.same_llc_ns = 45.0;
    cost.table.cacheline.same_package_ns = 45.0;
    cost.table.cacheline.other_package_ns = 45.0;
    cost.table.cacheline.dram_ns = 115.0;
    cost.table.cache.l1d_kib = 64;
    cost.table.cache.l2_kib = 512;
    cost.table.cache.llc_kib = 4096;
    Machine::from_cpus("sd888-like", "test phone", Arch::Arm64, cpus, cost)
}

/// Kunpeng 920-like server: 2 sockets × 2 dies × 32 cores at 2.6 GHz.
fn server() -> Machine {
    let shape = Shape { sockets: 2, nodes_per_socket: 2, llcs_per_node: 1, cores_per_llc: 32, smt: 1 };
    let mut cost = generic_x86_costs();
    cost.table.cacheline.same_llc_ns = 45.0;
    cost.table.cacheline.same_package_ns = 110.0;
    cost.table.cacheline.other_package_ns = 220.0;
    cost.table.cacheline.dram_ns = 110.0;
    Machine::from_cpus("kunpeng920-like", "test server", Arch::Arm64, homogeneous_cpus(shape, 2600, "tsv110"), cost)
}

/// `n` CPUs in LLCs of up to 32, on `arch`.
fn flat(arch: Arch, n: usize) -> Machine {
    let llcs = n.div_ceil(32);
    let shape = Shape { sockets: 1, nodes_per_socket: 1, llcs_per_node: llcs, cores_per_llc: n.min(32), smt: 1 };
    Machine::from_cpus("flat", "test", arch, homogeneous_cpus(shape, 2500, "generic"), generic_x86_costs())
}

fn before_after(m: &Machine, path: ReclaimPath) -> (ReclaimModel, ReclaimModel) {
    (ReclaimModel::new(m, false, DeferPolicy::Never).with_path(path), ReclaimModel::new(m, true, DeferPolicy::Always).with_path(path))
}

/// `k` mappers, each having run on CPU 0 and one other CPU.
fn mappers(n: usize, k: usize) -> Vec<Mapper> {
    (0..k)
        .map(|i| {
            let mut mask = CpuMask::single(0);
            if n > 1 {
                mask.set(1 + i % (n - 1));
            }
            Mapper::reader(mask)
        })
        .collect()
}

fn run(model: &ReclaimModel, pages: u64, ms: &[Mapper], idle: &IdleCpus) -> PageOutReport {
    model.page_out(0, pages, ms, idle)
}

#[test]
fn batched_never_waits_more_and_waits_once_per_batch() {
    for arch in [Arch::Arm64, Arch::X86_64] {
        for n in [2, 8, 64] {
            let m = flat(arch, n);
            for path in [ReclaimPath::MadvPageout, ReclaimPath::Kswapd] {
                for k in [1, 3, 10] {
                    if path == ReclaimPath::MadvPageout && k > 1 {
                        continue;
                    }
                    let ms = mappers(n, k);
                    let (sync, bat) = before_after(&m, path);
                    for free in [false, true] {
                        let bat = bat.clone().with_free_batch_flush(free);
                        let (s, b) = (run(&sync, 200, &ms, &IdleCpus::none()), run(&bat, 200, &ms, &IdleCpus::none()));
                        let ctx = format!("{arch:?} n={n} {path:?} k={k} free={free}");
                        assert!(b.completion_waits <= s.completion_waits, "{ctx}");
                        assert!(b.ipi_rounds <= s.ipi_rounds, "{ctx}");
                        let expected: u64 = bat.shrink_batches(200).iter().map(|&size| if free { size.div_ceil(FREE_BATCH) } else { 1 }).sum();
                        assert_eq!(b.batches, expected, "{ctx}");
                        assert_eq!(s.batches, 0, "{ctx}");
                        match arch {
                            Arch::Arm64 => {
                                assert_eq!(s.completion_waits, 200 * k as u64, "{ctx}");
                                assert_eq!(b.completion_waits, b.batches, "{ctx}");
                            }
                            Arch::X86_64 => {
                                assert_eq!(s.ipi_rounds, 200 * k as u64, "{ctx}");
                                assert_eq!(b.ipi_rounds, b.batches, "{ctx}");
                                assert_eq!(b.completion_waits + s.completion_waits, 0);
                            }
                        }
                        assert!(b.cpu_ns < s.cpu_ns, "{ctx}");
                    }
                }
            }
        }
    }
}

#[test]
fn no_page_stays_mapped_after_page_out() {
    for arch in [Arch::Arm64, Arch::X86_64] {
        let m = flat(arch, 16);
        for k in [1, 2, 7, 100] {
            let ms = mappers(16, k);
            let (sync, bat) = before_after(&m, ReclaimPath::Kswapd);
            for model in [&sync, &bat] {
                let r = run(model, 300, &ms, &IdleCpus::none());
                assert_eq!(r.still_mapped, 0);
                assert_eq!(r.pages_unmapped, 300);
                assert_eq!(r.ptes_cleared, 300 * k as u64);
            }
            // MADV_PAGEOUT leaves shared folios alone: nothing is unmapped, nothing flushed.
            let (_, madv) = before_after(&m, ReclaimPath::MadvPageout);
            let r = run(&madv, 300, &ms, &IdleCpus::none());
            if k > 1 {
                assert_eq!((r.skipped, r.pages_unmapped, r.ptes_cleared, r.batches), (300, 0, 0, 0));
            } else {
                assert_eq!((r.skipped, r.pages_unmapped, r.still_mapped), (0, 300, 0));
            }
        }
    }
}

type IdleOf<'a> = &'a dyn Fn(&CpuMask) -> IdleCpus;

fn arm_saving(n: usize, idle_of: impl Fn(&CpuMask) -> IdleCpus) -> (u64, u64) {
    let m = flat(Arch::Arm64, n);
    let (sync, bat) = before_after(&m, ReclaimPath::MadvPageout);
    let ms = [Mapper::reader(CpuMask::single(0))];
    let idle = idle_of(&m.all_cpus());
    let (s, b) = (run(&sync, 256, &ms, &idle), run(&bat, 256, &ms, &idle));
    (s.cpu_ns - b.cpu_ns, s.cpu_ns)
}

#[test]
fn saving_grows_with_the_domain_and_is_near_zero_on_one_cpu() {
    let shallow = |all: &CpuMask| IdleCpus::shallow_except(all, 0);
    let states: [(&str, IdleOf); 2] = [("busy", &|_| IdleCpus::none()), ("wfi", &shallow)];
    for (name, idle) in states {
        let mut last = 0;
        for n in [1, 2, 4, 8, 16, 32, 64, 128] {
            let (saving, total) = arm_saving(n, idle);
            assert!(saving > last || n == 1, "{name}: n={n} saves {saving}, not more than {last}");
            last = saving;
            if n == 1 {
                assert!((saving as f64) < 0.01 * total as f64, "one CPU saves {saving} of {total}");
            }
        }
        let (one, _) = arm_saving(1, idle);
        let (eight, _) = arm_saving(8, idle);
        assert!(one * 3 < eight, "{name}: 1 CPU saves {one}, 8 CPUs {eight}");
    }
    // Powered-down CPUs are outside the DVM domain: the machine behaves like one CPU.
    let (one, _) = arm_saving(1, |_| IdleCpus::none());
    for n in [8, 128] {
        let (off, _) = arm_saving(n, |all| IdleCpus::off_except(all, 0));
        assert!(off.abs_diff(one) <= 256, "n={n}: {off} vs {one}");
    }
}

#[test]
fn x86_process_that_ran_on_one_cpu_sends_no_ipi() {
    let m = topo(1, 1, 8, 1);
    for path in [ReclaimPath::MadvPageout, ReclaimPath::Kswapd] {
        let (sync, bat) = before_after(&m, path);
        let ms = [Mapper::reader(CpuMask::single(3))];
        for model in [&sync, &bat] {
            let r = model.page_out(3, 64, &ms, &IdleCpus::none());
            assert_eq!((r.ipis, r.ipi_rounds, r.batches, r.defer_ns), (0, 0, 0, 0));
            assert!(r.remote_ns.is_empty());
        }
        let (s, b) = (sync.page_out(3, 64, &ms, &IdleCpus::none()), bat.page_out(3, 64, &ms, &IdleCpus::none()));
        assert_eq!(s, b, "no remote CPU: x86 never defers");
        // ptep_clear_flush: the PTE exchange, and INVLPG where the mm is loaded.
        let (invlpg, xchg) = (bat.tlb.invlpg_ns(3), bat.tlb.pte_xchg_ns(3));
        assert_eq!(s.flush_ns, 64 * xchg + if path == ReclaimPath::MadvPageout { 64 * invlpg } else { 0 });
    }
    // A second CPU that is idle (lazy TLB) makes x86 defer, but gets no IPI.
    let (_, bat) = before_after(&m, ReclaimPath::MadvPageout);
    let lazy = IdleCpus { shallow: CpuMask::single(5), off: CpuMask::new() };
    let r = bat.page_out(3, 64, &[Mapper::reader(CpuMask::parse_list("3,5").unwrap())], &lazy);
    assert_eq!((r.batches, r.ipis), (1, 0));
}

fn x86_mappers(n: usize, k: usize) -> Vec<Mapper> {
    vec![Mapper::reader(CpuMask::first_n(n)); k]
}

#[test]
fn sweeps_of_cpus_and_mappers_give_monotone_savings() {
    let cpus = [2, 4, 8, 16, 32, 64, 128];
    let ks = [1, 2, 5, 10, 20, 50, 100];
    for arch in [Arch::Arm64, Arch::X86_64] {
        let mut table = vec![vec![0i64; ks.len()]; cpus.len()];
        for (i, &n) in cpus.iter().enumerate() {
            let m = flat(arch, n);
            let (sync, bat) = before_after(&m, ReclaimPath::Kswapd);
            for (j, &k) in ks.iter().enumerate() {
                let ms = if arch == Arch::Arm64 { mappers(n, k) } else { x86_mappers(n, k) };
                let (s, b) = (run(&sync, 64, &ms, &IdleCpus::none()), run(&bat, 64, &ms, &IdleCpus::none()));
                table[i][j] = s.cpu_ns as i64 - b.cpu_ns as i64;
                assert!(table[i][j] > 0, "{arch:?} n={n} k={k}");
                if arch == Arch::X86_64 {
                    let stolen = |r: &PageOutReport| r.remote_ns.iter().map(|x| x.1).sum::<u64>();
                    assert!(stolen(&b) < stolen(&s), "{arch:?} n={n} k={k}: batching steals more");
                }
            }
        }
        for i in 0..cpus.len() {
            for j in 0..ks.len() {
                if i > 0 {
                    assert!(table[i][j] >= table[i - 1][j], "{arch:?}: not monotone in CPUs at k={}", ks[j]);
                }
                if j > 0 {
                    assert!(table[i][j] >= table[i][j - 1], "{arch:?}: not monotone in mappers at n={}", cpus[i]);
                }
            }
        }
    }
}

#[test]
fn cpu_threshold_policies_follow_the_review_versions() {
    let ms = [Mapper::reader(CpuMask::single(0))];
    for (n, v6_defers, v4_defers) in [(4, false, false), (6, false, true), (8, true, true)] {
        let m = flat(Arch::Arm64, n);
        let v6 = ReclaimModel::new(&m, true, DeferPolicy::CpuThreshold(8));
        let v4 = ReclaimModel::new(&m, true, DeferPolicy::CpuThreshold(5));
        assert_eq!(run(&v6, 32, &ms, &IdleCpus::none()).batches > 0, v6_defers, "v6 n={n}");
        assert_eq!(run(&v4, 32, &ms, &IdleCpus::none()).batches > 0, v4_defers, "v4 n={n}");
    }
    let m = flat(Arch::Arm64, 8);
    let never = ReclaimModel::new(&m, true, DeferPolicy::Never);
    let off = ReclaimModel::new(&m, false, DeferPolicy::Always);
    assert_eq!(run(&never, 32, &ms, &IdleCpus::none()), run(&off, 32, &ms, &IdleCpus::none()));
}

fn bench(m: &Machine, cpu: CpuId, batch: bool, idle: IdleCpus) -> SwapBenchReport {
    let policy = if batch { DeferPolicy::Always } else { DeferPolicy::Never };
    swap_bench(&ReclaimModel::new(m, batch, policy), &SwapBench::seed(cpu, idle))
}

fn line(label: &str, r: &SwapBenchReport) -> String {
    format!(
        "{label:<28} {:6.2}user {:6.2}system {:6.2}elapsed  ptep_clear_flush {:5.2}%  tlb batch {:5.2}%  waits {}",
        r.user_ns as f64 * 1e-9,
        r.sys_ns as f64 * 1e-9,
        r.elapsed_ns as f64 * 1e-9,
        100.0 * r.ptep_clear_flush_share(),
        100.0 * r.tlb_batch_ns as f64 / r.elapsed_ns as f64,
        r.completion_waits,
    )
}

#[test]
fn swap_bench_on_phone_and_server() {
    let mut saved = Vec::new();
    for (m, cpu) in [(phone(), 4), (server(), 4)] {
        let all = m.all_cpus();
        let states = [
            ("others running", IdleCpus::none()),
            ("others idle in WFI", IdleCpus::shallow_except(&all, cpu)),
            ("others powered down", IdleCpus::off_except(&all, cpu)),
        ];
        eprintln!("swap_bench on {} (CPU {cpu}, {} CPUs): 1 MiB, 10000 iterations", m.name, m.nr_cpus());
        for (what, idle) in states {
            let before = bench(&m, cpu, false, idle);
            let after = bench(&m, cpu, true, idle);
            eprintln!("  {what}");
            eprintln!("    {}", line("before (sync flush)", &before));
            eprintln!("    {}", line("after (batched, Always)", &after));
            let cut = 1.0 - after.elapsed_ns as f64 / before.elapsed_ns as f64;
            eprintln!("    elapsed cut {:.2}%", 100.0 * cut);
            assert!(after.elapsed_ns < before.elapsed_ns);
            assert_eq!(after.ptep_clear_flush_ns, 0);
            assert_eq!(before.pages_out, 2_560_000);
            assert_eq!(after.completion_waits, 256 + 9_999, "first round dirty: one wait per page");
            saved.push((m.nr_cpus(), what, cut));
        }
        let v6 = ReclaimModel::new(&m, true, DeferPolicy::CpuThreshold(8));
        let th = swap_bench(&v6, &SwapBench::seed(cpu, IdleCpus::none()));
        assert_eq!(th, bench(&m, cpu, true, IdleCpus::none()), "both machines have >= 8 CPUs");
    }
    let cut = |n: usize, w: &str| saved.iter().find(|s| s.0 == n && s.1 == w).unwrap().2;
    assert!(cut(128, "others idle in WFI") > cut(8, "others idle in WFI"));
    assert!(cut(128, "others running") > cut(8, "others running"));
    // x86: a single-threaded process has no remote CPU, so nothing is deferred.
    let x = topo(1, 1, 8, 1);
    let (b, a) = (bench(&x, 4, false, IdleCpus::none()), bench(&x, 4, true, IdleCpus::none()));
    eprintln!("swap_bench on {} (x86): {}", x.name, line("before = after", &b));
    assert_eq!(a, b);
    assert_eq!(a.ipis, 0);
}
