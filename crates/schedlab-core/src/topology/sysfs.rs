//! Reads the host's own topology from sysfs.
//!
//! Mirrors: /sys/devices/system/cpu/cpuN/topology/{core_id,physical_package_id,
//! thread_siblings_list}, cache/index3/shared_cpu_list, cpu_capacity.

use super::Machine;

/// Reads the host machine from `root` (normally "/sys/devices/system/cpu").
pub fn read_host(root: &std::path::Path) -> Result<Machine, String> {
    let _ = root;
    Err("reading the host topology is not implemented yet".into())
}
