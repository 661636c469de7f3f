//! A cost table with every figure's source, kind and band filed beside its value.
//!
//! Mirrors: nothing in the kernel (see `provenance.rs`).
//! Model: a [`CostSheet`] is built leaf by leaf (`preset_costs.rs`, its `set_cost!`
//! macro): each leaf's value and its [`Cite`] are written in one statement, so a figure
//! and its source cannot drift apart. A measured figure carries the spread its source
//! shows; a derived one the range of its inputs; an estimate a wide band (at least a
//! factor 2 either way unless its reasoning bounds it). Keys in brackets are
//! `preset_costs.rs`'s source list and `docs/hardware-sources.md`'s. A sheet that lacks a
//! leaf, or files a value outside its own band, is refused ([`CostSheet::check`]) where a
//! machine is assembled.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::cost::CostTable;
use crate::provenance::{Kind, Provenance};
use crate::topology::Machine;

/// How wide a cited figure's band is.
#[derive(Clone, Copy, Debug)]
enum Band {
    /// Exactly the value (a declared table entry, a definition, a knob that is off).
    Exact,
    /// The absolute range [low, high] the source shows.
    Within(f64, f64),
    /// [value x low, value x high]: a derived figure's input range or an estimate's.
    Times(f64, f64),
}

/// Where a figure comes from, before it is filed with its value.
#[derive(Clone, Copy, Debug)]
pub struct Cite {
    kind: Kind,
    band: Band,
    source: &'static str,
}

impl Cite {
    /// The provenance of `value` under this citation.
    fn at(self, value: f64) -> Provenance {
        let (low, high) = match self.band {
            Band::Exact => (value, value),
            Band::Within(low, high) => (low, high),
            Band::Times(low, high) => (value * low, value * high),
        };
        Provenance::new(self.kind, low, high, self.source)
    }
}

/// A benchmark's figure, spread [low, high].
pub fn measured(low: f64, high: f64, source: &'static str) -> Cite {
    Cite { kind: Kind::Measured, band: Band::Within(low, high), source }
}

/// What documentation or firmware declares: exact.
pub fn declared(source: &'static str) -> Cite {
    Cite { kind: Kind::Declared, band: Band::Exact, source }
}

/// A knob that is off (its value means "not modeled" or "use the model"): exact.
pub fn knob(source: &'static str) -> Cite {
    declared(source)
}

/// An estimate with band [value x low, value x high].
pub fn estimate(low: f64, high: f64, source: &'static str) -> Cite {
    Cite { kind: Kind::Estimate, band: Band::Times(low, high), source }
}

/// An estimate whose reasoning bounds it to [low, high].
pub fn estimate_within(low: f64, high: f64, source: &'static str) -> Cite {
    Cite { kind: Kind::Estimate, band: Band::Within(low, high), source }
}

/// A figure derived from others, band [value x low, value x high] from its inputs' ranges.
pub fn derived(low: f64, high: f64, source: &'static str) -> Cite {
    Cite { kind: Kind::Derived, band: Band::Times(low, high), source }
}

/// A derived figure whose inputs bound it to [low, high].
pub fn derived_within(low: f64, high: f64, source: &'static str) -> Cite {
    Cite { kind: Kind::Derived, band: Band::Within(low, high), source }
}

/// Each filed leaf's value and provenance, by dotted leaf name (as `[machine.cost]` takes it).
pub type CostSources = BTreeMap<&'static str, (f64, Provenance)>;

/// A cost table and, beside every leaf, the value filed for it and its provenance.
#[derive(Clone, Debug)]
pub struct CostSheet {
    /// The figures the model charges.
    pub table: CostTable,
    /// What was filed for each leaf (`set_cost!`); a leaf of `table` whose value differs
    /// from its filed one was changed afterwards and reports as an override.
    pub sources: Arc<CostSources>,
}

impl Default for CostSheet {
    /// An empty sheet: every leaf 0 and nothing filed.
    fn default() -> CostSheet {
        let mut doc = serde_json::Map::new();
        for key in crate::cost::COST_KEYS {
            let mut at = &mut doc;
            let mut parts = key.split('.').peekable();
            while let Some(part) = parts.next() {
                if parts.peek().is_none() {
                    at.insert(part.to_string(), 0.into());
                } else {
                    let child = at.entry(part).or_insert_with(|| serde_json::Value::Object(Default::default()));
                    at = child.as_object_mut().expect("COST_KEYS nest objects only");
                }
            }
        }
        let table = serde_json::from_value(serde_json::Value::Object(doc)).expect("COST_KEYS are the table's leaves");
        CostSheet { table, sources: Arc::default() }
    }
}

impl CostSheet {
    /// Files `value` for leaf `key` (`.`-prefixed path, as `set_cost!` builds it) with
    /// its citation, replacing an earlier filing of the same leaf.
    pub fn file(&mut self, key: &'static str, value: f64, cite: Cite) {
        let key = key.trim_start_matches('.');
        Arc::make_mut(&mut self.sources).insert(key, (value, cite.at(value)));
    }

    /// Refuses a sheet that lacks a leaf's filing or files a value outside its band,
    /// naming `machine` and the leaves.
    pub fn check(&self, machine: &str) -> Result<(), String> {
        let mut leaves = Vec::new();
        flatten("", &serde_json::to_value(&self.table).unwrap_or_default(), &mut leaves);
        let missing: Vec<&str> = leaves.iter().filter(|(k, _)| !self.sources.contains_key(k.as_str())).map(|(k, _)| k.as_str()).collect();
        if !missing.is_empty() {
            return Err(format!("machine '{machine}': its cost table has no source for {}", missing.join(", ")));
        }
        for (key, (value, p)) in self.sources.iter() {
            if !p.contains(*value) {
                return Err(format!("machine '{machine}': cost leaf {key} = {value} lies outside its source's band [{}, {}]", p.low, p.high));
            }
        }
        Ok(())
    }
}

/// Every cost-table leaf of `m` with its provenance: the filed one, or `override` where
/// the run's value is not the filed one (`[machine.cost]`, or a test's edit).
pub fn cost_sources(m: &Machine) -> BTreeMap<String, Provenance> {
    let mut leaves = Vec::new();
    flatten("", &serde_json::to_value(&m.cost).unwrap_or_default(), &mut leaves);
    leaves
        .into_iter()
        .map(|(key, value)| {
            let p = match m.cost_sources.get(key.as_str()) {
                Some((filed, p)) if *filed == value => p.clone(),
                _ => Provenance::overridden(value),
            };
            (key, p)
        })
        .collect()
}

/// The dotted leaves of a JSON object, with their numeric values.
pub fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, f64)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, child) in map {
                flatten(&if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") }, child, out);
            }
        }
        other => out.push((prefix.to_string(), other.as_f64().unwrap_or(f64::NAN))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provenance::Kind;

    #[test]
    fn a_cite_bands_its_value() {
        assert_eq!((measured(1.0, 3.0, "m").at(2.0).low, measured(1.0, 3.0, "m").at(2.0).high), (1.0, 3.0));
        let e = estimate(0.5, 2.0, "e").at(10.0);
        assert_eq!((e.kind, e.low, e.high), (Kind::Estimate, 5.0, 20.0));
        let d = declared("d").at(7.0);
        assert_eq!((d.kind, d.low, d.high), (Kind::Declared, 7.0, 7.0));
    }

    /// A sheet missing a leaf, or filing a value its band excludes, is refused by name.
    #[test]
    fn an_incomplete_or_out_of_band_sheet_is_refused() {
        let mut s = CostSheet::default();
        s.file(".miss_parallelism", 16.0, estimate(0.5, 1.5, "x"));
        let err = s.check("m").unwrap_err();
        assert!(err.contains("machine 'm'") && err.contains("cacheline.dram_ns") && !err.contains("miss_parallelism"), "{err}");
        let mut full = crate::topology::preset_costs::generic_x86_costs();
        assert_eq!(full.check("g"), Ok(()));
        full.file(".cacheline.dram_ns", 500.0, measured(60.0, 75.0, "y"));
        let err = full.check("g").unwrap_err();
        assert!(err.contains("cacheline.dram_ns = 500") && err.contains("[60, 75]"), "{err}");
    }
}
