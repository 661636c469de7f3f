//! Errors the core returns; the bindings map each variant to a named Python exception.

use thiserror::Error;

/// A scenario that cannot be run as written. Fatal for that scenario only.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{origin}{location}: {field}: {message}")]
pub struct ScenarioError {
    /// Where the scenario came from (a file path, "<dict>", "<json>").
    pub origin: String,
    /// ":LINE:COL" when known, else empty.
    pub location: String,
    /// Dotted path of the offending field ("machine.preset", "tasks[2].program[0]").
    pub field: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl ScenarioError {
    /// Creates an error about `field` with no origin yet.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { origin: String::new(), location: String::new(), field: printable(&field.into()), message: printable(&message.into()) }
    }

    /// Returns the error with its origin set.
    pub fn with_origin(mut self, origin: &str) -> Self {
        self.origin = origin.to_string();
        self
    }
}

/// Escapes control characters (a newline in a key or a value a file spelt out) so an
/// error that echoes them stays one line.
pub fn printable(s: &str) -> String {
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// Everything a run can fail with.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum SimError {
    /// The scenario is invalid (fatal; nothing ran).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The run hit its event or wall-time limit (results up to that point are kept).
    #[error("run stopped at its limit: {0}")]
    Limit(String),
    /// An internal invariant broke: a simulator bug.
    #[error("internal error (a schedlab bug, please report it): {0}")]
    Internal(String),
}
