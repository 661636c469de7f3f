//! The one place where core errors become Python exceptions.
//!
//! | core error                | Python exception                   |
//! |---------------------------|------------------------------------|
//! | `ScenarioError`           | `schedlab.ScenarioError`           |
//! | `SimError::Scenario`      | `schedlab.ScenarioError`           |
//! | `SimError::Limit`         | `schedlab.SimulationLimitError`    |
//! | `SimError::Internal`      | `schedlab.InternalError`           |
//! | a panic in the core       | `schedlab.InternalError`           |
//!
//! Every class derives from `schedlab.SchedlabError`. The classes are created here
//! (module name `schedlab`) and re-exported by the Python package, so pickling them
//! across worker processes finds them as `schedlab.<Name>`.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use schedlab_core::{ScenarioError as CoreScenarioError, SimError};

pyo3::create_exception!(schedlab, SchedlabError, PyException, "Base class of every error schedlab raises.");
pyo3::create_exception!(
    schedlab,
    ScenarioError,
    SchedlabError,
    "A scenario that cannot be run as written. Attributes: origin, location (\":LINE:COL\" or \"\"), field, message; str() is one line."
);
pyo3::create_exception!(schedlab, SimulationLimitError, SchedlabError, "A run stopped at its event or wall-time limit.");
pyo3::create_exception!(schedlab, InternalError, SchedlabError, "An internal invariant broke: a schedlab bug (please report it).");

/// Formats a scenario error as one line: `ORIGIN:LINE:COL: FIELD: MESSAGE`, leaving out
/// the parts that are unknown.
pub fn one_line(e: &CoreScenarioError) -> String {
    let mut head = format!("{}{}", e.origin, e.location);
    if head.is_empty() {
        head = "<scenario>".to_string();
    }
    let message = e.message.replace('\n', " ");
    if e.field.is_empty() {
        format!("{head}: {message}")
    } else {
        format!("{head}: {}: {message}", e.field)
    }
}

/// Converts a core scenario error into `schedlab.ScenarioError` with its attributes set.
pub fn scenario_error(e: &CoreScenarioError) -> PyErr {
    let line = one_line(e);
    Python::attach(|py| {
        let err = ScenarioError::new_err(line.clone());
        let value = err.value(py);
        let set = || -> PyResult<()> {
            value.setattr("origin", &e.origin)?;
            value.setattr("location", &e.location)?;
            value.setattr("field", &e.field)?;
            value.setattr("message", &e.message)?;
            Ok(())
        };
        match set() {
            Ok(()) => err,
            Err(other) => other,
        }
    })
}

/// Converts any core run error.
pub fn sim_error(e: &SimError) -> PyErr {
    match e {
        SimError::Scenario(s) => scenario_error(s),
        SimError::Limit(_) => SimulationLimitError::new_err(e.to_string()),
        SimError::Internal(_) => InternalError::new_err(e.to_string()),
        #[allow(unreachable_patterns)]
        _ => InternalError::new_err(e.to_string()),
    }
}

/// Runs `f`, turning a panic into `schedlab.InternalError` so none crosses into Python.
pub fn no_panic<T>(what: &str, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            Err(InternalError::new_err(format!("internal error (a schedlab bug, please report it): {what} panicked: {}", panic_message(&payload))))
        }
    }
}

/// Extracts the message of a panic payload.
pub fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}
