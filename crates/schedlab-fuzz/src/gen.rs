//! Scenario text drawn from fuzzer bytes: every `[machine]`, `[kernel]`, `[[groups]]`,
//! `[[timers]]`, `[[tasks]]` and `[[templates]]` form the schema has, small enough to
//! run in milliseconds.
//!
//! Model: the bytes are read through `arbitrary::Unstructured`, so a mutated input is a
//! different scenario rather than a broken file (the loader targets fuzz broken files).
//! Most choices are valid; a few are valid-looking mistakes on purpose (a cpulist beyond
//! the machine, a zero duration, a wait nobody signals), which must end as a scenario
//! error, never a panic.

use arbitrary::{Result, Unstructured};
use schedlab_core::features::FEATURE_TABLE;

/// Presets small enough for a fuzz iteration (up to 80 CPUs); larger ones are reached
/// through `topo` shapes.
const PRESETS: &[&str] = &["ryzen-7950x", "pixel6", "snapdragon-888", "milan-72", "xeon-80", "zen3-2s"];
/// One profile per era the model distinguishes (bandwidth modes, CFS/EEVDF, mm_cid,
/// timer pull), plus the ends of the accepted range.
pub const PROFILES: &[&str] =
    &["3.0", "3.10", "3.16", "4.14", "4.18", "5.4", "5.10", "5.14", "5.15", "6.1", "6.4", "6.5", "6.6", "6.9", "6.12", "6.13", "7.0"];
const CHANNELS: &[&str] = &["a", "b", "@c", "d"];

/// A duration with a unit: mostly microseconds to milliseconds, sometimes an edge.
fn dur(u: &mut Unstructured) -> Result<String> {
    Ok(match u.int_in_range(0..=15)? {
        0 => "0ns".into(),
        1 => format!("{}ns", u.int_in_range(1..=999u32)?),
        2 => format!("{}s", u.int_in_range(1..=3u32)?),
        3 => format!("{}.{}ms", u.int_in_range(0..=9u32)?, u.int_in_range(0..=999u32)?),
        4 => format!("{}s", u.choose(&["1e3", "100000", "18446744073.709551615", "0.000000001"])?),
        5..=10 => format!("{}us", u.int_in_range(1..=5000u32)?),
        _ => format!("{}ms", u.int_in_range(1..=30u32)?),
    })
}

fn channel(u: &mut Unstructured) -> Result<&'static str> {
    u.choose(CHANNELS).copied()
}

/// One program step (loops nest up to `depth`).
fn step(u: &mut Unstructured, depth: u32, out: &mut Vec<String>) -> Result<()> {
    let s = match u.int_in_range(0..=24)? {
        0..=3 => format!("{{ run = \"{}\" }}", dur(u)?),
        4 => format!("{{ run_exp = \"{}\" }}", dur(u)?),
        5 | 6 => format!("{{ sleep = \"{}\" }}", dur(u)?),
        7 => format!("{{ sleep_exp = \"{}\" }}", dur(u)?),
        8 => format!("{{ sleep_timeout = \"{}\" }}", dur(u)?),
        9 | 10 => format!("{{ signal = \"{}\" }}", channel(u)?),
        11 | 12 => format!("{{ wait = \"{}\" }}", channel(u)?),
        13 => format!("{{ wait_timeout = {{ channel = \"{}\", timeout = \"{}\" }} }}", channel(u)?, dur(u)?),
        14 => {
            let m = u.choose(&["m", "n"])?;
            format!("{{ lock = \"{m}\" }}, {{ run = \"{}\" }}, {{ unlock = \"{m}\" }}", dur(u)?)
        }
        15 => format!("{{ fork = {{ template = \"child\", count = {} }} }}", u.int_in_range(1..=3u32)?),
        16 => "{ wait_children = {} }".into(),
        17 => format!(
            "{{ mod_timer = {{ timer = \"{}\", delay = \"{}\", pinned = {}, deferrable = {}{} }} }}",
            u.choose(&["w", "x"])?,
            dur(u)?,
            bool::arbitrary_take(u)?,
            bool::arbitrary_take(u)?,
            if bool::arbitrary_take(u)? { format!(", signal = \"{}\"", channel(u)?) } else { String::new() }
        ),
        18 => format!("{{ del_timer = \"{}\" }}", u.choose(&["w", "x"])?),
        19 => format!("{{ periodic = {{ period = \"{}\", mode = \"{}\" }} }}", dur(u)?, u.choose(&["absolute", "relative"])?),
        20 => format!("{{ timer_bench = {{ reps = {}, delay = \"{}\" }} }}", u.int_in_range(0..=20u32)?, dur(u)?),
        21 => format!(
            "{{ touch_area = {{ bytes = {}, index = \"{}\", record = {} }} }}",
            u.int_in_range(0..=65536u32)?,
            u.choose(&["cpu_id", "mm_cid"])?,
            bool::arbitrary_take(u)?
        ),
        22 => format!(
            "{{ touch_pages = {{ region = \"r\", pages = {}, write = {} }} }}, {{ page_out = {{ region = \"r\", extra_mappers = {}, kswapd = {} }} }}",
            u.int_in_range(0..=64u32)?,
            bool::arbitrary_take(u)?,
            u.int_in_range(0..=3u32)?,
            bool::arbitrary_take(u)?
        ),
        23 if depth > 0 => {
            let mut body = Vec::new();
            for _ in 0..u.int_in_range(1..=3)? {
                step(u, depth - 1, &mut body)?;
            }
            let count = if bool::arbitrary_take(u)? { format!("count = {}, ", u.int_in_range(0..=5u32)?) } else { String::new() };
            format!("{{ loop = {{ {count}body = [{}] }} }}", body.join(", "))
        }
        _ => "{ exit = {} }".into(),
    };
    out.push(s);
    Ok(())
}

/// `Unstructured` helpers that read like the rest of the generator.
trait Take: Sized {
    fn arbitrary_take(u: &mut Unstructured) -> Result<Self>;
}

impl Take for bool {
    fn arbitrary_take(u: &mut Unstructured) -> Result<bool> {
        Ok(u.int_in_range(0..=1u8)? == 1)
    }
}

fn task(u: &mut Unstructured, name: &str, groups: usize, template: bool) -> Result<String> {
    let mut s = format!("name = \"{name}\"\n");
    if !template && bool::arbitrary_take(u)? {
        s += &format!("count = {}\n", u.int_in_range(1..=6u32)?);
    }
    if bool::arbitrary_take(u)? {
        s += &format!("nice = {}\n", u.int_in_range(-20..=19i32)?);
    }
    match u.int_in_range(0..=7u8)? {
        0 => s += &format!("affinity = \"{}\"\n", u.choose(&["0", "1", "0-1", "1-3,7", "0-255", "2", "3-4"])?),
        1 => s += "pin_each = true\n",
        2 if !template => s += &format!("cpu = {}\n", u.int_in_range(0..=3u32)?),
        _ => {}
    }
    if groups > 0 && bool::arbitrary_take(u)? {
        s += &format!("group = \"g{}\"\n", u.int_in_range(0..=groups - 1)?);
    }
    if bool::arbitrary_take(u)? {
        s += &format!("process = \"{}\"\n", u.choose(&["p", "q"])?);
    }
    if bool::arbitrary_take(u)? {
        s += &format!("footprint_kib = {}\n", u.int_in_range(0..=4096u32)?);
    }
    if !template && bool::arbitrary_take(u)? {
        s += &format!("start = \"{}\"\n", dur(u)?);
    }
    if bool::arbitrary_take(u)? {
        s += &format!("timer_slack = \"{}\"\n", dur(u)?);
    }
    let mut steps = Vec::new();
    for _ in 0..u.int_in_range(1..=5)? {
        step(u, 2, &mut steps)?;
    }
    if !template && bool::arbitrary_take(u)? {
        s += &format!("program = [{{ loop = {{ body = [{}, {{ run = \"10us\" }}] }} }}]\n", steps.join(", "));
    } else {
        s += &format!("program = [{}]\n", steps.join(", "));
    }
    Ok(s)
}

/// Draws one scenario as TOML text; `Err` when the bytes run out mid-way (the caller
/// then uses what the defaults give, as libFuzzer's arbitrary targets do).
pub fn scenario(u: &mut Unstructured) -> Result<String> {
    let mut s = String::from("[machine]\n");
    if u.int_in_range(0..=3u8)? == 0 {
        s += &format!("preset = \"{}\"\n", u.choose(PRESETS)?);
    } else {
        s += &format!(
            "topo = {{ sockets = {}, llcs = {}, cores = {}, smt = {}{} }}\n",
            u.int_in_range(1..=2u32)?,
            u.int_in_range(1..=3u32)?,
            u.int_in_range(1..=4u32)?,
            u.int_in_range(1..=2u32)?,
            if bool::arbitrary_take(u)? { ", arch = \"arm64\"" } else { "" }
        );
    }
    if u.int_in_range(0..=7u8)? == 0 {
        s += &format!("cost = {{ context_switch_ns = {} }}\n", u.choose(&["0", "1500", "1e6", "-1"])?);
    }
    s += &format!("[kernel]\nprofile = \"{}\"\n", u.choose(PROFILES)?);
    let mut feats = Vec::new();
    for _ in 0..u.int_in_range(0..=4)? {
        let (_, name, _, _) = u.choose(FEATURE_TABLE)?;
        feats.push(format!("{name} = {}", bool::arbitrary_take(u)?));
    }
    feats.sort();
    feats.dedup_by(|a, b| a.split(' ').next() == b.split(' ').next());
    if !feats.is_empty() {
        s += &format!("features = {{ {} }}\n", feats.join(", "));
    }
    let mut tun = Vec::new();
    for _ in 0..u.int_in_range(0..=3)? {
        tun.push(match u.int_in_range(0..=9u8)? {
            0 => format!("hz = {}", u.choose(&[100, 250, 300, 1000])?),
            1 => format!("cpuidle_governor = \"{}\"", u.choose(&["menu", "teo"])?),
            2 => format!("timer_migration = {}", u.int_in_range(0..=1u8)?),
            3 => format!("nohz_full = \"{}\"", u.choose(&["1", "1-3", "0-1"])?),
            4 => format!("watchdog_thresh = {}", u.int_in_range(0..=10u32)?),
            5 => format!("sched_cfs_bandwidth_slice_us = {}", u.int_in_range(1..=20000u32)?),
            6 => format!("timer_slack_ns = {}", u.int_in_range(0..=200000u32)?),
            7 => format!("sched_migration_cost_ns = {}", u.int_in_range(0..=5000000u32)?),
            8 => format!("cpuidle_max_state = {}", u.int_in_range(0..=4u32)?),
            _ => format!("tlb_batch_min_cpus = {}", u.int_in_range(0..=8u32)?),
        });
    }
    tun.sort();
    tun.dedup_by(|a, b| a.split(' ').next() == b.split(' ').next());
    if !tun.is_empty() {
        s += &format!("tunables = {{ {} }}\n", tun.join(", "));
    }
    let groups = u.int_in_range(0..=3)?;
    for g in 0..groups {
        s += &format!("[[groups]]\nname = \"g{g}\"\n");
        if g > 0 && bool::arbitrary_take(u)? {
            s += &format!("parent = \"g{}\"\n", u.int_in_range(0..=g - 1)?);
        }
        match u.int_in_range(0..=3u8)? {
            // Periods of a half to eight times the quota: mostly within the machine
            // (a quota beyond it is refused as a typo, which the loader targets reach).
            0 => {
                let quota = u.int_in_range(1000..=40000u32)?;
                s += &format!("cpu_max = \"{quota} {}\"\n", (quota / 2 * u.int_in_range(1..=16u32)?).clamp(1000, 1_000_000));
            }
            1 => {
                let quota = u.int_in_range(1000..=60000u32)?;
                s += &format!("cfs_quota_us = {quota}\ncfs_period_us = {}\n", (quota / 2 * u.int_in_range(1..=16u32)?).clamp(1000, 1_000_000));
                if bool::arbitrary_take(u)? {
                    s += &format!("cfs_burst_us = {}\n", u.int_in_range(0..=quota)?);
                }
            }
            2 => s += "cpu_max = \"max 100000\"\n",
            _ => {}
        }
    }
    for t in 0..u.int_in_range(0..=2)? {
        s += &format!(
            "[[timers]]\nname = \"k{t}\"\nperiod = \"{}ms\"\nper_cpu = {}\npinned = {}\ndeferrable = {}\nwork = \"{}us\"\n",
            u.int_in_range(1..=50u32)?,
            bool::arbitrary_take(u)?,
            bool::arbitrary_take(u)?,
            bool::arbitrary_take(u)?,
            u.int_in_range(0..=50u32)?
        );
    }
    for i in 0..u.int_in_range(1..=4)? {
        s += "[[tasks]]\n";
        s += &task(u, &format!("t{i}"), groups, false)?;
    }
    // Every channel gets a signaller most of the time: a wait nothing signals is a
    // scenario error, which the loader targets already reach.
    if u.int_in_range(0..=7u8)? != 0 {
        s += "[[tasks]]\nname = \"signaller\"\nprogram = [{ loop = { body = [{ sleep = \"1ms\" }, { signal = \"a\" }, { signal = \"b\" }, { signal = \"@c\" }, { signal = \"d\" }] } }]\n";
    }
    s += "[[templates]]\n";
    s += &task(u, "child", groups, true)?;
    s += "[run]\n";
    if bool::arbitrary_take(u)? {
        s += "until = \"workload_done\"\n";
    }
    s += &format!("duration_s = {}\n", u.choose(&["0.002", "0.01", "0.03"])?);
    Ok(s)
}
