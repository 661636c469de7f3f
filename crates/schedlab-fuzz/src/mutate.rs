//! Byte mutations for the plain-loop harness: libFuzzer's basic set (flip, insert,
//! erase, copy a chunk, splice two inputs, interesting numbers) plus tokens of the
//! scenario schema, so text inputs keep looking like scenarios.

/// A small deterministic generator (xorshift64*), seeded per run.
pub struct Rng(u64);

impl Rng {
    /// Seeds the generator (0 is replaced: xorshift has no zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Tokens of the schema and values at the edges of what it accepts.
pub const TOKENS: &[&str] = &[
    "[machine]",
    "[kernel]",
    "[run]",
    "[[tasks]]",
    "[[templates]]",
    "[[groups]]",
    "[[timers]]",
    "[workload]",
    "[machine.cost]",
    "preset",
    "topo",
    "host = true",
    "sockets",
    "llcs",
    "cores",
    "smt",
    "arch",
    "profile",
    "features",
    "tunables",
    "name",
    "parent",
    "cpu_max",
    "cfs_quota_us",
    "cfs_period_us",
    "cfs_burst_us",
    "count",
    "nice",
    "affinity",
    "cpu",
    "pin_each",
    "group",
    "process",
    "footprint_kib",
    "start",
    "timer_slack",
    "program",
    "kind",
    "params",
    "duration_s",
    "until",
    "\"workload_done\"",
    "seeds",
    "trace",
    "max_events",
    "run",
    "run_exp",
    "sleep",
    "sleep_exp",
    "sleep_timeout",
    "mod_timer",
    "del_timer",
    "wait_timeout",
    "periodic",
    "timer_bench",
    "wait",
    "signal",
    "lock",
    "unlock",
    "fork",
    "template",
    "wait_children",
    "loop",
    "body",
    "touch_area",
    "touch_pages",
    "page_out",
    "exit",
    "period",
    "per_cpu",
    "pinned",
    "deferrable",
    "work",
    "\"make\"",
    "\"pingpong\"",
    "\"fibtest\"",
    "\"threadpool\"",
    "\"rseq_burst\"",
    "\"swap_bench\"",
    "\"ui_frame\"",
    "\"dbench_pairs\"",
    "\"timer_enqueue\"",
    "\"ryzen-7950x\"",
    "\"epyc-9654-2s\"",
    "\"pixel6\"",
    "\"6.6\"",
    "\"5.4\"",
    "\"3.0\"",
    "\"7.99\"",
    "hz",
    "nohz_full",
    "cpuidle_governor",
    "\"teo\"",
    "timer_migration",
    "watchdog_thresh",
    "0",
    "-1",
    "1",
    "255",
    "256",
    "4096",
    "65536",
    "2147483647",
    "-2147483648",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e308",
    "-0.0",
    "nan",
    "inf",
    "0.0",
    "1.5",
    "\"0ns\"",
    "\"1ns\"",
    "\"10us\"",
    "\"1ms\"",
    "\"1s\"",
    "\"1e3s\"",
    "\"18446744073709551615ns\"",
    "\"99999999999s\"",
    "\"-1ms\"",
    "\"µs\"",
    "\"0-3\"",
    "\"0-4095\"",
    "\"3-1\"",
    "\"0,,1\"",
    "\"max 100000\"",
    "\"1000 1000\"",
    " = ",
    "{",
    "}",
    "[",
    "]",
    ",",
    "\"",
    "'",
    "\n",
    "{ }",
    "[]",
    "null",
    "true",
    "false",
    ":",
    "@",
];

/// Mutates `data` in place (`other` is a second corpus entry to splice from).
pub fn mutate(data: &mut Vec<u8>, other: &[u8], rng: &mut Rng, max_len: usize) {
    for _ in 0..1 + rng.below(4) {
        match rng.below(9) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = rng.next_u64() as u8;
            }
            2 => {
                let i = rng.below(data.len() + 1);
                let n = 1 + rng.below(8);
                for _ in 0..n {
                    data.insert(i, rng.next_u64() as u8);
                }
            }
            3 if !data.is_empty() => {
                let i = rng.below(data.len());
                let n = 1 + rng.below((data.len() - i).min(32));
                data.drain(i..i + n);
            }
            4 if !data.is_empty() => {
                // Copy a chunk elsewhere (duplicates a table or a step).
                let i = rng.below(data.len());
                let n = 1 + rng.below((data.len() - i).min(256));
                let chunk = data[i..i + n].to_vec();
                let at = rng.below(data.len() + 1);
                data.splice(at..at, chunk);
            }
            5 if !other.is_empty() => {
                // Splice: our head, the other's tail.
                let cut = rng.below(data.len() + 1);
                let from = rng.below(other.len());
                data.truncate(cut);
                data.extend_from_slice(&other[from..]);
            }
            6 | 7 => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                let at = rng.below(data.len() + 1);
                if rng.below(2) == 0 && at < data.len() {
                    // Replace the word under `at` with the token.
                    let end = data[at..].iter().position(|b| !b.is_ascii_alphanumeric() && *b != b'_').map_or(data.len(), |p| at + p.max(1));
                    data.splice(at..end, t.iter().copied());
                } else {
                    data.splice(at..at, t.iter().copied());
                }
            }
            _ if data.len() >= 8 => {
                // An interesting integer over 1, 2, 4 or 8 bytes.
                let w = [1, 2, 4, 8][rng.below(4)];
                let i = rng.below(data.len() - w + 1);
                let v: u64 = [0, 1, u64::MAX, 0x7f, 0x80, 0xff, 0x7fff_ffff, rng.next_u64()][rng.below(8)];
                data[i..i + w].copy_from_slice(&v.to_le_bytes()[..w]);
            }
            _ => data.push(rng.next_u64() as u8),
        }
    }
    data.truncate(max_len);
}
