//! `[machine.topo]`: a synthetic homogeneous machine (moved out of scenario/mod.rs to keep
//! it under 1000 lines).

use serde::{Deserialize, Serialize};

/// A synthetic machine: `topo(sockets, llcs, cores, smt)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopoSpec {
    /// Packages.
    #[serde(default = "one")]
    pub sockets: usize,
    /// LLCs per package.
    #[serde(default = "one")]
    pub llcs: usize,
    /// Cores per LLC.
    pub cores: usize,
    /// Hardware threads per core.
    #[serde(default = "one")]
    pub smt: usize,
    /// Instruction-set family ("x86_64" or "arm64").
    pub arch: Option<crate::topology::Arch>,
}

impl TopoSpec {
    /// Every count at least 1, and no more CPUs than schedlab models.
    pub fn check(&self) -> Result<(), String> {
        if self.sockets.min(self.llcs).min(self.cores).min(self.smt) == 0 {
            return Err("sockets, llcs, cores and smt must all be at least 1".into());
        }
        let cpus = [self.sockets, self.llcs, self.cores, self.smt].iter().fold(1usize, |n, &x| n.saturating_mul(x));
        if cpus > crate::cpumask::MAX_CPUS {
            return Err(format!("{cpus} CPUs is more than the {} schedlab models", crate::cpumask::MAX_CPUS));
        }
        Ok(())
    }
}

pub(crate) fn one() -> usize {
    1
}
