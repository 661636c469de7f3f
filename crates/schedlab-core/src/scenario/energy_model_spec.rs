//! `[machine.energy_model]`: which kernel's Energy Model a machine runs with, and where
//! in its voltage band (the Snapdragon 888's vendor EM; `topology::preset_energy`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;

/// `[machine.energy_model]`: the Energy Model a kernel registers on the machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnergyModelSpec {
    /// "mainline" (the mainline device tree's EM, if it has one: the default) or "vendor"
    /// (the vendor kernel's: the Snapdragon 888's from its cpufreq hardware LUT).
    #[serde(default = "mainline")]
    pub kernel: String,
    /// The vendor EM's voltage band end: "low", "centre" (default) or "high", or a table of
    /// one per core type (`{ cortex-a55 = "low", cortex-x1 = "high" }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voltage: Option<VoltageSpec>,
}

/// A voltage band end for every cluster, or one per core type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum VoltageSpec {
    /// The same end for every cluster.
    All(String),
    /// One end per core type; the others at the centre.
    PerCoreType(BTreeMap<String, String>),
}

fn mainline() -> String {
    "mainline".into()
}

impl EnergyModelSpec {
    /// Applies the spec to machine `m` built from the preset.
    pub(crate) fn apply(&self, m: &mut crate::topology::Machine) -> Result<(), ScenarioError> {
        use crate::topology::preset_energy::VoltageEnd;
        let end = |field: &str, v: &str| {
            VoltageEnd::parse(v).ok_or_else(|| ScenarioError::new(field, format!("'{v}': expected \"low\", \"centre\" or \"high\"")))
        };
        match self.kernel.as_str() {
            "mainline" => match &self.voltage {
                None => Ok(()),
                Some(_) => Err(ScenarioError::new(
                    "machine.energy_model.voltage",
                    "only the vendor kernel's Energy Model has a voltage band (set kernel = \"vendor\"); mainline's voltages are the device tree's",
                )),
            },
            "vendor" => {
                let ends: BTreeMap<String, VoltageEnd> = match &self.voltage {
                    None => BTreeMap::new(),
                    Some(VoltageSpec::All(v)) => {
                        let e = end("machine.energy_model.voltage", v)?;
                        m.cpus.iter().map(|c| (c.core_type.clone(), e)).collect()
                    }
                    Some(VoltageSpec::PerCoreType(t)) => {
                        let mut out = BTreeMap::new();
                        for (core, v) in t {
                            if !m.cpus.iter().any(|c| &c.core_type == core) {
                                let mut types: Vec<&str> = m.cpus.iter().map(|c| c.core_type.as_str()).collect();
                                types.dedup();
                                return Err(ScenarioError::new(
                                    "machine.energy_model.voltage",
                                    format!("machine {} has no core type '{core}' (it has {})", m.name, types.join(", ")),
                                ));
                            }
                            out.insert(core.clone(), end(&format!("machine.energy_model.voltage.{core}"), v)?);
                        }
                        out
                    }
                };
                m.use_vendor_energy_model(|t| ends.get(t).copied().unwrap_or(VoltageEnd::Centre))
                    .map_err(|e| ScenarioError::new("machine.energy_model.kernel", e))
            }
            other => Err(ScenarioError::new("machine.energy_model.kernel", format!("'{other}': expected \"mainline\" or \"vendor\""))),
        }
    }
}
