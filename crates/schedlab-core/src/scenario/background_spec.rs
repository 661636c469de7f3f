//! `[kernel.background_profile]`: the rest of a host's background, beyond the kernel's
//! own per-CPU work (`background = "kernel"`): the threads that wake on it by
//! themselves (daemons, the harness, kernel threads the model has no mechanism for),
//! each source as a rate of wakeups and a mean run per wakeup.
//!
//! Where the figures come from: `schedlab validate-host --record-background FILE`
//! measures them on a host (every thread's `/proc/<pid>/task/<tid>/schedstat` over an
//! interval: run time and times run), and the file is named from a scenario
//! (`background_profile = "FILE"`, read relative to the scenario's file when it is
//! loaded, `api::load`); or they are written by hand as a declared estimate. `origin`
//! says which, and stays in the loaded scenario beside the figures.
//! Model: each source is `tasks` threads (or one pinned to each CPU, `per_cpu`), each
//! sleeping an exponential time and running an exponential time: wakeups of a Poisson
//! process at the measured rate, through the normal paths (a wakeup, a placement, a
//! preemption check, a CPU kept out of idle). They are daemons: a run until
//! `workload_done` does not wait for them.

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::ScenarioError;

/// `[kernel] background_profile`: a profile's file (TOML, relative to the scenario's
/// file; `api::load` reads it in) or the profile's table itself.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum BackgroundProfile {
    /// `background_profile = "host-background.toml"`, not yet read.
    File(String),
    /// `[kernel.background_profile]`, or the file once read.
    Inline(BackgroundProfileSpec),
}

/// Reads `background_profile` as a file name or a table, with the table's own error
/// (an untagged enum would only say that neither matched).
pub(crate) fn profile_or_file<'de, D: Deserializer<'de>>(d: D) -> Result<Option<BackgroundProfile>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        File(String),
        Table(serde_json::Value),
    }
    match Raw::deserialize(d)? {
        Raw::File(f) => Ok(Some(BackgroundProfile::File(f))),
        Raw::Table(v) => serde_json::from_value(v).map(|p| Some(BackgroundProfile::Inline(p))).map_err(serde::de::Error::custom),
    }
}

/// A profile file: its one table, `[background_profile]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    background_profile: BackgroundProfileSpec,
}

impl BackgroundProfile {
    /// The profile, once read (`None` for a file not yet read).
    pub fn spec(&self) -> Option<&BackgroundProfileSpec> {
        match self {
            BackgroundProfile::Inline(p) => Some(p),
            BackgroundProfile::File(_) => None,
        }
    }

    /// Reads a profile file named relative to `base` (the scenario file's directory) in.
    pub fn read_in(&mut self, base: &std::path::Path) -> Result<(), ScenarioError> {
        let BackgroundProfile::File(name) = self else { return Ok(()) };
        let path = base.join(name.as_str());
        let shown = path.display().to_string();
        let field = "kernel.background_profile";
        let text = std::fs::read_to_string(&path).map_err(|e| ScenarioError::new(field, format!("cannot read {shown}: {e}")))?;
        let file: ProfileFile = toml::from_str(&text).map_err(|e| {
            ScenarioError::new(
                field,
                format!("{shown}: expected a [background_profile] table with origin and [[background_profile.source]] rows: {}", e.message()),
            )
        })?;
        *self = BackgroundProfile::Inline(file.background_profile);
        Ok(())
    }
}

/// `[kernel.background_profile]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgroundProfileSpec {
    /// Where the figures come from: the host, date and interval of a measurement, or
    /// "estimate: ..." for figures written by hand.
    pub origin: String,
    /// The sources, each a kind of thread.
    #[serde(default, rename = "source")]
    pub sources: Vec<BackgroundSourceSpec>,
}

/// One `[[kernel.background_profile.source]]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgroundSourceSpec {
    /// The threads' name (their comm, digits written N).
    pub name: String,
    /// Wakeups a second of all the source's threads together; per CPU with `per_cpu`.
    pub wakeups_per_s: f64,
    /// CPU time a wakeup runs, mean (us).
    pub run_us: f64,
    /// How many such threads share the wakeups (unpinned); ignored with `per_cpu`.
    #[serde(default = "one")]
    pub tasks: usize,
    /// One thread pinned to each CPU (per-CPU kernel threads), each waking at
    /// `wakeups_per_s`.
    #[serde(default)]
    pub per_cpu: bool,
    /// Their nice value (SCHED_OTHER).
    #[serde(default)]
    pub nice: i32,
    /// SCHED_FIFO at this priority (1-99) instead of SCHED_OTHER.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fifo_priority: Option<u32>,
}

fn one() -> usize {
    1
}

/// A source may wake at most this often (a thread a microsecond apart is a workload,
/// not a background).
const MAX_WAKEUPS_PER_S: f64 = 1e6;

impl BackgroundProfileSpec {
    /// Checks each figure's range, naming the field.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let field = |i: usize, f: &str| format!("kernel.background_profile.source[{i}].{f}");
        if self.origin.trim().is_empty() {
            return Err(ScenarioError::new(
                "kernel.background_profile.origin",
                "expected where the figures come from (a measurement's host and date, or \"estimate: ...\")",
            ));
        }
        for (i, s) in self.sources.iter().enumerate() {
            if s.name.trim().is_empty() {
                return Err(ScenarioError::new(field(i, "name"), "expected the threads' name"));
            }
            if !(s.wakeups_per_s.is_finite() && s.wakeups_per_s > 0.0 && s.wakeups_per_s <= MAX_WAKEUPS_PER_S) {
                return Err(ScenarioError::new(
                    field(i, "wakeups_per_s"),
                    format!("expected a rate above 0 and at most {MAX_WAKEUPS_PER_S}, got {}", s.wakeups_per_s),
                ));
            }
            if !(s.run_us.is_finite() && s.run_us >= 0.0 && s.run_us <= 1e6) {
                return Err(ScenarioError::new(field(i, "run_us"), format!("expected a mean run of 0 to 1000000 us, got {}", s.run_us)));
            }
            if !s.per_cpu && s.tasks == 0 {
                return Err(ScenarioError::new(field(i, "tasks"), "expected at least one thread"));
            }
            if !(-20..=19).contains(&s.nice) {
                return Err(ScenarioError::new(field(i, "nice"), format!("expected -20 to 19, got {}", s.nice)));
            }
            if s.fifo_priority.is_some_and(|p| !(1..=99).contains(&p)) {
                return Err(ScenarioError::new(field(i, "fifo_priority"), "expected 1 to 99"));
            }
        }
        Ok(())
    }
}
