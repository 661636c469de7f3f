//! Formats other tools speak: rt-app JSON workloads in and out, ftrace and `perf
//! script` text traces in (rebuilt into per-task timelines and replayed as scenarios).
//!
//! Model: every importer is a plain function from text (and a file name for
//! messages) to a value or an [`ImportError`] naming the file, the line and the field;
//! what an input lacks but can be lived with is counted in warnings or notes, never
//! an error.

pub mod lenient_json;
pub mod replay;
pub mod rt_app;
pub mod rt_app_export;
pub mod task_timelines;
pub mod trace_text;

use thiserror::Error;

/// An input that cannot be imported: `FILE:LINE: FIELD: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{file}:{line}: {field}: {message}")]
pub struct ImportError {
    /// The file (or "<string>").
    pub file: String,
    /// 1-based line (0 when the whole file is at fault).
    pub line: usize,
    /// What was being read ("tasks.thread0.run", "sched_switch.next_pid").
    pub field: String,
    /// What was wrong and what was expected.
    pub message: String,
}

impl ImportError {
    /// An error at `line` of `file`.
    pub fn new(file: &str, line: usize, field: impl Into<String>, message: impl Into<String>) -> Self {
        ImportError { file: file.to_string(), line, field: field.into(), message: message.into() }
    }
}

impl From<ImportError> for crate::error::ScenarioError {
    fn from(e: ImportError) -> Self {
        crate::error::ScenarioError {
            origin: e.file,
            location: if e.line > 0 { format!(":{}", e.line) } else { String::new() },
            field: e.field,
            message: e.message,
        }
    }
}
