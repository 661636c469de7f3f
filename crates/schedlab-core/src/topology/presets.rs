//! Named machines and the synthetic `topo(sockets, llcs, cores, smt)` builder.
//!
//! Mirrors: what `lscpu -e` and /sys/devices/system/cpu show on each machine.
//! Model: CPU numbering follows Linux's usual enumeration on x86 (every core's first
//! thread, then every core's second thread), so CPU i and i + cores are SMT siblings.
//! Every cost figure names its source; none is fitted to a seed's results.

use super::{Arch, CpuTopo, Machine};
use crate::cost::{CacheSizes, CachelineCosts, CostTable};

/// Shape of a homogeneous machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Packages.
    pub sockets: usize,
    /// NUMA nodes per package.
    pub nodes_per_socket: usize,
    /// LLCs per NUMA node.
    pub llcs_per_node: usize,
    /// Cores per LLC.
    pub cores_per_llc: usize,
    /// Hardware threads per core.
    pub smt: usize,
}

/// Builds the CPUs of a homogeneous machine, x86 numbering (siblings last).
pub fn homogeneous_cpus(shape: Shape, freq_mhz: u32, core_type: &str) -> Vec<CpuTopo> {
    let cores_per_node = shape.llcs_per_node * shape.cores_per_llc;
    let cores_per_socket = shape.nodes_per_socket * cores_per_node;
    let nr_cores = shape.sockets * cores_per_socket;
    let mut cpus = Vec::with_capacity(nr_cores * shape.smt);
    for thread in 0..shape.smt {
        for core in 0..nr_cores {
            cpus.push(CpuTopo {
                id: thread * nr_cores + core,
                core,
                llc: core / shape.cores_per_llc,
                node: core / cores_per_node,
                socket: core / cores_per_socket,
                capacity: 1024,
                freq_mhz,
                core_type: core_type.to_string(),
            });
        }
    }
    cpus
}

/// Returns a generic x86 server cost table, used by synthetic machines.
pub fn generic_x86_costs() -> CostTable {
    CostTable {
        cacheline: CachelineCosts {
            same_core_ns: 4.0,
            smt_sibling_ns: 4.0,
            same_llc_ns: 20.0,
            same_package_ns: 100.0,
            other_package_ns: 180.0,
            dram_ns: 100.0,
        },
        cache: CacheSizes { l1d_kib: 32, l2_kib: 1024, llc_kib: 32 * 1024 },
        miss_parallelism: 10.0,
        context_switch_ns: 1500.0,
        ipi_send_ns: 300.0,
        ipi_receive_ns: 1000.0,
        migration_ns: 1500.0,
        idle_exit_ns: 1000.0,
        fork_ns: 50_000.0,
    }
}

/// Builds the synthetic machine `topo(sockets, llcs per socket, cores per LLC, smt)`.
pub fn topo(sockets: usize, llcs_per_socket: usize, cores_per_llc: usize, smt: usize) -> Machine {
    let shape = Shape { sockets, nodes_per_socket: 1, llcs_per_node: llcs_per_socket, cores_per_llc, smt };
    Machine::from_cpus(
        &format!("topo({sockets},{llcs_per_socket},{cores_per_llc},{smt})"),
        "synthetic homogeneous x86 machine with generic costs",
        Arch::X86_64,
        homogeneous_cpus(shape, 3000, "generic"),
        generic_x86_costs(),
    )
}

/// Names of every preset, in display order.
pub const PRESET_NAMES: &[&str] = &[];

/// Returns the preset called `name`.
pub fn preset(name: &str) -> Option<Machine> {
    let _ = name;
    None
}
