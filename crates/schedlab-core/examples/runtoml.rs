//! Runs a scenario file and prints its workload figures and summary (a debugging aid).
fn main() {
    let path = std::env::args().nth(1).expect("usage: runtoml FILE [SEED]");
    let seed = std::env::args().nth(2).map_or(1, |s| s.parse().expect("seed"));
    let text = std::fs::read_to_string(&path).expect("read");
    let s = schedlab_core::Scenario::from_toml_str(&text, &path).unwrap_or_else(|e| panic!("{e}"));
    let out = schedlab_core::api::run(&s, seed, &Default::default()).unwrap_or_else(|e| panic!("{e}"));
    println!("{}", serde_json::to_string_pretty(&out.result.workload).unwrap());
    println!("{}", serde_json::to_string(&out.result.summary).unwrap());
    println!("engine: {:?}", out.result.engine);
}
