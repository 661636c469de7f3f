//! `[machine.firmware]`: the BIOS settings that decide what an idle machine keeps.
//!
//! Mirrors: the firmware options a benchmark host is set up with. AMD's "DF C-states"
//! (package C6: when every core of a socket is in CC6, the L3s are flushed, [amd-ppr])
//! and "Global C-state Control" (off: the firmware offers the OS no state deeper than
//! C1, so acpi_idle registers POLL and C1 only); Intel's "Package C State limit" (C0/C1:
//! no package C-state). Their defaults are each preset's own idle tables (every
//! preset's firmware default is "enabled"/"Auto").
//! Model: `package_cstates = false` removes the machine's package state; `global_cstates
//! = false` also removes every state that powers a core down (the states that lose the
//! core's private caches), leaving POLL and C1. Both act on the machine before the run;
//! the cpuidle governors then choose among what is left, as on the host.

use serde::{Deserialize, Serialize};

/// `[machine.firmware]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareSpec {
    /// Package C-states (AMD DF C-states, Intel's package C-state limit above C1):
    /// default the preset's (on where it has one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_cstates: Option<bool>,
    /// Core C-states deeper than C1 (AMD Global C-state Control): default on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_cstates: Option<bool>,
}

impl FirmwareSpec {
    /// Applies the settings to machine `m`'s idle drivers.
    pub fn apply(&self, m: &mut crate::topology::Machine) {
        let global_off = self.global_cstates == Some(false);
        for d in &mut m.idle_drivers {
            if global_off || self.package_cstates == Some(false) {
                d.package = None;
            }
            if global_off {
                d.states.retain(|s| !s.loses_private_caches);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// EPYC's acpi_idle offers POLL, C1 and C2 (CC6) and a PC6 that flushes the L3s: DF
    /// C-states off keeps the core states and drops the package one; Global C-state
    /// Control off leaves POLL and C1.
    #[test]
    fn the_settings_remove_the_package_state_and_the_deep_core_states() {
        let names = |m: &crate::topology::Machine| m.idle_drivers[0].states.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
        let base = crate::topology::presets::preset("epyc-9654-2s").unwrap();
        assert!(base.idle_drivers[0].package.as_ref().is_some_and(|p| p.flushes_llc));
        let mut m = base.clone();
        FirmwareSpec { package_cstates: Some(false), global_cstates: None }.apply(&mut m);
        assert_eq!((m.idle_drivers[0].package.is_none(), names(&m)), (true, names(&base)));
        let mut m = base.clone();
        FirmwareSpec { package_cstates: None, global_cstates: Some(false) }.apply(&mut m);
        assert_eq!((m.idle_drivers[0].package.is_none(), names(&m)), (true, vec!["POLL".to_string(), "C1".to_string()]));
        let mut m = base.clone();
        FirmwareSpec::default().apply(&mut m);
        assert_eq!(m.idle_drivers, base.idle_drivers);
    }
}
