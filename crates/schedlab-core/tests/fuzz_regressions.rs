//! Every crash the fuzz targets found (crates/schedlab-fuzz, scripts/fuzz), kept as the
//! input it stood for in `tests/fuzz-regressions/` (`.toml`: the engine's scenario or a
//! TOML loader input; `.rtapp.json`: an rt-app file; `.trace.txt`: trace text; `.json`:
//! a JSON loader input;
//! README.md says what each broke).
//! Each must now load with a one-line error naming the file, or run with every
//! invariant checked after every event, never panic. Adding one is copying the file the
//! harness wrote (for the engine, the `.toml` beside the crash) into that directory.

use schedlab_core::api::{run, Limits, RunOptions};
use schedlab_core::{Scenario, SimError};

#[test]
fn fuzz_crashes_stay_fixed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(!files.is_empty(), "no regression files in {}", dir.display());
    for path in files {
        if path.to_string_lossy().ends_with(".rtapp.json") {
            rt_app_input_is_refused_or_imported(&path);
            continue;
        }
        if path.to_string_lossy().ends_with(".trace.txt") {
            trace_is_refused_or_read(&path);
            continue;
        }
        let parse = match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => Scenario::from_toml_str,
            Some("json") => Scenario::from_json_str,
            _ => continue,
        };
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.display().to_string();
        let outcome = std::panic::catch_unwind(|| match parse(&text, &name) {
            Err(e) => {
                assert!(!e.to_string().contains('\n'), "{name}: multi-line error {e}");
                assert!(e.to_string().starts_with(&name), "{name}: error does not name the file: {e}");
            }
            Ok(s) => {
                let opts =
                    RunOptions { check_invariants: true, limits: Limits { max_events: Some(30_000), ..Default::default() }, ..Default::default() };
                match run(&s, 7, &opts) {
                    Ok(_) | Err(SimError::Scenario(_)) | Err(SimError::Limit(_)) => {}
                    Err(e) => panic!("{name}: {e}"),
                }
            }
        });
        assert!(outcome.is_ok(), "{name} panicked");
    }
}

/// An rt-app file the importer once panicked on: now imported, or refused in one line.
fn rt_app_input_is_refused_or_imported(path: &std::path::Path) {
    use schedlab_core::interchange::rt_app;
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.display().to_string();
    let outcome = std::panic::catch_unwind(|| {
        if let Err(e) = rt_app::import(&text, &name, &Default::default()) {
            let line = schedlab_core::ScenarioError::from(e).to_string();
            assert!(!line.contains('\n') && line.starts_with(&name), "{name}: {line}");
        }
    });
    assert!(outcome.is_ok(), "{name} panicked");
}

/// Trace text the importer once failed on: now read into timelines, or refused in one line.
fn trace_is_refused_or_read(path: &std::path::Path) {
    use schedlab_core::interchange::{task_timelines, trace_text};
    let text = std::fs::read_to_string(path).unwrap();
    let name = path.display().to_string();
    let outcome = std::panic::catch_unwind(|| match trace_text::parse(&text, &name) {
        Ok(parsed) => {
            task_timelines::build(&parsed);
        }
        Err(e) => {
            let line = schedlab_core::ScenarioError::from(e).to_string();
            assert!(!line.contains('\n') && line.starts_with(&name), "{name}: {line}");
        }
    });
    assert!(outcome.is_ok(), "{name} panicked");
}
