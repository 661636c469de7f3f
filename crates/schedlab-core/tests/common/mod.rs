//! Helpers shared by the integration tests.
#![allow(dead_code)]

use schedlab_core::api::{run, RunOptions};
use schedlab_core::{RunResult, Scenario};

/// Parses a TOML scenario, panicking with the error.
pub fn scenario(toml: &str) -> Scenario {
    Scenario::from_toml_str(toml, "<test>").unwrap_or_else(|e| panic!("{e}"))
}

/// Runs a TOML scenario with a seed.
pub fn run_toml(toml: &str, seed: u64) -> RunResult {
    run(&scenario(toml), seed, &RunOptions::default()).unwrap_or_else(|e| panic!("{e}")).result
}

/// Returns the run time of the task called `name`.
pub fn run_ns(r: &RunResult, name: &str) -> u64 {
    r.tasks.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no task {name}")).run_ns
}
