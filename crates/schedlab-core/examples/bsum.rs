use schedlab_core::api::{run, RunOptions};
use schedlab_core::Scenario;
fn main() {
    let text = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let s = Scenario::from_toml_str(&text, "x").unwrap();
    let out = run(&s, 1, &RunOptions::default()).unwrap();
    for (k, v) in &out.result.summary { println!("{k} = {v}"); }
    let r = &out.result;
    let na: u64 = r.cpus.iter().map(|c| c.newidle_attempts).sum();
    let ns: u64 = r.cpus.iter().map(|c| c.newidle_skips).sum();
    let t: u64 = r.cpus.iter().map(|c| c.ticks).sum();
    println!("newidle_attempts={na} skips={ns} ticks={t} events={}", r.engine.events);
}
