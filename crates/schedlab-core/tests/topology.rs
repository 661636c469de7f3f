//! Presets, sched domains, sharing distances and the sysfs reader.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use schedlab_core::cpumask::CpuMask;
use schedlab_core::topology::presets::{self, Cluster, PRESET_NAMES};
use schedlab_core::topology::{sysfs, Arch, Distance, DomainLevel, Machine, SdFlags};

use DomainLevel::{Cls, Mc, Numa, Pkg, Smt};

/// What a preset must look like.
struct Expect {
    name: &'static str,
    arch: Arch,
    cpus: usize,
    cores: usize,
    llcs: usize,
    nodes: usize,
    sockets: usize,
    smt: usize,
    /// (level, span weight, number of groups) of every CPU's hierarchy, lowest first.
    levels: &'static [(DomainLevel, usize, usize)],
    /// Sample CPU pairs and their sharing distance.
    pairs: &'static [(usize, usize, Distance)],
}

const EXPECT: &[Expect] = &[
    Expect {
        name: "ryzen-7950x",
        arch: Arch::X86_64,
        cpus: 32,
        cores: 16,
        llcs: 2,
        nodes: 1,
        sockets: 1,
        smt: 2,
        levels: &[(Smt, 2, 2), (Mc, 16, 8), (Pkg, 32, 2)],
        pairs: &[
            (0, 0, Distance::SameCpu),
            (0, 16, Distance::SmtSibling),
            (8, 24, Distance::SmtSibling),
            (0, 7, Distance::SameLlc),
            (0, 23, Distance::SameLlc),
            (0, 8, Distance::SamePackage),
            (7, 24, Distance::SamePackage),
        ],
    },
    Expect {
        name: "milan-72",
        arch: Arch::X86_64,
        cpus: 72,
        cores: 36,
        llcs: 6,
        nodes: 1,
        sockets: 1,
        smt: 2,
        levels: &[(Smt, 2, 2), (Mc, 12, 6), (Pkg, 72, 6)],
        pairs: &[
            (0, 36, Distance::SmtSibling),
            (35, 71, Distance::SmtSibling),
            (0, 5, Distance::SameLlc),
            (0, 41, Distance::SameLlc),
            (0, 6, Distance::SamePackage),
            (0, 71, Distance::SamePackage),
        ],
    },
    Expect {
        name: "bergamo",
        arch: Arch::X86_64,
        cpus: 176,
        cores: 88,
        llcs: 11,
        nodes: 1,
        sockets: 1,
        smt: 2,
        levels: &[(Smt, 2, 2), (Mc, 16, 8), (Pkg, 176, 11)],
        pairs: &[
            (0, 88, Distance::SmtSibling),
            (87, 175, Distance::SmtSibling),
            (0, 7, Distance::SameLlc),
            (0, 8, Distance::SamePackage),
            (80, 87, Distance::SameLlc),
            (79, 80, Distance::SamePackage),
        ],
    },
    Expect {
        name: "epyc-9654-2s",
        arch: Arch::X86_64,
        cpus: 384,
        cores: 192,
        llcs: 24,
        nodes: 2,
        sockets: 2,
        smt: 2,
        levels: &[(Smt, 2, 2), (Mc, 16, 8), (Pkg, 192, 12), (Numa, 384, 2)],
        pairs: &[
            (0, 192, Distance::SmtSibling),
            (0, 7, Distance::SameLlc),
            (0, 8, Distance::SamePackage),
            (0, 95, Distance::SamePackage),
            (95, 96, Distance::OtherPackage),
            (0, 288, Distance::OtherPackage),
            (191, 383, Distance::SmtSibling),
        ],
    },
    Expect {
        name: "zen3-2s",
        arch: Arch::X86_64,
        cpus: 256,
        cores: 128,
        llcs: 16,
        nodes: 2,
        sockets: 2,
        smt: 2,
        levels: &[(Smt, 2, 2), (Mc, 16, 8), (Pkg, 128, 8), (Numa, 256, 2)],
        pairs: &[
            (0, 128, Distance::SmtSibling),
            (0, 7, Distance::SameLlc),
            (0, 63, Distance::SamePackage),
            (0, 64, Distance::OtherPackage),
            (63, 190, Distance::SameLlc),
        ],
    },
    Expect {
        name: "pixel6",
        arch: Arch::Arm64,
        cpus: 8,
        cores: 8,
        llcs: 1,
        nodes: 1,
        sockets: 1,
        smt: 1,
        levels: &[(Mc, 8, 8)],
        pairs: &[(0, 3, Distance::SameLlc), (3, 4, Distance::SameLlc), (0, 7, Distance::SameLlc)],
    },
    Expect {
        name: "snapdragon-888",
        arch: Arch::Arm64,
        cpus: 8,
        cores: 8,
        llcs: 1,
        nodes: 1,
        sockets: 1,
        smt: 1,
        levels: &[(Mc, 8, 8)],
        pairs: &[(0, 7, Distance::SameLlc), (6, 7, Distance::SameLlc)],
    },
    Expect {
        name: "kunpeng-920-2s",
        arch: Arch::Arm64,
        cpus: 128,
        cores: 128,
        llcs: 4,
        nodes: 4,
        sockets: 2,
        smt: 1,
        levels: &[(Cls, 4, 4), (Mc, 32, 8), (Numa, 64, 2), (Numa, 128, 2)],
        pairs: &[
            (0, 31, Distance::SameLlc),
            (0, 32, Distance::SamePackage),
            (31, 32, Distance::SamePackage),
            (0, 64, Distance::OtherPackage),
            (63, 64, Distance::OtherPackage),
            (96, 127, Distance::SameLlc),
        ],
    },
    Expect {
        name: "xeon-80",
        arch: Arch::X86_64,
        cpus: 80,
        cores: 40,
        llcs: 2,
        nodes: 2,
        sockets: 2,
        smt: 2,
        levels: &[(Smt, 2, 2), (Mc, 40, 20), (Numa, 80, 2)],
        pairs: &[
            (0, 40, Distance::SmtSibling),
            (0, 19, Distance::SameLlc),
            (0, 59, Distance::SameLlc),
            (0, 20, Distance::OtherPackage),
            (19, 20, Distance::OtherPackage),
        ],
    },
];

fn get(name: &str) -> Machine {
    presets::preset(name).unwrap_or_else(|| panic!("preset {name} is missing"))
}

#[test]
fn every_listed_preset_is_expected_and_exists() {
    let expected: Vec<&str> = EXPECT.iter().map(|e| e.name).collect();
    assert_eq!(PRESET_NAMES, expected.as_slice());
    for name in PRESET_NAMES {
        let m = get(name);
        assert_eq!(m.name, *name);
        assert!(name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{name} is not lower-case kebab");
    }
    assert!(presets::preset("ryzen-7950X").is_none());
    assert!(presets::preset("").is_none());
}

#[test]
fn preset_shapes() {
    for e in EXPECT {
        let m = get(e.name);
        assert_eq!(m.arch, e.arch, "{}: arch", e.name);
        assert_eq!(m.nr_cpus(), e.cpus, "{}: CPUs", e.name);
        assert_eq!(m.core_span.len(), e.cores, "{}: cores", e.name);
        assert_eq!(m.llc_span.len(), e.llcs, "{}: LLCs", e.name);
        assert_eq!(m.node_span.len(), e.nodes, "{}: nodes", e.name);
        assert_eq!(m.nr_sockets(), e.sockets, "{}: sockets", e.name);
        assert_eq!(m.has_smt(), e.smt > 1, "{}: SMT", e.name);
        for (i, c) in m.cpus.iter().enumerate() {
            assert_eq!(c.id, i, "{}: CPU ids follow their index", e.name);
        }
        // Every span is non-empty and the spans of one kind partition the machine.
        for spans in [&m.core_span, &m.llc_span, &m.node_span] {
            let mut union = CpuMask::new();
            let mut total = 0;
            for s in spans.iter() {
                assert!(!s.is_empty(), "{}: empty span", e.name);
                union = union.or(s);
                total += s.weight();
            }
            assert_eq!(union, m.all_cpus(), "{}", e.name);
            assert_eq!(total, m.nr_cpus(), "{}: spans overlap", e.name);
        }
        // Equal-sized units on these presets.
        assert!(m.core_span.iter().all(|s| s.weight() == e.smt), "{}: SMT width", e.name);
        assert!(m.llc_span.iter().all(|s| s.weight() == e.cpus / e.llcs), "{}: LLC size", e.name);
        assert!(m.node_span.iter().all(|s| s.weight() == e.cpus / e.nodes), "{}: node size", e.name);
        // Nested: an LLC is inside a node, a node inside a socket.
        for c in &m.cpus {
            assert!(m.llc_span[c.llc].is_subset(&m.node_span[c.node]), "{}: LLC crosses nodes", e.name);
            assert!(m.node_span[c.node].iter().all(|o| m.cpus[o].socket == c.socket), "{}", e.name);
        }
    }
}

#[test]
fn smt_siblings_are_i_and_i_plus_cores() {
    for e in EXPECT {
        let m = get(e.name);
        for i in 0..e.cores {
            let mut want = CpuMask::single(i);
            if e.smt == 2 {
                want.set(i + e.cores);
                assert_eq!(m.distance(i, i + e.cores), Distance::SmtSibling, "{}: {i}", e.name);
            }
            assert_eq!(*m.smt_mask(i), want, "{}: siblings of {i}", e.name);
        }
    }
}

#[test]
fn sample_distances() {
    for e in EXPECT {
        let m = get(e.name);
        for &(a, b, d) in e.pairs {
            assert_eq!(m.distance(a, b), d, "{}: distance({a}, {b})", e.name);
            assert_eq!(m.distance(b, a), d, "{}: distance({b}, {a})", e.name);
            assert_eq!(m.share_llc(a, b), d <= Distance::SameLlc, "{}: share_llc({a}, {b})", e.name);
        }
    }
}

#[test]
fn domain_levels_as_the_kernel_builds_them() {
    for e in EXPECT {
        let m = get(e.name);
        for cpu in 0..m.nr_cpus() {
            let got: Vec<(DomainLevel, usize, usize)> = m.domains[cpu].iter().map(|d| (d.level, d.span_weight(), d.groups.len())).collect();
            assert_eq!(got, e.levels, "{}: CPU {cpu}", e.name);
        }
    }
}

#[test]
fn domain_groups_are_the_child_spans() {
    for e in EXPECT {
        let m = get(e.name);
        for cpu in 0..m.nr_cpus() {
            let doms = &m.domains[cpu];
            let mut child_span = CpuMask::single(cpu);
            for (k, d) in doms.iter().enumerate() {
                let what = format!("{}: CPU {cpu} level {k} {:?}", e.name, d.level);
                assert!(d.span.test(cpu), "{what}: span misses its CPU");
                assert!(child_span.is_subset(&d.span) && child_span != d.span, "{what}: not above its child");
                assert_eq!(d.groups[d.local_group], child_span, "{what}: local group");
                let mut union = CpuMask::new();
                for (g, group) in d.groups.iter().enumerate() {
                    assert!(union.and(group).is_empty(), "{what}: groups overlap");
                    union = union.or(group);
                    let first = group.first().expect("empty group");
                    let want = if k == 0 { CpuMask::single(first) } else { m.domains[first][k - 1].span };
                    assert_eq!(*group, want, "{what}: group {g} is not a child span");
                }
                assert_eq!(union, d.span, "{what}: groups do not cover the span");
                assert_eq!(d.min_interval_ms, d.span_weight() as u64, "{what}");
                assert_eq!(d.max_interval_ms, 2 * d.span_weight() as u64, "{what}");
                child_span = d.span;
            }
            assert_eq!(child_span, m.all_cpus(), "{}: CPU {cpu}: top level is not the machine", e.name);
        }
    }
}

#[test]
fn domain_flags() {
    for e in EXPECT {
        let m = get(e.name);
        let asym = e.arch == Arch::Arm64 && e.name != "kunpeng-920-2s";
        for d in &m.domains[0] {
            let f = d.flags;
            assert_eq!(f.has(SdFlags::SHARE_CPUCAPACITY), d.level == Smt, "{} {:?}", e.name, d.level);
            assert_eq!(f.has(SdFlags::SHARE_LLC), d.level <= Mc, "{} {:?}", e.name, d.level);
            assert_eq!(f.has(SdFlags::NUMA), d.level == Numa, "{} {:?}", e.name, d.level);
            assert_eq!(f.has(SdFlags::SERIALIZE), d.level == Numa, "{} {:?}", e.name, d.level);
            assert_eq!(f.has(SdFlags::PREFER_SIBLING), d.level != Numa, "{} {:?}", e.name, d.level);
            assert_eq!(f.has(SdFlags::ASYM_CPUCAPACITY), asym, "{} {:?}", e.name, d.level);
            let pct = if d.level == Smt { 110 } else { 117 };
            assert_eq!(d.imbalance_pct, pct, "{} {:?}", e.name, d.level);
        }
    }
}

#[test]
fn phone_capacities_and_clocks_follow_the_device_trees() {
    let caps = |m: &Machine| m.cpus.iter().map(|c| c.capacity).collect::<Vec<_>>();
    let mhz = |m: &Machine| m.cpus.iter().map(|c| c.freq_mhz).collect::<Vec<_>>();
    let p6 = get("pixel6");
    assert_eq!(caps(&p6), [160, 160, 160, 160, 498, 498, 1024, 1024]);
    assert_eq!(mhz(&p6), [1803, 1803, 1803, 1803, 2253, 2253, 2802, 2802]);
    assert_eq!(p6.cpus[0].core_type, "cortex-a55");
    assert_eq!(p6.cpus[4].core_type, "cortex-a76");
    assert_eq!(p6.cpus[7].core_type, "cortex-x1");
    let sd = get("snapdragon-888");
    assert_eq!(caps(&sd), [325, 325, 325, 325, 828, 828, 828, 1024]);
    assert_eq!(mhz(&sd), [1804, 1804, 1804, 1804, 2419, 2419, 2419, 2841]);
    assert_eq!(sd.cpus[6].core_type, "cortex-a78");
    assert_eq!(sd.cpus[7].core_type, "cortex-x1");
    assert!(p6.is_asymmetric() && sd.is_asymmetric());
    for name in ["ryzen-7950x", "epyc-9654-2s", "kunpeng-920-2s", "xeon-80"] {
        assert!(get(name).cpus.iter().all(|c| c.capacity == 1024), "{name}");
    }
}

#[test]
fn dt_capacity_normalisation_rounds_down_like_the_kernel() {
    let cl = |dmips, khz| Cluster { cores: 1, core_type: "x", dmips_mhz: dmips, max_khz: khz };
    assert_eq!(presets::dt_capacities(&[cl(512, 1_000_000), cl(1024, 1_000_000)]), [512, 1024]);
    // 1023/1024 of the top rounds down to 1022.999 -> 1022.
    assert_eq!(presets::dt_capacities(&[cl(1023, 1_999_999), cl(1024, 2_000_000)])[0], 1022);
    assert_eq!(presets::dt_capacities(&[]), Vec::<u32>::new());
}

#[test]
fn preset_clocks() {
    for (name, mhz) in [
        ("ryzen-7950x", 4500),
        ("milan-72", 3245),
        ("bergamo", 2250),
        ("epyc-9654-2s", 2400),
        ("zen3-2s", 2000),
        ("kunpeng-920-2s", 2600),
        ("xeon-80", 2400),
    ] {
        assert!(get(name).cpus.iter().all(|c| c.freq_mhz == mhz), "{name}");
    }
}

#[test]
fn descriptions_are_one_line_and_state_assumptions() {
    for name in PRESET_NAMES {
        let m = get(name);
        assert!(m.description.len() > 40, "{name}: description too short");
        assert!(!m.description.contains('\n') && !m.description.contains("  "), "{name}: {}", m.description);
    }
    assert!(get("milan-72").description.contains("ASSUMED"));
    assert!(get("zen3-2s").description.contains("ASSUMED"));
    assert!(get("xeon-80").description.contains("ASSUMED"));
    assert!(get("bergamo").description.contains("CCD"));
    assert!(get("ryzen-7950x").description.contains("4.5 GHz"));
}

#[test]
fn cost_tables_are_physical() {
    let mut tables: Vec<(String, schedlab_core::cost::CostTable)> = PRESET_NAMES.iter().map(|n| (n.to_string(), get(n).cost)).collect();
    tables.push(("generic_x86".into(), presets::generic_x86_costs().table));
    tables.push(("generic_arm64".into(), schedlab_core::topology::preset_costs::generic_arm64_costs().table));
    for (name, c) in tables {
        let l = &c.cacheline;
        let by_distance: Vec<f64> = Distance::ALL.iter().map(|&d| l.at(d)).collect();
        assert!(by_distance.iter().all(|v| v.is_finite() && *v > 0.0), "{name}: {by_distance:?}");
        assert!(by_distance.windows(2).all(|w| w[0] <= w[1]), "{name}: not monotone {by_distance:?}");
        assert!(l.dram_ns > l.same_llc_ns, "{name}: DRAM faster than the LLC");
        for v in [
            c.miss_parallelism,
            c.context_switch_ns,
            c.ipi_send_ns,
            c.ipi_receive_ns,
            c.migration_ns,
            c.fork_ns,
            c.kernel.syscall_entry_ns,
            c.kernel.irq_entry_ns,
            c.kernel.ttwu_ns,
        ] {
            assert!(v.is_finite() && v > 0.0, "{name}: {v}");
        }
        assert!(c.cache.l1d_kib < c.cache.l2_kib && c.cache.l2_kib < c.cache.llc_kib, "{name}: {:?}", c.cache);
        // A refill from far away costs more than from nearby.
        assert!(c.refill_ns(1 << 20, Distance::SamePackage) >= c.refill_ns(1 << 20, Distance::SameLlc), "{name}");
    }
    // Figures that distinguish the families (sourced in preset_costs.rs).
    assert_eq!(get("ryzen-7950x").cost.cacheline.smt_sibling_ns, 5.3);
    assert_eq!(get("epyc-9654-2s").cost.cacheline.other_package_ns, 196.0);
    assert_eq!(get("bergamo").cost.cache.llc_kib, 16 * 1024);
    assert_eq!(get("epyc-9654-2s").cost.cache.llc_kib, 32 * 1024);
    // intel_idle's skx_cstates: C1 exits in 2 us.
    assert_eq!(get("xeon-80").idle_drivers[0].states[1].exit_latency_ns, 2000);
}

/// Every preset's idle states are ordered as cpuidle requires: exit latency and target
/// residency grow with depth, and the deepest state of every preset powers the core down.
#[test]
fn idle_state_tables_are_ordered() {
    for name in PRESET_NAMES {
        let m = get(name);
        assert_eq!(m.cpu_idle_driver.len(), m.nr_cpus());
        for d in &m.idle_drivers {
            assert!(!d.states.is_empty(), "{name}");
            for w in d.states.windows(2) {
                assert!(w[0].exit_latency_ns <= w[1].exit_latency_ns, "{name} {}: {} before {}", d.name, w[0].name, w[1].name);
                assert!(w[0].target_residency_ns <= w[1].target_residency_ns, "{name} {}", d.name);
            }
            assert!(d.states.last().unwrap().loses_private_caches, "{name} {}: no core power-down state", d.name);
            assert!(!d.states[0].loses_private_caches, "{name}: state 0 keeps caches");
        }
    }
}

#[test]
fn synthetic_topo_machine() {
    let m = presets::topo(2, 3, 4, 2);
    assert_eq!(m.nr_cpus(), 48);
    assert_eq!(m.llc_span.len(), 6);
    assert_eq!(m.node_span.len(), 2);
    let got: Vec<(DomainLevel, usize)> = m.domains[0].iter().map(|d| (d.level, d.span_weight())).collect();
    assert_eq!(got, [(Smt, 2), (Mc, 8), (Pkg, 24), (Numa, 48)]);
    assert_eq!(m.distance(0, 24), Distance::SmtSibling);
    assert_eq!(m.distance(0, 12), Distance::OtherPackage);
    assert_eq!(m.cost, presets::generic_x86_costs().table);
}

// ---- sysfs ----------------------------------------------------------------------

/// A temporary directory removed on drop.
struct TempTree(PathBuf);

impl TempTree {
    fn new(tag: &str) -> TempTree {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("schedlab-sysfs-{}-{n}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempTree(dir)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("{text}\n")).unwrap();
    }

    fn cpu(&self) -> PathBuf {
        self.0.join("cpu")
    }

    fn node(&self) -> PathBuf {
        self.0.join("node")
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// 2 packages x 2 cores x SMT2, x86 numbering (CPU i and i+4 are siblings), core_id
/// restarting at 0 in each package, an L3 and a node per package.
fn two_socket_tree(tag: &str) -> TempTree {
    let t = TempTree::new(tag);
    t.write("cpu/online", "0-7");
    for cpu in 0..8 {
        let core = cpu % 4;
        let pkg = core / 2;
        let d = format!("cpu/cpu{cpu}");
        t.write(&format!("{d}/topology/physical_package_id"), &pkg.to_string());
        t.write(&format!("{d}/topology/core_id"), &(core % 2).to_string());
        t.write(&format!("{d}/topology/thread_siblings_list"), &format!("{},{}", core, core + 4));
        let l3 = if pkg == 0 { "0-1,4-5" } else { "2-3,6-7" };
        for (idx, level, kind, size) in [(0, 1, "Data", "48K"), (1, 1, "Instruction", "32K"), (2, 2, "Unified", "2048K")] {
            t.write(&format!("{d}/cache/index{idx}/level"), &level.to_string());
            t.write(&format!("{d}/cache/index{idx}/type"), kind);
            t.write(&format!("{d}/cache/index{idx}/size"), size);
        }
        t.write(&format!("{d}/cache/index3/level"), "3");
        t.write(&format!("{d}/cache/index3/type"), "Unified");
        t.write(&format!("{d}/cache/index3/size"), "32M");
        t.write(&format!("{d}/cache/index3/shared_cpu_list"), l3);
        t.write(&format!("{d}/cpufreq/cpuinfo_max_freq"), "3500000");
    }
    t.write("node/node0/cpulist", "0-1,4-5");
    t.write("node/node1/cpulist", "2-3,6-7");
    t.write("node/online", "0-1");
    t
}

#[test]
fn sysfs_two_socket_tree() {
    let t = two_socket_tree("2s");
    let m = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::X86_64).expect("read");
    assert_eq!(m.name, "host");
    assert_eq!(m.arch, Arch::X86_64);
    assert_eq!(m.nr_cpus(), 8);
    assert_eq!(m.core_span.len(), 4, "core_id repeats per package: must map to 4 machine-wide cores");
    assert_eq!(m.llc_span.len(), 2);
    assert_eq!(m.node_span.len(), 2);
    assert_eq!(m.nr_sockets(), 2);
    for i in 0..4 {
        assert_eq!(m.distance(i, i + 4), Distance::SmtSibling, "CPU {i}");
    }
    assert_eq!(m.distance(0, 1), Distance::SameLlc);
    assert_eq!(m.distance(0, 5), Distance::SameLlc);
    assert_eq!(m.distance(0, 2), Distance::OtherPackage);
    assert_eq!(m.distance(1, 6), Distance::OtherPackage);
    assert_eq!(*m.llc_mask(6), CpuMask::parse_list("2-3,6-7").unwrap());
    assert_eq!(m.node_span[m.cpus[6].node], CpuMask::parse_list("2-3,6-7").unwrap());
    assert!(m.cpus.iter().all(|c| c.freq_mhz == 3500 && c.capacity == 1024));
    assert_eq!((m.cost.cache.l1d_kib, m.cost.cache.l2_kib, m.cost.cache.llc_kib), (48, 2048, 32 * 1024));
    assert_eq!(m.cost.cacheline, presets::generic_x86_costs().table.cacheline);
    let got: Vec<(DomainLevel, usize)> = m.domains[0].iter().map(|d| (d.level, d.span_weight())).collect();
    assert_eq!(got, [(Smt, 2), (Mc, 4), (Numa, 8)]);
    assert!(!m.description.contains('\n') && m.description.contains("2 socket(s)"), "{}", m.description);
}

/// The host's idle states come from sysfs as declared (a KVM guest's haltpoll driver
/// here); without a cpuidle driver the CPU halts in one state. The running kernel's
/// release and CONFIG_HZ give a host scenario its defaults.
#[test]
fn sysfs_idle_states_and_the_host_kernel() {
    let t = two_socket_tree("idle");
    t.write("cpu/cpuidle/current_driver", "haltpoll");
    for (k, name, lat, res) in [(0, "POLL", 0, 0), (1, "haltpoll", 1, 1)] {
        t.write(&format!("cpu/cpu0/cpuidle/state{k}/name"), name);
        t.write(&format!("cpu/cpu0/cpuidle/state{k}/latency"), &lat.to_string());
        t.write(&format!("cpu/cpu0/cpuidle/state{k}/residency"), &res.to_string());
    }
    let m = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::X86_64).expect("read");
    let d = &m.idle_drivers[0];
    assert_eq!(d.name, "haltpoll");
    let states: Vec<(&str, u64, bool)> = d.states.iter().map(|s| (s.name.as_str(), s.exit_latency_ns, s.polling)).collect();
    assert_eq!(states, [("POLL", 0, true), ("haltpoll", 1000, false)]);
    assert!(d.states.iter().all(|s| s.wake.kind == schedlab_core::provenance::Kind::Declared));

    let t = two_socket_tree("no-idle");
    let m = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::X86_64).expect("read");
    assert_eq!((m.idle_drivers[0].name.as_str(), m.idle_drivers[0].states.len()), ("none", 1));

    t.write("cpu/cpu0/cpuidle/state0/name", "C1");
    t.write("cpu/cpu0/cpuidle/state0/latency", "soon");
    let e = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::X86_64).unwrap_err();
    assert!(e.contains("state0/latency") && e.contains("exit latency in us") && e.contains("'soon'"), "{e}");

    assert_eq!(sysfs::profile_of_release("6.18.44-fc-v782").as_deref(), Some("6.18.44"));
    assert_eq!(sysfs::profile_of_release("5.4.0-150-generic").as_deref(), Some("5.4.0"));
    assert_eq!(sysfs::profile_of_release("6.19-rc3").as_deref(), Some("6.19"));
    assert_eq!(sysfs::profile_of_release("linux"), None);
    assert_eq!(sysfs::config_hz("# CONFIG_HZ_1000 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"), Some(250));
}

#[test]
fn sysfs_fallbacks_offline_cpu_and_capacities() {
    // arm64-like: no SMT, no L3 directory, no node directory, no `online` file, no
    // cpufreq, capacities present, CPU 2 offline (no topology directory).
    let t = TempTree::new("fallback");
    let layout = [(0, 0, 0, 512), (1, 0, 1, 512), (3, 1, 0, 1024), (4, 1, 1, 1024), (5, 1, 2, 1024)];
    for (cpu, pkg, core, cap) in layout {
        let d = format!("cpu/cpu{cpu}");
        t.write(&format!("{d}/topology/physical_package_id"), &pkg.to_string());
        t.write(&format!("{d}/topology/core_id"), &core.to_string());
        t.write(&format!("{d}/cpu_capacity"), &cap.to_string());
    }
    t.write("cpu/cpu2/uevent", "");
    let m = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::Arm64).expect("read");
    assert_eq!(m.nr_cpus(), 5);
    assert_eq!(m.core_span.len(), 5);
    assert_eq!(m.llc_span.len(), 2, "LLC falls back to the package");
    assert_eq!(m.node_span.len(), 2, "node falls back to the package");
    assert_eq!(m.nr_sockets(), 2);
    assert_eq!(m.distance(0, 1), Distance::SameLlc);
    assert_eq!(m.distance(1, 2), Distance::OtherPackage, "kernel CPU 3 becomes CPU 2");
    assert_eq!(m.cpus.iter().map(|c| c.capacity).collect::<Vec<_>>(), [512, 512, 1024, 1024, 1024]);
    assert!(m.is_asymmetric());
    assert!(!m.domains[0][0].flags.has(SdFlags::ASYM_CPUCAPACITY), "the MC level of CPU 0 is symmetric");
    assert!(m.domains[0].last().unwrap().flags.has(SdFlags::ASYM_CPUCAPACITY));
    assert!(m.cpus.iter().all(|c| c.freq_mhz == 3000));
    assert!(m.description.contains("renumbered") && m.description.contains("assumed"), "{}", m.description);
    assert_eq!(m.cost.cacheline, schedlab_core::topology::preset_costs::generic_arm64_costs().table.cacheline);
}

#[test]
fn sysfs_errors_name_the_file_and_what_was_expected() {
    let t = two_socket_tree("bad-core");
    t.write("cpu/cpu3/topology/core_id", "abc");
    let e = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::X86_64).unwrap_err();
    assert!(e.contains("cpu3/topology/core_id") && e.contains("integer core id") && e.contains("'abc'"), "{e}");

    let t = two_socket_tree("no-pkg");
    std::fs::remove_file(t.cpu().join("cpu5/topology/physical_package_id")).unwrap();
    let e = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::X86_64).unwrap_err();
    assert!(e.contains("cpu5/topology/physical_package_id") && e.contains("missing"), "{e}");

    let t = two_socket_tree("bad-list");
    t.write("cpu/cpu0/cache/index3/shared_cpu_list", "0-x");
    let e = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::X86_64).unwrap_err();
    assert!(e.contains("index3/shared_cpu_list") && e.contains("CPU list"), "{e}");

    let t = two_socket_tree("no-node");
    t.write("node/node1/cpulist", "2-3");
    let e = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::X86_64).unwrap_err();
    assert!(e.contains("online CPU 6 is in no nodeN/cpulist"), "{e}");

    let t = two_socket_tree("bad-size");
    t.write("cpu/cpu0/cache/index2/size", "lots");
    let e = sysfs::read_tree(&t.cpu(), Some(&t.node()), Arch::X86_64).unwrap_err();
    assert!(e.contains("index2/size") && e.contains("cache size"), "{e}");

    let missing = Path::new("/nonexistent/schedlab/cpu");
    let e = sysfs::read_tree(missing, None, Arch::X86_64).unwrap_err();
    assert!(e.contains("/nonexistent/schedlab/cpu"), "{e}");
}

#[test]
fn sysfs_reads_this_host_when_it_has_sysfs() {
    let root = Path::new("/sys/devices/system/cpu");
    if !root.join("cpu0/topology/core_id").exists() {
        return; // no sysfs here (not Linux, or a sandbox without it)
    }
    let m = sysfs::read_host(root).expect("reading this host's sysfs");
    assert!(m.nr_cpus() >= 1);
    assert_eq!(m.domains.len(), m.nr_cpus());
    assert!(m.cpus.iter().all(|c| c.capacity >= 1 && c.freq_mhz >= 1));
}

// ---- machine records --------------------------------------------------------------

/// A new machine is one record: registered, it is a preset a scenario names, and its
/// cost figures cite the sources filed beside them in its sheet (a figure the record
/// changes after filing reports as an override, not under the old figure's source).
#[test]
fn a_new_machine_is_one_record() {
    use schedlab_core::topology::preset_costs::zen4_desktop_costs;
    use schedlab_core::topology::preset_idle::{amd_acpi_idle, AmdFirmware};
    use schedlab_core::topology::preset_sources::cost_sources;
    use schedlab_core::topology::presets::{Layout, MachineRecord, Shape};
    let mut cost = zen4_desktop_costs();
    cost.table.cacheline.dram_ns = 80.0;
    let record = MachineRecord {
        name: "test-zen4-8".into(),
        description: "test: one 4-core Zen 4 CCX with SMT2".into(),
        arch: Arch::X86_64,
        layout: Layout::Homogeneous {
            shape: Shape { sockets: 1, nodes_per_socket: 1, llcs_per_node: 1, cores_per_llc: 4, smt: 2 },
            freq_mhz: 4500,
            core_type: "zen4".into(),
            cluster_cores: None,
        },
        cost: Some(cost),
        idle: vec![("zen4".into(), amd_acpi_idle(AmdFirmware::RyzenDesktop))],
        energy: Vec::new(),
        vendor_energy: None,
        governor: schedlab_core::eas::schedutil::Governor::Performance,
    };
    presets::register(record).unwrap();
    let m = get("test-zen4-8");
    assert_eq!((m.nr_cpus(), m.llc_span.len(), m.has_smt()), (8, 1, true));
    assert_eq!(m.idle_drivers[0].states[2].exit_latency_ns, 18_000, "the Ryzen _CST's C2, as the record says");
    let sources = cost_sources(&m);
    assert!(sources["cacheline.smt_sibling_ns"].source.contains("7950X"));
    assert_eq!(sources["cacheline.dram_ns"], schedlab_core::provenance::Provenance::overridden(80.0));
    // A scenario runs on it by name.
    let toml = "[machine]\npreset = \"test-zen4-8\"\n[[tasks]]\nname = \"t\"\nprogram = [{ run = \"1ms\" }]\n[run]\nduration_s = 0.01\n";
    let s = schedlab_core::Scenario::from_toml_str(toml, "<test>").unwrap();
    let out = schedlab_core::api::run(&s, 1, &Default::default()).unwrap();
    let t = out.result.tasks.iter().find(|t| t.name == "t").unwrap();
    assert!(t.exit_ns.is_some() && t.run_ns >= 1_000_000, "{t:?}");
    // Names are unique.
    let again = presets::record("xeon-80").unwrap();
    assert_eq!(presets::register(again).unwrap_err(), "machine 'xeon-80': a preset of that name exists");
}

/// A record lacking a piece a consumer needs is refused, naming the machine and the
/// piece, instead of lending it another machine's.
#[test]
fn a_record_missing_a_piece_is_refused_naming_it() {
    let pixel6 = presets::record("pixel6").unwrap();
    let refused = |edit: &dyn Fn(&mut presets::MachineRecord)| {
        let mut r = pixel6.clone();
        r.name = "test-partial".into();
        edit(&mut r);
        let e = r.build().unwrap_err();
        assert_eq!(presets::register(r).unwrap_err(), e);
        e
    };
    assert_eq!(
        refused(&|r| r.idle.retain(|(t, _)| t != "cortex-x1")),
        "machine 'test-partial': its record has no idle driver for core type 'cortex-x1' (idle)"
    );
    assert_eq!(
        refused(&|r| r.energy.retain(|(t, _)| t != "cortex-a76")),
        "machine 'test-partial': its record has no Energy Model domain for core type 'cortex-a76' (energy)"
    );
    assert_eq!(refused(&|r| r.cost = None), "machine 'test-partial': its record has no cost table (cost)");
    assert_eq!(
        refused(&|r| {
            let sheet = r.cost.as_mut().unwrap();
            std::sync::Arc::make_mut(&mut sheet.sources).remove("tlb.walkers");
        }),
        "machine 'test-partial': its cost table has no source for tlb.walkers"
    );
    assert_eq!(refused(&|r| r.layout = presets::Layout::Clusters(Vec::new())), "machine 'test-partial': its record has no CPUs (layout)");
    assert!(presets::preset("test-partial").is_none());
}

/// Every built-in record is complete and filed under its own name; the generic records
/// of `topo()` name themselves as such.
#[test]
fn built_in_records_are_complete_and_named() {
    for name in PRESET_NAMES {
        let r = presets::record(name).unwrap();
        assert_eq!(r.name, *name);
        assert!(r.build().is_ok(), "{name}");
    }
    // Sources travel with the figures: an arm64 topo() runs the generic (Zen 3 server)
    // table and cites its sources, not Kunpeng's.
    use schedlab_core::topology::preset_sources::cost_sources;
    let llc_source = |m: &schedlab_core::topology::Machine| cost_sources(m)["cacheline.same_llc_ns"].source.to_string();
    assert!(llc_source(&presets::topo_arch(1, 1, 2, 1, Arch::Arm64)).contains("EPYC 7R13"));
    assert!(llc_source(&presets::topo(1, 1, 2, 1)).contains("EPYC 7R13"));
    assert!(llc_source(&get("xeon-80")).contains("Xeon 6242"));
    assert!(llc_source(&get("kunpeng-920-2s")).contains("Kunpeng"));
    assert!(get("snapdragon-888").vendor_energy.is_some() && get("pixel6").vendor_energy.is_none());
}
