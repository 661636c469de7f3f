//! The sched-domain hierarchy built from the topology.
//!
//! Mirrors: kernel/sched/topology.c: sd_init(), build_sched_domains(), sd_degenerate();
//! the default topology table (SMT → CLS → MC → PKG; CLS since 5.16, 778c558f49a2,
//! with cpu_cluster_flags() = SD_CLUSTER | SD_SHARE_LLC) and sched_init_numa().
//! Model: one domain per level per CPU, groups are the child level's spans; levels
//! whose span equals their child's are dropped as degenerate. As the kernel shares a
//! domain's sched_groups among the CPUs it spans, the group list of each distinct
//! (level, span) is built once and shared (flat 1024 CPUs: one list, not 1024). Balance intervals are in
//! milliseconds as in `struct sched_domain`; busy_factor comes from the kernel profile
//! (16 since 5.10, 32 before) and is applied by the balancer.
//!
//! NUMA: the kernel builds one NUMA level per distinct node distance (sched_init_numa()).
//! The machine carries no SLIT, only sockets and nodes, so two distance classes are
//! modeled: nodes of the same socket (a `Numa` level spanning the socket, present when a
//! socket holds several nodes, e.g. Kunpeng 920's two dies) and every node (a `Numa`
//! level spanning the machine). Machines whose SLIT has more classes (asymmetric
//! multi-hop meshes) get those two. The NUMA-level trimming the kernel applies beyond
//! `node_reclaim_distance` (30: no WAKE_AFFINE, BALANCE_EXEC/FORK) is not modeled, for
//! lack of distances.
//!
//! ```text
//!  NUMA   [ socket0 ...................... | socket1 ........... ]  (all nodes)
//!  NUMA   [ node0 ........ | node1 ....... ]                        (nodes of a socket)
//!  PKG    [ LLC0 | LLC1 | LLC2 ]                 (levels between LLC and node)
//!  MC     [ cluster0 | cluster1 | ... ]          (CPUs sharing an LLC; groups: cores
//!                                                 where there are no clusters)
//!  CLS    [ core0 | core1 | ... ]                (cores of one cluster, Kunpeng 920)
//!  SMT    [ cpu0 cpu1 ]                          (hardware threads of a core)
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::Machine;
use crate::cpumask::{CpuId, CpuMask};

/// Sched-domain flags (`SD_*`), as a plain bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SdFlags(pub u32);

impl SdFlags {
    /// Balance when a CPU is about to go idle.
    pub const BALANCE_NEWIDLE: u32 = 1 << 0;
    /// Balance on exec.
    pub const BALANCE_EXEC: u32 = 1 << 1;
    /// Balance on fork (find_idlest_cpu).
    pub const BALANCE_FORK: u32 = 1 << 2;
    /// Wakeups may pull the wakee towards the waker.
    pub const WAKE_AFFINE: u32 = 1 << 3;
    /// Members share CPU capacity (SMT siblings).
    pub const SHARE_CPUCAPACITY: u32 = 1 << 4;
    /// Members share the last-level cache (SD_SHARE_PKG_RESOURCES / SD_SHARE_LLC).
    pub const SHARE_LLC: u32 = 1 << 5;
    /// Prefer spreading to sibling groups.
    pub const PREFER_SIBLING: u32 = 1 << 6;
    /// Only one CPU balances this level at a time.
    pub const SERIALIZE: u32 = 1 << 7;
    /// Crosses NUMA nodes.
    pub const NUMA: u32 = 1 << 8;
    /// Members have different capacities (big.LITTLE).
    pub const ASYM_CPUCAPACITY: u32 = 1 << 9;
    /// Members share cluster resources (SD_CLUSTER).
    pub const CLUSTER: u32 = 1 << 10;

    /// Every flag with the kernel's name for it (include/linux/sched/sd_flags.h).
    pub const NAMES: &'static [(u32, &'static str)] = &[
        (Self::BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"),
        (Self::BALANCE_EXEC, "SD_BALANCE_EXEC"),
        (Self::BALANCE_FORK, "SD_BALANCE_FORK"),
        (Self::WAKE_AFFINE, "SD_WAKE_AFFINE"),
        (Self::SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"),
        (Self::SHARE_LLC, "SD_SHARE_LLC"),
        (Self::PREFER_SIBLING, "SD_PREFER_SIBLING"),
        (Self::SERIALIZE, "SD_SERIALIZE"),
        (Self::NUMA, "SD_NUMA"),
        (Self::ASYM_CPUCAPACITY, "SD_ASYM_CPUCAPACITY"),
        (Self::CLUSTER, "SD_CLUSTER"),
    ];

    /// Tells whether a flag is set.
    #[inline]
    pub fn has(self, flag: u32) -> bool {
        self.0 & flag != 0
    }

    /// The kernel names of the flags set, in the kernel's order.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMES.iter().filter(|(bit, _)| self.has(*bit)).map(|(_, n)| *n).collect()
    }
}

/// The level of a domain in the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum DomainLevel {
    /// Hardware threads of one core.
    Smt,
    /// Cores of one cluster (CONFIG_SCHED_CLUSTER).
    Cls,
    /// CPUs sharing the last-level cache.
    Mc,
    /// CPUs of one NUMA node (several LLCs).
    Pkg,
    /// Several NUMA nodes: those of one socket, or the whole machine.
    Numa,
}

/// One level of one CPU's sched-domain hierarchy.
#[derive(Clone, Debug, Serialize)]
pub struct SchedDomain {
    /// Level name.
    pub level: DomainLevel,
    /// CPUs covered.
    pub span: CpuMask,
    /// The groups balanced against each other: the child level's spans (shared by every
    /// CPU whose domain has this span).
    pub groups: Arc<[CpuMask]>,
    /// Index of the group holding the owning CPU.
    pub local_group: usize,
    /// `SD_*` flags.
    pub flags: SdFlags,
    /// Shortest balance interval, ms (= span weight).
    pub min_interval_ms: u64,
    /// Longest balance interval, ms (= 2 × span weight).
    pub max_interval_ms: u64,
    /// Imbalance percentage the balancer tolerates (110 SMT, 117 otherwise).
    pub imbalance_pct: u32,
    /// Failed balance attempts tolerated before cache-hot tasks may move.
    pub cache_nice_tries: u32,
}

impl SchedDomain {
    /// Returns the number of CPUs covered (`sd->span_weight`).
    pub fn span_weight(&self) -> usize {
        self.span.weight()
    }
}

/// Builds every CPU's hierarchy, lowest level first, with degenerate levels removed.
pub fn build(m: &Machine) -> Vec<Vec<SchedDomain>> {
    let asym = m.is_asymmetric();
    let nr_sockets = m.nr_sockets();
    let mut socket_span = vec![CpuMask::new(); nr_sockets];
    for c in &m.cpus {
        socket_span[c.socket].set(c.id);
    }
    let all = m.all_cpus();
    // The span of every candidate level of each CPU, lowest first (the topology table).
    let spans: Vec<[(DomainLevel, CpuMask); 6]> = m
        .cpus
        .iter()
        .map(|c| {
            [
                (DomainLevel::Smt, m.core_span[c.core]),
                (DomainLevel::Cls, m.cluster_span[c.id]),
                (DomainLevel::Mc, m.llc_span[c.llc]),
                (DomainLevel::Pkg, m.node_span[c.node]),
                (DomainLevel::Numa, socket_span[c.socket]),
                (DomainLevel::Numa, all),
            ]
        })
        .collect();
    // Group lists by (candidate level, child level, span): built once, shared.
    let mut shared: HashMap<(usize, Option<usize>, CpuMask), Arc<[CpuMask]>> = HashMap::new();
    (0..m.nr_cpus())
        .map(|cpu| {
            let mut out: Vec<SchedDomain> = Vec::new();
            let mut child_span = CpuMask::single(cpu);
            // Index in `spans` of the level the groups are made of (None = single CPUs).
            let mut child: Option<usize> = None;
            for (i, &(level, span)) in spans[cpu].iter().enumerate() {
                // build_sched_domain(): a level that does not cover its child ("arch
                // topology borken") is widened to cover it.
                let span = span.or(&child_span);
                if span == child_span || span.weight() <= 1 {
                    continue; // degenerate: nothing to balance at this level
                }
                // Groups: the distinct child-level spans inside this span, in CPU order.
                let groups = shared
                    .entry((i, child, span))
                    .or_insert_with(|| {
                        let mut covered = CpuMask::new();
                        let mut groups = Vec::new();
                        for c in span.iter() {
                            if !covered.test(c) {
                                let g = child.map_or(CpuMask::single(c), |k| spans[c][k].1);
                                covered = covered.or(&g);
                                groups.push(g);
                            }
                        }
                        groups.into()
                    })
                    .clone();
                out.push(make_domain(m, cpu, level, span, groups, asym));
                child_span = span;
                child = Some(i);
            }
            // sd_init(): do not spread across CPUs of different capacities, so the child
            // of an asymmetric level loses SD_PREFER_SIBLING.
            for i in 1..out.len() {
                if out[i].flags.has(SdFlags::ASYM_CPUCAPACITY) {
                    out[i - 1].flags.0 &= !SdFlags::PREFER_SIBLING;
                }
            }
            out
        })
        .collect()
}

fn make_domain(m: &Machine, cpu: CpuId, level: DomainLevel, span: CpuMask, groups: Arc<[CpuMask]>, asym: bool) -> SchedDomain {
    let local_group = groups.iter().position(|g| g.test(cpu)).unwrap_or(0);
    let weight = span.weight() as u64;
    let mut flags = SdFlags::BALANCE_NEWIDLE | SdFlags::BALANCE_EXEC | SdFlags::BALANCE_FORK | SdFlags::WAKE_AFFINE | SdFlags::PREFER_SIBLING;
    // sd_init(): per-level tuning.
    let (imbalance_pct, cache_nice_tries) = match level {
        DomainLevel::Smt => {
            flags |= SdFlags::SHARE_CPUCAPACITY | SdFlags::SHARE_LLC;
            (110, 0)
        }
        DomainLevel::Cls => {
            flags |= SdFlags::CLUSTER | SdFlags::SHARE_LLC;
            (117, 1)
        }
        DomainLevel::Mc => {
            flags |= SdFlags::SHARE_LLC;
            (117, 1)
        }
        DomainLevel::Pkg => (117, 1),
        DomainLevel::Numa => {
            flags &= !SdFlags::PREFER_SIBLING;
            flags |= SdFlags::SERIALIZE | SdFlags::NUMA;
            (117, 2)
        }
    };
    if asym && span.iter().any(|c| m.cpus[c].capacity != m.cpus[cpu].capacity) {
        flags |= SdFlags::ASYM_CPUCAPACITY;
    }
    SchedDomain {
        level,
        span,
        groups,
        local_group,
        flags: SdFlags(flags),
        min_interval_ms: weight,
        max_interval_ms: 2 * weight,
        imbalance_pct,
        cache_nice_tries,
    }
}
