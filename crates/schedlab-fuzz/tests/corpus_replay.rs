//! The committed corpora (`fuzz/corpus/TARGET/`) replayed through their targets, as
//! `schedlab-fuzz run` does before it mutates (and `schedlab-fuzz replay TARGET FILE...`
//! by hand): every input that once reached a new outcome, the crashes found since
//! fixed among them, must still be handled. Seconds in release, so it runs with the tests.

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

#[test]
fn every_target_has_a_corpus() {
    for t in TARGETS {
        let dir = corpus_dir().join(t.name);
        assert!(!files(&dir).is_empty(), "target {}: no corpus in {}", t.name, dir.display());
    }
}

#[test]
fn corpus_inputs_are_handled() {
    let mut failures = Vec::new();
    let mut n = 0;
    for t in TARGETS {
        let dir = corpus_dir().join(t.name);
        if !dir.is_dir() {
            continue; // every_target_has_a_corpus says so
        }
        for path in files(&dir) {
            let data = std::fs::read(&path).unwrap();
            n += 1;
            match std::panic::catch_unwind(|| (t.run)(&data)) {
                Ok(Ok(_)) => {}
                Ok(Err(msg)) => failures.push(format!("{}: {}", path.display(), msg.lines().next().unwrap_or(""))),
                Err(_) => failures.push(format!("{}: panicked", path.display())),
            }
        }
    }
    assert!(n > 0, "no corpus inputs under {}", corpus_dir().display());
    assert!(
        failures.is_empty(),
        "{} of {n} corpus inputs crash (replay one with `schedlab-fuzz replay TARGET FILE`):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
