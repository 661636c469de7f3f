//! The engine's speed suite (`schedlab_core::bench`): `cargo bench -p schedlab-core`
//! runs every case; `cargo bench -p schedlab-core -- flat-384 2s-384` runs those;
//! `-- --json` prints JSON instead of the table; `-- --no-elision` queues every event
//! (the exact elision off: same results, the speed A/B); `-- --quick` stops each case
//! at its `quick_ms` simulated (the CI form, under a minute).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    if let Some(flag) = args.iter().find(|a| a.starts_with("--") && *a != "--json" && *a != "--no-elision" && *a != "--quick") {
        eprintln!(
            "usage: cargo bench -p schedlab-core -- [CASE ...] [--json] [--no-elision] [--quick]  (unknown flag {flag}; cases: {})",
            schedlab_core::bench::CASES.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
        );
        std::process::exit(if flag == "--help" { 0 } else { 2 });
    }
    let json = args.iter().any(|a| a == "--json");
    let opts = schedlab_core::api::RunOptions { no_elision: args.iter().any(|a| a == "--no-elision"), ..Default::default() };
    let quick = args.iter().any(|a| a == "--quick");
    let only: Vec<String> = args.into_iter().filter(|a| !a.starts_with("--")).collect();
    let report = schedlab_core::bench::run_suite_with(&only, &opts, quick, |row| {
        if !json {
            eprintln!("{}: {:.2} s", row.case, row.wall_s);
        }
    });
    match report {
        Ok(r) if json => println!("{}", serde_json::to_string_pretty(&r).expect("report serializes")),
        Ok(r) => print!("{}", schedlab_core::bench::format_table(&r)),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
