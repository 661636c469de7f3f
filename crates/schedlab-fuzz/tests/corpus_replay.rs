//! The committed corpora (`fuzz/corpus/TARGET/`) replayed through their targets, as
//! `schedlab-fuzz run` does before it mutates (and `schedlab-fuzz replay TARGET FILE...`
//! by hand): every input that once reached a new outcome, the crashes found since
//! fixed among them, must still be handled. In release it runs with the tests (all six
//! targets took 162 s in one thread at load average 19; one test per target now).

use std::path::{Path, PathBuf};

use schedlab_fuzz::TARGETS;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    out.sort();
    out
}

/// One test per target, so that the harness replays them in parallel and a failure
/// names its target.
const REPLAYED: &[&str] = &["scenario_toml", "scenario_json", "fields", "engine", "rt_app", "trace_text"];

#[test]
fn every_target_has_a_corpus_and_a_test() {
    for t in TARGETS {
        assert!(REPLAYED.contains(&t.name), "target {}: add it to REPLAYED and give it a test below", t.name);
        let dir = corpus_dir().join(t.name);
        assert!(!files(&dir).is_empty(), "target {}: no corpus in {}", t.name, dir.display());
    }
}

/// Replays `fuzz/corpus/NAME/` through target NAME: every input is handled.
fn replay(name: &str) {
    let t = schedlab_fuzz::target(name).unwrap_or_else(|| panic!("no target {name}"));
    let dir = corpus_dir().join(name);
    let mut failures = Vec::new();
    let inputs = files(&dir);
    assert!(!inputs.is_empty(), "no corpus inputs in {}", dir.display());
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        match std::panic::catch_unwind(|| (t.run)(&data)) {
            Ok(Ok(_)) => {}
            Ok(Err(msg)) => failures.push(format!("{}: {}", path.display(), msg.lines().next().unwrap_or(""))),
            Err(_) => failures.push(format!("{}: panicked", path.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} {name} corpus inputs crash (replay one with `schedlab-fuzz replay {name} FILE`):\n{}",
        failures.len(),
        inputs.len(),
        failures.join("\n")
    );
}

#[test]
fn scenario_toml_corpus() {
    replay("scenario_toml");
}

#[test]
fn scenario_json_corpus() {
    replay("scenario_json");
}

#[test]
fn fields_corpus() {
    replay("fields");
}

#[test]
fn engine_corpus() {
    replay("engine");
}

#[test]
fn rt_app_corpus() {
    replay("rt_app");
}

#[test]
fn trace_text_corpus() {
    replay("trace_text");
}
