//! The plain-loop fuzz harness: runs on stable Rust, no instrumentation.
//!
//! ```text
//! schedlab-fuzz list
//! schedlab-fuzz run TARGET --seconds 600 [--corpus fuzz/corpus] [--artifacts fuzz/artifacts]
//!                          [--seeds examples] [--rng 1] [--max-len 8192] [--max-corpus 300]
//! schedlab-fuzz replay TARGET FILE...        # re-runs inputs (crash reproducers, a corpus)
//! schedlab-fuzz show FILE                    # the scenario an `engine` input stands for
//! ```
//!
//! Model: mutate a corpus entry, run it, keep it if its outcome signature is new (the
//! feedback an uninstrumented loop has). A panic or an `Err` is a crash: the input is
//! written to `ARTIFACTS/TARGET/crash-HASH` (and, for the engine, the scenario it means
//! beside it as `.toml`). Before each input the harness writes it to
//! `ARTIFACTS/TARGET/last-input`, so an abort that no `catch_unwind` sees (a stack
//! overflow) still leaves its reproducer; `scripts/fuzz` keeps it as a crash.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use schedlab_fuzz::mutate::{mutate, Rng};
use schedlab_fuzz::{engine_text, hash, target, Target, TARGETS};

fn usage() -> ! {
    eprintln!("usage: schedlab-fuzz list | run TARGET [--seconds N] [--corpus DIR] [--artifacts DIR] [--seeds DIR]... [--rng N] [--max-len N] [--max-corpus N] | replay TARGET FILE... | show FILE");
    std::process::exit(2)
}

/// Runs one input, turning a panic into `Err` with its message.
fn exec(t: &Target, data: &[u8]) -> Result<u64, String> {
    match std::panic::catch_unwind(|| (t.run)(data)) {
        Ok(r) => r,
        Err(p) => Err(format!(
            "panic: {}",
            p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
        )),
    }
}

fn read_dir_files(dir: &Path, text_only: bool) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            out.extend(read_dir_files(&p, text_only));
        } else if !text_only || matches!(p.extension().and_then(|e| e.to_str()), Some("toml" | "json")) {
            if let Ok(b) = std::fs::read(&p) {
                out.push((p, b));
            }
        }
    }
    out
}

struct Opts {
    seconds: u64,
    corpus: PathBuf,
    artifacts: PathBuf,
    seeds: Vec<PathBuf>,
    rng: u64,
    max_len: usize,
    max_corpus: usize,
}

fn parse_opts(args: &[String]) -> Opts {
    let mut o = Opts {
        seconds: 60,
        corpus: "fuzz/corpus".into(),
        artifacts: "fuzz/artifacts".into(),
        seeds: Vec::new(),
        rng: 1,
        max_len: 8192,
        max_corpus: 300,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().unwrap_or_else(|| usage());
        match a.as_str() {
            "--seconds" => o.seconds = val().parse().unwrap_or_else(|_| usage()),
            "--corpus" => o.corpus = val().into(),
            "--artifacts" => o.artifacts = val().into(),
            "--seeds" => o.seeds.push(val().into()),
            "--rng" => o.rng = val().parse().unwrap_or_else(|_| usage()),
            "--max-len" => o.max_len = val().parse().unwrap_or_else(|_| usage()),
            "--max-corpus" => o.max_corpus = val().parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    o
}

fn save_crash(t: &Target, dir: &Path, data: &[u8], msg: &str) -> PathBuf {
    let _ = std::fs::create_dir_all(dir);
    let path = dir.join(format!("crash-{:016x}", hash(&[data])));
    let _ = std::fs::write(&path, data);
    if t.name == "engine" {
        let _ = std::fs::write(path.with_extension("toml"), format!("# {}\n{}", msg.lines().next().unwrap_or(""), engine_text(data)));
    }
    path
}

fn run(t: &Target, o: Opts) -> i32 {
    let corpus_dir = o.corpus.join(t.name);
    let art_dir = o.artifacts.join(t.name);
    let _ = std::fs::create_dir_all(&corpus_dir);
    let _ = std::fs::create_dir_all(&art_dir);
    let last = art_dir.join("last-input");
    let mut corpus: Vec<Vec<u8>> = read_dir_files(&corpus_dir, false).into_iter().map(|(_, b)| b).collect();
    let from_disk = corpus.len();
    if t.text_seeds {
        for d in &o.seeds {
            let files = read_dir_files(d, true).into_iter().map(|(_, b)| b);
            match t.seed_as {
                Some(f) => corpus.extend(files.filter_map(|b| f(&b))),
                None => corpus.extend(files),
            }
        }
    }
    let mut rng = Rng::new(o.rng ^ hash(&[t.name.as_bytes()]));
    if corpus.is_empty() {
        for _ in 0..32 {
            corpus.push((0..256).map(|_| rng.next_u64() as u8).collect());
        }
    }
    let mut seen = HashSet::new();
    let mut crashes = 0usize;
    let mut crash_msgs = HashSet::new();
    let keep = |data: &[u8], corpus_len: usize| {
        if corpus_len < o.max_corpus {
            let _ = std::fs::write(corpus_dir.join(format!("{:016x}", hash(&[data]))), data);
        }
    };
    // The corpus first: every entry must still pass, and its signatures are known.
    for (i, data) in corpus.clone().iter().enumerate() {
        let _ = std::fs::write(&last, data);
        match exec(t, data) {
            Ok(sig) => {
                if seen.insert(sig) && i >= from_disk {
                    keep(data, i);
                }
            }
            Err(msg) => {
                crashes += 1;
                let p = save_crash(t, &art_dir, data, &msg);
                eprintln!("CRASH in corpus entry {i} ({}): {msg}", p.display());
            }
        }
    }
    let start = Instant::now();
    let deadline = start + Duration::from_secs(o.seconds);
    let mut execs: u64 = 0;
    let mut next_report = start + Duration::from_secs(30);
    while Instant::now() < deadline {
        let a = rng.below(corpus.len());
        let b = rng.below(corpus.len());
        let mut data = corpus[a].clone();
        let other = corpus[b].clone();
        mutate(&mut data, &other, &mut rng, o.max_len);
        let _ = std::fs::write(&last, &data);
        execs += 1;
        match exec(t, &data) {
            Ok(sig) => {
                if seen.insert(sig) {
                    keep(&data, corpus.len());
                    if corpus.len() < o.max_corpus {
                        corpus.push(data);
                    }
                }
            }
            Err(msg) => {
                let first = msg.lines().next().unwrap_or("").to_string();
                if crash_msgs.insert(first.clone()) {
                    crashes += 1;
                    let p = save_crash(t, &art_dir, &data, &msg);
                    eprintln!("CRASH ({}): {msg}", p.display());
                }
            }
        }
        if Instant::now() >= next_report {
            next_report += Duration::from_secs(30);
            eprintln!(
                "{}: {execs} execs in {} s, corpus {}, signatures {}, crashes {crashes}",
                t.name,
                start.elapsed().as_secs(),
                corpus.len(),
                seen.len()
            );
        }
    }
    let _ = std::fs::remove_file(&last);
    let on_disk = read_dir_files(&corpus_dir, false).len();
    println!(
        "{}: {execs} execs in {:.0} s ({:.0}/s), corpus {} entries on disk, {} signatures, {crashes} crashes",
        t.name,
        start.elapsed().as_secs_f64(),
        execs as f64 / start.elapsed().as_secs_f64().max(1e-9),
        on_disk,
        seen.len()
    );
    i32::from(crashes > 0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("replay") {
        std::panic::set_hook(Box::new(|_| {})); // panics are reported as crashes, once
    }
    let Some(cmd) = args.first() else { usage() };
    let code = match cmd.as_str() {
        "list" => {
            for t in TARGETS {
                println!("{:<14} {}", t.name, t.about);
            }
            0
        }
        "run" => {
            let t = args.get(1).and_then(|n| target(n)).unwrap_or_else(|| usage());
            run(t, parse_opts(&args[2..]))
        }
        "replay" => {
            let t = args.get(1).and_then(|n| target(n)).unwrap_or_else(|| usage());
            let mut bad = 0;
            for f in &args[2..] {
                let data = std::fs::read(f).unwrap_or_else(|e| {
                    eprintln!("{f}: {e}");
                    std::process::exit(2)
                });
                match exec(t, &data) {
                    Ok(_) => println!("{f}: ok"),
                    Err(msg) => {
                        bad += 1;
                        println!("{f}: CRASH: {msg}");
                    }
                }
            }
            i32::from(bad > 0)
        }
        "show" => {
            let f = args.get(1).unwrap_or_else(|| usage());
            print!("{}", engine_text(&std::fs::read(f).unwrap_or_default()));
            0
        }
        _ => usage(),
    };
    std::process::exit(code)
}
